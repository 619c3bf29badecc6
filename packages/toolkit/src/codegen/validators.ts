// generated/<api>/validators.ts: ajv standalone validators, compiled here at generate time so the service never
// compiles a schema at run time. Each method gets `params` (the positional params array as a draft-07 tuple:
// `items: [..]`, `additionalItems: false`, minItems = required count, maxItems = param count) and `result`.
// components.schemas are added once each, under their own id, and referenced (not inlined) so shared types like Uint or
// Block are one function each in the output.
// In front of each ajv validator sits a fast boolean check compiled from the same schema (packages/toolkit/src/contract/fast-checks.ts):
// `true` is final (no allocation on valid input), `false` hands over to ajv, which decides and reports the errors.
import type { ContractModel, Json } from '../contract/model.js';
import { createAjv, methodSchemaId, paramsSchema, resultSchema, schemaId } from '../contract/ajv.js';
import { rewriteRefs } from '../contract/schema-walk.js';
import { objKey, tsHeader, type HeaderOptions } from './schema.js';
import { RUNTIME_IMPORT } from './schema.js';
import { FastCompiler } from '../contract/fast-checks.js';
import { nameDocument, type Naming } from './naming.js';
import { AJV_RUNTIME_EXPORTS } from '@rpcgate/client';
import { standaloneExports } from './standalone.js';

export function writeValidators(c: ContractModel, opts: HeaderOptions & { naming?: Naming } = {}): string {
  const naming = opts.naming ?? nameDocument(c);
  // Method names map to identifiers one-to-one (eth_getFoo and eth.getFoo get distinct ones).
  const exportName = (method: string, kind: 'params' | 'result'): string =>
    `${naming.validators.get(method)!}__${kind}`;
  const ajv = createAjv(c, { source: true });
  const ajvName = (method: string, kind: 'params' | 'result') => `${exportName(method, kind)}_ajv`;
  const refs: Record<string, string> = {};
  for (const m of c.methods) {
    refs[ajvName(m.name, 'params')] = methodSchemaId(c, m.name, 'params');
    refs[ajvName(m.name, 'result')] = methodSchemaId(c, m.name, 'result');
  }
  let code = standaloneExports(ajv, refs);
  // ajv's standalone code pulls its runtime helpers with require() even in ESM mode: they become imports of the same
  // helpers re-exported by @rpcgate/client, so the output depends on nothing but the package's exports.
  const runtime = new Set<string>();
  const runtimeName = (mod: string): string => {
    const name = AJV_RUNTIME_EXPORTS[mod];
    if (!name)
      throw new Error(
        `ajv standalone code uses the runtime helper ajv/dist/runtime/${mod}, which ${RUNTIME_IMPORT} does not export`,
      );
    runtime.add(name);
    return name;
  };
  code = code.replace(/require\("ajv\/dist\/runtime\/([a-z0-9_]+)"\)\.default/gi, (_: string, mod: string) =>
    runtimeName(mod),
  );
  // the pattern engine (ajv's code.regExp, see createAjv) comes from @rpcgate/client as well
  code = code.replace(/require\("@rpcgate\/client"\)\.safeRegExp/g, () => {
    runtime.add('safeRegExp');
    return 'safeRegExp';
  });
  if (/\brequire\(/.test(code)) throw new Error('standalone validator code still contains require()');

  // Fast boolean checks in front of ajv (packages/toolkit/src/contract/fast-checks.ts): a true answer is final, a false one goes
  // to the ajv validator, which decides and reports the errors exactly as before.
  const components = new Map<string, Json>(
    c.schemas.map(([k, s]) => [schemaId(c, k), rewriteRefs(s, (n) => schemaId(c, n))]),
  );
  const fast = new FastCompiler({ components, compile: (s) => ajv.compile(s) });
  const wrappers: string[] = [];
  const fastTable: string[] = [];
  for (const m of c.methods) {
    const entries: string[] = [];
    for (const kind of ['params', 'result'] as const) {
      const name = exportName(m.name, kind);
      const schema = kind === 'params' ? paramsSchema(c, m.name) : resultSchema(c, m.name);
      if (!fast.supports(schema)) {
        wrappers.push(`export const ${name} = ${ajvName(m.name, kind)};\n`);
        continue;
      }
      const check = fast.compileRoot(schema);
      entries.push(`${kind}: ${check}`);
      wrappers.push(
        `export function ${name}(data) {\n` +
          `  if (${check}(data)) {\n    ${name}.errors = null;\n    return true;\n  }\n` +
          `  const valid = ${ajvName(m.name, kind)}(data);\n  ${name}.errors = ${ajvName(m.name, kind)}.errors;\n  return valid;\n}\n`,
      );
    }
    fastTable.push(`  ${objKey(m.name)}: { ${entries.join(', ')} },\n`);
  }
  if (fast.needsUcs2length) runtimeName('ucs2length');
  if (fast.needsRegExp) runtime.add('safeRegExp');

  const table = c.methods
    .map(
      (m) =>
        `  ${objKey(m.name)}: { params: ${exportName(m.name, 'params')}, result: ${exportName(m.name, 'result')} },\n`,
    )
    .join('');
  return [
    tsHeader(c.spec.file, opts),
    '// @ts-nocheck — ajv standalone output (compiled at generate time; no schema compilation at run time)\n',
    runtime.size
      ? `import { ${[...runtime].sort().join(', ')}, type ValidatorTable } from '${RUNTIME_IMPORT}';\n`
      : `import type { ValidatorTable } from '${RUNTIME_IMPORT}';\n`,
    '\n',
    code.replace(/^"use strict";\n?/, ''),
    '\n\n// Fast checks (packages/toolkit/src/contract/fast-checks.ts): true means valid; false means "ask ajv".\n',
    fast.needsUcs2length ? `const fastUcs2length = ${AJV_RUNTIME_EXPORTS.ucs2length};\n` : '',
    fast.code(),
    '\n// The validators: the fast check, then ajv for the answer and its errors when the fast check says no.\n',
    ...wrappers,
    '\n/** Params (positional array) and result validators per method. */\n',
    `export const validators: ValidatorTable = {\n${table}};\n`,
    '\n/** The fast checks alone, per method (for tests: they must agree with ajv). */\n',
    `export const fastChecks: { readonly [method: string]: { readonly params?: (data: unknown) => boolean; readonly result?: (data: unknown) => boolean } } = {\n${fastTable.join('')}};\n`,
  ].join('');
}
