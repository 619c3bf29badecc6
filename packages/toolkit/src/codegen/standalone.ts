// ajv's standaloneCode for many exports, in linear time. ajv's own multiExportsCode appends each export to one growing
// code object (`code = _\`${code}…\``), which copies every item gathered so far: quadratic in the number of exports
// (4,000 methods = 8,000 exports took about 17 s of a 27 s generate, issue 26). This is the same algorithm
// (ajv/dist/standalone/index.js, ESM branch) with the pieces collected in an array and joined once; its output is
// byte-identical (check-generated compares the repository's own generated validators).
import type { Ajv } from 'ajv';
import scopeModule from 'ajv/dist/compile/codegen/scope.js';
import codeModule from 'ajv/dist/compile/codegen/code.js';

// CJS modules: under NodeNext the default import is module.exports.
const { UsedValueState, varKinds } = scopeModule as unknown as typeof import('ajv/dist/compile/codegen/scope.js');
const { _, _Code, nil, getEsmExportName } = codeModule as unknown as typeof import('ajv/dist/compile/codegen/code.js');
type CodeItem = import('ajv/dist/compile/codegen/code.js')._Code;
type ScopeTypes = typeof import('ajv/dist/compile/codegen/scope.js');
type ValueScopeName = InstanceType<ScopeTypes['ValueScopeName']>;
type UsedScopeValues = import('ajv/dist/compile/codegen/scope.js').UsedScopeValues;
type UsedValueStateT = import('ajv/dist/compile/codegen/scope.js').UsedValueState;

type Source = {
  validateName: ValueScopeName;
  scopeValues: import('ajv/dist/compile/codegen/scope.js').ScopeValueSets;
  validateCode: string;
  evaluated?: unknown;
};

/** `export const <name> = <validator>;` for each entry of `refs` (export name → schema id), ESM, one module. */
export function standaloneExports(ajv: Ajv, refs: Record<string, string>): string {
  if (!ajv.opts.code.source || !ajv.opts.code.esm)
    throw new Error('standaloneExports: ajv needs code.source and code.esm');
  const scope = ajv.scope;
  const _n = `${scope.opts._n}`;
  const usedValues: UsedScopeValues = {};
  const usedState = (name: Source['validateName']) => usedValues[name.prefix]?.get(name);
  const setUsedState = (name: Source['validateName'], state: UsedValueStateT) => {
    const names = (usedValues[name.prefix] ??= new Map());
    names.set(name, state);
  };
  const validateCode = (s: Source | undefined): CodeItem => {
    if (!s) throw new Error('moduleCode: function does not have "source" property');
    if (usedState(s.validateName) === UsedValueState.Completed) return nil;
    setUsedState(s.validateName, UsedValueState.Started);
    const refValidateCode = (n: ValueScopeName): CodeItem | undefined => {
      const vRef = n.value?.ref as
        | { source?: Source; validate?: { source?: Source }; validateName?: unknown }
        | undefined;
      if (n.prefix === 'validate' && typeof vRef === 'function')
        return validateCode((vRef as { source?: Source }).source);
      if ((n.prefix === 'root' || n.prefix === 'wrapper') && typeof vRef === 'object') {
        const { validate, validateName } = vRef;
        if (!validateName) throw new Error('ajv internal error');
        const def = ajv.opts.code.es5 ? varKinds.var : varKinds.const;
        const wrapper = _`${def} ${n as never} = {validate: ${validateName as never}};`;
        if (usedState(validateName as Source['validateName']) === UsedValueState.Started) return wrapper;
        const vCode = validateCode(validate?.source);
        return _`${wrapper}${scope.opts._n}${vCode}`;
      }
      return undefined;
    };
    const scopeCode = scope.scopeCode(s.scopeValues, usedValues, refValidateCode);
    const code = new _Code(`${scopeCode}${_n}${s.validateCode}`);
    return s.evaluated
      ? _`${code}${s.validateName as never}.evaluated = ${s.evaluated as never};${scope.opts._n}`
      : code;
  };
  const parts: string[] = ['"use strict";'];
  for (const name in refs) {
    const v = ajv.getSchema(refs[name]);
    if (!v) throw new Error(`moduleCode: no schema with id ${refs[name]}`);
    const source = v.source as unknown as Source | undefined;
    const vCode = validateCode(source);
    parts.push(`${_n}export const ${getEsmExportName(name)} = ${source?.validateName.str};${_n}${vCode}`);
  }
  return parts.join('');
}
