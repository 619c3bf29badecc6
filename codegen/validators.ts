// generated/<api>/validators.ts: ajv standalone validators, compiled here at generate time so the service never
// compiles a schema at run time. Each method gets `params` (the positional params array as a draft-07 tuple:
// `items: [..]`, `additionalItems: false`, minItems = required count, maxItems = param count) and `result`.
// components.schemas are added once each, under their own id, and referenced (not inlined) so shared types like Uint or
// Block are one function each in the output.
import { Ajv } from 'ajv';
import standaloneModule from 'ajv/dist/standalone/index.js';
import type { ContractModel, Json } from './model.js';
import { rewriteRefs, str, tsHeader } from './schema.js';

// CJS module: under NodeNext the default import is module.exports, whose `default` is the function.
const standaloneCode = standaloneModule.default;

export const exportName = (method: string, kind: 'params' | 'result'): string => `${method.replace(/[^A-Za-z0-9_$]/g, '_')}__${kind}`;

/** The JSON Schema the params validator of a method checks (also used by tests and docs). */
export function paramsSchema(c: ContractModel, methodName: string, id?: string): Json {
  const m = c.methods.find((x) => x.name === methodName)!;
  const items = m.params.map((p) => rewriteRefs(p.schema, (n) => schemaId(c, n)));
  const required = m.params.filter((p) => p.required).length;
  return items.length
    ? { ...(id ? { $id: id } : {}), type: 'array', items, additionalItems: false, minItems: required, maxItems: items.length }
    : { ...(id ? { $id: id } : {}), type: 'array', maxItems: 0 };
}

/**
 * Each component is its own ajv schema with its own id: refs to a root schema share one compiled function,
 * whereas JSON-pointer refs into one big schema get compiled again for every method that reaches them.
 */
const schemaId = (c: ContractModel, name: string) => `urn:rpcgate:${c.spec.name}:schema:${encodeURIComponent(name)}`;

export function createAjv(c: ContractModel): Ajv {
  const ajv = new Ajv({
    code: { source: true, esm: true, lines: true },
    allErrors: false, // the hot path stops at the first error (allErrors is a DoS risk)
    strict: false, // contract schemas carry OpenRPC/annotation keywords ajv does not know
    inlineRefs: false, // shared schemas stay one function each: keeps validators.ts small
    validateFormats: false, // formats are annotations in the Ethereum spec; patterns carry the checks
    // keep the order of definitions stable in output
  });
  for (const [k, s] of c.schemas) {
    const schema = rewriteRefs(s, (n) => schemaId(c, n));
    ajv.addSchema(typeof schema === 'object' ? { ...schema, $id: schemaId(c, k) } : schema, schemaId(c, k));
  }
  for (const m of c.methods) {
    ajv.addSchema(paramsSchema(c, m.name, `urn:rpcgate:${c.spec.name}:${m.name}:params`));
    const result = m.result ? rewriteRefs(m.result.schema, (n) => schemaId(c, n)) : {};
    ajv.addSchema({ ...(typeof result === 'object' ? result : {}), $id: `urn:rpcgate:${c.spec.name}:${m.name}:result` });
  }
  return ajv;
}

export function writeValidators(c: ContractModel): string {
  const ajv = createAjv(c);
  const refs: Record<string, string> = {};
  for (const m of c.methods) {
    refs[exportName(m.name, 'params')] = `urn:rpcgate:${c.spec.name}:${m.name}:params`;
    refs[exportName(m.name, 'result')] = `urn:rpcgate:${c.spec.name}:${m.name}:result`;
  }
  let code = standaloneCode(ajv, refs);
  // ajv's standalone code pulls its runtime helpers with require() even in ESM mode: turn those into imports.
  const runtime = new Map<string, string>();
  code = code.replace(/require\("ajv\/dist\/runtime\/([a-z0-9_]+)"\)\.default/gi, (_: string, mod: string) => {
    if (!runtime.has(mod)) runtime.set(mod, `ajvRuntime_${mod}`);
    return `(${runtime.get(mod)}.default ?? ${runtime.get(mod)})`;
  });
  if (/\brequire\(/.test(code)) throw new Error('standalone validator code still contains require()');
  const imports = [...runtime].sort().map(([mod, name]) => `import ${name} from 'ajv/dist/runtime/${mod}.js';\n`);
  const table = c.methods
    .map((m) => `  ${str(m.name)}: { params: ${exportName(m.name, 'params')}, result: ${exportName(m.name, 'result')} },\n`)
    .join('');
  return [
    tsHeader(c.spec.file),
    '// @ts-nocheck — ajv standalone output (compiled at generate time; no schema compilation at run time)\n',
    `import type { ValidatorTable } from '../../src/rpc/descriptor.js';\n`,
    ...imports,
    '\n',
    code.replace(/^"use strict";\n?/, ''),
    '\n\n/** Params (positional array) and result validators per method. */\n',
    `export const validators: ValidatorTable = {\n${table}};\n`,
  ].join('');
}
