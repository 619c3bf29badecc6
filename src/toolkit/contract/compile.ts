// Any OpenRPC document as the engine and the client runtime need it, built at run time: the method descriptor table
// (what codegen writes to generated/<api>/methods.ts) and a validator table compiled once, here, with the same ajv
// set-up codegen uses for its standalone validators. For tools that get a document at run time (mock, conformance,
// createServer on a user's document): nothing is compiled per request.
import type { MethodDescriptor, MethodTable, ValidatorTable } from '../rpc/descriptor.js';
import { createAjv, methodSchemaId } from './ajv.js';
import type { ContractModel } from './model.js';

export interface CompiledContract {
  model: ContractModel;
  methods: MethodTable;
  validators: ValidatorTable;
}

/** The descriptor of every method, as generated/<api>/methods.ts has it (without the phantom types). */
export function methodTable(model: ContractModel): MethodTable {
  const table: Record<string, MethodDescriptor> = {};
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

/** Compiles the params and result validators of every method (ajv, once). */
export function compileValidators(model: ContractModel): ValidatorTable {
  const ajv = createAjv(model);
  const table: Record<string, ValidatorTable[string]> = {};
  for (const m of model.methods) {
    const params = ajv.getSchema(methodSchemaId(model, m.name, 'params'));
    const result = ajv.getSchema(methodSchemaId(model, m.name, 'result'));
    if (!params || !result) throw new Error(`${model.spec.file}: ${m.name}: validators did not compile`);
    table[m.name] = { params, result };
  }
  return table;
}

export function compileContract(model: ContractModel): CompiledContract {
  return { model, methods: methodTable(model), validators: compileValidators(model) };
}
