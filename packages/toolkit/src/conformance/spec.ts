// `specConformance(url, document)`: checks any JSON-RPC endpoint against any OpenRPC document (`rpcgate conformance
// <url> --spec <document>`). The document is loaded, validated and compiled at run time (contract/), and the generic
// run (./run.ts) goes through it with the profile below:
// - every example pairing of a method is one call (its params as the example gives them, by name when the method's
//   paramStructure is "by-name"); a method without examples is called once with params generated from its schemas;
// - a result must validate against the method's result schema; an example that shows an error wants that code;
// - an error answer passes only when the method declares its code, or when it is the JSON-RPC standard answer for the
//   case (-32602 when the params sent fail the document's own params schema). -32601 for a declared method, -32700,
//   -32600 and -32603 never pass: the request was well formed and the method is in the document;
// - protocol checks that need no knowledge of the API: unknown method, invalid JSON, a batch, rpc.discover.
import { compileContract, type CompiledContract } from '../contract/compile.js';
import {
  loadDocument,
  pairingParams,
  resolve,
  type ContractModel,
  type Json,
  type MethodModel,
} from '../contract/model.js';
import { sampleParams } from '../contract/sample.js';
import { documentSatisfiability, type SatisfiabilityProblem } from '../contract/satisfiability.js';
import { checkDocument } from '../contract/validate.js';
import { ErrorCode } from '../rpc/errors.js';
import { ResultExplainer } from './explain.js';
import {
  ajvProblem,
  batchCheck,
  brief,
  runConformance,
  type CheckResult,
  type ConformanceProfile,
  type ConformanceReport,
  type ParamPlan,
  type PlanOrDefect,
  type ProtocolCheck,
} from './run.js';
import { checkEnvelope, type RpcTransport } from './rpc.js';

export interface SpecFacts {
  title: string;
  version: string;
  openrpc: string;
  source: string;
  methods: number;
  examples: number;
}

export interface SpecConformanceOptions {
  /** Only these methods (and `protocol:<check>` names); default all. */
  only?: string[];
  timeoutMs?: number;
  headers?: Record<string, string>;
  /** First seed for generated params (default 1: the same params every run). */
  seed?: number;
}

/** What a document may be given as: a path or http(s) URL, a model, or a model already compiled. */
export type SpecSource = string | ContractModel | CompiledContract;

const round = (ms: number) => Math.round(ms * 10) / 10;
const isCompiled = (s: SpecSource): s is CompiledContract => typeof s === 'object' && 'validators' in s && 'model' in s;

/** Checks `url` against any OpenRPC document. */
export async function specConformance(
  url: string,
  source: SpecSource,
  opts: SpecConformanceOptions = {},
): Promise<ConformanceReport<SpecFacts>> {
  const compiled = isCompiled(source)
    ? source
    : compileContract(typeof source === 'string' ? await loadDocument(source) : source);
  return runConformance(url, {
    contract: {
      document: compiled.model.raw,
      methods: compiled.methods,
      validators: compiled.validators,
      validatorsFrom: 'runtime',
    },
    profile: specProfile(compiled, opts),
    only: opts.only,
    timeoutMs: opts.timeoutMs,
    headers: opts.headers,
  });
}

/** The example's error, when the pairing shows one (`error`: an error object, an Example Object whose value is one,
 *  or a reference to either). The model keeps pairings' params and result only, so this reads the document. */
function exampleErrorCode(model: ContractModel, methodIndex: number, exampleIndex: number): number | undefined {
  const m = resolve(model.raw, model.raw.methods[methodIndex]);
  const x = resolve(model.raw, m?.examples?.[exampleIndex]);
  if (!x || x.error === undefined) return undefined;
  const e = resolve(model.raw, x.error);
  const code = e?.code ?? resolve(model.raw, e?.value)?.code;
  return Number.isInteger(code) ? code : undefined;
}

/** Error codes that pass instead of a result, code → why. */
function allowedErrors(m: MethodModel, paramsInvalid: boolean): Map<number, string> {
  const allowed = new Map<number, string>();
  // JSON-RPC's own codes mean what the spec says, whether or not the method lists them: the request is well formed
  // (-32700, -32600), the method is in the document (-32601), a failure of the endpoint is not an answer (-32603).
  const standard = new Set<number>([
    ErrorCode.ParseError,
    ErrorCode.InvalidRequest,
    ErrorCode.MethodNotFound,
    ErrorCode.InvalidParams,
    ErrorCode.InternalError,
  ]);
  for (const e of m.errors) if (!standard.has(e.code)) allowed.set(e.code, `declared by the method ("${e.message}")`);
  if (paramsInvalid)
    allowed.set(ErrorCode.InvalidParams, "JSON-RPC's standard answer to params that fail the method's params schema");
  return allowed;
}

/** What the document makes impossible for one method (its result or a required param admits no value). */
function defectOf(problems: SatisfiabilityProblem[]): string | undefined {
  const p = problems[0];
  if (!p) return undefined;
  const what =
    p.what === 'result' ? 'the result schema' : `the schema of required param ${JSON.stringify(p.what.param)}`;
  return `${what} admits no value (unsatisfiable): ${p.reason} (at ${p.pointer})`;
}

function plansFor(
  c: CompiledContract,
  explainer: ResultExplainer,
  methodIndex: number,
  seed: number,
  problems: SatisfiabilityProblem[],
): PlanOrDefect[] {
  const m = c.model.methods[methodIndex];
  const defect = defectOf(problems.filter((p) => p.what === 'result'));
  const paramDefect = defectOf(problems.filter((p) => p.what !== 'result'));
  const v = c.validators[m.name];
  const byName = m.paramStructure === 'by-name';
  if (m.examples.length === 0) {
    // No params can be valid: nothing to call with (the row is a warning about the document).
    if (paramDefect) return [{ warn: `document defect: ${paramDefect}` }];
    const generated = sampleParams(c.model, m.name, v.params, { seed });
    if (!generated)
      return [{ skip: 'no example, and no params generated from the schemas passed the params validator' }];
    return [
      {
        params: generated.value,
        byName,
        allowedErrors: allowedErrors(m, false),
        note: 'no example: params generated from the schemas',
        ...(defect ? { documentDefect: defect } : {}),
      },
    ];
  }
  return m.examples.map((x, j): ParamPlan => {
    const params = pairingParams(m, x);
    const valid = v.params(params);
    const invalidParams = valid
      ? undefined
      : `the document's own example params fail its params schema: ${ajvProblem(v.params)}`;
    const notes = [`params from example "${x.name}"`];
    if (x.result && !v.result(x.result.value)) {
      notes.push(
        `the example's own result fails the result schema: ${explainer.explain(m.name, x.result.value) ?? ajvProblem(v.result)}`,
      );
    }
    const code = exampleErrorCode(c.model, methodIndex, j);
    return {
      params,
      byName,
      example: x.name,
      ...(invalidParams ? { invalidParams } : {}),
      ...(code !== undefined ? { expectErrorCode: code } : { allowedErrors: allowedErrors(m, !valid) }),
      note: notes.join('; '),
      ...(defect && code === undefined ? { documentDefect: defect } : {}),
    };
  });
}

/** Invalid JSON must be answered -32700 with id null. */
const invalidJsonCheck: ProtocolCheck = {
  name: 'protocol:invalid-json',
  async run(rpc: RpcTransport): Promise<CheckResult> {
    const out = await rpc.raw('{"jsonrpc":"2.0","id":1,"method":"rpc.discover",');
    const base = { name: 'protocol:invalid-json', ms: round(out.ms) };
    if (out.problem) return { ...base, status: 'FAIL', detail: out.problem };
    const env = checkEnvelope(out.reply, null);
    if (env.envelope.length) return { ...base, status: 'FAIL', detail: `envelope: ${env.envelope.join('; ')}` };
    if (env.error?.code === ErrorCode.ParseError)
      return { ...base, status: 'PASS', detail: `invalid JSON: -32700 "${env.error.message}" (HTTP ${out.status})` };
    return {
      ...base,
      status: 'FAIL',
      detail: `invalid JSON: expected -32700, got ${env.error ? `${env.error.code} ${env.error.message}` : `result ${brief(env.result)}`}`,
    };
  },
};

/** rpc.discover, when the endpoint has it, must answer an OpenRPC document that loadDocument would read. */
function discoverCheck(model: ContractModel): ProtocolCheck {
  const name = 'protocol:rpc.discover';
  return {
    name,
    async run(rpc) {
      const out = await rpc.call('rpc.discover', []);
      const base = { name, ms: round(out.ms), params: [] };
      if (out.transport) return { ...base, status: 'FAIL', detail: out.transport };
      if (out.envelope.length) return { ...base, status: 'FAIL', detail: `envelope: ${out.envelope.join('; ')}` };
      if (out.error?.code === ErrorCode.MethodNotFound)
        return {
          ...base,
          status: 'SKIP',
          detail: 'endpoint has no rpc.discover (OpenRPC service discovery is optional)',
        };
      if (out.error)
        return {
          ...base,
          status: 'FAIL',
          detail: `rpc.discover answered error ${out.error.code} ${out.error.message}`,
        };
      const doc = out.result as Json;
      if (!doc || typeof doc !== 'object' || typeof doc.openrpc !== 'string' || !Array.isArray(doc.methods)) {
        return { ...base, status: 'FAIL', detail: `rpc.discover did not answer an OpenRPC document: ${brief(doc)}` };
      }
      // Checked as loadDocument checks a document (the same meta-schemas, the same leniency): what stops a reader is a
      // FAIL; what only breaks the meta-schema (a loose version string, an unknown property, a relative server URL,
      // a method without the result its version requires) is a document defect, a WARN naming the pointers — the mock
      // of a document that loads with warnings answers that document, and must not fail its own conformance.
      const { errors, warnings } = await checkDocument(structuredClone(doc));
      const listed = (findings: { pointer: string; message: string }[]) =>
        findings
          .slice(0, 3)
          .map((f) => `${f.pointer}: ${f.message}`)
          .join('; ') + (findings.length > 3 ? ` (and ${findings.length - 3} more)` : '');
      if (errors.length)
        return {
          ...base,
          status: 'FAIL',
          detail: `rpc.discover answered an invalid OpenRPC ${doc.openrpc} document: ${listed(errors)}`,
        };
      const names = new Set((doc.methods as Json[]).map((x) => x?.name));
      const inSpec = model.methods.filter((x) => names.has(x.name)).length;
      const what = `OpenRPC ${doc.openrpc} document "${doc.info?.title}", ${names.size} methods (${inSpec} of the spec's ${model.methods.length})`;
      if (warnings.length)
        return {
          ...base,
          status: 'WARN',
          detail: `document defect: ${what} that breaks its meta-schema: ${listed(warnings)}`,
        };
      return { ...base, status: 'PASS', detail: `valid ${what}` };
    },
  };
}

/** Two calls of a method with no required params (else rpc.discover), in one batch. */
function specBatchCheck(model: ContractModel): ProtocolCheck {
  const m = model.methods.find((x) => x.params.every((p) => !p.required));
  const params = m?.paramStructure === 'by-name' ? {} : [];
  const method = m?.name ?? 'rpc.discover';
  return batchCheck(
    [
      { method, params },
      { method, params },
    ],
    { allowErrors: true },
  );
}

export function specProfile(c: CompiledContract, opts: { seed?: number } = {}): ConformanceProfile<SpecFacts> {
  const index = new Map(c.model.methods.map((m, i) => [m.name, i]));
  // allErrors: says why the document's own example result is refused (the deepest errors, not the last anyOf branch).
  const explainer = new ResultExplainer(c.model.raw, 'the explaining schema accepts it');
  // Defects of the document (schemas that admit no value), found once: their rows are warnings, not failures.
  const problems = documentSatisfiability(c.model);
  return {
    // Nothing to discover on the endpoint: the facts are the document's.
    discover: async () => ({
      title: c.model.title,
      version: c.model.version,
      openrpc: String(c.model.document.openrpc),
      source: c.model.spec.file,
      methods: c.model.methods.length,
      examples: c.model.methods.reduce((n, m) => n + m.examples.length, 0),
    }),
    summarize: (f) => [
      `spec ${f.source}: "${f.title}" ${f.version} (OpenRPC ${f.openrpc}), ${f.methods} methods, ${f.examples} example pairings`,
      'each example pairing is called; a method without examples is called with params generated from its schemas',
    ],
    plans: (method) =>
      plansFor(
        c,
        explainer,
        index.get(method)!,
        opts.seed ?? 1,
        problems.filter((p) => p.method === method),
      ),
    protocolChecks: [invalidJsonCheck, specBatchCheck(c.model), discoverCheck(c.model)],
  };
}
