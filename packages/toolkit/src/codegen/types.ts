// generated/<api>/types.ts: one TypeScript type per components.schemas entry (json-schema-to-typescript, compiled
// as one synthetic schema whose `definitions` are the components, so `$ref`s become named types, not inlined
// copies), then per method a labelled params tuple, a result type and the `<Api>Methods` interface.
import { compile } from 'json-schema-to-typescript';
import { format } from 'prettier';
import { refName, type ContractModel, type Json, type MethodModel } from '../contract/model.js';
import { isHexString, jsdoc, json, tsHeader, type HeaderOptions } from './schema.js';
import { claim, nameDocument, paramLabels, typeIdentifier, type Naming } from './naming.js';

// biome-ignore lint/suspicious/noTemplateCurlyInString: TypeScript source text (a template literal type), not a template
const HEX = '`0x${string}`';
const ROOT = 'RpcgateCodegenRoot';

// `filepath` tells prettier the text is TypeScript, not JSX: without it prettier first runs a JSX-sniffing regex that is
// quadratic in the size of the file (seconds on a 4,000-method document).
export const PRETTIER = { parser: 'typescript', filepath: 'generated.ts', singleQuote: true, printWidth: 120 } as const;

/** Files larger than this are not given to prettier but re-indented by {@link reindent}: readable, not prettier's line
 *  breaking. prettier costs ~4-6 s of CPU per MB (the 170 KB methods.ts of the 1.25 MB Lotus document: 0.66 s warm,
 *  1.0 s in a fresh process — a fifth of `generate`, against issue 19's 5 s bar), so at most ~0.6 s per file. The
 *  files this writes for the repository's own contracts are below it (the largest, account/types.ts, is ~100 KB);
 *  test/generated-format.test.ts checks that. (codegen/examples.ts formats its ~250 KB file with prettier directly.) */
export const FORMAT_LIMIT_BYTES = 128 * 1024;

/** Formats generated TypeScript with prettier, or re-indents it when it is too large for that (see FORMAT_LIMIT_BYTES). */
export async function formatTs(text: string): Promise<string> {
  return text.length > FORMAT_LIMIT_BYTES ? reindent(text) : format(text, PRETTIER);
}

/**
 * Indents generated TypeScript by bracket depth, two spaces a level, in one linear pass: each line's leading closing
 * brackets dedent it, its remaining brackets (outside strings, template literals and comments) set the next line's
 * depth; JSDoc continuation lines get the extra space. For output that is too large for prettier.
 */
export function reindent(text: string): string {
  const out: string[] = [];
  let depth = 0;
  let inComment = false;
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line === '') {
      out.push('');
      continue;
    }
    const pad = '  '.repeat(depth);
    if (inComment || line.startsWith('/*')) {
      out.push(inComment ? `${pad} ${line}` : pad + line);
      inComment = !line.endsWith('*/') || (!inComment && line === '/*');
      continue;
    }
    let opens = 0;
    let leading = 0;
    let other = false;
    for (let i = 0; i < line.length; i++) {
      const ch = line[i];
      if (ch === "'" || ch === '"' || ch === '`') {
        // a string or template literal: skip to its closing quote
        for (i++; i < line.length && line[i] !== ch; i++) if (line[i] === '\\') i++;
        other = true;
      } else if (ch === '/' && line[i + 1] === '/') break;
      else if (ch === '{' || ch === '[' || ch === '(') {
        opens++;
        other = true;
      } else if (ch === '}' || ch === ']' || ch === ')') {
        if (other) opens--;
        else leading++;
      } else if (ch !== ' ') other = true;
    }
    out.push('  '.repeat(Math.max(0, depth - leading)) + line);
    depth = Math.max(0, depth - leading + opens);
  }
  return out.join('\n');
}

interface TypeNames {
  /** component key → type name */
  names: Map<string, string>;
  /** components that are just `null` (the spec's "not found"): inlined as `null` so results read `Block | null`. */
  nullish: Set<string>;
  /** Every type name in use (document names, derived names, reserved globals). */
  taken: Set<string>;
}

function typeNames(c: ContractModel, naming: Naming): TypeNames {
  const names = naming.schemas;
  const nullish = new Set<string>();
  const isNull = (s: Json, depth = 0): boolean => {
    const r = refName(s);
    if (r !== undefined) return depth < 16 && isNull(c.raw.components.schemas[r], depth + 1);
    return s?.type === 'null' && !s.oneOf && !s.anyOf && !s.allOf;
  };
  for (const [key, s] of c.schemas) if (isNull(s)) nullish.add(key);
  return { names, nullish, taken: naming.taken };
}

/** What json-schema-to-typescript is given of a schema: the keywords that shape a TypeScript type (plus the annotations
 *  it prints). Everything else (validation-only keywords, `default`, `examples`, `x-…`, unknown keys that published
 *  documents put where a keyword belongs, such as a property map written without `properties`) cannot change the
 *  type and is left out, so no `$ref` in it ever reaches json-schema-to-typescript's resolver. */
const TS_SUBSCHEMA_MAPS = new Set(['properties', 'patternProperties']);
const TS_SUBSCHEMA_LISTS = new Set(['allOf', 'anyOf', 'oneOf']);
const TS_VALUES = new Set([
  'type',
  'enum',
  'const',
  'required',
  'title',
  'description',
  'deprecated',
  'tsType',
  'minItems',
  'maxItems',
  'format',
  'pattern',
]);

const ANNOTATIONS = new Set(['title', 'description', 'deprecated']);

/** An error of `generate`: what it cannot express, named by file and JSON pointer. */
export class GenerateError extends Error {
  constructor(
    readonly file: string,
    readonly pointer: string,
    reason: string,
  ) {
    super(`${file}${pointer}: ${reason}`);
    this.name = 'GenerateError';
  }
}

const escapePointer = (key: string): string => key.replace(/~/g, '~0').replace(/\//g, '~1');

/** A deep search for a `$ref` member in data (enum/const values): its pointer, or undefined. */
function refInData(v: Json, at: string): string | undefined {
  if (!v || typeof v !== 'object') return undefined;
  if (!Array.isArray(v) && typeof v.$ref === 'string') return `${at}/$ref`;
  for (const [k, x] of Object.entries(v)) {
    const found = refInData(x, `${at}/${escapePointer(k)}`);
    if (found) return found;
  }
  return undefined;
}

interface TsContext {
  t: TypeNames;
  file: string;
  inlineNull: boolean;
}

/**
 * Prepares a contract schema for json-schema-to-typescript: every `$ref` to a component becomes `tsType: <its type
 * name>` (the component is declared once under that name, so a component that is only a `$ref` to another, and
 * recursive or mutually recursive components, are plain named types), `true`/`false` become `unknown`/`never`, and a
 * `$ref` the model could not resolve is an error naming its pointer — json-schema-to-typescript resolves nothing.
 * `inlineNull` replaces refs to null components (method-level schemas read `Block | null`).
 */
function forTs(schema: Json, cx: TsContext, at: string, topTitle?: string): Json {
  const { t } = cx;
  const walk = (s: Json, ptr: string, depth: number): Json => {
    if (s === true) return { tsType: 'unknown', ...(depth === 0 && topTitle !== undefined ? { title: topTitle } : {}) };
    if (s === false) return { tsType: 'never', ...(depth === 0 && topTitle !== undefined ? { title: topTitle } : {}) };
    // Not a schema (a number, a string, an array where a schema belongs): JSON Schema ignores it; so does the type.
    if (!s || typeof s !== 'object' || Array.isArray(s)) return {};
    if (s.$ref !== undefined) {
      const r = refName(s);
      if (r === undefined || !t.names.has(r))
        throw new GenerateError(
          cx.file,
          `${ptr}/$ref`,
          `reference ${JSON.stringify(s.$ref)} does not name a schema of #/components/schemas (generate cannot type it)`,
        );
      const out: Json = cx.inlineNull && t.nullish.has(r) ? { type: 'null' } : { tsType: t.names.get(r) };
      if (typeof s.description === 'string') out.description = s.description;
      if (s.deprecated === true) out.deprecated = true;
      if (depth === 0 && topTitle !== undefined) out.title = topTitle;
      return out;
    }
    const out: Json = {};
    for (const [k, v] of Object.entries(s)) {
      if (TS_SUBSCHEMA_MAPS.has(k) && v && typeof v === 'object' && !Array.isArray(v)) {
        out[k] = Object.fromEntries(
          Object.entries(v).map(([n, x]) => [n, walk(x, `${ptr}/${k}/${escapePointer(n)}`, depth + 1)]),
        );
      } else if (TS_SUBSCHEMA_LISTS.has(k) && Array.isArray(v)) {
        out[k] = v.map((x, i) => walk(x, `${ptr}/${k}/${i}`, depth + 1));
      } else if (k === 'items') {
        // draft 2020-12 spells a tuple prefixItems + items; json-schema-to-typescript reads draft-07's items + additionalItems
        if (Array.isArray(v)) out.items = v.map((x, i) => walk(x, `${ptr}/items/${i}`, depth + 1));
        else if (Array.isArray(s.prefixItems))
          out.additionalItems = typeof v === 'boolean' ? v : walk(v, `${ptr}/items`, depth + 1);
        else out.items = walk(v, `${ptr}/items`, depth + 1);
      } else if (k === 'prefixItems' && Array.isArray(v)) {
        out.items = v.map((x, i) => walk(x, `${ptr}/prefixItems/${i}`, depth + 1));
      } else if (k === 'additionalProperties' || k === 'additionalItems') {
        if (out[k] === undefined) out[k] = typeof v === 'boolean' ? v : walk(v, `${ptr}/${k}`, depth + 1);
      } else if (TS_VALUES.has(k)) {
        const ref = k === 'enum' || k === 'const' ? refInData(v, `${ptr}/${k}`) : undefined;
        if (ref) throw new GenerateError(cx.file, ref, 'a "$ref" member inside enum/const data cannot be typed');
        out[k] = structuredClone(v);
      }
    }
    if (isHexString(out)) out.tsType = HEX;
    // A schema that constrains nothing (annotations only) accepts any value: `unknown`, not an empty interface.
    if (Object.keys(out).every((k) => ANNOTATIONS.has(k))) out.tsType = 'unknown';
    // An object schema that declares no members is open: a record, not `{}`.
    if (out.type === 'object' && !out.properties && !out.patternProperties && out.additionalProperties === undefined)
      out.additionalProperties = true;
    if (depth === 0 && topTitle !== undefined) {
      out.title = topTitle;
      // A named type's JSDoc carries the schema's examples after its description.
      const examples = Array.isArray(s.examples) ? s.examples : s.example !== undefined ? [s.example] : [];
      const blocks = examples.slice(0, 3).map((x: Json) => `@example\n\`\`\`json\n${truncateJson(x)}\n\`\`\``);
      if (blocks.length) out.description = [out.description, ...blocks].filter(Boolean).join('\n\n');
    } else if (out.title !== undefined) {
      // Nested titles name types; keep them only for object shapes (interfaces), and never let them take a name in use.
      // The kept title is the identifier json-schema-to-typescript keeps as is, so the check sees the name it will use.
      const name = typeIdentifier(String(out.title), '');
      if (out.type !== 'object' || !out.properties || !name || t.taken.has(name)) delete out.title;
      else out.title = name;
    }
    return out;
  };
  return walk(schema, at, 0);
}

const SIMPLE_KEYS = new Set(['title', 'description', 'summary', 'examples', 'default', '$comment', 'deprecated']);

/** A TS type expression for simple schemas; undefined when json-schema-to-typescript should name it. */
function simpleExpr(s: Json, t: TypeNames): string | undefined {
  if (s === true || (s && typeof s === 'object' && Object.keys(s).every((k) => SIMPLE_KEYS.has(k)))) return 'unknown';
  if (s === false) return 'never';
  if (!s || typeof s !== 'object') return undefined;
  if (s.$ref !== undefined) {
    const r = refName(s);
    return r === undefined ? undefined : t.nullish.has(r) ? 'null' : t.names.get(r);
  }
  const keys = Object.keys(s).filter((k) => !SIMPLE_KEYS.has(k));
  const only = (...allowed: string[]) => keys.every((k) => allowed.includes(k));
  const union = (list: Json[]) => {
    const parts = list.map((x) => simpleExpr(x, t));
    if (parts.some((p) => p === undefined)) return undefined;
    return [...new Set(parts)].join(' | ');
  };
  if ((s.oneOf || s.anyOf) && only('oneOf', 'anyOf')) return s.oneOf && s.anyOf ? undefined : union(s.oneOf ?? s.anyOf);
  if (Array.isArray(s.type)) return only('type') ? union(s.type.map((x: string) => ({ type: x }))) : undefined;
  switch (s.type) {
    case 'null':
      return only('type') ? 'null' : undefined;
    case 'boolean':
      return only('type') ? 'boolean' : undefined;
    case 'number':
    case 'integer':
      return only('type', 'minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum', 'multipleOf')
        ? 'number'
        : undefined;
    case 'string':
      if (Array.isArray(s.enum) && only('type', 'enum'))
        return s.enum.map((v: string) => JSON.stringify(v)).join(' | ');
      if (!only('type', 'pattern', 'minLength', 'maxLength', 'format')) return undefined;
      return isHexString(s) ? HEX : 'string';
    case 'array': {
      if (!only('type', 'items', 'minItems', 'maxItems', 'uniqueItems') || Array.isArray(s.items)) return undefined;
      const item = s.items === undefined ? 'unknown' : simpleExpr(s.items, t);
      return item === undefined ? undefined : item.includes(' ') ? `Array<${item}>` : `${item}[]`;
    }
    case 'object':
      return only('type') || (only('type', 'additionalProperties') && s.additionalProperties === true)
        ? 'Record<string, unknown>'
        : undefined;
    default:
      return undefined;
  }
}

interface MethodTypes {
  params: { label: string; name: string; required: boolean; expr: string; doc: (string | undefined)[] }[];
  result: string;
  /** The result type was emitted by json-schema-to-typescript under `<Base>Result`. */
  named: boolean;
}

export interface TypesOptions extends HeaderOptions {
  /** Names chosen for the document (default: {@link nameDocument}). */
  naming?: Naming;
}

/** A property key of a TS object type: the name itself when it is an identifier, else a string literal. */
const propKey = (name: string): string => (/^[A-Za-z_$][\w$]*$/.test(name) ? name : JSON.stringify(name));

export async function writeTypes(c: ContractModel, opts: TypesOptions = {}): Promise<string> {
  const naming = opts.naming ?? nameDocument(c);
  const t = typeNames(c, naming);
  const taken = new Set(t.taken);
  t.taken = taken;

  // Method-level schemas that are not simple expressions get a synthetic, named definition; their names are claimed
  // before any schema is converted, so a nested title can never take one.
  const pending: [string, Json, string][] = [];
  const perMethod = new Map<string, MethodTypes>();
  for (const [i, m] of c.methods.entries()) {
    const base = naming.methods.get(m.name)!;
    const labels = paramLabels(m.params.map((p) => p.label));
    const params = m.params.map((p, j) => {
      let expr = simpleExpr(p.schema, t);
      if (expr === undefined) {
        expr = claim(taken, `${base}${typeIdentifier(p.label, '')}Param`);
        naming.pointers.set(expr, `#/methods/${i}/params/${j}/schema`);
        pending.push([expr, p.schema, `#/methods/${i}/params/${j}/schema`]);
      }
      return {
        label: labels[j],
        name: p.name,
        required: p.required,
        expr,
        doc: [p.summary, p.description !== p.summary ? p.description : undefined],
      };
    });
    const simple = m.result ? simpleExpr(m.result.schema, t) : 'unknown';
    if (simple === undefined) pending.push([`${base}Result`, m.result!.schema, `#/methods/${i}/result/schema`]);
    perMethod.set(m.name, { params, result: simple ?? `${base}Result`, named: simple === undefined });
  }
  const definitions: Record<string, Json> = {};
  const file = c.spec.file;
  for (const [key, s] of c.schemas)
    definitions[t.names.get(key)!] = forTs(
      s,
      { t, file, inlineNull: false },
      `#/components/schemas/${escapePointer(key)}`,
      t.names.get(key),
    );
  for (const [name, schema, at] of pending) definitions[name] = forTs(schema, { t, file, inlineNull: true }, at, name);

  const root = { title: ROOT, type: 'object', additionalProperties: false, definitions };
  const compiled = await compile(root as never, ROOT, {
    bannerComment: '',
    declareExternallyReferenced: true,
    unreachableDefinitions: true,
    additionalProperties: false, // result objects are typed by their declared members, viem-style, without an index signature
    strictIndexSignatures: true,
    format: false,
    unknownAny: true,
    $refOptions: { resolve: { external: false } } as never,
  });

  const out: string[] = [tsHeader(c.spec.file, opts), stripNoise(compiled)];
  out.push(`\n// ---- methods ----\n`);
  for (const m of c.methods) {
    const base = naming.methods.get(m.name)!;
    const mt = perMethod.get(m.name)!;
    const tuple = mt.params.map((p) => `${p.label}${p.required ? '' : '?'}: ${p.expr}`).join(', ');
    out.push(`${jsdoc([`Params of \`${m.name}\`: ${m.summary}`])}export type ${base}Params = [${tuple}];\n`);
    if (m.paramStructure === 'by-name') {
      // paramStructure "by-name": the server expects the params as one object keyed by the params' names.
      const members = mt.params
        .map((p) => `${jsdoc(p.doc, '  ')}  ${propKey(p.name)}${p.required ? '' : '?'}: ${p.expr};\n`)
        .join('');
      out.push(
        jsdoc([`Params of \`${m.name}\` by name (its paramStructure is "by-name").`]) +
          `export interface ${base}ParamsByName {\n${members}}\n`,
      );
    }
    if (!mt.named)
      out.push(
        jsdoc([`Result of \`${m.name}\`${m.result?.name ? ` (${m.result.name})` : ''}.`]) +
          `export type ${base}Result = ${mt.result};\n`,
      );
  }
  out.push(jsdoc([`Every method of the ${c.spec.name} API (${c.title} ${c.version}): params tuple and result.`]));
  out.push(`export interface ${naming.api}Methods {\n`);
  for (const m of c.methods) {
    const base = naming.methods.get(m.name)!;
    const byName = m.paramStructure === 'by-name' ? ` paramsByName: ${base}ParamsByName;` : '';
    out.push(methodDoc(m, '  '));
    out.push(`  ${JSON.stringify(m.name)}: { params: ${base}Params;${byName} result: ${base}Result };\n`);
  }
  out.push('}\n');
  return formatTs(out.join(''));
}

export function methodDoc(m: MethodModel, indent: string): string {
  const x = m.examples[0];
  const lines: (string | undefined)[] = [m.summary];
  if (m.description && m.description !== m.summary) lines.push('', m.description);
  if (m.params.length) {
    lines.push('', 'Params:');
    for (const p of m.params)
      lines.push(
        `- \`${m.paramStructure === 'by-name' ? p.name : p.label}\`${p.required ? '' : ' (optional)'}${p.description ? `: ${p.description}` : p.summary ? `: ${p.summary}` : ''}`,
      );
  }
  if (m.errors.length) lines.push('', `Errors: ${m.errors.map((e) => `${e.code} ${e.message}`).join('; ')}.`);
  if (x) {
    // A by-name method's example is shown as the object it is sent as.
    const params =
      m.paramStructure === 'by-name'
        ? Object.fromEntries(x.params.map((p) => [p.name, p.value]))
        : x.params.map((p) => p.value);
    lines.push('', '@example', '```json', `// request params`, truncateJson(params));
    if (x.result) lines.push(`// result`, truncateJson(x.result.value));
    lines.push('```');
  }
  if (m.deprecated) lines.push('@deprecated');
  return jsdoc(lines, indent);
}

/** Long example values (full blocks) are shortened in JSDoc; the docs pages show them whole. */
function truncateJson(v: unknown): string {
  // Long hex strings (logsBloom, input data) are shortened too.
  const s = json(v, (_k: string, x: unknown) => (typeof x === 'string' && x.length > 70 ? `${x.slice(0, 66)}…` : x));
  const lines = s.split('\n');
  return lines.length > 24 ? [...lines.slice(0, 22), '  …'].join('\n') : s;
}

/** Drops json-schema-to-typescript's "This interface was referenced by …" notes and the synthetic root. */
function stripNoise(code: string): string {
  const lines = code.split('\n');
  const out: string[] = [];
  for (let i = 0; i < lines.length; i++) {
    const l = lines[i];
    if (/^\s*\* This interface was referenced by /.test(l)) {
      if (/^\s*\* via the /.test(lines[i + 1] ?? '')) i++;
      // remove the blank separator line before it
      if (out.length && /^\s*\*\s*$/.test(out[out.length - 1])) out.pop();
      continue;
    }
    out.push(l);
  }
  return out
    .join('\n')
    .replace(/\/\*\*\n(\s*\*\s*\n)*\s*\*\/\n/g, '')
    .replace(/(\/\*\*\n)(\s*\*\s*\n)+/g, '$1')
    .replace(new RegExp(`export interface ${ROOT} \\{\\s*\\}\\n?`), '');
}
