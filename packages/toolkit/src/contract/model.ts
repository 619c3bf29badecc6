// Reads one OpenRPC document (any version schema-utils-js knows: 1.0.0-rc0 … 1.4.x) and turns it into the normalised
// model every consumer uses (codegen, docs, mock, conformance, the runtime validators).
// Validation is @open-rpc/schema-utils-js's job (parseOpenRPCDocument); its dereferencer runs out of memory on a
// recursive schema, so the fully dereferenced copy is made here (a recursion point stays a `$ref`). The model keeps
// schema `$ref`s to `#/components/schemas/*` intact (types and validators want named, shared schemas), inlines refs that
// point *into* a schema (`#/components/schemas/X/properties/y`, `…/items`, `…/oneOf/0`), and resolves the OpenRPC-level
// references (content descriptors, errors, examples, example pairings, tags) itself.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { parseOpenRPCDocument } from '@open-rpc/schema-utils-js';
import { DerefBudget, type DocumentLimits } from './bounds.js';

export interface ContractSpec {
  /** Short name: output goes to generated/<name>/ and docs/api/<name>/. */
  readonly name: string;
  /** Where the document came from: a path (relative to the repository root for the project's own contracts) or an
   *  http(s) URL. */
  readonly file: string;
}

// biome-ignore lint/suspicious/noExplicitAny: a contract is untyped JSON walked by shape checks everywhere; typing it `unknown` would put a cast at each of ~500 reads without making one of them safer
export type Json = any;

export interface ParamModel {
  /** Name as in the contract. */
  name: string;
  /** Identifier used as tuple label / variable name. */
  label: string;
  required: boolean;
  summary?: string;
  description?: string;
  /** Schema with `#/components/schemas/*` refs intact. */
  schema: Json;
  /** Fully dereferenced schema (for docs). */
  deref: Json;
}

export interface ErrorModel {
  code: number;
  message: string;
  data?: Json;
  /** HTTP statuses the service answers this error with (see errorHttpStatus). */
  httpStatus: number[];
}

export interface ExampleModel {
  name: string;
  summary?: string;
  description?: string;
  params: { name: string; value: Json }[];
  result?: { name: string; value: Json };
}

export interface MethodModel {
  name: string;
  /** PascalCase base for type names: eth_getBalance → EthGetBalance, rpc.discover → RpcDiscover. */
  typeBase: string;
  summary: string;
  description?: string;
  deprecated: boolean;
  tags: string[];
  paramStructure: 'by-position' | 'by-name' | 'either';
  params: ParamModel[];
  result?: { name: string; description?: string; schema: Json; deref: Json };
  errors: ErrorModel[];
  examples: ExampleModel[];
  /** The method object's specification extensions (every `x-…` key, document order), verbatim: codegen gives them no
   *  meaning, it carries them into the descriptor for whoever reads them. */
  ext: [string, Json][];
}

export interface ServerModel {
  name: string;
  url: string;
  summary?: string;
  description?: string;
  variables: { name: string; default: string; enum?: string[]; description?: string }[];
}

export interface ContractModel {
  spec: ContractSpec;
  /** PascalCase of spec.name (NodeMethods, …). */
  pascal: string;
  title: string;
  version: string;
  description?: string;
  /** The document exactly as given (what rpc.discover answers), validated. */
  document: Json;
  /** The document with component refs intact and refs into schemas inlined (what the writers read). */
  raw: Json;
  /** The dereferenced document. */
  deref: Json;
  /** components.schemas, in document order. */
  schemas: [string, Json][];
  methods: MethodModel[];
  servers: ServerModel[];
}

export const pascalCase = (s: string): string =>
  s
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean)
    .map((w) => w[0].toUpperCase() + w.slice(1))
    .join('');

export const camelIdentifier = (s: string): string => {
  const p = pascalCase(s);
  const id = p ? p[0].toLowerCase() + p.slice(1) : 'param';
  return /^[0-9]/.test(id) ? `_${id}` : id;
};

const SCHEMA_REF = '#/components/schemas/';

/** Name of the component a `{ $ref: '#/components/schemas/X' }` points at, else undefined. */
export const refName = (schema: Json): string | undefined =>
  schema && typeof schema.$ref === 'string' && schema.$ref.startsWith(SCHEMA_REF)
    ? decodeURIComponent(schema.$ref.slice(SCHEMA_REF.length))
    : undefined;

function pointer(doc: Json, ref: string): Json {
  if (!ref.startsWith('#/')) throw new Error(`only local references are supported here: ${ref}`);
  let cur = doc;
  for (const part of ref.slice(2).split('/')) {
    const key = decodeURIComponent(part.replace(/~1/g, '/').replace(/~0/g, '~'));
    if (cur == null || !(key in cur)) throw new Error(`unresolvable reference ${ref}`);
    cur = cur[key];
  }
  return cur;
}

/** Follows OpenRPC-level `$ref`s (content descriptors, errors, examples); leaves schemas alone. */
export const resolve = (doc: Json, obj: Json): Json => {
  let cur = obj;
  for (let i = 0; cur && typeof cur.$ref === 'string' && i < 32; i++) cur = pointer(doc, cur.$ref);
  return cur;
};

/** A `$ref` that names a whole schema component (kept as a named type). */
const isComponentRef = (ref: string): boolean =>
  ref.startsWith(SCHEMA_REF) && !ref.slice(SCHEMA_REF.length).includes('/');

/**
 * A copy of the document in which every schema `$ref` that does not name a whole component (a JSON pointer into one,
 * e.g. `#/components/schemas/Payload/properties/timestamp`, or anywhere else in the document) is replaced by the
 * schema it points at. Named component refs stay (they become named types and shared validators); a pointer chain
 * that loops back on itself stops after 64 steps with an error naming the ref.
 */
export function inlineInnerRefs(doc: Json, budget = new DerefBudget()): Json {
  const out = structuredClone(doc);
  const walk = (node: Json, depth: number): Json => {
    if (!node || typeof node !== 'object') return node;
    budget.node('inlining references into schemas');
    if (Array.isArray(node)) return node.map((n) => walk(n, depth));
    if (
      typeof node.$ref === 'string' &&
      node.$ref.startsWith('#/') &&
      !isComponentRef(node.$ref) &&
      !isOpenRpcRef(node.$ref)
    ) {
      if (depth > 64) throw new Error(`reference ${node.$ref} does not resolve to a schema (loop)`);
      budget.expand(node.$ref, depth + 1);
      // walk copies what it returns: the target needs no clone of its own.
      const target = pointer(doc, node.$ref);
      const { $ref: _drop, ...siblings } = node;
      return walk({ ...target, ...siblings }, depth + 1);
    }
    // fromEntries defines keys: a property named __proto__ stays a property
    return Object.fromEntries(Object.entries(node).map(([k, v]) => [k, walk(v, depth)]));
  };
  for (const key of ['methods', 'components']) if (out[key]) out[key] = walk(out[key], 0);
  return out;
}

/**
 * The document with every reference resolved: OpenRPC objects (content descriptors, errors, examples, tags) and schema
 * components inlined — except where a component refers back to one it is already inside (a recursive schema), which
 * stays `{ $ref }` so the result is a finite tree that JSON can hold. Used for the docs and reference validators.
 */
export function dereference(doc: Json, budget = new DerefBudget()): Json {
  // Every copy is counted (budget): components that each refer to the next several times would otherwise expand
  // exponentially ("billion laughs").
  const schemaOf = (node: Json, inside: readonly string[]): Json => {
    if (!node || typeof node !== 'object') return node;
    budget.node(inside.length ? `#/components/schemas/${inside[inside.length - 1]}` : 'dereferencing');
    if (Array.isArray(node)) return node.map((n) => schemaOf(n, inside));
    if (typeof node.$ref === 'string' && isComponentRef(node.$ref)) {
      const name = decodeURIComponent(node.$ref.slice(SCHEMA_REF.length));
      if (inside.includes(name)) return node;
      budget.expand(node.$ref, inside.length + 1);
      const { $ref: _drop, ...siblings } = node;
      return { ...schemaOf(pointer(doc, node.$ref), [...inside, name]), ...siblings };
    }
    return Object.fromEntries(Object.entries(node).map(([k, v]) => [k, schemaOf(v, inside)]));
  };
  const descriptor = (cd: Json): Json => {
    const d = resolve(doc, cd);
    return d && typeof d === 'object' ? { ...d, schema: schemaOf(d.schema, []) } : d;
  };
  const out = structuredClone(doc);
  out.methods = (doc.methods ?? []).map((m0: Json) => {
    const m = resolve(doc, m0);
    return {
      ...m,
      params: (m.params ?? []).map(descriptor),
      ...(m.result ? { result: descriptor(m.result) } : {}),
      ...(m.errors ? { errors: m.errors.map((e: Json) => resolve(doc, e)) } : {}),
      ...(m.examples
        ? {
            examples: m.examples.map((x: Json) => {
              const e = resolve(doc, x);
              return {
                ...e,
                params: (e.params ?? []).map((p: Json) => resolve(doc, p)),
                ...(e.result ? { result: resolve(doc, e.result) } : {}),
              };
            }),
          }
        : {}),
      ...(m.tags ? { tags: m.tags.map((t: Json) => resolve(doc, t)) } : {}),
    };
  });
  if (doc.components?.schemas) {
    out.components.schemas = Object.fromEntries(
      Object.entries(doc.components.schemas).map(([k, v]) => [k, schemaOf(v, [k])]),
    );
  }
  return out;
}

/** Refs to OpenRPC objects (content descriptors, errors, examples, …): resolved by the model, not inlined. */
const isOpenRpcRef = (ref: string): boolean =>
  /^#\/components\/(contentDescriptors|errors|examples|examplePairingObjects|examplePairings|links|tags)\/[^/]+$/.test(
    ref,
  ) || /^#\/methods\/\d+$/.test(ref);

/**
 * HTTP statuses an error is answered with. The contract says so explicitly (`x-http-status` on the error
 * object, `data.httpStatus`, or "HTTP 4xx" in `data.description`, as openrpc.json does); otherwise 400 for the
 * JSON-RPC envelope errors and 200 for everything else (an application's own codes are its contract's to state).
 */
export function errorHttpStatus(e: Json): number[] {
  const explicit = e['x-http-status'] ?? (e.data && typeof e.data === 'object' ? e.data.httpStatus : undefined);
  if (typeof explicit === 'number') return [explicit];
  if (Array.isArray(explicit)) return explicit.filter((x) => typeof x === 'number');
  const text = [e.data && typeof e.data === 'object' ? e.data.description : undefined, e.description]
    .filter((x) => typeof x === 'string')
    .join(' ');
  const found = [...text.matchAll(/\bHTTP (\d{3})\b/g)].map((m) => Number(m[1]));
  if (found.length) return [...new Set(found)];
  switch (e.code) {
    case -32700:
    case -32600:
      return [400];
    default:
      return [200];
  }
}

/** A document's text from a file path or an http(s) URL (relative paths against `root`). */
export async function readDocument(source: string, root = process.cwd()): Promise<Json> {
  let text: string;
  if (/^https?:\/\//i.test(source)) {
    const res = await fetch(source, { headers: { accept: 'application/json' }, signal: AbortSignal.timeout(30_000) });
    if (!res.ok) throw new Error(`${source}: HTTP ${res.status}`);
    text = await res.text();
  } else {
    text = await readFile(path.resolve(root, source), 'utf8');
  }
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new Error(`${source}: not JSON (${(e as Error).message})`);
  }
}

/** Loads, validates and models a project's contract (`spec.file` relative to `root`). */
export async function loadContract(root: string, spec: ContractSpec, limits?: DocumentLimits): Promise<ContractModel> {
  return modelDocument(await readDocument(spec.file, root), spec, limits);
}

/** Loads any OpenRPC document (a path or an http(s) URL) and models it; `name` defaults to the file's base name.
 *  `limits` bound the work of dereferencing it (bounds.ts: DEFAULT_DOCUMENT_LIMITS). */
export async function loadDocument(source: string, name?: string, limits?: DocumentLimits): Promise<ContractModel> {
  const base =
    name ?? (path.basename(source.replace(/[?#].*$/, '')).replace(/\.(open)?rpc\.json$|\.json$/i, '') || 'api');
  return modelDocument(await readDocument(source), { name: base, file: source }, limits);
}

/** Validates (against the meta-schema of the document's `openrpc` version), dereferences and models a document. */
export async function modelDocument(input: Json, spec: ContractSpec, limits?: DocumentLimits): Promise<ContractModel> {
  if (!input || typeof input !== 'object' || typeof input.openrpc !== 'string')
    throw new Error(`${spec.file}: not an OpenRPC document (no "openrpc" version string)`);
  if (!Array.isArray(input.methods)) throw new Error(`${spec.file}: not an OpenRPC document (no "methods" array)`);
  // Validate against the OpenRPC meta-schema (refs kept), then dereference a separate copy for the docs.
  try {
    await parseOpenRPCDocument(structuredClone(input), { dereference: false, validate: true });
  } catch (e) {
    throw new Error(`${spec.file}: invalid OpenRPC ${input.openrpc} document: ${(e as Error).message}`);
  }
  const budget = new DerefBudget(limits);
  let raw: Json, deref: Json;
  try {
    raw = inlineInnerRefs(input, budget);
    deref = dereference(raw, budget);
  } catch (e) {
    if (e instanceof Error && e.name === 'DocumentLimitError') e.message = `${spec.file}: ${e.message}`;
    throw e;
  }

  const derefMethods: Json[] = deref.methods;
  const methods: MethodModel[] = (raw.methods as Json[]).map((m0, i) => {
    const m = resolve(raw, m0);
    const dm = derefMethods[i];
    const params: ParamModel[] = (m.params ?? []).map((p0: Json, j: number) => {
      const p = resolve(raw, p0);
      return {
        name: p.name,
        label: camelIdentifier(p.name),
        required: p.required === true,
        summary: p.summary,
        description: p.description,
        schema: p.schema,
        deref: dm.params[j].schema,
      };
    });
    // OpenRPC requires required params before optional ones for positional calls; a tuple type would not compile otherwise.
    const firstOptional = params.findIndex((p) => !p.required);
    if (firstOptional >= 0 && params.slice(firstOptional).some((p) => p.required))
      throw new Error(`${spec.file}: ${m.name}: a required param follows an optional one`);
    const labels = new Set<string>();
    for (const p of params) {
      while (labels.has(p.label)) p.label += '_';
      labels.add(p.label);
    }
    const r = m.result ? resolve(raw, m.result) : undefined;
    return {
      name: m.name,
      typeBase: pascalCase(m.name),
      summary: m.summary ?? '',
      description: m.description,
      deprecated: m.deprecated === true,
      tags: (m.tags ?? []).map((t: Json) => resolve(raw, t).name),
      paramStructure: m.paramStructure ?? 'either',
      params,
      result: r ? { name: r.name, description: r.description, schema: r.schema, deref: dm.result.schema } : undefined,
      errors: (m.errors ?? []).map((e0: Json) => {
        const e = resolve(raw, e0);
        return { code: e.code, message: e.message, data: e.data, httpStatus: errorHttpStatus(e) };
      }),
      examples: (m.examples ?? []).map((x0: Json) => {
        const x = resolve(raw, x0);
        return {
          name: x.name,
          summary: x.summary,
          description: x.description,
          params: (x.params ?? []).map((p: Json) => resolve(raw, p)),
          result: x.result ? resolve(raw, x.result) : undefined,
        };
      }),
      ext: Object.entries(m).filter(([k]) => k.startsWith('x-')),
    };
  });
  // Method names that clash after case conversion (eth_getFoo / eth.getFoo) get a numeric suffix in document order.
  const names = new Set<string>();
  for (const m of methods) {
    const plain = m.typeBase;
    for (let n = 2; names.has(m.typeBase); n++) m.typeBase = `${plain}${n}`;
    names.add(m.typeBase);
  }

  const servers: ServerModel[] = (raw.servers ?? []).map((s: Json) => ({
    name: s.name ?? s.url,
    url: s.url,
    summary: s.summary,
    description: s.description,
    variables: Object.entries(s.variables ?? {}).map(([name, v]: [string, Json]) => ({
      name,
      default: String(v.default),
      enum: v.enum,
      description: v.description,
    })),
  }));

  return {
    spec,
    pascal: pascalCase(spec.name),
    title: raw.info.title,
    version: raw.info.version,
    description: raw.info.description,
    document: input,
    raw,
    deref,
    schemas: Object.entries(raw.components?.schemas ?? {}),
    methods,
    servers,
  };
}

/** A server URL with its variables set to their defaults, except those given. */
export function expandServerUrl(s: ServerModel, values: Record<string, string> = {}): string {
  return s.url.replace(
    /\{([^}]+)\}/g,
    (_, v: string) => values[v] ?? s.variables.find((x) => x.name === v)?.default ?? `{${v}}`,
  );
}

/** The first example's positional params (by name where the example names them). */
export function exampleParams(m: MethodModel): Json[] {
  const x = m.examples[0];
  if (!x) return [];
  const byName = new Map(x.params.map((p) => [p.name, p.value]));
  const out: Json[] = [];
  for (const [i, p] of m.params.entries()) {
    const v = byName.has(p.name) ? byName.get(p.name) : x.params[i]?.value;
    if (v === undefined) {
      if (p.required) throw new Error(`${m.name}: example "${x.name}" lacks required param ${p.name}`);
      break; // optional trailing params may be omitted
    }
    out.push(v);
  }
  return out;
}
