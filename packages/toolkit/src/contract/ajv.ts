// The one ajv set-up for a contract, shared by codegen (standalone validators written at generate time) and the
// runtime (validators compiled once at start for any document: mock, conformance, createServer). Each method gets
// `params` (the positional params array as a draft-07 tuple: `items: [..]`, `additionalItems: false`, minItems =
// required count, maxItems = param count) and `result`; components.schemas are added once each under their own id and
// referenced (not inlined), so shared types like Uint or Block are one function each.
import { Ajv } from 'ajv';
import type { ContractModel, Json } from './model.js';
import { rewriteRefs } from './schema-walk.js';
import { safeRegExp } from '@rpcgate/client';

/** The JSON Schema the params validator of a method checks (also used by tests and docs). */
export function paramsSchema(c: ContractModel, methodName: string, id?: string): Json {
  const m = c.methods.find((x) => x.name === methodName)!;
  const items = m.params.map((p) => rewriteRefs(p.schema, (n) => schemaId(c, n)));
  const required = m.params.filter((p) => p.required).length;
  return items.length
    ? {
        ...(id ? { $id: id } : {}),
        type: 'array',
        items,
        additionalItems: false,
        minItems: required,
        maxItems: items.length,
      }
    : { ...(id ? { $id: id } : {}), type: 'array', maxItems: 0 };
}

/**
 * Each component is its own ajv schema with its own id: refs to a root schema share one compiled function,
 * whereas JSON-pointer refs into one big schema get compiled again for every method that reaches them.
 */
/** The ajv id of a method's params or result schema. */
export const methodSchemaId = (c: ContractModel, method: string, kind: 'params' | 'result'): string =>
  `urn:rpcgate:${encodeURIComponent(c.spec.name)}:${encodeURIComponent(method)}:${kind}`;

export const schemaId = (c: ContractModel, name: string) =>
  `urn:rpcgate:${encodeURIComponent(c.spec.name)}:schema:${encodeURIComponent(name)}`;

/** `nativeRegExp`: V8's RegExp for patterns (the docs' browser validators, which run in the reader's own tab and ship
 *  no RE2); everything that tests a server's input uses safeRegExp. */
export function createAjv(c: ContractModel, opts: { source?: boolean; nativeRegExp?: boolean } = {}): Ajv {
  const ajv = new Ajv({
    // patterns test untrusted input: a linear-time engine where V8's could backtrack without bound (safe-regexp.ts)
    code: {
      ...(opts.nativeRegExp ? {} : { regExp: safeRegExp }),
      ...(opts.source ? { source: true, esm: true, lines: true, optimize: false } : {}),
    },
    allErrors: false, // the hot path stops at the first error (allErrors is a DoS risk)
    strict: false, // contract schemas carry OpenRPC/annotation keywords ajv does not know
    inlineRefs: false, // shared schemas stay one function each: keeps validators.ts small
    validateFormats: false, // formats are annotations in the Ethereum spec; patterns carry the checks
    ownProperties: true, // a property named toString or constructor is the object's own, never Object.prototype's
  });
  for (const [k, s] of c.schemas) {
    const schema = rewriteRefs(s, (n) => schemaId(c, n));
    ajv.addSchema(typeof schema === 'object' ? { ...schema, $id: schemaId(c, k) } : schema, schemaId(c, k));
  }
  for (const m of c.methods) {
    ajv.addSchema(paramsSchema(c, m.name, methodSchemaId(c, m.name, 'params')));
    const result = m.result ? rewriteRefs(m.result.schema, (n) => schemaId(c, n)) : {};
    ajv.addSchema({ ...(typeof result === 'object' ? result : {}), $id: methodSchemaId(c, m.name, 'result') });
  }
  return ajv;
}

/** The schema of a method's result as given to ajv (refs rewritten to component ids). */
export function resultSchema(c: ContractModel, methodName: string): Json {
  const m = c.methods.find((x) => x.name === methodName)!;
  return m.result ? rewriteRefs(m.result.schema, (n) => schemaId(c, n)) : {};
}
