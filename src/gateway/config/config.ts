// Typed service configuration from one schema (contracts/config.schema.json; the `Config` type and the schema constant
// are generated into generated/config/types.ts): embedded defaults (the schema's `default`s) ← JSON config file ←
// environment ← CLI flags. The environment and flag names are derived from the schema, not listed by hand: every leaf
// `a.b.c` is env RPCGATE_A_B_C and `rpcgate start --set a.b.c=value`; older names are the schema's `x-env` aliases.
// Validated once at start with ajv; a bad value fails start with a message naming the field and where it came from.
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { Ajv, type ErrorObject } from 'ajv';
import { configSchema, type Config, type NetworkConfig } from '../../../generated/config/types.js';
import { PATHS } from '../paths.js';

export type {
  AccessPoint,
  AppPlan,
  Config,
  KeyConfig,
  LimitsConfig,
  MetricsConfig,
  NetworkConfig,
  NetworkKeyPlan,
  PlanLimits,
  UpstreamConfig,
} from '../../../generated/config/types.js';

/** A node of contracts/config.schema.json, as far as the loader reads it (the schema is checked by its own tests). */
export interface SchemaNode {
  readonly $ref?: string;
  readonly type?: string | readonly string[];
  readonly enum?: readonly unknown[];
  readonly anyOf?: readonly SchemaNode[];
  readonly oneOf?: readonly SchemaNode[];
  readonly items?: SchemaNode;
  readonly properties?: Readonly<Record<string, SchemaNode>>;
  readonly additionalProperties?: SchemaNode | boolean;
  readonly default?: unknown;
  readonly 'x-env'?: readonly string[];
  readonly 'x-merge'?: string;
}
type Json = SchemaNode | undefined;
/** `additionalProperties` as a schema (`true`/`false` say nothing of the values). */
const objectNode = (v: SchemaNode | boolean | undefined): Json => (typeof v === 'object' ? v : undefined);
type DeepPartial<T> = T extends (infer U)[] ? U[] : T extends object ? { [K in keyof T]?: DeepPartial<T[K]> } : T;

/** A partial config as read from a file, env or flags (objects merge field by field; `networks.<name>: null` removes one). */
export type ConfigInput = DeepPartial<Omit<Config, 'networks'>> & {
  networks?: Record<string, Partial<NetworkConfig> | null>;
};

export class ConfigError extends Error {}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

const SCHEMA = configSchema as SchemaNode;

/** A `$ref` (`#/definitions/X`) resolved against the config schema; other nodes as they are. */
function deref(s: Json): Json {
  let node = s;
  for (let i = 0; node?.$ref !== undefined && i < 8; i++)
    node = node.$ref
      .split('/')
      .slice(1)
      .reduce<unknown>((o, k) => (isObject(o) ? o[k] : undefined), SCHEMA) as Json;
  return node;
}

/** The child schema of an object node for `key` (a declared property, else the map's value schema). */
function child(s: Json, key: string): Json {
  const node = deref(s);
  if (node?.properties?.[key] !== undefined) return node.properties[key];
  if (node?.additionalProperties && typeof node.additionalProperties === 'object') return node.additionalProperties;
  return undefined;
}

/** The schema's `default` of every top-level field (a `$ref`'s target default when the field has none). */
function schemaDefaults(): Config {
  const out: Record<string, unknown> = {};
  for (const [k, s] of Object.entries(SCHEMA.properties ?? {})) {
    const d = s.default ?? deref(s)?.default;
    if (d !== undefined) out[k] = structuredClone(d);
  }
  return out as unknown as Config;
}

/** Embedded defaults: the schema's, with docs/ and openrpc.json of this package (not of the working directory). */
export const defaults: Config = {
  ...schemaDefaults(),
  docsDir: PATHS.docs,
  openrpcPath: PATHS.openrpc,
};

// ---- names: schema paths ↔ environment variables ------------------------------------------------------------------

/** A settable path of the schema. `*` stands for a key of a map (a network name). */
export interface Setting {
  path: string[];
  schema: SchemaNode;
  /** RPCGATE_A_B_C (with `{*}` for a map key). */
  env: string;
  /** Older environment names (x-env): `{NETWORK}` for a map key. */
  aliases: string[];
}

const snake = (s: string) =>
  s
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .replace(/-/g, '_')
    .toUpperCase();

/**
 * Every leaf of the schema: scalars, arrays, maps (also set whole, as JSON or `k=v,…`) and, inside a map whose values
 * are objects (networks), each field of an entry. Objects with declared properties are not leaves: their fields are.
 */
export function settings(): Setting[] {
  const out: Setting[] = [];
  const walk = (s: SchemaNode, path: string[]) => {
    const node = deref(s);
    if (node?.properties !== undefined) {
      for (const [k, v] of Object.entries(node.properties)) walk(v, [...path, k]);
      return;
    }
    out.push({
      path,
      schema: s,
      env: `RPCGATE_${path.map((p) => (p === '*' ? '{*}' : snake(p))).join('_')}`,
      aliases: [...(s['x-env'] ?? node?.['x-env'] ?? [])],
    });
    const entry = objectNode(node?.additionalProperties);
    if (entry !== undefined && deref(entry)?.properties !== undefined) walk(entry, [...path, '*']);
  };
  walk(SCHEMA, []);
  return out;
}

// ---- values: text → JSON per the schema's type --------------------------------------------------------------------

function typesOf(s: Json): Set<string> {
  const node = deref(s);
  const out = new Set<string>();
  if (Array.isArray(node?.type)) for (const t of node.type) out.add(t);
  else if (typeof node?.type === 'string') out.add(node.type);
  if (Array.isArray(node?.enum)) for (const v of node.enum) out.add(v === null ? 'null' : typeof v);
  for (const alt of [...(node?.anyOf ?? []), ...(node?.oneOf ?? [])]) for (const t of typesOf(alt)) out.add(t);
  if (out.size === 0 && (node?.properties || node?.additionalProperties)) out.add('object');
  return out;
}

const list = (s: string) =>
  s
    .split(',')
    .map((x) => x.trim())
    .filter(Boolean);

/**
 * A setting's text as the schema's type: integers/numbers, booleans (true/false, 1/0, yes/no, on/off), `null`, JSON for
 * arrays and objects; a list of strings may be comma-separated, a map of strings `k=v,k2=v2`. `where` names the source.
 */
export function parseValue(s: Json, raw: string, where: string): unknown {
  const t = typesOf(s);
  const text = raw.trim();
  if ((t.has('array') || t.has('object')) && /^[[{]/.test(text)) {
    try {
      return JSON.parse(text);
    } catch (e) {
      throw new ConfigError(`${where}: not valid JSON: ${(e as Error).message}`);
    }
  }
  if (t.has('null') && text === 'null') return null;
  if ((t.has('integer') || t.has('number')) && /^-?\d+(\.\d+)?([eE][+-]?\d+)?$/.test(text)) return Number(text);
  if (t.has('boolean') && /^(true|yes|on)$/i.test(text)) return true;
  if (t.has('boolean') && /^(false|no|off)$/i.test(text)) return false;
  if (t.has('boolean') && /^[01]$/.test(text) && !t.has('integer')) return text === '1';
  if (t.has('string')) return raw;
  if (t.has('array')) {
    // A list of numbers (e.g. upstream.retry.nodeErrorCodes) may be comma-separated too.
    const numbers = typesOf(deref(s)?.items).has('integer');
    return numbers ? list(raw).map((x) => (/^-?\d+$/.test(x) ? Number(x) : x)) : list(raw);
  }
  if (t.has('object') && typesOf(objectNode(deref(s)?.additionalProperties)).has('string')) {
    const out: Record<string, string> = {};
    for (const pair of list(raw)) {
      const i = pair.indexOf('=');
      if (i <= 0) throw new ConfigError(`${where}: invalid entry "${pair}" (expected key=value,… or a JSON object)`);
      out[pair.slice(0, i).trim()] = pair.slice(i + 1).trim();
    }
    return out;
  }
  const expected = [...t]
    .map((x) => (x === 'integer' ? 'an integer' : x === 'array' || x === 'object' ? `a JSON ${x}` : x))
    .join(' or ');
  throw new ConfigError(`${where}: expected ${expected || 'a value'}, got "${raw}"`);
}

/** `host=network,host2=network2` → map. */
export function parseHostMap(s: string): Record<string, string> {
  return parseValue(SCHEMA.properties?.hostMap, s, 'host map') as Record<string, string>;
}

// ---- layers ------------------------------------------------------------------------------------------------------

/** A layer and where each of its values came from (JSON pointer → e.g. "env RPCGATE_PORT"). */
export interface Layer {
  input: ConfigInput;
  label: string;
  origins?: Map<string, string>;
}

function setAt(target: Record<string, unknown>, path: string[], value: unknown): void {
  let o = target;
  for (const p of path.slice(0, -1)) o = (o[p] ??= {}) as Record<string, unknown>;
  o[path[path.length - 1]] = value;
}
const pointer = (path: string[]) => `/${path.join('/')}`;

/**
 * Environment layer: RPCGATE_<LEAF> for every leaf (e.g. RPCGATE_PORT, RPCGATE_UPSTREAM_REQUEST_TIMEOUT_MS,
 * RPCGATE_NETWORKS_HOLESKY_UPSTREAMS — a network may be added by env alone), plus the schema's `x-env` names
 * (DATABASE_URL, REDIS_URL, RPCGATE_COALESCE, RPCGATE_METRICS, RPCGATE_UPSTREAM_TIMEOUT_MS, and per known network
 * RPCGATE_<NETWORK>_UPSTREAMS / _CHAIN_ID). Empty values count as unset; the canonical name wins over an alias.
 */
export function fromEnv(env: NodeJS.ProcessEnv, networkNames: string[]): ConfigInput {
  return envLayer(env, networkNames).input;
}

function envLayer(env: NodeJS.ProcessEnv, networkNames: string[]): Layer {
  const input: Record<string, unknown> = {};
  const origins = new Map<string, string>();
  const get = (name: string) => (env[name] === undefined || env[name] === '' ? undefined : env[name]);
  const apply = (path: string[], s: Json, names: string[]) => {
    const name = names.find((n) => get(n) !== undefined);
    if (name === undefined) return;
    setAt(input, path, parseValue(s, get(name)!, `env ${name}`));
    origins.set(pointer(path), `env ${name}`);
  };
  for (const st of settings()) {
    const star = st.path.indexOf('*');
    if (star < 0) {
      apply(st.path, st.schema, [st.env, ...st.aliases]);
      continue;
    }
    // Map entries: the known names, then any other name the canonical variable spells (lower-cased, `_` kept).
    const names = new Set(networkNames);
    const [pre, post] = st.env.split('{*}');
    for (const k of Object.keys(env))
      if (k.startsWith(pre) && k.endsWith(post) && k.length > pre.length + post.length && get(k) !== undefined) {
        const spelled = k.slice(pre.length, k.length - post.length);
        if (![...names].some((n) => snake(n) === spelled)) names.add(spelled.toLowerCase());
      }
    for (const n of names) {
      const path = st.path.map((p) => (p === '*' ? n : p));
      apply(path, st.schema, [
        st.env.replace('{*}', snake(n)),
        ...st.aliases.map((a) => a.replace('{NETWORK}', snake(n))),
      ]);
    }
  }
  return { input: input as ConfigInput, label: 'environment', origins };
}

/**
 * Flag layer: `path=value` assignments (`rpcgate start --set upstream.coalesce=false --set networks.holesky.chainId=17000`).
 * The path follows the schema (a map key such as a network name in place of `*`); the value is parsed per its type.
 */
export function fromAssignments(assignments: readonly string[], origins?: Map<string, string>): ConfigInput {
  const input: Record<string, unknown> = {};
  for (const a of assignments) {
    const i = a.indexOf('=');
    if (i <= 0) throw new ConfigError(`--set ${a}: expected path=value (e.g. --set upstream.coalesce=false)`);
    const path = a.slice(0, i).trim().split('.');
    let s: Json = SCHEMA;
    let mapEntry = false;
    for (const p of path) {
      mapEntry = p !== '' && deref(s)?.properties?.[p] === undefined;
      s = p === '' ? undefined : child(s, p);
      if (s === undefined)
        throw new ConfigError(
          `--set ${a}: unknown setting "${a.slice(0, i)}" (the settings are the paths of contracts/config.schema.json)`,
        );
    }
    const raw = a.slice(i + 1);
    // `--set networks.testnet=null` removes a map entry (a default network), as `null` does in a config file.
    setAt(input, path, mapEntry && raw.trim() === 'null' ? null : parseValue(s, raw, `--set ${path.join('.')}`));
    origins?.set(pointer(path), `--set ${path.join('.')}`);
  }
  return input as ConfigInput;
}

// ---- merge -----------------------------------------------------------------------------------------------------

/** A network named first in a layer: embedded anvil, chain id 31337 + its position, 2 s blocks. */
const newNetwork = (index: number): NetworkConfig => ({ upstreams: [], chainId: 31337 + index, blockTime: 2 });

function mergeValue(base: unknown, layer: unknown, s: Json, path: string): unknown {
  if (layer === undefined) return base;
  const node = deref(s);
  const objectLike = node && (isObject(node.properties) || isObject(node.additionalProperties));
  // `x-merge: replace` (chains): a layer naming its chains means exactly those, not those plus the defaults.
  if (!objectLike || node['x-merge'] === 'replace' || !isObject(layer) || !isObject(base))
    return structuredClone(layer);
  const out: Record<string, unknown> = { ...base };
  for (const [k, v] of Object.entries(layer)) {
    if (v === undefined) continue;
    if (v === null && path === '/networks') {
      // `"testnet": null` in a config file removes a default network.
      delete out[k];
      continue;
    }
    const prev = out[k] ?? (path === '/networks' ? newNetwork(Object.keys(out).length) : undefined);
    out[k] = mergeValue(prev, v, child(s, k), `${path}/${k}`);
  }
  return out;
}

/** Merges layers onto a base: objects and maps field by field (networks too), `chains`, arrays and scalars replaced. */
export function merge(base: Config, ...layers: (ConfigInput | undefined)[]): Config {
  let out: unknown = base;
  for (const layer of layers) out = mergeValue(out, layer, SCHEMA, '');
  return out as Config;
}

// ---- validation ------------------------------------------------------------------------------------------------

let validateConfig: ReturnType<Ajv['compile']> | undefined;

/** Where the value at a JSON pointer came from: the highest layer that set it (or a parent or child of it). */
function sourceOf(ptr: string, layers: Layer[]): string | undefined {
  const segs = ptr.split('/').slice(1);
  for (const l of [...layers].reverse()) {
    if (l.origins) {
      for (const [p, label] of l.origins)
        if (ptr === p || ptr.startsWith(`${p}/`) || p.startsWith(`${ptr}/`) || ptr === '') return label;
      continue;
    }
    let o: unknown = l.input;
    let hit = true;
    for (const seg of segs) {
      if (!isObject(o) || !(seg in o)) {
        hit = Array.isArray(o) && o[Number(seg)] !== undefined;
        break;
      }
      o = o[seg];
    }
    if (hit && o !== undefined) return l.label;
  }
  return undefined;
}

/** ajv's errors for an `anyOf` (an upstream: a URL or an {http, ws} pair) name every branch; keep the ones that fit
 *  the value given (a string's pattern, not "must be object") and drop the summary when they say it all. */
function plainErrors(errors: readonly ErrorObject[]): ErrorObject[] {
  const alternatives = errors.filter((e) => e.keyword === 'anyOf').map((e) => e.instancePath);
  if (alternatives.length === 0) return [...errors];
  const kept = errors.filter((e) => !(e.keyword === 'type' && alternatives.includes(e.instancePath)));
  return kept.filter(
    (e) =>
      e.keyword !== 'anyOf' ||
      !kept.some((o) => o !== e && o.keyword !== 'anyOf' && o.instancePath.startsWith(e.instancePath)),
  );
}

/** Validates a complete config; throws ConfigError naming every bad field (and, given the layers, its source). */
export function validate(config: Config, layers: Layer[] = []): Config {
  validateConfig ??= new Ajv({ allErrors: true, strict: false }).compile(SCHEMA);
  if (!validateConfig(config)) {
    const lines = plainErrors(validateConfig.errors ?? []).map((e) => {
      const p = e.params as Record<string, unknown>;
      const extra =
        'allowedValues' in p
          ? ` (${(p.allowedValues as unknown[]).join(', ')})`
          : 'additionalProperty' in p
            ? `: "${String(p.additionalProperty)}"`
            : '';
      const ptr = 'additionalProperty' in p ? `${e.instancePath}/${String(p.additionalProperty)}` : e.instancePath;
      const from = sourceOf(ptr, layers);
      return `  ${e.instancePath || '(root)'}: ${e.message ?? e.keyword}${extra}${from ? ` (from ${from})` : ''}`;
    });
    throw new ConfigError(`invalid configuration:\n${lines.join('\n')}`);
  }
  const known = Object.keys(config.networks).join(', ');
  for (const [host, network] of Object.entries(config.hostMap)) {
    if (!config.networks[network])
      throw new ConfigError(
        `invalid configuration:\n  /hostMap/${host}: unknown network "${network}" (known: ${known})`,
      );
  }
  for (const [chain, nets] of Object.entries(config.chains)) {
    for (const n of nets) {
      if (!config.networks[n])
        throw new ConfigError(`invalid configuration:\n  /chains/${chain}: unknown network "${n}" (known: ${known})`);
    }
  }
  const defaultPlan = config.accounts?.defaultPlan;
  if (defaultPlan !== undefined && config.plans?.[defaultPlan] === undefined)
    throw new ConfigError(
      `invalid configuration:\n  /accounts/defaultPlan: unknown plan "${defaultPlan}" (plans: ${Object.keys(config.plans ?? {}).join(', ') || 'none'})`,
    );
  // A mailed link must not take its host from the request (Host-header poisoning: an attacker's host in the victim's
  // reset link).
  if (config.smtp !== undefined && config.publicBaseUrl === undefined)
    throw new ConfigError(
      'invalid configuration:\n  /smtp: needs publicBaseUrl (the base of the links mailed for password resets and email verification)',
    );
  return config;
}

/** `config.chains` resolved: lower-cased chain → its networks (an empty list = every configured network). */
export function chainNetworks(config: Pick<Config, 'chains' | 'networks'>): Record<string, string[]> {
  const all = Object.keys(config.networks);
  const out: Record<string, string[]> = {};
  for (const [chain, nets] of Object.entries(config.chains))
    out[chain.toLowerCase()] = nets.length === 0 ? all : [...nets];
  return out;
}

/** A network's display name: its configured `label`, else the name capitalised. */
export function networkLabel(name: string, n?: Pick<NetworkConfig, 'label'>): string {
  return n?.label ?? (name === '' ? name : name[0].toUpperCase() + name.slice(1));
}

/** `config.trustProxy` as a hop count. */
export function trustProxyHops(config: Pick<Config, 'trustProxy'>): number {
  return config.trustProxy === true ? 1 : config.trustProxy === false ? 0 : config.trustProxy;
}

/** Whether the dev-mode development key is generated (see `Config.devKey`). */
export function devKeyEnabled(config: Pick<Config, 'devKey' | 'keys'>): boolean {
  return config.devKey === true;
}

export function readConfigFile(path: string): ConfigInput {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    throw new ConfigError(`cannot read config file ${path}: ${(e as Error).message}`);
  }
  try {
    return JSON.parse(text) as ConfigInput;
  } catch (e) {
    throw new ConfigError(`config file ${path} is not valid JSON: ${(e as Error).message}`);
  }
}

export interface LoadOptions {
  /** Path of a JSON config file (`--config`, or RPCGATE_CONFIG). */
  configFile?: string;
  env?: NodeJS.ProcessEnv;
  /** Highest-priority layer (CLI flags, or a test's config). */
  overrides?: ConfigInput;
  /** Names `overrides` in error messages (default "overrides"; the CLI's flags say "flags"). */
  overridesLabel?: string;
  /** `path=value` assignments (`rpcgate start --set`), above `overrides`. */
  assignments?: readonly string[];
}

/** defaults ← file ← env ← overrides ← assignments, then validated. Relative paths are resolved against the cwd. */
export function loadConfig(opts: LoadOptions = {}): Config {
  const env = opts.env ?? process.env;
  const file = opts.configFile ?? env.RPCGATE_CONFIG;
  const layers: Layer[] = [];
  if (file) layers.push({ input: readConfigFile(file), label: `config file ${file}` });
  const flagOrigins = new Map<string, string>();
  const flagged = fromAssignments(opts.assignments ?? [], flagOrigins);
  const names = new Set([
    ...Object.keys(defaults.networks),
    ...[layers[0]?.input, opts.overrides, flagged].flatMap((l) => Object.keys(l?.networks ?? {})),
  ]);
  layers.push(envLayer(env, [...names]));
  if (opts.overrides) layers.push({ input: opts.overrides, label: opts.overridesLabel ?? 'overrides' });
  if (opts.assignments?.length) layers.push({ input: flagged, label: '--set', origins: flagOrigins });
  // A config file that lists its networks lists all of them: the default embedded `mainnet` and `testnet` start only
  // if it names them (env and --set still add to or change the file's set).
  const fileNets = layers[0]?.input.networks;
  const base =
    file && fileNets !== undefined
      ? { ...defaults, networks: Object.fromEntries(Object.entries(defaults.networks).filter(([n]) => n in fileNets)) }
      : defaults;
  const config = merge(base, ...layers.map((l) => l.input));
  // Host names compare case-insensitively (the Host header is lower-cased before lookup).
  config.hostMap = Object.fromEntries(Object.entries(config.hostMap).map(([h, n]) => [h.toLowerCase(), n]));
  validate(config, layers);
  config.dataDir = resolve(config.dataDir);
  config.docsDir = resolve(config.docsDir);
  config.openrpcPath = resolve(config.openrpcPath);
  return config;
}
