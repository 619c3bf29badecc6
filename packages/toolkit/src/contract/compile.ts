// Any OpenRPC document as the engine and the client runtime need it, built at run time: the method descriptor table
// (what codegen writes to generated/<api>/methods.ts) and a validator table compiled once, here, with the same ajv
// set-up codegen uses for its standalone validators. For tools that get a document at run time (mock, conformance,
// createServer on a user's document): nothing is compiled per request.
import ucs2lengthModule from 'ajv/dist/runtime/ucs2length.js';
import type { MethodDescriptor, MethodTable, ValidateFn, ValidatorTable } from '../rpc/descriptor.js';
import { FastCompiler } from './fast-checks.js';
import { createAjv, methodSchemaId, paramsSchema, resultSchema, schemaId } from './ajv.js';
import type { ContractModel, Json } from './model.js';
import { rewriteRefs } from './schema-walk.js';
import { safeRegExp } from '@rpcgate/client';

// CJS module: under NodeNext the default import is module.exports, whose `default` is the function.
const ucs2length = (ucs2lengthModule as unknown as { default: (s: string) => number }).default ?? ucs2lengthModule;

export interface CompiledContract {
  model: ContractModel;
  methods: MethodTable;
  validators: ValidatorTable;
}

/** The descriptor of every method, as generated/<api>/methods.ts has it (without the phantom types). */
export function methodTable(model: ContractModel): MethodTable {
  // null prototype: method names such as __proto__, constructor or toString are plain keys
  const table: Record<string, MethodDescriptor> = Object.create(null);
  for (const m of model.methods) {
    table[m.name] = {
      name: m.name,
      summary: m.summary,
      params: m.params.map((p) => ({ name: p.name, required: p.required })),
      errors: [...new Set(m.errors.map((e) => e.code))],
      paramStructure: m.paramStructure,
      ...(m.ext.length ? { ext: Object.fromEntries(m.ext) } : {}),
    };
  }
  return table;
}

/**
 * Compiles the params and result validators of every method, once: ajv, with the same allocation-free fast check in
 * front that codegen writes into generated validators (packages/toolkit/src/contract/fast-checks.ts: `true` is final, `false`
 * asks ajv, which decides and reports the errors), built here with `new Function` from the code the fast compiler
 * emits. `fast: false` gives ajv alone.
 */
export function compileValidators(model: ContractModel, opts: { fast?: boolean } = {}): ValidatorTable {
  const ajv = createAjv(model);
  const table: Record<string, { params: ValidateFn; result: ValidateFn }> = Object.create(null);
  for (const m of model.methods) {
    const params = ajv.getSchema(methodSchemaId(model, m.name, 'params'));
    const result = ajv.getSchema(methodSchemaId(model, m.name, 'result'));
    if (!params || !result) throw new Error(`${model.spec.file}: ${m.name}: validators did not compile`);
    table[m.name] = { params, result };
  }
  if (opts.fast === false) return table;

  const components = new Map<string, Json>(
    model.schemas.map(([k, s]) => [schemaId(model, k), rewriteRefs(s, (n) => schemaId(model, n))]),
  );
  const fast = new FastCompiler({ components, compile: (s) => ajv.compile(s) });
  const names: [string, 'params' | 'result', string][] = [];
  for (const m of model.methods) {
    for (const kind of ['params', 'result'] as const) {
      const schema = kind === 'params' ? paramsSchema(model, m.name) : resultSchema(model, m.name);
      if (fast.supports(schema)) names.push([m.name, kind, fast.compileRoot(schema)]);
    }
  }
  if (names.length === 0) return table;
  // The emitted code is ours (generated from the schemas' keywords, literals JSON-encoded), not the document's text.
  const body = `${fast.code()}\nreturn [${names.map(([, , fn]) => fn).join(', ')}];`;
  const checks = new Function('fastUcs2length', 'safeRegExp', body)(ucs2length, safeRegExp) as ((
    data: unknown,
  ) => boolean)[];
  names.forEach(([method, kind], i) => {
    const check = checks[i];
    const slow = table[method][kind];
    const validate: ValidateFn = (data: unknown) => {
      if (check(data)) {
        validate.errors = null;
        return true;
      }
      const valid = slow(data);
      validate.errors = slow.errors;
      return valid;
    };
    table[method][kind] = validate;
  });
  return table;
}

export function compileContract(model: ContractModel): CompiledContract {
  return { model, methods: methodTable(model), validators: compileValidators(model) };
}
