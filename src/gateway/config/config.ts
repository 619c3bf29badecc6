// Typed service configuration: embedded defaults ← JSON config file ← environment ← CLI flags.
// Validated once at start with ajv; a bad value fails start with a message naming the field.
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { Ajv } from 'ajv';
import type { LimitsConfig } from '../limits/plans.js';
import { PATHS } from '../paths.js';

export type AccessPoint = 'A' | 'B';

/** A configured API key. A bare string is a key valid for every network and both access points. */
export interface KeyConfig {
  key: string;
  name?: string;
  /** Networks the key may use; absent = all. */
  networks?: string[];
  /** Access points (A = `/{network}/v2/{key}`, B = `/{network}/{key}`); absent = both. */
  accessPoints?: AccessPoint[];
}

export interface NetworkConfig {
  /** Upstream node URLs. Empty = rpcgate starts an embedded anvil for this network. */
  upstreams: string[];
  /** Chain id of the embedded anvil (distinct per network so clients can tell them apart). */
  chainId: number;
  /** Seconds between blocks of the embedded anvil. */
  blockTime: number;
}

export interface UpstreamConfig {
  /** TCP/TLS connect timeout (ms). */
  connectTimeoutMs: number;
  /** Time allowed for the node's response headers and between body chunks (ms). */
  requestTimeoutMs: number;
  /** How often an upstream marked down is probed with eth_blockNumber (ms). */
  probeIntervalMs: number;
  /** Coalesce concurrent calls into upstream JSON-RPC batches (and dedupe identical reads). */
  coalesce: boolean;
  /** Most calls in one upstream batch. */
  maxBatch: number;
  /** Keep-alive connections per upstream URL. */
  connections: number;
  /** HTTP/1.1 pipelining depth per connection (1 = off). */
  pipelining: number;
}

/**
 * `GET /metrics` (Prometheus text format). Who may read it:
 * - `token` set: any client presenting `Authorization: Bearer <token>` (compared in constant time); others get 401;
 * - no token (default): only clients connecting from the loopback interface without proxy headers (X-Forwarded-For,
 *   Forwarded, X-Real-IP), i.e. a Prometheus or an operator on the same host — never traffic relayed by a reverse
 *   proxy on that host; others get 403. Set a token when Prometheus scrapes from another host.
 * `enabled: false` answers 404.
 */
export interface MetricsConfig {
  enabled: boolean;
  /** Bearer token for /metrics (env RPCGATE_METRICS_TOKEN). At least 16 characters. */
  token?: string;
}

export interface Config {
  port: number;
  host: string;
  /** Data directory: the SQLite store (rpcgate.db), the server secret, the compiled contract cache. */
  dataDir: string;
  /** Static docs folder served at /docs/. */
  docsDir: string;
  /** The node contract served by rpc.discover. */
  openrpcPath: string;
  maxBodyBytes: number;
  maxBatchSize: number;
  /** Validate node results against the contract (on in tests and conformance). */
  strictResults: boolean;
  /** Host name → network. On a mapped host the network path segment is dropped: `/v2/{key}`, `/{key}`. */
  hostMap: Record<string, string>;
  /** Static API keys: work without accounts, on every network and both URL shapes unless restricted; no limits,
   *  no allowlists. For operators' own tools and development. */
  keys: (string | KeyConfig)[];
  /**
   * Dev mode: a random development key, generated at start and printed, valid everywhere (a static key).
   * Off unless asked for (`rpcgate start --dev-key`, which `npm start` passes): in production keys come from
   * accounts (and from static `keys`).
   * Env RPCGATE_DEV_KEY.
   */
  devKey?: boolean;
  /**
   * Chains of this deployment, by the name an app's `chain` holds (compared case-insensitively) → the networks an
   * app key of that chain works on. An empty list = every configured network. Default: one chain, `ethereum`, on
   * every network (mainnet and testnet). An app whose chain is not listed works on no network (403).
   */
  chains: Record<string, string[]>;
  /** PostgreSQL connection string (env DATABASE_URL); absent = SQLite in `dataDir`. */
  databaseUrl?: string;
  /** Redis URL (env REDIS_URL): limit counters shared by replicas; absent = in-process counters. */
  redisUrl?: string;
  /** Key prefix of the limit counters in Redis (default `rpcgate:limits`; env RPCGATE_REDIS_PREFIX). */
  redisPrefix?: string;
  /** Server secret (64 hex digits or base64 of 32 bytes; env RPCGATE_SECRET); absent = `<dataDir>/server-secret`. */
  secret?: string;
  /**
   * Reverse proxies in front of rpcgate that append to X-Forwarded-For (for IP allowlists): 0/false = use the socket
   * peer; n (true = 1) = the n-th X-Forwarded-For entry from the right. Env RPCGATE_TRUST_PROXY.
   */
  trustProxy: boolean | number;
  /** Request limits: A plan per app (perSecond, daily, monthly) and B daily quota per user (src/gateway/limits/plans.ts). */
  limits: LimitsConfig;
  networks: Record<string, NetworkConfig>;
  upstream: UpstreamConfig;
  logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'silent';
  /**
   * Usage metering of node API calls (per-minute counts flushed to the store, Prometheus request series). Default
   * true; `false` only for comparisons (the bench) — the Metrics tab then has no data. Env RPCGATE_METERING.
   */
  metering: boolean;
  /** `GET /metrics`: see MetricsConfig. Default enabled, loopback only. */
  metrics: MetricsConfig;
  /** Node API requests slower than this (ms) are logged at warn. Default 2000. */
  slowRequestMs: number;
  /**
   * How long usage is kept at each resolution (src/gateway/store/usage.ts DEFAULT_RETENTION when absent): minute rows
   * older than `minuteRetentionMs` (default 2 days) are rolled up into hours, hour rows older than
   * `hourRetentionMs` (90 days) into days, day rows older than `dayRetentionMs` deleted (default: kept).
   * Applied at start and every 15 minutes.
   */
  usageRetention?: { minuteRetentionMs?: number; hourRetentionMs?: number; dayRetentionMs?: number };
}

/** A partial config as read from a file, env or flags (networks and upstream merge field by field). */
export type ConfigInput = Partial<Omit<Config, 'networks' | 'upstream' | 'metrics'>> & {
  networks?: Record<string, Partial<NetworkConfig> | null>;
  upstream?: Partial<UpstreamConfig>;
  metrics?: Partial<MetricsConfig>;
};

export const defaults: Config = {
  port: 8080,
  host: '127.0.0.1',
  dataDir: '.data',
  docsDir: PATHS.docs,
  openrpcPath: PATHS.openrpc,
  maxBodyBytes: 1024 * 1024,
  maxBatchSize: 100,
  strictResults: false,
  hostMap: {},
  keys: [],
  chains: { ethereum: [] },
  trustProxy: false,
  limits: {},
  networks: {
    // Anvil's default chain id for mainnet, the next one for testnet: distinct, so a client sees which it reached.
    mainnet: { upstreams: [], chainId: 31337, blockTime: 2 },
    testnet: { upstreams: [], chainId: 31338, blockTime: 2 },
  },
  upstream: {
    connectTimeoutMs: 3000,
    requestTimeoutMs: 10_000,
    probeIntervalMs: 1000,
    coalesce: true,
    maxBatch: 100,
    connections: 16,
    pipelining: 1,
  },
  logLevel: 'info',
  metering: true,
  metrics: { enabled: true },
  slowRequestMs: 2000,
};

const networkSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['upstreams', 'chainId', 'blockTime'],
  properties: {
    upstreams: { type: 'array', items: { type: 'string', pattern: '^https?://' } },
    chainId: { type: 'integer', minimum: 1 },
    blockTime: { type: 'number', exclusiveMinimum: 0 },
  },
} as const;

const configSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['port', 'host', 'dataDir', 'docsDir', 'openrpcPath', 'maxBodyBytes', 'maxBatchSize', 'strictResults', 'hostMap', 'keys', 'chains', 'trustProxy', 'limits', 'networks', 'upstream', 'logLevel'],
  properties: {
    port: { type: 'integer', minimum: 0, maximum: 65535 },
    host: { type: 'string', minLength: 1 },
    dataDir: { type: 'string', minLength: 1 },
    docsDir: { type: 'string', minLength: 1 },
    openrpcPath: { type: 'string', minLength: 1 },
    maxBodyBytes: { type: 'integer', minimum: 64 },
    maxBatchSize: { type: 'integer', minimum: 1 },
    strictResults: { type: 'boolean' },
    hostMap: { type: 'object', additionalProperties: { type: 'string', pattern: '^[A-Za-z0-9_-]+$' } },
    keys: {
      type: 'array',
      items: {
        anyOf: [
          { type: 'string', pattern: '^[A-Za-z0-9_-]{8,128}$' },
          {
            type: 'object',
            additionalProperties: false,
            required: ['key'],
            properties: {
              key: { type: 'string', pattern: '^[A-Za-z0-9_-]{8,128}$' },
              name: { type: 'string' },
              networks: { type: 'array', items: { type: 'string' } },
              accessPoints: { type: 'array', items: { enum: ['A', 'B'] } },
            },
          },
        ],
      },
    },
    devKey: { type: 'boolean' },
    chains: {
      type: 'object',
      propertyNames: { minLength: 1, maxLength: 64 },
      additionalProperties: { type: 'array', items: { type: 'string' } },
    },
    databaseUrl: { type: 'string', pattern: '^postgres(ql)?://' },
    redisUrl: { type: 'string', pattern: '^rediss?://' },
    redisPrefix: { type: 'string', minLength: 1 },
    secret: { type: 'string' },
    trustProxy: { anyOf: [{ type: 'boolean' }, { type: 'integer', minimum: 0, maximum: 16 }] },
    limits: {
      type: 'object',
      additionalProperties: false,
      properties: {
        a: {
          type: 'object',
          additionalProperties: false,
          properties: {
            perSecond: { type: ['integer', 'null'], minimum: 0 },
            daily: { type: ['integer', 'null'], minimum: 0 },
            monthly: { type: ['integer', 'null'], minimum: 0 },
          },
        },
        b: { type: 'object', additionalProperties: false, properties: { dailyPerUser: { type: 'integer', minimum: 0 } } },
      },
    },
    networks: {
      type: 'object',
      minProperties: 1,
      propertyNames: { pattern: '^[a-z0-9][a-z0-9_-]*$', not: { enum: ['v2', 'docs', 'healthz', 'api'] } },
      additionalProperties: networkSchema,
    },
    upstream: {
      type: 'object',
      additionalProperties: false,
      required: ['connectTimeoutMs', 'requestTimeoutMs', 'probeIntervalMs', 'coalesce', 'maxBatch', 'connections', 'pipelining'],
      properties: {
        connectTimeoutMs: { type: 'integer', minimum: 1 },
        requestTimeoutMs: { type: 'integer', minimum: 1 },
        probeIntervalMs: { type: 'integer', minimum: 10 },
        coalesce: { type: 'boolean' },
        maxBatch: { type: 'integer', minimum: 1, maximum: 10_000 },
        connections: { type: 'integer', minimum: 1 },
        pipelining: { type: 'integer', minimum: 1, maximum: 64 },
      },
    },
    logLevel: { enum: ['fatal', 'error', 'warn', 'info', 'debug', 'silent'] },
    metering: { type: 'boolean' },
    metrics: {
      type: 'object',
      additionalProperties: false,
      required: ['enabled'],
      properties: { enabled: { type: 'boolean' }, token: { type: 'string', minLength: 16 } },
    },
    slowRequestMs: { type: 'integer', minimum: 1 },
    usageRetention: {
      type: 'object',
      additionalProperties: false,
      properties: {
        minuteRetentionMs: { type: 'integer', minimum: 0 },
        hourRetentionMs: { type: 'integer', minimum: 0 },
        dayRetentionMs: { type: 'integer', minimum: 0 },
      },
    },
  },
} as const;

export class ConfigError extends Error {}

let validateConfig: ReturnType<Ajv['compile']> | undefined;

/** Validates a complete config; throws ConfigError naming every bad field. */
export function validate(config: Config): Config {
  validateConfig ??= new Ajv({ allErrors: true, strict: false }).compile(configSchema);
  if (!validateConfig(config)) {
    const lines = (validateConfig.errors ?? []).map((e) => {
      const p = e.params as Record<string, unknown>;
      const extra = 'allowedValues' in p ? ` (${(p.allowedValues as unknown[]).join(', ')})` : 'additionalProperty' in p ? `: "${String(p.additionalProperty)}"` : '';
      return `  ${e.instancePath || '(root)'}: ${e.message ?? e.keyword}${extra}`;
    });
    throw new ConfigError(`invalid configuration:\n${lines.join('\n')}`);
  }
  for (const [host, network] of Object.entries(config.hostMap)) {
    if (!config.networks[network]) throw new ConfigError(`invalid configuration:\n  /hostMap/${host}: unknown network "${network}" (known: ${Object.keys(config.networks).join(', ')})`);
  }
  for (const [chain, nets] of Object.entries(config.chains)) {
    for (const n of nets) {
      if (!config.networks[n]) throw new ConfigError(`invalid configuration:\n  /chains/${chain}: unknown network "${n}" (known: ${Object.keys(config.networks).join(', ')})`);
    }
  }
  return config;
}

/** `config.chains` resolved: lower-cased chain → its networks (an empty list = every configured network). */
export function chainNetworks(config: Pick<Config, 'chains' | 'networks'>): Record<string, string[]> {
  const all = Object.keys(config.networks);
  const out: Record<string, string[]> = {};
  for (const [chain, nets] of Object.entries(config.chains)) out[chain.toLowerCase()] = nets.length === 0 ? all : [...nets];
  return out;
}

/** `config.trustProxy` as a hop count. */
export function trustProxyHops(config: Pick<Config, 'trustProxy'>): number {
  return config.trustProxy === true ? 1 : config.trustProxy === false ? 0 : config.trustProxy;
}

/** Whether the dev-mode development key is generated (see `Config.devKey`). */
export function devKeyEnabled(config: Pick<Config, 'devKey' | 'keys'>): boolean {
  return config.devKey === true;
}

/** Merges layers onto a base: networks and upstream field by field, other fields replaced. */
export function merge(base: Config, ...layers: (ConfigInput | undefined)[]): Config {
  let out: Config = { ...base, networks: { ...base.networks }, upstream: { ...base.upstream }, hostMap: { ...base.hostMap }, metrics: { ...base.metrics } };
  for (const layer of layers) {
    if (!layer) continue;
    const { networks, upstream, hostMap, metrics, ...rest } = layer;
    out = { ...out, ...dropUndefined(rest) };
    if (upstream) out.upstream = { ...out.upstream, ...dropUndefined(upstream) };
    if (metrics) out.metrics = { ...out.metrics, ...dropUndefined(metrics) };
    if (hostMap) out.hostMap = { ...out.hostMap, ...hostMap };
    if (networks) {
      for (const [name, net] of Object.entries(networks)) {
        // `"testnet": null` in a config file removes a default network.
        if (net === null) {
          delete out.networks[name];
          continue;
        }
        const prev = out.networks[name] ?? { upstreams: [], chainId: 31337 + Object.keys(out.networks).length, blockTime: 2 };
        out.networks[name] = { ...prev, ...dropUndefined(net ?? {}) } as NetworkConfig;
      }
    }
  }
  return out;
}

function dropUndefined<T extends object>(o: T): Partial<T> {
  const r: Partial<T> = {};
  for (const [k, v] of Object.entries(o)) if (v !== undefined) (r as Record<string, unknown>)[k] = v;
  return r;
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

const list = (s: string) => s.split(',').map((x) => x.trim()).filter(Boolean);

/** `host=network,host2=network2` → map. */
export function parseHostMap(s: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const pair of list(s)) {
    const i = pair.indexOf('=');
    if (i <= 0) throw new ConfigError(`invalid host map entry "${pair}" (expected host=network)`);
    out[pair.slice(0, i).trim().toLowerCase()] = pair.slice(i + 1).trim();
  }
  return out;
}

function bool(name: string, s: string): boolean {
  if (/^(1|true|yes|on)$/i.test(s)) return true;
  if (/^(0|false|no|off)$/i.test(s)) return false;
  throw new ConfigError(`${name} must be true or false, got "${s}"`);
}

function int(name: string, s: string): number {
  if (!/^\d+$/.test(s.trim())) throw new ConfigError(`${name} must be a non-negative integer, got "${s}"`);
  return Number(s);
}

/**
 * Environment layer. RPCGATE_PORT, RPCGATE_HOST, RPCGATE_DATA_DIR, RPCGATE_DOCS_DIR, RPCGATE_MAX_BODY_BYTES,
 * RPCGATE_MAX_BATCH_SIZE, RPCGATE_STRICT_RESULTS, RPCGATE_KEYS (comma list), RPCGATE_HOST_MAP (host=network,…),
 * RPCGATE_DEV_KEY, RPCGATE_TRUST_PROXY (true/false or a hop count), DATABASE_URL (or RPCGATE_DATABASE_URL),
 * REDIS_URL (or RPCGATE_REDIS_URL), RPCGATE_SECRET,
 * RPCGATE_COALESCE, RPCGATE_UPSTREAM_TIMEOUT_MS, RPCGATE_UPSTREAM_CONNECT_TIMEOUT_MS, RPCGATE_LOG_LEVEL,
 * RPCGATE_METERING, RPCGATE_METRICS (enabled), RPCGATE_METRICS_TOKEN, and per
 * network RPCGATE_<NETWORK>_UPSTREAMS (comma list) and RPCGATE_<NETWORK>_CHAIN_ID.
 */
export function fromEnv(env: NodeJS.ProcessEnv, networkNames: string[]): ConfigInput {
  const c: ConfigInput = {};
  const e = (k: string) => {
    const v = env[`RPCGATE_${k}`];
    return v === undefined || v === '' ? undefined : v;
  };
  let v: string | undefined;
  if ((v = e('PORT'))) c.port = int('RPCGATE_PORT', v);
  if ((v = e('HOST'))) c.host = v;
  if ((v = e('DATA_DIR'))) c.dataDir = v;
  if ((v = e('DOCS_DIR'))) c.docsDir = v;
  if ((v = e('MAX_BODY_BYTES'))) c.maxBodyBytes = int('RPCGATE_MAX_BODY_BYTES', v);
  if ((v = e('MAX_BATCH_SIZE'))) c.maxBatchSize = int('RPCGATE_MAX_BATCH_SIZE', v);
  if ((v = e('STRICT_RESULTS'))) c.strictResults = bool('RPCGATE_STRICT_RESULTS', v);
  if ((v = e('KEYS'))) c.keys = list(v);
  if ((v = e('HOST_MAP'))) c.hostMap = parseHostMap(v);
  if ((v = e('DEV_KEY'))) c.devKey = bool('RPCGATE_DEV_KEY', v);
  if ((v = e('TRUST_PROXY'))) c.trustProxy = /^\d+$/.test(v.trim()) ? int('RPCGATE_TRUST_PROXY', v) : bool('RPCGATE_TRUST_PROXY', v);
  if ((v = e('DATABASE_URL') ?? env.DATABASE_URL)) c.databaseUrl = v;
  if ((v = e('REDIS_URL') ?? env.REDIS_URL)) c.redisUrl = v;
  if ((v = e('REDIS_PREFIX'))) c.redisPrefix = v;
  if ((v = e('SECRET'))) c.secret = v;
  if ((v = e('LOG_LEVEL'))) c.logLevel = v as Config['logLevel'];
  if ((v = e('METERING'))) c.metering = bool('RPCGATE_METERING', v);
  const metrics: Partial<MetricsConfig> = {};
  if ((v = e('METRICS'))) metrics.enabled = bool('RPCGATE_METRICS', v);
  if ((v = e('METRICS_TOKEN'))) metrics.token = v;
  if (Object.keys(metrics).length) c.metrics = metrics;
  const up: Partial<UpstreamConfig> = {};
  if ((v = e('COALESCE'))) up.coalesce = bool('RPCGATE_COALESCE', v);
  if ((v = e('UPSTREAM_TIMEOUT_MS'))) up.requestTimeoutMs = int('RPCGATE_UPSTREAM_TIMEOUT_MS', v);
  if ((v = e('UPSTREAM_CONNECT_TIMEOUT_MS'))) up.connectTimeoutMs = int('RPCGATE_UPSTREAM_CONNECT_TIMEOUT_MS', v);
  if (Object.keys(up).length) c.upstream = up;
  const nets: Record<string, Partial<NetworkConfig>> = {};
  for (const name of networkNames) {
    const N = name.toUpperCase().replace(/-/g, '_');
    const n: Partial<NetworkConfig> = {};
    if ((v = e(`${N}_UPSTREAMS`)) !== undefined) n.upstreams = list(v);
    if ((v = e(`${N}_CHAIN_ID`))) n.chainId = int(`RPCGATE_${N}_CHAIN_ID`, v);
    if (Object.keys(n).length) nets[name] = n;
  }
  if (Object.keys(nets).length) c.networks = nets;
  return c;
}

export interface LoadOptions {
  /** Path of a JSON config file (`--config`, or RPCGATE_CONFIG). */
  configFile?: string;
  env?: NodeJS.ProcessEnv;
  /** Highest-priority layer (CLI flags, or a test's config). */
  overrides?: ConfigInput;
}

/** defaults ← file ← env ← overrides, then validated. Relative dataDir is resolved against the cwd. */
export function loadConfig(opts: LoadOptions = {}): Config {
  const env = opts.env ?? process.env;
  const file = opts.configFile ?? env.RPCGATE_CONFIG;
  const fileLayer = file ? readConfigFile(file) : undefined;
  const names = new Set([...Object.keys(defaults.networks), ...Object.keys(fileLayer?.networks ?? {}), ...Object.keys(opts.overrides?.networks ?? {})]);
  const config = merge(defaults, fileLayer, fromEnv(env, [...names]), opts.overrides);
  // Host names compare case-insensitively (the Host header is lower-cased before lookup).
  config.hostMap = Object.fromEntries(Object.entries(config.hostMap).map(([h, n]) => [h.toLowerCase(), n]));
  validate(config);
  config.dataDir = resolve(config.dataDir);
  config.docsDir = resolve(config.docsDir);
  config.openrpcPath = resolve(config.openrpcPath);
  return config;
}
