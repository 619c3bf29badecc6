// The typed Python client of ONE OpenRPC document, as files: what `rpcgate generate <document> --lang python --out <dir>`
// writes (the folder is the package; its name is the import name) and what `npm run generate` writes into
// generated/python/rpcgate_node/ for the repository's node API.
//   __init__.py  re-exports: Client, Calls, Request, RpcError, the types module
//   _runtime.py  JSON-RPC 2.0 over HTTP with the standard library only (urllib.request, json): RpcError, Request, batch
//   types.py     one TypedDict or type alias per schema (components, then nested object shapes), recursion allowed
//   client.py    `Calls` (one static method per OpenRPC method → a Request) and `Client` (one method per OpenRPC method)
//   py.typed     PEP 561 marker: type checkers read the package's annotations
// Python ≥ 3.11 (typing.NotRequired); checked with `mypy --strict` in test/python-client.test.ts for every corpus document.
// Names are chosen once per document, deterministically, with the TypeScript writer's helpers (typeIdentifier, claim):
// a clash after case conversion, with a Python keyword or with a name the package itself uses gets a suffix.
import { exampleParams, refName, type ContractModel, type Json, type MethodModel } from '../contract/model.js';
import { claim, typeIdentifier } from './naming.js';
import { HEADER, json } from './schema.js';

export interface GeneratePythonOptions {
  /** The command named in each file's header as the way to regenerate it (default `npm run generate`). */
  command?: string;
  /** The package's import name, used in docstring examples (default `<name>_client`, snake case of the API name). */
  packageName?: string;
}

const KEYWORDS = new Set(
  'False None True and as assert async await break class continue def del elif else except finally for from global if import in is lambda nonlocal not or pass raise return try while with yield'.split(
    ' ',
  ),
);
/** Names types.py and client.py use themselves: a schema of that name gets a suffix. */
const RESERVED_TYPES = [
  'None',
  'True',
  'False',
  'Any',
  'Literal',
  'NotRequired',
  'TypeAlias',
  'TypedDict',
  'Client',
  'Calls',
  'Request',
  'RpcError',
  'BaseClient',
];
/** Members of the runtime's BaseClient: a method of that name gets a suffix. */
const RESERVED_METHODS = ['call', 'request', 'batch'];
/** Builtins and typing names annotations in types.py refer to: a TypedDict key of that name is written in the
 *  functional syntax, where keys are strings and cannot shadow a name inside the class body. */
const ANNOTATION_NAMES = [
  'str',
  'int',
  'float',
  'bool',
  'list',
  'dict',
  'None',
  'Any',
  'Literal',
  'NotRequired',
  'TypeAlias',
  'TypedDict',
];

/** snake_case identifier of any name (`eth_getBalance` → `eth_get_balance`); `prefix` goes before a leading digit. */
export function snakeIdentifier(name: string, prefix: string): string {
  const words = name
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1_$2')
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean)
    .map((w) => w.toLowerCase());
  const id = words.join('_') || prefix.replace(/_$/, '');
  return /^[0-9]/.test(id) ? `${prefix}${id}` : KEYWORDS.has(id) ? `${id}_` : id;
}

/** `name`, or `name_2`, `name_3`, … — the first not taken; marks it taken. */
function claimSnake(taken: Set<string>, name: string): string {
  let out = name;
  for (let n = 2; taken.has(out); n++) out = `${name}_${n}`;
  taken.add(out);
  return out;
}

// ---- Python text ----

/** Python string literal (single-quoted), any text: backslashes, quotes, control characters and lone surrogates escaped. */
export function pyStr(s: string): string {
  const body = s
    .replace(/\\/g, '\\\\')
    .replace(/'/g, "\\'")
    .replace(/\n/g, '\\n')
    // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are exactly what must be escaped
    .replace(/[\x00-\x1f\x7f]/g, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`)
    .replace(/\p{Surrogate}/gu, (c) => `\\u${c.charCodeAt(0).toString(16)}`);
  return `'${body}'`;
}

/** Lines of free text (summaries, descriptions) as they may appear in a docstring or comment: line breaks normalised. */
const textLines = (s: string): string[] => s.replace(/\r\n?|[\v\f\x85\u2028\u2029]/g, '\n').split('\n');

/** A docstring: backslashes, `"""` and control characters escaped, so no description can end it or break the file. */
export function docstring(lines: (string | undefined)[], indent: string): string {
  const text = lines
    .filter((l): l is string => l !== undefined)
    .flatMap(textLines)
    .join('\n')
    .replace(/\s+$/, '');
  if (!text) return '';
  let body = text
    .replace(/\\/g, '\\\\')
    .replace(/"""/g, '\\"\\"\\"')
    // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters (but tab and newline) must be escaped
    .replace(/[\x00-\x08\x0b-\x1f\x7f]/g, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`)
    .replace(/\p{Surrogate}/gu, (c) => `\\u${c.charCodeAt(0).toString(16)}`);
  if (body.endsWith('"')) body = `${body.slice(0, -1)}\\"`;
  const out = body.split('\n').map((l, i) => (i === 0 || !l ? l : indent + l));
  return out.length === 1 ? `${indent}"""${out[0]}"""\n` : `${indent}"""${out.join('\n')}\n${indent}"""\n`;
}

/** `# ` comment lines: control characters (a carriage return would end the comment) become spaces. */
function comment(lines: (string | undefined)[], indent = ''): string {
  return (
    lines
      .filter((l): l is string => l !== undefined)
      .flatMap(textLines)
      // biome-ignore lint/suspicious/noControlCharactersInRegex: a control character in a comment would break the line
      .map((l) => `${indent}#${l ? ' ' : ''}${l.replace(/[\x00-\x1f\x7f\p{Surrogate}]/gu, ' ')}`.trimEnd())
      .join('\n')
      .concat('\n')
  );
}

export const pyHeader = (source: string, opts: GeneratePythonOptions = {}): string =>
  comment([`${HEADER} (source: ${source}, run \`${opts.command ?? 'npm run generate'}\`)`]);

/** Whether a file's text was written by this generator (its first line is the header). */
export const isGeneratedPython = (text: string): boolean => text.startsWith(`# ${HEADER}`);

// ---- schemas → types ----

interface Field {
  key: string;
  type: string;
  required: boolean;
  doc?: string;
}

/** A definition of types.py: a TypedDict (fields) or an alias (type). */
interface Definition {
  name: string;
  doc: (string | undefined)[];
  fields?: Field[];
  type?: string;
}

const DESCRIPTIVE = new Set([
  'title',
  'description',
  'summary',
  'examples',
  'example',
  'default',
  '$comment',
  'deprecated',
  'readOnly',
  'writeOnly',
  'format',
  '$id',
  '$schema',
]);
const COMBINATORS = ['oneOf', 'anyOf', 'allOf'];

/** A Python type expression per schema; object shapes become named TypedDicts. */
class TypeWriter {
  readonly defs: Definition[] = [];
  readonly names = new Map<string, string>();
  private readonly nullish = new Set<string>();
  readonly taken = new Set(RESERVED_TYPES);

  constructor(private readonly c: ContractModel) {
    for (const [key] of c.schemas) this.names.set(key, claim(this.taken, typeIdentifier(key, 'Schema')));
    for (const [key, s] of c.schemas) if (this.isNull(s, 0)) this.nullish.add(key);
  }

  private component(name: string): Json {
    return this.c.raw.components?.schemas?.[name];
  }

  private isNull(s: Json, depth: number): boolean {
    const r = refName(s);
    if (r !== undefined) return depth < 16 && this.isNull(this.component(r), depth + 1);
    return s?.type === 'null' && !COMBINATORS.some((k) => s[k]) && s.enum === undefined;
  }

  /** Every component, in document order: a TypedDict when it is an object shape, else an alias. */
  writeComponents(): void {
    for (const [key, s] of this.c.schemas) {
      const name = this.names.get(key)!;
      const doc = [s?.title && s.title !== key ? s.title : undefined, s?.description];
      if (this.isObjectShape(s)) this.typedDict(name, s, doc);
      else {
        let type = this.expr(s, name, 0);
        // An alias of itself (`X: $ref X`) is no type: anything.
        if (type === name) type = 'Any';
        this.defs.push({ name, doc, type });
      }
    }
  }

  private isObjectShape(s: Json): boolean {
    if (!s || typeof s !== 'object' || refName(s) !== undefined || typeof s.$ref === 'string') return false;
    if (COMBINATORS.some((k) => s[k]) || s.enum !== undefined || 'const' in s || s.nullable === true) return false;
    const objectType = s.type === 'object' || (s.type === undefined && s.properties !== undefined);
    const open =
      s.patternProperties !== undefined || (s.additionalProperties !== undefined && s.additionalProperties !== false);
    return (
      objectType && !open && s.properties && typeof s.properties === 'object' && Object.keys(s.properties).length > 0
    );
  }

  /** A TypedDict named `name` (claimed by the caller) for an object shape; returns the name. */
  private typedDict(name: string, s: Json, doc: (string | undefined)[]): string {
    const def: Definition = { name, doc, fields: [] };
    this.defs.push(def); // before its fields: a field that refers back to this shape finds it named
    const required = new Set<string>(Array.isArray(s.required) ? s.required : []);
    for (const [key, ps] of Object.entries(s.properties as Record<string, Json>)) {
      const doc = ps && typeof ps === 'object' ? ps.description : undefined;
      def.fields!.push({
        key,
        type: this.expr(ps, `${name}${typeIdentifier(key, 'Field')}`, 1),
        required: required.has(key),
        doc: typeof doc === 'string' ? doc : undefined,
      });
    }
    return name;
  }

  /** A nested object shape: its title when free, else the hint (both claimed). */
  private nestedDict(s: Json, hint: string): string {
    const titled = typeof s.title === 'string' ? typeIdentifier(s.title, '') : '';
    const name = titled && !this.taken.has(titled) ? claim(this.taken, titled) : claim(this.taken, hint);
    return this.typedDict(name, s, [s.description]);
  }

  expr(s: Json, hint: string, depth: number): string {
    if (depth > 64 || s === true || s === undefined || s === false) return 'Any';
    if (!s || typeof s !== 'object' || Array.isArray(s)) return 'Any';
    const r = refName(s);
    if (r !== undefined) return this.nullish.has(r) ? 'None' : (this.names.get(r) ?? 'Any');
    if (typeof s.$ref === 'string') return 'Any'; // a reference outside the document
    const t = this.base(s, hint, depth);
    return s.nullable === true ? union([t, 'None']) : t;
  }

  private base(s: Json, hint: string, depth: number): string {
    if ('const' in s) return literal([s.const]) ?? 'Any';
    if (Array.isArray(s.enum)) return literal(s.enum) ?? this.byType({ ...s, enum: undefined }, hint, depth);
    if (s.oneOf || s.anyOf) {
      if (s.oneOf && s.anyOf) return 'Any';
      // Members inherit the keywords beside the combinator (`type: string, oneOf: [{pattern}, …]`).
      const rest = Object.fromEntries(
        Object.entries(s).filter(([k]) => !COMBINATORS.includes(k) && !DESCRIPTIVE.has(k) && k !== 'nullable'),
      );
      const members: Json[] = s.oneOf ?? s.anyOf;
      return union(
        members.map((m, i) =>
          this.expr(
            m && typeof m === 'object' && m.$ref === undefined ? { ...rest, ...m } : m,
            `${hint}Variant${i + 1}`,
            depth + 1,
          ),
        ),
      );
    }
    if (Array.isArray(s.allOf)) return this.allOf(s, hint, depth);
    return this.byType(s, hint, depth);
  }

  private byType(s: Json, hint: string, depth: number): string {
    const types: string[] = Array.isArray(s.type)
      ? s.type
      : typeof s.type === 'string'
        ? [s.type]
        : s.properties || s.additionalProperties
          ? ['object']
          : s.items
            ? ['array']
            : [];
    if (!types.length) return 'Any';
    return union(
      types.map((t) => {
        switch (t) {
          case 'null':
            return 'None';
          case 'boolean':
            return 'bool';
          case 'integer':
            return 'int';
          case 'number':
            return 'float';
          case 'string':
            return 'str';
          case 'array': {
            const items: Json[] | undefined = Array.isArray(s.prefixItems)
              ? s.prefixItems
              : Array.isArray(s.items)
                ? s.items
                : undefined;
            if (items)
              return items.length
                ? `list[${union(items.map((x, i) => this.expr(x, `${hint}Item${i + 1}`, depth + 1)))}]`
                : 'list[Any]';
            return `list[${s.items === undefined ? 'Any' : this.expr(s.items, `${hint}Item`, depth + 1)}]`;
          }
          case 'object': {
            const named = s.properties && typeof s.properties === 'object' ? Object.values(s.properties) : [];
            // Declared members only (as the TypeScript client types them): a TypedDict. A schema that also admits other
            // keys explicitly (additionalProperties, patternProperties) is a map a TypedDict cannot hold: a dict.
            const open =
              s.patternProperties !== undefined ||
              (s.additionalProperties !== undefined && s.additionalProperties !== false);
            if (named.length && !open) return this.nestedDict(s, hint);
            const extra =
              s.additionalProperties === true || s.additionalProperties === undefined
                ? [true]
                : s.additionalProperties === false
                  ? []
                  : [s.additionalProperties];
            const values: Json[] = [...named, ...Object.values(s.patternProperties ?? {}), ...extra];
            return `dict[str, ${values.length ? union(values.map((v) => this.expr(v, `${hint}Value`, depth + 1))) : 'Any'}]`;
          }
          default:
            return 'Any';
        }
      }),
    );
  }

  /** allOf of object shapes (inline or components): one TypedDict with every member's properties; of one
   *  constraining member and descriptive ones: that member; anything else: Any (an intersection Python cannot write). */
  private allOf(s: Json, hint: string, depth: number): string {
    const members: Json[] = [
      ...s.allOf,
      ...(s.properties ? [{ type: 'object', properties: s.properties, required: s.required }] : []),
    ];
    const properties: Record<string, Json> = {};
    const required = new Set<string>();
    const flat = (m: Json, d: number): boolean => {
      if (d > 16 || !m || typeof m !== 'object') return false;
      const r = refName(m);
      if (r !== undefined) return flat(this.component(r), d + 1);
      if (Array.isArray(m.allOf) && !m.allOf.every((x: Json) => flat(x, d + 1))) return false;
      const keys = Object.keys(m).filter((k) => !DESCRIPTIVE.has(k) && k !== 'allOf');
      if (
        !keys.every((k) => ['type', 'properties', 'required', 'additionalProperties'].includes(k)) ||
        (m.type !== undefined && m.type !== 'object')
      )
        return false;
      Object.assign(properties, m.properties ?? {});
      for (const k of Array.isArray(m.required) ? m.required : []) required.add(k);
      return true;
    };
    if (members.every((m) => flat(m, 0)) && Object.keys(properties).length) {
      return this.nestedDict(
        { title: s.title, description: s.description, type: 'object', properties, required: [...required] },
        hint,
      );
    }
    const constraining = members.filter(
      (m) => !(m && typeof m === 'object' && Object.keys(m).every((k) => DESCRIPTIVE.has(k))),
    );
    return constraining.length === 1 ? this.expr(constraining[0], hint, depth + 1) : 'Any';
  }

  /** types.py. */
  render(header: string, title: string): string {
    const typeNames = new Set([...ANNOTATION_NAMES, ...this.defs.map((d) => d.name)]);
    const out = [
      header,
      docstring([title], ''),
      '\nfrom __future__ import annotations\n\n',
      'from typing import Any, Literal, NotRequired, TypeAlias, TypedDict\n\n',
    ];
    out.push(`__all__: list[str] = [\n${this.defs.map((d) => `    ${JSON.stringify(d.name)},\n`).join('')}]\n`);
    for (const d of this.defs) {
      out.push('\n\n');
      if (d.type !== undefined) {
        // The whole alias is a string: it may refer to a type defined further down, or to itself through a list.
        out.push(`${d.name}: TypeAlias = ${JSON.stringify(d.type)}\n`, docstring(d.doc, ''));
        continue;
      }
      const fields = d.fields!;
      const classSyntax = fields.every(
        (f) => /^[A-Za-z][A-Za-z0-9_]*$/.test(f.key) && !KEYWORDS.has(f.key) && !typeNames.has(f.key),
      );
      const wrap = (f: Field) => (f.required ? f.type : `NotRequired[${f.type}]`);
      if (classSyntax) {
        out.push(`class ${d.name}(TypedDict):\n`);
        const doc = docstring(d.doc, '    ');
        if (doc) out.push(doc, '\n');
        for (const f of fields) out.push(`    ${f.key}: ${wrap(f)}\n`, f.doc ? docstring([f.doc], '    ') : '');
      } else {
        // Keys that are not identifiers (or would shadow a type name in a class body): the functional syntax, whose
        // values are evaluated at import, hence quoted.
        const docs = d.doc.filter(Boolean);
        if (docs.length) out.push(comment(docs));
        out.push(`${d.name} = TypedDict(\n    ${JSON.stringify(d.name)},\n    {\n`);
        for (const f of fields) {
          if (f.doc) out.push(comment([f.doc], '        '));
          out.push(
            `        ${JSON.stringify(f.key)}: ${f.required ? JSON.stringify(f.type) : `NotRequired[${JSON.stringify(f.type)}]`},\n`,
          );
        }
        out.push('    },\n)\n');
      }
    }
    return out.join('');
  }
}

/** `Literal[...]` of JSON values Python's Literal holds (strings, safe integers, booleans; null as `| None`). */
function literal(values: Json[]): string | undefined {
  const parts: string[] = [];
  let none = false;
  for (const v of values) {
    if (v === null) none = true;
    else if (typeof v === 'string') parts.push(pyStr(v));
    else if (typeof v === 'boolean') parts.push(v ? 'True' : 'False');
    else if (typeof v === 'number' && Number.isSafeInteger(v)) parts.push(String(v));
    else return undefined;
  }
  return union([...(parts.length ? [`Literal[${[...new Set(parts)].join(', ')}]`] : []), ...(none ? ['None'] : [])]);
}

/** `A | B`, flattened and deduplicated, None last; Any absorbs everything. */
function union(parts: string[]): string {
  const flat = [...new Set(parts.flatMap((p) => splitTop(p)))];
  if (flat.includes('Any') || !flat.length) return 'Any';
  const noneLast = [...flat.filter((p) => p !== 'None'), ...flat.filter((p) => p === 'None')];
  return noneLast.join(' | ');
}

/** The members of a top-level union expression (` | ` outside brackets and quotes). */
function splitTop(expr: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let quote = '';
  let start = 0;
  for (let i = 0; i < expr.length; i++) {
    const ch = expr[i];
    if (quote) {
      if (ch === '\\') i++;
      else if (ch === quote) quote = '';
    } else if (ch === "'" || ch === '"') quote = ch;
    else if (ch === '[') depth++;
    else if (ch === ']') depth--;
    else if (depth === 0 && expr.startsWith(' | ', i)) {
      out.push(expr.slice(start, i));
      start = i + 3;
      i += 2;
    }
  }
  out.push(expr.slice(start));
  return out;
}

// ---- methods ----

export interface PythonParam {
  /** The param's name in the document (the key of a by-name call). */
  name: string;
  /** Its Python parameter name. */
  py: string;
  required: boolean;
  /** Python type expression (names from types.py). */
  type: string;
}

export interface PythonMethod {
  name: string;
  /** The Client / Calls method name. */
  py: string;
  byName: boolean;
  params: PythonParam[];
  result: string;
  model: MethodModel;
}

/** The Python names and types of one document (what client.py is written from; tests use it to write calls). */
export interface PythonNaming {
  methods: PythonMethod[];
  types: TypeWriter;
}

export function namePython(c: ContractModel): PythonNaming {
  const types = new TypeWriter(c);
  types.writeComponents();
  const taken = new Set(RESERVED_METHODS);
  const methods = c.methods.map((m): PythonMethod => {
    const base = typeIdentifier(m.name, 'Method');
    const used = new Set(['self']);
    const params = m.params.map((p) => ({
      name: p.name,
      py: claimSnake(used, snakeIdentifier(p.name, 'p_')),
      required: p.required,
      type: types.expr(p.schema, `${base}${typeIdentifier(p.label, '')}Param`, 0),
    }));
    const result = m.result ? types.expr(m.result.schema, `${base}Result`, 0) : 'None';
    return {
      name: m.name,
      py: claimSnake(taken, snakeIdentifier(m.name, 'm_')),
      byName: m.paramStructure === 'by-name',
      params,
      result,
      model: m,
    };
  });
  return { methods, types };
}

/** Long example values are shortened in docstrings, as in the TypeScript client's JSDoc. */
function shortJson(v: unknown): string {
  const line = JSON.stringify(v) ?? 'null';
  if (line.length <= 80) return line;
  const s = json(v, (_k: string, x: unknown) => (typeof x === 'string' && x.length > 70 ? `${x.slice(0, 66)}…` : x));
  const lines = s.split('\n');
  return lines.length > 16 ? [...lines.slice(0, 14), '  …'].join('\n') : s;
}

function methodDocstring(pm: PythonMethod, indent: string): string {
  const m = pm.model;
  const lines: (string | undefined)[] = [`\`${m.name}\`${m.summary ? `: ${m.summary}` : ''}`];
  if (m.description && m.description !== m.summary) lines.push('', m.description);
  if (m.params.length) {
    lines.push('', 'Args:');
    for (const [i, p] of m.params.entries()) {
      const text = p.description ?? p.summary;
      lines.push(
        `    ${pm.params[i].py}${p.required ? '' : ' (optional, omitted when None)'}${text ? `: ${text.replace(/\s+/g, ' ')}` : ''}`,
      );
    }
  }
  if (m.errors.length)
    lines.push('', `Raises RpcError, e.g.: ${m.errors.map((e) => `${e.code} ${e.message}`).join('; ')}.`);
  const x = m.examples[0];
  if (x) {
    const params = pm.byName
      ? Object.fromEntries(x.params.map((p) => [p.name, p.value]))
      : x.params.map((p) => p.value);
    lines.push('', `Example params (JSON): ${shortJson(params)}`);
    if (x.result) lines.push(`Example result (JSON): ${shortJson(x.result.value)}`);
  }
  if (m.deprecated) lines.push('', 'Deprecated.');
  return docstring(lines, indent);
}

function signature(pm: PythonMethod, self: boolean): string {
  const ps = pm.params.map((p) => (p.required ? `${p.py}: ${p.type}` : `${p.py}: ${union([p.type, 'None'])} = None`));
  // By-name methods take keyword arguments only: the names are what the server reads.
  const all = [...(self ? ['self'] : []), ...(pm.byName && ps.length ? ['*'] : []), ...ps];
  return all.join(', ');
}

function requestExpr(pm: PythonMethod): string {
  const name = JSON.stringify(pm.name);
  if (pm.byName) {
    const req = pm.params.filter((p) => p.required).map((p) => `${JSON.stringify(p.name)}: ${p.py}`);
    const opt = pm.params.filter((p) => !p.required).map((p) => `${JSON.stringify(p.name)}: ${p.py}`);
    return `Request(${name}, _named({${req.join(', ')}}, {${opt.join(', ')}}))`;
  }
  const required = pm.params.filter((p) => p.required).length;
  return `Request(${name}, _positional([${pm.params.map((p) => p.py).join(', ')}], ${required}))`;
}

function writeClientPy(c: ContractModel, naming: PythonNaming, header: string, pkg: string): string {
  const sample =
    naming.methods.find((m) => !m.model.name.startsWith('rpc.') && m.params.every((p) => !p.required)) ??
    naming.methods[0];
  const out = [
    header,
    docstring([`Typed client of the ${c.spec.name} API (${c.title} ${c.version}): one method per OpenRPC method.`], ''),
    '\nfrom __future__ import annotations\n\n',
    'from typing import Any, Literal\n\n',
    'from ._runtime import BaseClient, Request, named as _named, positional as _positional\n',
    'from .types import *  # noqa: F403 (every name of types.py, listed in its __all__)\n\n',
    `__all__ = ["Calls", "Client"]\n\n\n`,
    'class Calls:\n',
    docstring(
      [
        `Every method of the ${c.spec.name} API as a Request, not yet sent: give one to \`Client.call\`, or several to`,
        '`Client.batch` (one HTTP request; results and errors in call order).',
      ],
      '    ',
    ),
  ];
  for (const pm of naming.methods) {
    out.push(
      '\n    @staticmethod\n',
      `    def ${pm.py}(${signature(pm, false)}) -> Request[${pm.result}]:\n`,
      methodDocstring(pm, '        '),
      `        return ${requestExpr(pm)}\n`,
    );
  }
  const url = c.servers[0]?.url ?? 'http://127.0.0.1:8545/';
  out.push(
    '\n\nclass Client(BaseClient):\n',
    docstring(
      [
        `A typed client of the ${c.spec.name} API (${c.title} ${c.version}).`,
        '',
        `\`url\` is the full endpoint, API key included (server template ${url}). Errors answered by the server`,
        'raise RpcError (code, message, data).',
        '',
        'Example:',
        `    from ${pkg} import Client`,
        '',
        '    client = Client("http://127.0.0.1:8545/")',
        ...(sample
          ? [
              `    result = client.${sample.py}(${sample.params
                .filter((p) => p.required)
                .map((p) => `${p.py}=...`)
                .join(', ')})`,
            ]
          : []),
      ],
      '    ',
    ),
  );
  for (const pm of naming.methods) {
    const args = pm.params.map((p) => (pm.byName ? `${p.py}=${p.py}` : p.py)).join(', ');
    const call = `self.call(Calls.${pm.py}(${args}))`;
    out.push(
      '\n',
      `    def ${pm.py}(${signature(pm, true)}) -> ${pm.result}:\n`,
      methodDocstring(pm, '        '),
      pm.result === 'None' ? `        ${call}\n` : `        return ${call}\n`,
    );
  }
  return out.join('').replace(/\n+$/, '\n');
}

const RUNTIME = `
from __future__ import annotations

import itertools
import json
import urllib.error
import urllib.request
from collections.abc import Mapping, Sequence
from typing import Any, Generic, TypeAlias, TypeVar, cast

__all__ = ["BaseClient", "Params", "Request", "RpcError", "named", "positional"]

T = TypeVar("T")
T_co = TypeVar("T_co", covariant=True)

Params: TypeAlias = "list[Any] | dict[str, Any]"
"""JSON-RPC params: positional (a list) or by name (an object)."""


class RpcError(Exception):
    """A JSON-RPC error: the server's error object (code, message, data), or a transport failure
    (code -32603 and status set when the HTTP answer was not a JSON-RPC response)."""

    def __init__(self, code: int, message: str, data: Any = None, status: int | None = None) -> None:
        super().__init__(message)
        self.code = code
        """JSON-RPC error code (e.g. -32602 invalid params)."""
        self.message = message
        self.data = data
        """The error's data member, if any (e.g. which param failed and why)."""
        self.status = status
        """HTTP status of the answer, when known."""

    def __str__(self) -> str:
        return f"{self.code}: {self.message}"

    def __repr__(self) -> str:
        return f"RpcError({self.code!r}, {self.message!r}, {self.data!r})"


class Request(Generic[T_co]):
    """One call, not yet sent: the method's name and its params as sent. \`Calls\` builds them typed."""

    __slots__ = ("method", "params")

    def __init__(self, method: str, params: Params) -> None:
        self.method = method
        self.params = params

    def __repr__(self) -> str:
        return f"Request({self.method!r}, {self.params!r})"


def positional(args: Sequence[object], required: int) -> list[Any]:
    """Params by position: optional params left None at the end are omitted; one left None before a given one
    is sent as null (a position cannot be skipped)."""
    out = list(args)
    while len(out) > required and out[-1] is None:
        out.pop()
    return out


def named(required: Mapping[str, object], optional: Mapping[str, object]) -> dict[str, Any]:
    """Params by name: optional params left None are omitted."""
    out: dict[str, Any] = dict(required)
    out.update((k, v) for k, v in optional.items() if v is not None)
    return out


def _error(e: Any, status: int | None) -> RpcError:
    if not isinstance(e, dict):
        return RpcError(-32603, "JSON-RPC error that is not an object", e, status)
    code = e.get("code")
    message = e.get("message")
    return RpcError(
        code if isinstance(code, int) and not isinstance(code, bool) else -32603,
        message if isinstance(message, str) else "JSON-RPC error without a message",
        e.get("data"),
        status,
    )


class BaseClient:
    """JSON-RPC 2.0 over HTTP POST with the standard library (urllib.request, json)."""

    def __init__(self, url: str, *, headers: Mapping[str, str] | None = None, timeout: float = 30.0) -> None:
        """\`url\`: the full endpoint (http or https), API key included. \`headers\`: sent with every request (e.g.
        Authorization). \`timeout\`: seconds per HTTP request."""
        if not url.lower().startswith(("http://", "https://")):
            raise ValueError(f"not an http(s) URL: {url!r}")
        self._url = url
        self._headers = {"Content-Type": "application/json", "Accept": "application/json", **(headers or {})}
        self._timeout = timeout
        self._ids = itertools.count(1)

    def call(self, request: Request[T]) -> T:
        """Sends one request and returns its result. Raises RpcError when the server answers an error (or not
        JSON-RPC); a network failure raises urllib.error.URLError (an OSError) as urllib does."""
        id = next(self._ids)
        status, payload = self._post({"jsonrpc": "2.0", "id": id, "method": request.method, "params": request.params})
        if not isinstance(payload, dict):
            raise RpcError(-32603, f"HTTP {status}: not a JSON-RPC response", payload, status)
        if "error" in payload:
            raise _error(payload["error"], status)
        if not 200 <= status < 300:
            raise RpcError(-32603, f"HTTP {status}", payload, status)
        if payload.get("id") != id:
            raise RpcError(-32603, f"response id {payload.get('id')!r} does not match request id {id}", payload, status)
        return cast(T, payload.get("result"))

    def request(self, method: str, params: Params | None = None) -> Any:
        """An untyped call of any method (positional params as a list, by-name params as a dict)."""
        return self.call(Request[Any](method, [] if params is None else params))

    def batch(self, requests: Sequence[Request[T]]) -> list[T | RpcError]:
        """Sends the requests as one JSON-RPC batch. Returns, in request order, each result or the RpcError the
        server answered for it; raises RpcError only when the batch as a whole fails."""
        if not requests:
            return []
        ids = [next(self._ids) for _ in requests]
        body = [{"jsonrpc": "2.0", "id": i, "method": r.method, "params": r.params} for i, r in zip(ids, requests)]
        status, payload = self._post(body)
        if not isinstance(payload, list):
            if isinstance(payload, dict) and "error" in payload:
                raise _error(payload["error"], status)
            raise RpcError(-32603, f"HTTP {status}: batch answer is not an array", payload, status)
        # Batch answers may come in any order: matched by id.
        by_id = {env.get("id"): env for env in payload if isinstance(env, dict)}
        out: list[T | RpcError] = []
        for i in ids:
            env = by_id.get(i)
            if env is None:
                out.append(RpcError(-32603, f"no answer for batch item id {i}", None, status))
            elif "error" in env:
                out.append(_error(env["error"], status))
            else:
                out.append(cast(T, env.get("result")))
        return out

    def _post(self, message: object) -> tuple[int, Any]:
        data = json.dumps(message, allow_nan=False).encode("utf-8")
        req = urllib.request.Request(self._url, data=data, headers=self._headers, method="POST")
        try:
            with urllib.request.urlopen(req, timeout=self._timeout) as res:
                status, text = int(res.status), res.read()
        except urllib.error.HTTPError as e:
            with e:
                status, text = e.code, e.read()
        try:
            return status, json.loads(text) if text else None
        except ValueError:
            raise RpcError(-32603, f"HTTP {status}: answer is not JSON: {text[:200]!r}", None, status) from None
`;

/** The generated package for one document: relative path → text. Deterministic: the same model gives the same bytes. */
export function generatePythonClient(model: ContractModel, opts: GeneratePythonOptions = {}): Map<string, string> {
  const header = pyHeader(model.spec.file, opts);
  const pkg = opts.packageName ?? `${snakeIdentifier(model.spec.name, 'api_')}_client`;
  const naming = namePython(model);
  const title = `Types of the ${model.spec.name} API (${model.title} ${model.version}): one per schema of the document.`;
  const init = [
    header,
    docstring(
      [
        `Typed Python client of the ${model.spec.name} API (${model.title} ${model.version}).`,
        ...(model.description ? ['', model.description] : []),
        '',
        'Standard library only (urllib.request, json); Python 3.11 or later.',
      ],
      '',
    ),
    '\nfrom . import types\n',
    'from ._runtime import Request, RpcError\n',
    'from .client import Calls, Client\n\n',
    '__all__ = ["Calls", "Client", "Request", "RpcError", "types"]\n',
  ].join('');
  return new Map([
    ['__init__.py', init],
    [
      '_runtime.py',
      header +
        docstring(
          ['JSON-RPC 2.0 over HTTP for the generated client: standard library only (urllib.request, json).'],
          '',
        ) +
        RUNTIME,
    ],
    ['client.py', writeClientPy(model, naming, header, pkg)],
    ['py.typed', ''],
    ['types.py', naming.types.render(header, title)],
  ]);
}

/** The first example's params of a method as a Python call's arguments, when complete (used by the examples). */
export function exampleArguments(pm: PythonMethod): { py: string; value: Json }[] | undefined {
  try {
    const values = exampleParams(pm.model);
    return values.map((value, i) => ({ py: pm.params[i].py, value }));
  } catch {
    return undefined;
  }
}

/** A call's argument list from Python literals in param order: positional for a by-position method's required params,
 *  keyword for its optional ones and for every param of a by-name method. */
export function callArguments(pm: PythonMethod, literals: string[]): string {
  return literals.map((lit, i) => (pm.byName || !pm.params[i].required ? `${pm.params[i].py}=${lit}` : lit)).join(', ');
}

/** Python literal of a JSON value. */
export function pyValue(v: Json, indent = ''): string {
  if (v === null || v === undefined) return 'None';
  if (v === true) return 'True';
  if (v === false) return 'False';
  if (typeof v === 'string') return JSON.stringify(v);
  if (typeof v === 'number') return Number.isInteger(v) && !Number.isSafeInteger(v) ? BigInt(v).toString() : String(v);
  const inner = `${indent}    `;
  if (Array.isArray(v)) {
    const one = `[${v.map((x) => pyValue(x, inner)).join(', ')}]`;
    return one.length <= 72 || !v.length
      ? one
      : `[\n${v.map((x) => inner + pyValue(x, inner)).join(',\n')},\n${indent}]`;
  }
  const entries = Object.entries(v);
  const one = `{${entries.map(([k, x]) => `${JSON.stringify(k)}: ${pyValue(x, inner)}`).join(', ')}}`;
  return one.length <= 72 || !entries.length
    ? one
    : `{\n${entries.map(([k, x]) => `${inner}${JSON.stringify(k)}: ${pyValue(x, inner)}`).join(',\n')},\n${indent}}`;
}
