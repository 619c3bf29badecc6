// JSON Reference across files (issue 19): reads a document and every file its `$ref`s reach, and bundles them into one
// self-contained document whose refs are all local (`#/…`), which the rest of the toolkit models.
// - A relative ref resolves against the referring file's location, or, where no such file exists, against the working
//   directory (published specs are written both ways: starknet-specs' api/*.json say `./api/starknet_api_openrpc.json`).
// - A schema in another file becomes a component of the bundle under a stable, collision-free name (its key, or its
//   file's name), so types and validators share it and recursion across files stays a finite `$ref` cycle; an OpenRPC
//   object in another file (content descriptor, error, example, …) is copied in where it is referenced.
// - A ref to a schema's `$id` URI resolves to the file of the document's tree that declares it (no fetch).
// - Policy, because a document is untrusted input: files only inside the document's folder tree (plus `refRoots`),
//   checked on the real path (symlinks cannot leave it); http(s) only with `allowRemoteRefs`, each fetch bounded in
//   size and time. A document never reads /etc/passwd or calls an internal address by itself.
// Hand-written rather than @apidevtools/json-schema-ref-parser: that library's resolvers cannot express "this folder
// tree only", the cwd fallback or `$id` lookup in sibling files, and it dereferences by key path, not by what a key
// means — a ref under a key that is not a schema keyword is exactly what it mishandled (issue 19 item 1).
import { readdir, readFile, realpath, stat } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { DerefBudget } from './bounds.js';
import type { Json } from './parse.js';
import { DocumentError, fromPointer, locate, parseText, toPointer, valueAt, type DocumentProblem } from './parse.js';

export interface LoadOptions {
  /** Fetch `$ref`s to http(s) URLs (CLI `--allow-remote-refs`). Default false: a remote ref is an error. */
  allowRemoteRefs?: boolean;
  /** Folders whose files refs may read besides the document's own folder tree (CLI `--ref-root <dir>`). */
  refRoots?: string[];
  /** Warnings (a document that breaks its meta-schema in ways that do not stop reading it) become errors (`--strict`). */
  strict?: boolean;
  /** Where relative refs resolve when no file exists beside the referring document. Default process.cwd(). */
  cwd?: string;
  /** Largest remote document fetched (bytes). Default 16 MiB. */
  maxRemoteBytes?: number;
  /** Time allowed for each remote document (ms). Default 15 s. */
  remoteTimeoutMs?: number;
}

/** Largest local file a document may pull in (the largest real documents are about 1.3 MB). */
const MAX_FILE_BYTES = 64 * 1024 * 1024;
/** Files (local and remote) one document may pull in. */
const MAX_FILES = 1000;
/** Files scanned for `$id` declarations when a ref names an `$id` no loaded file declares. */
const MAX_ID_SCAN_FILES = 2000;

/** A file or remote document taking part in a load. */
export interface SourceFile {
  /** `file:///abs/path` or the http(s) URL, without fragment. */
  uri: string;
  /** How problems name it: a path relative to the working directory when inside it, else absolute; a URL as is. */
  display: string;
  text: string;
  json: Json;
}

export const displayName = (uri: string, cwd: string): string => {
  if (!uri.startsWith('file:')) return uri;
  const abs = fileURLToPath(uri);
  const rel = path.relative(cwd, abs);
  return rel && !rel.startsWith('..') && !path.isAbsolute(rel) ? rel.split(path.sep).join('/') : abs;
};

const isRemote = (uri: string) => /^https?:/i.test(uri);
const stripFragment = (u: string) => u.replace(/#.*$/s, '');

/** Reads a remote document within the size and time limits. */
async function fetchText(url: string, maxBytes: number, timeoutMs: number): Promise<string> {
  const res = await fetch(url, {
    headers: { accept: 'application/json, application/yaml;q=0.9, */*;q=0.5' },
    signal: AbortSignal.timeout(timeoutMs),
  });
  if (!res.ok) throw new Error(`HTTP ${res.status}`);
  const declared = Number(res.headers.get('content-length'));
  if (declared > maxBytes) throw new Error(`larger than ${maxBytes} bytes (content-length ${declared})`);
  const chunks: Uint8Array[] = [];
  let size = 0;
  if (res.body) {
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
      size += chunk.byteLength;
      if (size > maxBytes) throw new Error(`larger than ${maxBytes} bytes`);
      chunks.push(chunk);
    }
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** Reads the document a user named: a path (relative to `cwd`) or an http(s) URL (the user asked for it: no flag). */
export async function readSource(source: string, opts: LoadOptions = {}): Promise<SourceFile> {
  const cwd = opts.cwd ?? process.cwd();
  if (/^https?:\/\//i.test(source)) {
    let text: string;
    try {
      text = await fetchText(source, opts.maxRemoteBytes ?? 16 * 1024 * 1024, opts.remoteTimeoutMs ?? 30_000);
    } catch (e) {
      throw new DocumentError([{ file: source, pointer: '#', message: errText(e) }]);
    }
    return { uri: stripFragment(source), display: source, text, json: parseText(text, source) };
  }
  const abs = path.resolve(cwd, source.startsWith('file:') ? fileURLToPath(source) : source);
  const uri = pathToFileURL(abs).href;
  const display = displayName(uri, cwd);
  let text: string;
  try {
    const st = await stat(abs);
    if (!st.isFile()) throw new Error('not a file');
    if (st.size > MAX_FILE_BYTES) throw new Error(`larger than ${MAX_FILE_BYTES} bytes`);
    text = await readFile(abs, 'utf8');
  } catch (e) {
    throw new DocumentError([{ file: display, pointer: '#', message: `cannot read: ${errText(e)}` }]);
  }
  return { uri, display, text, json: parseText(text, display) };
}

const errText = (e: unknown) => {
  const err = e as NodeJS.ErrnoException;
  if (err?.code === 'ENOENT') return 'no such file';
  if (err?.name === 'TimeoutError') return 'timed out';
  return err?.message ?? String(e);
};

// ---- where a key sits: what a `$ref` there means --------------------------------------------------------------------

/** What a node of an OpenRPC document is, which decides what a `$ref` in it means. `schema`: a JSON Schema; `odd`: inside
 *  a schema under a key that is no schema keyword (a property map written without `properties`, a content descriptor
 *  inside a `oneOf`, a component holding `{schema}`); `data`: values (examples, defaults, enums) whose `$ref` keys are
 *  data; `components`, `section` and `schemaMap` are containers (a `$ref` key in them is a name, not a reference); the
 *  rest are OpenRPC objects (`plain`: info, servers, tags, links, `x-` extensions, anything else). */
export type Kind =
  | 'root'
  | 'methods'
  | 'method'
  | 'cds'
  | 'cd'
  | 'errors'
  | 'error'
  | 'pairings'
  | 'pairing'
  | 'examples'
  | 'example'
  | 'components'
  | 'section'
  | 'schemaMap'
  | 'plain'
  | 'schema'
  | 'odd'
  | 'data';

const SCHEMA_MAPS = new Set([
  'properties',
  'patternProperties',
  'definitions',
  '$defs',
  'dependentSchemas',
  'dependencies',
]);
const SCHEMA_ONE = new Set([
  'allOf',
  'anyOf',
  'oneOf',
  'prefixItems',
  'additionalProperties',
  'additionalItems',
  'not',
  'if',
  'then',
  'else',
  'contains',
  'propertyNames',
  'unevaluatedProperties',
  'unevaluatedItems',
  'items',
]);
const SCHEMA_DATA = new Set(['const', 'enum', 'default', 'examples', 'example']);
export const isSchemaKind = (k: Kind): boolean => k === 'schema' || k === 'odd';
export const isContainerKind = (k: Kind): boolean => k === 'components' || k === 'section' || k === 'schemaMap';

/** The kind of the child `key` (a number for an array item) of a node of kind `kind` whose own key is `own`. */
export function kindOfChild(kind: Kind, key: string | number, own?: string | number): Kind {
  const index = typeof key === 'number';
  switch (kind) {
    case 'root':
      return key === 'methods' ? 'methods' : key === 'components' ? 'components' : 'plain';
    case 'methods':
      return index ? 'method' : 'plain';
    case 'method':
      return key === 'params'
        ? 'cds'
        : key === 'result'
          ? 'cd'
          : key === 'errors'
            ? 'errors'
            : key === 'examples'
              ? 'pairings'
              : 'plain';
    case 'cds':
      return index ? 'cd' : 'plain';
    case 'cd':
      return key === 'schema' ? 'schema' : 'plain';
    case 'errors':
      return index ? 'error' : 'plain';
    case 'error':
      return key === 'data' ? 'data' : 'plain';
    case 'pairings':
      return index ? 'pairing' : 'plain';
    case 'pairing':
      return key === 'params' ? 'examples' : key === 'result' ? 'example' : 'plain';
    case 'examples':
      return index ? 'example' : 'plain';
    case 'example':
      return key === 'value' ? 'data' : 'plain';
    case 'components':
      return 'section';
    case 'section':
      return componentKind(String(own));
    case 'schemaMap':
      return 'schema';
    case 'schema':
      if (index || SCHEMA_ONE.has(key)) return 'schema';
      if (SCHEMA_DATA.has(key)) return 'data';
      if (SCHEMA_MAPS.has(key)) return 'schemaMap';
      return 'odd';
    default:
      return kind;
  }
}

/** The kind of `components[section][name]`. */
export function componentKind(section: string): Kind {
  switch (section) {
    case 'schemas':
      return 'schema';
    case 'contentDescriptors':
      return 'cd';
    case 'errors':
      return 'error';
    case 'examples':
      return 'example';
    case 'examplePairings':
    case 'examplePairingObjects':
      return 'pairing';
    default:
      return 'plain';
  }
}

/** The kind of the node at `segments` of a document. */
export function kindAt(segments: readonly string[]): Kind {
  let kind: Kind = 'root';
  for (let i = 0; i < segments.length && kind !== 'data'; i++) {
    const s = segments[i];
    const arrayish = /^\d+$/.test(s) && ['methods', 'cds', 'errors', 'pairings', 'examples', 'schema'].includes(kind);
    kind = kindOfChild(kind, arrayish ? Number(s) : s, segments[i - 1]);
  }
  return kind;
}

/** Defines a key (an assignment of `__proto__` would set the prototype instead). */
export const define = (o: Json, k: string, value: Json): void => {
  Object.defineProperty(o, k, { value, enumerable: true, writable: true, configurable: true });
};

// ---- the bundler ------------------------------------------------------------------------------------------------------

/** What a bundle is made of: the document with local refs only, warnings met on the way, and where each imported
 *  component came from (so a problem inside one names its own file). */
export interface Bundle {
  document: Json;
  root: SourceFile;
  files: SourceFile[];
  /** Component name → the file and pointer it was imported from. */
  origins: Map<string, { file: string; pointer: string }>;
}

interface Target {
  file: SourceFile;
  segments: string[];
}

const SAFE_NAME = /[^A-Za-z0-9_-]+/g;

/** True when every `$ref` of `doc` is a local JSON pointer that resolves in it and no schema declares an `$id`: then
 *  the bundle is the document itself. A plain synchronous walk — far cheaper than the rewriting walk below, which
 *  runs only when a document needs it (and is what reports a broken ref by method and pointer). */
function selfContained(doc: Json): boolean {
  const resolves = (ref: string): boolean => ref === '#' || (ref.startsWith('#/') && valueAt(doc, fromPointer(ref)).ok);
  const stack: Json[] = [doc];
  let seen = 0;
  while (stack.length) {
    const node = stack.pop();
    if (++seen > 2_000_000) return false;
    if (Array.isArray(node)) {
      for (const v of node) if (v !== null && typeof v === 'object') stack.push(v);
      continue;
    }
    if (typeof node.$ref === 'string' && !resolves(node.$ref)) return false;
    if (node.$id !== undefined && typeof node.$id === 'string') return false;
    for (const k in node) {
      const v = node[k];
      if (v !== null && typeof v === 'object') stack.push(v);
    }
  }
  return true;
}

/** Where each ref sits, for messages: the chain of refs that led into an imported file. */
type Site = { file: SourceFile; at: (string | number)[] };

/**
 * Resolves every `$ref` of `root` (a document already read) and returns the bundle. Every problem (a ref that does not
 * resolve, a file outside the allowed tree, a remote ref without permission) is collected and thrown together as one
 * DocumentError naming file, pointer and, for a ref in a method, the method.
 */
export async function bundle(root: SourceFile, opts: LoadOptions, budget?: DerefBudget): Promise<Bundle> {
  if (selfContained(root.json)) return { document: root.json, root, files: [root], origins: new Map() };
  const refs = await RefResolver.create(root, opts);
  const bundler = new Bundler(root, refs, budget);
  const document = await bundler.run();
  const files = [...refs.files.values()];
  if (bundler.problems.length) throw new DocumentError(withLines(bundler.problems, files));
  return { document, root, files, origins: bundler.origins };
}

/** Where refs lead: the files and URLs they name, read under the loading policy (the allowed folder trees on real
 *  paths, remote documents only when allowed, bounded), and the `$id`s those files declare. */
class RefResolver {
  /** Every file read so far, by URI (the root first). */
  readonly files: Map<string, SourceFile>;
  /** The allowed trees, as real paths. */
  private readonly trees: string[] = [];
  /** `$id` URI (no fragment) → where it is declared. Filled from every file read, and from the trees on demand. */
  private readonly ids = new Map<string, Target>();
  private scanned = false;

  private constructor(
    root: SourceFile,
    private readonly opts: LoadOptions,
    private readonly cwd: string,
  ) {
    this.files = new Map([[root.uri, root]]);
  }

  static async create(root: SourceFile, opts: LoadOptions): Promise<RefResolver> {
    const cwd = opts.cwd ?? process.cwd();
    const r = new RefResolver(root, opts, cwd);
    if (root.uri.startsWith('file:')) await r.addTree(path.dirname(fileURLToPath(root.uri)));
    for (const dir of opts.refRoots ?? []) await r.addTree(path.resolve(cwd, dir));
    r.indexIds(root);
    return r;
  }

  /** Resolves `ref` written in `file` under the base URI `base` (an enclosing `$id`, else the file's own URI). */
  async resolve(ref: string, file: SourceFile, base: string, scope: string[]): Promise<Target> {
    const hash = ref.indexOf('#');
    const fragment = hash >= 0 ? ref.slice(hash + 1) : '';
    const pathPart = hash >= 0 ? ref.slice(0, hash) : ref;
    if (fragment && !fragment.startsWith('/'))
      throw new Error(`"#${fragment}" is a plain-name fragment (an anchor); only JSON pointers are supported`);
    const segs = fromPointer(fragment);
    if (pathPart === '') {
      // Same document: relative to the enclosing $id's subschema, which is the file itself unless nested.
      return { file, segments: base === file.uri ? segs : [...scope, ...segs] };
    }
    let abs: URL;
    try {
      abs = new URL(pathPart, base);
    } catch {
      throw new Error('is not a URI reference');
    }
    const key = stripFragment(abs.href);
    const declared = this.ids.get(key);
    if (declared) return { file: declared.file, segments: [...declared.segments, ...segs] };
    if (abs.protocol === 'file:') {
      const tried = this.candidates(key, pathPart, file, base);
      for (const c of tried) if (await exists(c)) return { file: await this.load(c), segments: segs };
      throw new Error(
        `no such file: ${tried.map((c) => displayName(c, this.cwd)).join(', ')}${tried.length > 1 ? ' (tried in this order)' : ''}`,
      );
    }
    // An absolute URI: an $id declared somewhere in the trees, else (http/https) a fetch when allowed.
    await this.scanTrees();
    const found = this.ids.get(key);
    if (found) return { file: found.file, segments: [...found.segments, ...segs] };
    if (isRemote(key)) return { file: await this.load(key), segments: segs };
    throw new Error(`no file in the document's folder tree declares $id "${key}"`);
  }

  /** The files a relative file ref may mean, in the order tried: against the base; against the file's real location
   *  when an $id moved the base; against the working directory; against the folders above the referring file (a
   *  repository root, run from elsewhere) while what they name lies inside the allowed trees. */
  private candidates(key: string, pathPart: string, file: SourceFile, base: string): string[] {
    const out = [key];
    if (base !== file.uri && file.uri.startsWith('file:')) out.push(stripFragment(new URL(pathPart, file.uri).href));
    const relative = !/^[a-z][a-z0-9+.-]*:/i.test(pathPart) && !pathPart.startsWith('/');
    if (relative) {
      const rel = decodeURIComponent(pathPart);
      out.push(pathToFileURL(path.resolve(this.cwd, rel)).href);
      if (file.uri.startsWith('file:')) {
        let dir = path.dirname(path.dirname(fileURLToPath(file.uri)));
        for (let up = 0; up < 8; up++) {
          const c = path.resolve(dir, rel);
          if (this.inside(c)) out.push(pathToFileURL(c).href);
          const parent = path.dirname(dir);
          if (parent === dir) break;
          dir = parent;
        }
      }
    }
    return [...new Set(out)];
  }

  private async addTree(dir: string): Promise<void> {
    try {
      this.trees.push(await realpath(dir));
    } catch {
      this.trees.push(path.resolve(dir));
    }
  }

  private inside(real: string): boolean {
    return this.trees.some((t) => real === t || real.startsWith(t.endsWith(path.sep) ? t : t + path.sep));
  }

  private indexIds(file: SourceFile): void {
    const walk = (node: Json, base: string, segs: string[], depth: number) => {
      if (!node || typeof node !== 'object' || depth > 256) return;
      if (Array.isArray(node)) {
        for (const [i, v] of node.entries()) walk(v, base, [...segs, String(i)], depth + 1);
        return;
      }
      let b = base;
      if (typeof node.$id === 'string' && !node.$id.startsWith('#')) {
        try {
          b = new URL(node.$id, base).href;
          const key = stripFragment(b);
          if (!this.ids.has(key)) this.ids.set(key, { file, segments: segs });
        } catch {
          // not a URI: not an id anything can refer to
        }
      }
      for (const [k, v] of Object.entries(node))
        if (!SCHEMA_DATA.has(k) || k === 'examples') walk(v, b, [...segs, k], depth + 1);
    };
    walk(file.json, file.uri, [], 0);
  }

  /** Reads the JSON and YAML files of the allowed trees that mention `$id` (once, bounded), indexing their ids. */
  private async scanTrees(): Promise<void> {
    if (this.scanned) return;
    this.scanned = true;
    let seen = 0;
    const visit = async (dir: string, depth: number): Promise<void> => {
      if (depth > 12 || seen >= MAX_ID_SCAN_FILES) return;
      let entries: import('node:fs').Dirent[];
      try {
        entries = await readdir(dir, { withFileTypes: true });
      } catch {
        return;
      }
      for (const e of entries.sort((a, b) => a.name.localeCompare(b.name))) {
        if (seen >= MAX_ID_SCAN_FILES) return;
        const p = path.join(dir, e.name);
        if (e.isDirectory()) {
          if (e.name === 'node_modules' || e.name.startsWith('.')) continue;
          await visit(p, depth + 1);
        } else if (e.isFile() && /\.(json|ya?ml)$/i.test(e.name)) {
          seen++;
          const uri = pathToFileURL(p).href;
          if (this.files.has(uri)) continue;
          try {
            if ((await stat(p)).size > 8 * 1024 * 1024) continue;
            const text = await readFile(p, 'utf8');
            if (!text.includes('$id')) continue;
            const f: SourceFile = { uri, display: displayName(uri, this.cwd), text, json: parseText(text, p) };
            this.files.set(uri, f);
            this.indexIds(f);
          } catch {
            // a file that does not parse declares nothing
          }
        }
      }
    };
    for (const t of this.trees) await visit(t, 0);
  }

  /** Reads a file or URL a ref names; throws (the ref's problem) when the policy or the file refuses it. */
  private async load(uri: string): Promise<SourceFile> {
    const known = this.files.get(uri);
    if (known) return known;
    if (this.files.size >= MAX_FILES) throw new Error(`more than ${MAX_FILES} files referenced`);
    let f: SourceFile;
    if (isRemote(uri)) {
      if (!this.opts.allowRemoteRefs)
        throw new Error(
          `refers to a remote document (${uri}); remote refs are fetched only with --allow-remote-refs (option allowRemoteRefs)`,
        );
      let text: string;
      try {
        text = await fetchText(uri, this.opts.maxRemoteBytes ?? 16 * 1024 * 1024, this.opts.remoteTimeoutMs ?? 15_000);
      } catch (e) {
        throw new Error(`cannot fetch ${uri}: ${errText(e)}`);
      }
      f = { uri, display: uri, text, json: parseText(text, uri) };
    } else {
      const abs = fileURLToPath(uri);
      const real = await realpath(abs);
      if (!this.inside(real))
        throw new Error(
          `refers to ${abs}, outside the document's folder tree (${this.trees.join(', ') || 'none: the document is not a file'}); widen it with --ref-root <dir> (option refRoots)`,
        );
      const st = await stat(real);
      if (!st.isFile()) throw new Error(`${abs} is not a file`);
      if (st.size > MAX_FILE_BYTES) throw new Error(`${abs} is larger than ${MAX_FILE_BYTES} bytes`);
      const text = await readFile(real, 'utf8');
      const display = displayName(uri, this.cwd);
      f = { uri, display, text, json: parseText(text, display) };
    }
    this.files.set(uri, f);
    this.indexIds(f);
    return f;
  }
}

async function exists(uri: string): Promise<boolean> {
  try {
    return (await stat(fileURLToPath(uri))).isFile();
  } catch {
    return false;
  }
}

/** The base URI and `$id` scope at `segments` of a file (enclosing `$id`s change where relative refs point). */
function baseAt(file: SourceFile, segments: readonly string[]): { base: string; scope: string[] } {
  let base = file.uri;
  let scope: string[] = [];
  let cur = file.json;
  for (let i = 0; i <= segments.length; i++) {
    if (
      cur &&
      typeof cur === 'object' &&
      !Array.isArray(cur) &&
      typeof cur.$id === 'string' &&
      !cur.$id.startsWith('#')
    ) {
      try {
        base = new URL(cur.$id, base).href;
        scope = segments.slice(0, i);
      } catch {
        // not a URI
      }
    }
    if (i < segments.length) cur = cur?.[segments[i]];
  }
  return { base, scope };
}

const targetKey = (t: Target) => `${t.file.uri}${toPointer(t.segments)}`;

/** Builds the bundled document: a copy of the root with every ref made local — another file's schema imported as a
 *  component (once, under a collision-free name), another file's OpenRPC object copied in where it is referenced. */
class Bundler {
  /** What did not resolve, all of it (thrown together by `bundle`). */
  readonly problems: DocumentProblem[] = [];
  /** Component name → the file and pointer it was imported from. */
  readonly origins = new Map<string, { file: string; pointer: string }>();
  /** Component names in use (the root's own, then each import's). */
  private readonly taken: Set<string>;
  /** uri#pointer → the component it became. */
  private readonly imported = new Map<string, string>();
  /** Imported components, in import order; those that take a root component's name apart. */
  private readonly added: [string, Json][] = [];
  private readonly preferred: [string, Json][] = [];
  private readonly rootSchemas: Json;

  constructor(
    private readonly root: SourceFile,
    private readonly refs: RefResolver,
    private readonly budget: DerefBudget | undefined,
  ) {
    this.rootSchemas = root.json?.components?.schemas;
    const schemas = this.rootSchemas;
    this.taken = new Set<string>(schemas && typeof schemas === 'object' ? Object.keys(schemas) : []);
  }

  async run(): Promise<Json> {
    await this.claimRootComponents();
    const root = this.root;
    let document = await this.rewrite(root.json, 'root', root, [], root.uri, [], []);
    for (const [name, value] of this.preferred) define(document.components.schemas, name, value);
    if (this.added.length) {
      document = { ...document, components: { ...(document.components ?? {}) } };
      document.components.schemas = { ...(document.components.schemas ?? {}) };
      for (const [name, value] of this.added) document.components.schemas[name] = value;
    }
    return document;
  }

  /** A root component that is only a ref to another file's schema takes that schema under its own name: all such
   *  names are claimed before any schema is copied, so a copy that refers to one finds it. */
  private async claimRootComponents(): Promise<void> {
    const schemas = this.rootSchemas;
    if (!schemas || typeof schemas !== 'object') return;
    const claims: [Target, string][] = [];
    for (const [name, s] of Object.entries(schemas as Record<string, Json>)) {
      if (!s || typeof s !== 'object' || typeof s.$ref !== 'string' || Object.keys(s).length !== 1) continue;
      if (s.$ref.startsWith('#')) continue;
      try {
        const t = await this.finalTarget(await this.refs.resolve(s.$ref, this.root, this.root.uri, []));
        if (t.file !== this.root && this.getAt(t).ok && !this.imported.has(targetKey(t))) {
          this.imported.set(targetKey(t), name);
          claims.push([t, name]);
        }
      } catch {
        // reported by the walk
      }
    }
    for (const [t, name] of claims)
      await this.importSchema(t, [{ file: this.root, at: ['components', 'schemas', name, '$ref'] }], name);
  }

  /** Copies `node` (of `kind`, in `file` at `at`) with every `$ref` made local. */
  private async rewrite(
    node: Json,
    kind: Kind,
    file: SourceFile,
    at: (string | number)[],
    base: string,
    scope: string[],
    via: Site[],
    depth = 0,
  ): Promise<Json> {
    if (!node || typeof node !== 'object' || kind === 'data') return node;
    this.budget?.node('resolving references');
    const own = at[at.length - 1];
    if (Array.isArray(node)) {
      const out: Json[] = [];
      for (let i = 0; i < node.length; i++)
        out.push(await this.rewrite(node[i], kindOfChild(kind, i, own), file, [...at, i], base, scope, via, depth));
      return out;
    }
    let b = base;
    let sc = scope;
    if (isSchemaKind(kind) && typeof node.$id === 'string' && !node.$id.startsWith('#')) {
      try {
        b = new URL(node.$id, base).href;
        sc = at.map(String);
      } catch {
        // not a URI
      }
    }
    const out: Json = {};
    for (const [k, v] of Object.entries(node))
      define(
        out,
        k,
        k === '$ref' ? v : await this.rewrite(v, kindOfChild(kind, k, own), file, [...at, k], b, sc, via, depth),
      );
    if (typeof node.$ref !== 'string' || isContainerKind(kind)) return out;
    return this.localRef(out, node.$ref, kind, { file, at: [...at, '$ref'] }, b, sc, via, depth);
  }

  /** `out` (a copy of an object with `$ref`) with that ref made local: a pointer into the root, an imported
   *  component, or the referenced OpenRPC object copied in (the copy's own keys lose to `out`'s siblings). */
  private async localRef(
    out: Json,
    ref: string,
    kind: Kind,
    site: Site,
    base: string,
    scope: string[],
    via: Site[],
    depth: number,
  ): Promise<Json> {
    let t: Target;
    try {
      t = await this.refs.resolve(ref, site.file, base, scope);
    } catch (e) {
      if (e instanceof DocumentError) this.problems.push(...e.problems);
      else this.report(site, via, ref, errText(e));
      return out;
    }
    const got = this.getAt(t);
    if (!got.ok) {
      this.report(site, via, ref, got.why);
      return out;
    }
    if (t.file === this.root) {
      out.$ref = toPointer(t.segments);
      return out;
    }
    // A schema of another file (or anything a schema position names): a component of the bundle.
    if (isSchemaKind(kind) || (kind === 'plain' && kindAt(t.segments) === 'schema')) {
      try {
        out.$ref = `#/components/schemas/${encodeURIComponent(await this.importSchema(t, [...via, site]))}`;
      } catch (e) {
        this.report(site, via, ref, errText(e));
      }
      return out;
    }
    // An OpenRPC object (method, content descriptor, error, example, …) of another file: copied in, read as what the
    // referring position expects, its own refs made local.
    if (depth >= 32) {
      this.report(site, via, ref, 'references to OpenRPC objects loop');
      return out;
    }
    const { base: tb, scope: ts } = baseAt(t.file, t.segments);
    const copy = await this.rewrite(got.node, kind, t.file, [...t.segments], tb, ts, [...via, site], depth + 1);
    const { $ref: _drop, ...siblings } = out;
    return copy && typeof copy === 'object' && !Array.isArray(copy) ? { ...copy, ...siblings } : copy;
  }

  /** Imports the schema at `t` as a component; returns its name. `prefer`: the root component that is only a ref to
   *  it, whose name it takes. */
  private async importSchema(t0: Target, via: Site[], prefer?: string): Promise<string> {
    const t = await this.finalTarget(t0);
    const key = targetKey(t);
    const known = this.imported.get(key);
    if (known && !prefer) return known;
    const got = this.getAt(t);
    if (!got.ok) throw new Error(got.why);
    const name = prefer ?? this.nameFor(t);
    this.imported.set(key, name);
    this.origins.set(name, { file: t.file.display, pointer: toPointer(t.segments) });
    const slot: [string, Json] = [name, undefined];
    if (prefer) this.preferred.push(slot);
    else this.added.push(slot);
    const { base, scope } = baseAt(t.file, t.segments);
    slot[1] = stripIds(await this.rewrite(got.node, 'schema', t.file, [...t.segments], base, scope, [...via]));
    return name;
  }

  /** A schema that is only a ref to another one is that other one (chains across files collapse). */
  private async finalTarget(t0: Target): Promise<Target> {
    let t = t0;
    for (let hops = 0; hops < 32; hops++) {
      const got = this.getAt(t);
      const n = got.ok ? got.node : undefined;
      if (!n || typeof n !== 'object' || typeof n.$ref !== 'string' || Object.keys(n).length !== 1) break;
      if (this.imported.has(targetKey(t))) break;
      const { base, scope } = baseAt(t.file, t.segments);
      let next: Target;
      try {
        next = await this.refs.resolve(n.$ref, t.file, base, scope);
      } catch {
        break; // reported when the node itself is walked
      }
      if (next.file === this.root || !this.getAt(next).ok) break; // into the root: a local ref does it
      t = next;
    }
    return t;
  }

  /** A component name for the schema at `t`: its key, else its file's name; made safe and unique. */
  private nameFor(t: Target): string {
    const segs = t.segments.filter(
      (s) => !/^\d+$/.test(s) && !SCHEMA_MAPS.has(s) && !SCHEMA_ONE.has(s) && s !== 'schema',
    );
    let base = segs[segs.length - 1];
    if (!base || ['components', 'schemas'].includes(base)) {
      const f = t.file.uri.replace(/[?#].*$/, '');
      base = decodeURIComponent(f.slice(f.lastIndexOf('/') + 1)).replace(
        /(\.(open)?rpc|\.schema)?\.(json|ya?ml)$/i,
        '',
      );
    }
    base = base.replace(SAFE_NAME, '_') || 'Schema';
    let name = base;
    for (let n = 2; this.taken.has(name); n++) name = `${base}_${n}`;
    this.taken.add(name);
    return name;
  }

  private getAt(t: Target): { ok: true; node: Json } | { ok: false; why: string } {
    const got = valueAt(t.file.json, t.segments);
    if (got.ok) return got;
    const i = got.missing;
    return {
      ok: false,
      why: `${t.file === this.root ? '' : t.file.display}${toPointer(t.segments.slice(0, i))} has no "${t.segments[i]}"`,
    };
  }

  private report(site: Site, via: Site[], ref: string, why: string): void {
    const pointer = toPointer(site.at);
    let message = '';
    const m =
      site.at[0] === 'methods' && typeof site.at[1] !== 'undefined'
        ? site.file.json?.methods?.[site.at[1] as number]
        : undefined;
    if (m && typeof m.name === 'string') message += `in method ${m.name}: `;
    if (via.length) message += `(reached from ${via.map((v) => `${v.file.display}${toPointer(v.at)}`).join(' ← ')}) `;
    this.problems.push({
      file: site.file.display,
      pointer,
      message: `${message}$ref "${ref}" does not resolve: ${why}`,
    });
  }
}

/** `$id`s of an imported schema have done their work (resolution); left in, ajv would see two schemas of one id. */
function stripIds(s: Json): Json {
  if (!s || typeof s !== 'object') return s;
  if (Array.isArray(s)) return s.map(stripIds);
  const out: Json = {};
  for (const [k, v] of Object.entries(s))
    if (k !== '$id' && k !== '$schema')
      Object.defineProperty(out, k, {
        value: SCHEMA_DATA.has(k) ? v : stripIds(v),
        enumerable: true,
        writable: true,
        configurable: true,
      });
  return out;
}

/** Adds line and column to problems whose file text is at hand (at most 50: a report, not a re-parse per problem). */
export function withLines(problems: DocumentProblem[], files: SourceFile[]): DocumentProblem[] {
  const byName = new Map(files.map((f) => [f.display, f]));
  return problems.map((p, i) => {
    const f = byName.get(p.file);
    if (i >= 50 || !f || p.line !== undefined || !p.pointer || p.pointer === '#') return p;
    const pos = locate(f.text, p.pointer);
    return pos ? { ...p, ...pos } : p;
  });
}
