// Identifiers of the generated code, chosen once per document and deterministically: every schema and method of a real
// document gets a TypeScript name even when names clash after case conversion (`foo_bar` / `FooBar`, `eth_getFoo` /
// `eth.getFoo`), with a global type the generated code uses (`Record`, `Array`, `Promise`, …) or with the names the
// writers emit themselves (`<Method>Params`, `<Api>Methods`, …). A clash is settled by a numeric suffix in document
// order (the first keeps the plain name), never by an error.
import { toSafeString } from 'json-schema-to-typescript/dist/src/utils.js';
import { pascalCase, type ContractModel } from '../contract/model.js';

/**
 * Type names the generated files reference or export besides the document's own: TypeScript's global types (a local
 * `interface Record` would break `Record<string, unknown>`), and what client.ts / methods.ts import and re-export.
 */
const RESERVED = new Set([
  'Array',
  'ReadonlyArray',
  'Record',
  'Promise',
  'PromiseLike',
  'Partial',
  'Required',
  'Readonly',
  'Pick',
  'Omit',
  'Exclude',
  'Extract',
  'NonNullable',
  'ReturnType',
  'Parameters',
  'Awaited',
  'Object',
  'Function',
  'String',
  'Number',
  'Boolean',
  'Symbol',
  'BigInt',
  'Date',
  'Error',
  'RegExp',
  'Map',
  'Set',
  'WeakMap',
  'WeakSet',
  'JSON',
  'Math',
  'Uint8Array',
  'ArrayBuffer',
  'Iterable',
  'Iterator',
  // @rpcgate/client names the generated files import or re-export
  'MethodDescriptor',
  'ValidatorTable',
  'ValidateFn',
  'Client',
  'ClientOptions',
  'RpcClientError',
  'BatchCall',
  'BatchResult',
  'ParamsArg',
  'ByName',
  'Methods',
  'MethodName',
  'RpcgateCodegenRoot',
]);

/** A PascalCase identifier that json-schema-to-typescript keeps as is (it would rename `Sha3hash` to `Sha3Hash`). */
export function typeIdentifier(name: string, fallback: string): string {
  const pascal = pascalCase(name);
  // A leading digit is kept behind `_` (json-schema-to-typescript would drop it: `1stThing` → `StThing`).
  return toSafeString(/^[0-9]/.test(pascal) ? `_${pascal}` : pascal) || fallback;
}

/** The generated code's names for one document. */
export interface Naming {
  /** `<Api>` of `<Api>Methods` / `<Api>Client`. */
  api: string;
  /** components.schemas key → type name. */
  schemas: Map<string, string>;
  /** method name → base of its type names (`<base>Params`, `<base>Result`, `<base>ParamsByName`, `<base><Label>Param`). */
  methods: Map<string, string>;
  /** method name → the identifier part of its validator exports (`<id>__params`, `<id>__result`). */
  validators: Map<string, string>;
  /** Every type name taken (reserved, derived, schemas): nested schema titles that hit one are dropped. */
  taken: Set<string>;
  /** A generated name (type name, method name) → the JSON pointer of what it comes from, for errors that name it. */
  pointers: Map<string, string>;
}

const methodFamily = (base: string): string[] => [`${base}Params`, `${base}Result`, `${base}ParamsByName`];

export function nameDocument(c: ContractModel): Naming {
  const taken = new Set(RESERVED);
  const api = typeIdentifier(c.spec.name, 'Api');
  taken.add(`${api}Methods`).add(`${api}Client`);

  // Methods first: their families (`XParams`, `XResult`, …) move together, so a method's names share one suffix.
  const methods = new Map<string, string>();
  const pointers = new Map<string, string>();
  for (const [i, m] of c.methods.entries()) {
    const plain = typeIdentifier(m.name, 'Method');
    let base = plain;
    for (let n = 2; methodFamily(base).some((x) => taken.has(x)); n++) base = `${plain}${n}`;
    for (const x of methodFamily(base)) taken.add(x);
    methods.set(m.name, base);
    pointers.set(m.name, `#/methods/${i}`).set(`${base}Params`, `#/methods/${i}/params`);
    pointers.set(`${base}ParamsByName`, `#/methods/${i}/params`).set(`${base}Result`, `#/methods/${i}/result`);
  }
  // Per-param synthetic names (`<base><Label>Param`) are claimed by the type writer via `claim`.
  const schemas = new Map<string, string>();
  for (const [key] of c.schemas) {
    const name = claim(taken, typeIdentifier(key, 'Schema'));
    schemas.set(key, name);
    pointers.set(name, `#/components/schemas/${key.replace(/~/g, '~0').replace(/\//g, '~1')}`);
  }

  const validators = new Map<string, string>();
  const ids = new Set<string>();
  for (const m of c.methods) {
    let plain = m.name.replace(/[^A-Za-z0-9_$]/g, '_');
    if (/^[0-9]/.test(plain)) plain = `_${plain}`;
    let id = plain;
    for (let n = 2; ids.has(id); n++) id = `${plain}_${n}`;
    ids.add(id);
    validators.set(m.name, id);
  }
  return { api, schemas, methods, validators, taken, pointers };
}

/** `name`, or `name2`, `name3`, … — the first not taken; marks it taken. */
export function claim(taken: Set<string>, name: string): string {
  let out = name;
  for (let n = 2; taken.has(out); n++) out = `${name}${n}`;
  taken.add(out);
  return out;
}

/** JavaScript's reserved words (and TypeScript's strict-mode ones): not usable as tuple labels or binding names. */
const RESERVED_WORDS = new Set(
  (
    'break case catch class const continue debugger default delete do else enum export extends false finally for function if ' +
    'import in instanceof new null return super switch this throw true try typeof var void while with implements interface let ' +
    'package private protected public static yield await'
  ).split(' '),
);

/** Tuple labels for params: the model's camelCase labels, a reserved word suffixed with `_`, unique within the method. */
export function paramLabels(labels: readonly string[]): string[] {
  const used = new Set<string>();
  return labels.map((l) => {
    let out = RESERVED_WORDS.has(l) ? `${l}_` : l;
    while (used.has(out)) out += '_';
    used.add(out);
    return out;
  });
}
