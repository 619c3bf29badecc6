// Reads one OpenRPC document (any version schema-utils-js knows: 1.0.0-rc0 … 1.4.x) and turns it into the normalised
// model every consumer uses (codegen, docs, mock, conformance, the runtime validators).
// Validation is @open-rpc/schema-utils-js's job (parseOpenRPCDocument); its dereferencer runs out of memory on a
// recursive schema, so the fully dereferenced copy is made here (a recursion point stays a `$ref`). The model keeps
// schema `$ref`s to `#/components/schemas/*` intact (types and validators want named, shared schemas), inlines refs that
// point *into* a schema (`#/components/schemas/X/properties/y`, `…/items`, `…/oneOf/0`), and resolves the OpenRPC-level
// references (content descriptors, errors, examples, example pairings, tags) itself.
// Reading files and resolving refs across them is load.ts's job (a bundle with local refs only); checking the
// document against its meta-schema, leniently, is validate.ts's; every problem names its file and JSON pointer.
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { DerefBudget, type DocumentLimits } from './bounds.js';
import {
  bundle,
  define,
  isContainerKind,
  kindOfChild,
  readSource,
  withLines,
  type Kind,
  type LoadOptions,
  type SourceFile,
} from './load.js';
import { DocumentError, fromPointer, toPointer, valueAt, type DocumentProblem } from './parse.js';
import { checkDocument } from './validate.js';

export type { LoadOptions } from './load.js';
export { DocumentError, formatProblem, type DocumentProblem } from './parse.js';

export interface ContractSpec {
  /** Short name: output goes to generated/<name>/ and docs/api/<name>/. */
  readonly name: string;
  /** Where the document came from: a path (relative to the repository root for the project's own contracts) or an
   *  http(s) URL. */
  readonly file: string;
}

// The untyped-JSON type lives at the bottom of contract/ (./parse.ts), so load/validate/meta-schema need not import
// this file (which imports them).
export type { Json } from './parse.js';
import type { Json } from './parse.js';

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
  /** What the document breaks without stopping anyone from reading it (a loose version string, a relative server URL,
   *  a required param after an optional one, a method without a required result, an unknown property), each with
   *  the file and JSON pointer. Every command prints them; `strict` (`--strict`) makes them errors. */
  warnings: DocumentProblem[];
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
  if (!ref.startsWith('#'))
    throw new Error(`reference ${ref} is not local: load the document with loadDocument to resolve it`);
  const segs = fromPointer(ref);
  const got = valueAt(doc, segs);
  if (got.ok) return got.node;
  const i = got.missing;
  throw new Error(`reference ${ref} does not resolve: ${toPointer(segs.slice(0, i))} has no "${segs[i]}"`);
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
 * schema it points at. Named component refs stay (they become named types and shared validators) — in schema
 * positions. A ref under a key that is no schema keyword (a property map written without `properties`, a content
 * descriptor inside a `oneOf`, a component holding `{schema}`) is inlined whole, refs inside it too, a recursion
 * becoming `{}`: no writer walks such keys, so nothing there may still point elsewhere. A pointer chain that loops back
 * on itself stops after 64 steps with an error naming the ref.
 */
export function inlineInnerRefs(doc: Json, budget = new DerefBudget()): Json {
  const walk = (node: Json, kind: Kind, at: (string | number)[], depth: number, stack: readonly string[]): Json => {
    if (!node || typeof node !== 'object') return node;
    if (kind === 'data') return structuredClone(node);
    budget.node('inlining references into schemas');
    const own = at[at.length - 1];
    if (Array.isArray(node)) return node.map((n, i) => walk(n, kindOfChild(kind, i, own), [...at, i], depth, stack));
    const ref = node.$ref;
    if (typeof ref === 'string' && ref.startsWith('#') && !isContainerKind(kind)) {
      const { $ref: _drop, ...siblings } = node;
      const where = () => `${toPointer([...at, '$ref'])}: `;
      if (kind === 'odd') {
        if (stack.includes(ref)) return walk(siblings, kind, at, depth, stack);
        budget.expand(ref, stack.length + 1);
        let target: Json;
        try {
          target = pointer(doc, ref);
        } catch (e) {
          throw new Error(where() + (e as Error).message);
        }
        return walk(
          target && typeof target === 'object' && !Array.isArray(target) ? { ...target, ...siblings } : target,
          kind,
          at,
          depth + 1,
          [...stack, ref],
        );
      }
      if ((kind === 'schema' || kind === 'plain') && !isComponentRef(ref) && !isOpenRpcRef(ref)) {
        if (depth > 64) throw new Error(`${where()}reference ${ref} does not resolve to a schema (loop)`);
        budget.expand(ref, depth + 1);
        let target: Json;
        try {
          target = pointer(doc, ref);
        } catch (e) {
          throw new Error(where() + (e as Error).message);
        }
        // walk copies what it returns: the target needs no clone of its own.
        return walk(
          target && typeof target === 'object' && !Array.isArray(target) ? { ...target, ...siblings } : target,
          kind,
          at,
          depth + 1,
          stack,
        );
      }
    }
    const out: Json = {};
    for (const [k, v] of Object.entries(node))
      define(out, k, walk(v, kindOfChild(kind, k, own), [...at, k], depth, stack));
    return out;
  };
  return walk(doc, 'root', [], 0, []);
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

/** A document from a file path or an http(s) URL (relative paths against `root`), JSON or YAML, parsed (refs as
 *  written). A syntax error names the file, line and column. */
export async function readDocument(source: string, root = process.cwd()): Promise<Json> {
  return (await readSource(source, { cwd: root })).json;
}

/** Loads, validates and models a project's contract (`spec.file` relative to `root`). */
export async function loadContract(
  root: string,
  spec: ContractSpec,
  limits?: DocumentLimits,
  options: LoadOptions = {},
): Promise<ContractModel> {
  const opts = { cwd: root, ...options };
  return modelSource(await readSource(spec.file, opts), spec, limits, opts);
}

/** Loads any OpenRPC document (a path or an http(s) URL; JSON or YAML) and every file its `$ref`s reach, and models
 *  it; `name` defaults to the file's base name. `limits` bound the work of dereferencing it (bounds.ts:
 *  DEFAULT_DOCUMENT_LIMITS); `options` say which refs may be followed (load.ts: LoadOptions) and whether warnings are
 *  errors. */
export async function loadDocument(
  source: string,
  name?: string,
  limits?: DocumentLimits,
  options: LoadOptions = {},
): Promise<ContractModel> {
  const base =
    name ??
    (path.basename(source.replace(/[?#].*$/, '')).replace(/\.(open)?rpc\.(json|ya?ml)$|\.(json|ya?ml)$/i, '') || 'api');
  return modelSource(await readSource(source, options), { name: base, file: source }, limits, options);
}

/** Validates (against the meta-schema of the document's `openrpc` version), dereferences and models a document given
 *  as an object. Relative file refs in it resolve against `spec.file` when that is a path, else the working directory
 *  (which is then the folder tree refs may read). */
export async function modelDocument(
  input: Json,
  spec: ContractSpec,
  limits?: DocumentLimits,
  options: LoadOptions = {},
): Promise<ContractModel> {
  const cwd = options.cwd ?? process.cwd();
  const uri = /^https?:\/\//i.test(spec.file)
    ? spec.file
    : pathToFileURL(path.resolve(cwd, /^<.*>$/.test(spec.file) ? 'document.json' : spec.file)).href;
  const src: SourceFile = { uri, display: /^https?:/i.test(uri) ? uri : spec.file, text: '', json: input };
  return modelSource(src, spec, limits, options);
}

async function modelSource(
  src: SourceFile,
  spec: ContractSpec,
  limits: DocumentLimits | undefined,
  options: LoadOptions,
): Promise<ContractModel> {
  const input = src.json;
  const file = src.display || spec.file;
  if (!input || typeof input !== 'object' || Array.isArray(input) || typeof input.openrpc !== 'string')
    throw new DocumentError([{ file, pointer: '#', message: 'not an OpenRPC document (no "openrpc" version string)' }]);
  if (!Array.isArray(input.methods))
    throw new DocumentError([{ file, pointer: '#/methods', message: 'not an OpenRPC document (no "methods" array)' }]);
  const budget = new DerefBudget(limits);
  let b: Awaited<ReturnType<typeof bundle>>;
  try {
    b = await bundle(src, options, budget);
  } catch (e) {
    if (e instanceof Error && e.name === 'DocumentLimitError') e.message = `${file}: ${e.message}`;
    throw e;
  }
  const document = b.document;
  // A pointer into a component imported from another file names that file.
  const place = (pointer: string, message: string): DocumentProblem => {
    const segs = fromPointer(pointer);
    if (segs[0] === 'components' && segs[1] === 'schemas' && segs.length >= 3) {
      const origin = b.origins.get(segs[2]);
      if (origin && origin.file !== file)
        return { file: origin.file, pointer: toPointer([...fromPointer(origin.pointer), ...segs.slice(3)]), message };
    }
    const m = segs[0] === 'methods' && segs.length >= 2 ? document.methods?.[Number(segs[1])] : undefined;
    return {
      file,
      pointer,
      message: m && typeof m.name === 'string' && segs.length > 2 ? `in method ${m.name}: ${message}` : message,
    };
  };
  const checked = await checkDocument(document);
  if (checked.errors.length)
    throw new DocumentError(
      withLines(
        checked.errors.map((e) => place(e.pointer, e.message)),
        b.files,
      ),
      `${file}: invalid OpenRPC ${input.openrpc} document`,
    );
  const warnings: DocumentProblem[] = withLines(
    checked.warnings.map((w) => place(w.pointer, w.message)),
    b.files,
  );

  let raw: Json, deref: Json;
  try {
    raw = inlineInnerRefs(document, budget);
    deref = dereference(raw, budget);
  } catch (e) {
    if (e instanceof Error && e.name === 'DocumentLimitError') e.message = `${file}: ${e.message}`;
    else if (e instanceof Error && e.message.startsWith('#'))
      throw new DocumentError(
        withLines(
          [place(e.message.slice(0, e.message.indexOf(': ')), e.message.slice(e.message.indexOf(': ') + 2))],
          b.files,
        ),
      );
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
    // OpenRPC requires required params before optional ones. Positionally, an optional param before a required one
    // cannot be left out (the array has no holes): it is read as required, with a warning (by-name calls keep it
    // optional).
    const lastRequired = params.findLastIndex((p) => p.required);
    for (const [j, p] of params.entries()) {
      if (j >= lastRequired || p.required) continue;
      warnings.push({
        file,
        pointer: toPointer(['methods', i, 'params', j]),
        message: `in method ${m.name}: optional param "${p.name}" comes before required param "${params[lastRequired].name}"; ${m.paramStructure === 'by-name' ? 'by-name calls may still omit it' : 'read as required, since a positional call must pass it to reach the next'}`,
      });
      if (m.paramStructure !== 'by-name') p.required = true;
    }
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

  // the param-order warnings above are found after the meta-schema's were located: give them a line too
  warnings.splice(0, warnings.length, ...withLines(warnings, b.files));
  if (options.strict && warnings.length)
    throw new DocumentError(
      warnings.map((w) => ({ ...w, message: `${w.message} (an error with --strict)` })),
      `${file}: --strict, and the document has ${warnings.length} warning(s)`,
    );

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
    document,
    raw,
    deref,
    schemas: Object.entries(raw.components?.schemas ?? {}),
    methods,
    servers,
    warnings,
  };
}

/** A server URL with its variables set to their defaults, except those given. */
export function expandServerUrl(s: ServerModel, values: Record<string, string> = {}): string {
  return s.url.replace(
    /\{([^}]+)\}/g,
    (_, v: string) => values[v] ?? s.variables.find((x) => x.name === v)?.default ?? `{${v}}`,
  );
}

/** Positional params of one example pairing, as the engine hands them to a handler: by name where the example names
 *  a param, else by position; a missing value ends the list (trailing optional params may be left out). */
export function pairingParams(m: MethodModel, x: MethodModel['examples'][number]): unknown[] {
  const byName = new Map(x.params.map((p) => [p.name, p.value]));
  const out: unknown[] = [];
  for (const [i, p] of m.params.entries()) {
    const v = byName.has(p.name) ? byName.get(p.name) : x.params[i]?.value;
    if (v === undefined) break;
    out.push(v);
  }
  return out;
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
