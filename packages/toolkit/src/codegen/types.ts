// generated/<api>/types.ts: one TypeScript type per components.schemas entry (json-schema-to-typescript, compiled
// as one synthetic schema whose `definitions` are the components, so `$ref`s become named types, not inlined
// copies), then per method a labelled params tuple, a result type and the `<Api>Methods` interface.
import { compile } from 'json-schema-to-typescript';
import { format } from 'prettier';
import { refName, type ContractModel, type Json, type MethodModel } from '../contract/model.js';
import { isHexString, jsdoc, json, tsHeader, type HeaderOptions } from './schema.js';
import { mapSchema } from '../contract/schema-walk.js';
import { claim, nameDocument, paramLabels, typeIdentifier, type Naming } from './naming.js';

// biome-ignore lint/suspicious/noTemplateCurlyInString: TypeScript source text (a template literal type), not a template
const HEX = '`0x${string}`';
const ROOT = 'RpcgateCodegenRoot';

// `filepath` tells prettier the text is TypeScript, not JSX: without it prettier first runs a JSX-sniffing regex that is
// quadratic in the size of the file (seconds on a 4,000-method document).
export const PRETTIER = { parser: 'typescript', filepath: 'generated.ts', singleQuote: true, printWidth: 120 } as const;

/** Files larger than this are written as generated, unformatted: prettier costs about 1.5 s per MB (issue 26: a
 *  4,000-method document spent a third of `generate` formatting 3 MB nobody reads by hand). */
export const FORMAT_LIMIT_BYTES = 512 * 1024;

/** Formats generated TypeScript with prettier, unless it is too large to be worth it (see FORMAT_LIMIT_BYTES). */
export async function formatTs(text: string): Promise<string> {
  return text.length > FORMAT_LIMIT_BYTES ? text : format(text, PRETTIER);
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

/** Prepares a contract schema for json-schema-to-typescript. `inlineNull` replaces refs to null components. */
function forTs(schema: Json, t: TypeNames, topTitle: string | undefined, inlineNull: boolean): Json {
  return mapSchema(schema, (s, depth) => {
    const r = refName(s);
    if (r !== undefined) {
      if (!t.names.has(r)) throw new Error(`unknown schema reference ${s.$ref}`);
      // Siblings of $ref (title, description) would make the ref parser produce a merged copy → a duplicate type.
      return inlineNull && t.nullish.has(r) ? { type: 'null' } : { $ref: `#/definitions/${t.names.get(r)}` };
    }
    delete s.$id;
    delete s.$schema;
    if (isHexString(s)) s.tsType = HEX;
    // An object schema that declares no members is open: a record, not `{}`.
    if (s.type === 'object' && !s.properties && !s.patternProperties && s.additionalProperties === undefined)
      s.additionalProperties = true;
    if (depth === 0 && topTitle !== undefined) {
      s.title = topTitle;
      // A named type's JSDoc carries the schema's examples after its description.
      const examples = Array.isArray(s.examples) ? s.examples : s.example !== undefined ? [s.example] : [];
      const blocks = examples.slice(0, 3).map((x: Json) => `@example\n\`\`\`json\n${truncateJson(x)}\n\`\`\``);
      if (blocks.length) s.description = [s.description, ...blocks].filter(Boolean).join('\n\n');
    } else if (s.title !== undefined) {
      // Nested titles name types; keep them only for object shapes (interfaces), and never let them take a name in use.
      const isObjectShape = s.type === 'object' && s.properties;
      if (!isObjectShape || t.taken.has(typeIdentifier(String(s.title), ''))) delete s.title;
    }
    return s;
  });
}

const SIMPLE_KEYS = new Set(['title', 'description', 'summary', 'examples', 'default', '$comment', 'deprecated']);

/** A TS type expression for simple schemas; undefined when json-schema-to-typescript should name it. */
function simpleExpr(s: Json, t: TypeNames): string | undefined {
  if (s === true || (s && typeof s === 'object' && Object.keys(s).every((k) => SIMPLE_KEYS.has(k)))) return 'unknown';
  if (!s || typeof s !== 'object') return undefined;
  const r = refName(s);
  if (r !== undefined) return t.nullish.has(r) ? 'null' : t.names.get(r);
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
  const pending: [string, Json][] = [];
  const perMethod = new Map<string, MethodTypes>();
  for (const m of c.methods) {
    const base = naming.methods.get(m.name)!;
    const labels = paramLabels(m.params.map((p) => p.label));
    const params = m.params.map((p, i) => {
      let expr = simpleExpr(p.schema, t);
      if (expr === undefined)
        pending.push([(expr = claim(taken, `${base}${typeIdentifier(p.label, '')}Param`)), p.schema]);
      return {
        label: labels[i],
        name: p.name,
        required: p.required,
        expr,
        doc: [p.summary, p.description !== p.summary ? p.description : undefined],
      };
    });
    const simple = m.result ? simpleExpr(m.result.schema, t) : 'unknown';
    if (simple === undefined) pending.push([`${base}Result`, m.result!.schema]);
    perMethod.set(m.name, { params, result: simple ?? `${base}Result`, named: simple === undefined });
  }
  const definitions: Record<string, Json> = {};
  for (const [key, s] of c.schemas) definitions[t.names.get(key)!] = forTs(s, t, t.names.get(key), false);
  for (const [name, schema] of pending) definitions[name] = forTs(schema, t, name, true);

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
