// `runConformance(url, { contract })`: checks any JSON-RPC endpoint against any contract (an OpenRPC document with its
// generated method descriptor and validators). Every method of the descriptor is called with the params a profile
// plans (default: the contract's first example as it is), the reply's envelope is checked, and the result is
// validated with the GENERATED result validator — the same code a server built on the engine runs in strict mode, so
// "conformant" means one thing everywhere.
//
// What is specific to one kind of endpoint (e.g. adapting an EVM contract's examples to the live chain, protocol checks
// that name its methods) comes in as a ConformanceProfile: the toolkit knows nothing of any chain. A profile may plan
// several calls per method (`plans`: e.g. one per example pairing, ./spec.ts); each becomes one row of the report.
import type { MethodDescriptor, MethodTable, ValidateFn, ValidatorTable } from '../rpc/descriptor.js';
import { ResultExplainer } from './explain.js';
import { RpcTransport, checkEnvelope, describe, type CallOutcome, type RpcParams } from './rpc.js';

/** WARN: a defect of the document, not of the endpoint (e.g. a result schema that admits no value): reported, and
 *  the run still passes. */
export type Status = 'PASS' | 'FAIL' | 'SKIP' | 'WARN';

export interface CheckResult {
  /** Method name, or `protocol:<check>` for the protocol checks. */
  name: string;
  status: Status;
  ms: number;
  detail: string;
  /** The params sent, positionally (see `byName`). */
  params?: unknown[];
  /** True when the params went out as an object keyed by the param names. */
  byName?: boolean;
  /** The example pairing the call came from, when the profile plans one call per example. */
  example?: string;
}

export interface ConformanceReport<F = unknown> {
  url: string;
  /** True when nothing failed. */
  ok: boolean;
  /** What the profile found on the live endpoint before the checks (e.g. chain facts). */
  facts?: F;
  /** Lines describing `facts` for the text report. */
  factsSummary?: string[];
  /** Set when the profile's discovery failed (then every method that needs it fails). */
  discoveryError?: string;
  methods: CheckResult[];
  /** Unknown method, invalid params, batch: reported apart from the per-method table. */
  protocol: CheckResult[];
  summary: { passed: number; failed: number; skipped: number; warnings: number };
}

/** A call as a profile plans it. */
export interface PlannedCall {
  /** Positional params (checked against the contract's params schema before they are sent). */
  params: unknown[];
  /** Send the params as an object keyed by the contract's param names (`paramStructure: "by-name"`). */
  byName?: boolean;
  /** The example pairing this call comes from (reported with the row). */
  example?: string;
  /** Extra semantic check on the result (returns a problem, or undefined). */
  expect?: (result: unknown) => string | undefined;
  /** The conformant answer is an error other than -32601 (e.g. a deliberately invalid transaction). */
  expectError?: boolean;
  /** The conformant answer is an error with exactly this code (an example pairing that shows an error). */
  expectErrorCode?: number;
  /** Error answers that pass instead of a result, code → why (said in the detail). Absent: any error fails. */
  allowedErrors?: ReadonlyMap<number, string>;
  /** Set when the params deliberately fail the contract's params schema (e.g. the document's own example is invalid):
   *  they are sent anyway, and the reason is said in the detail. */
  invalidParams?: string;
  /** Said in the detail column: what was substituted or why a check is weaker. */
  note?: string;
  /** The document itself makes a conformant answer impossible (e.g. its result schema admits no value, with the JSON
   *  pointer): an error answer, or a result the schema refuses, is a WARN naming this, not a FAIL. */
  documentDefect?: string;
}
export type ParamPlan = PlannedCall | { skip: string };
/** A plan of `plans`: also `warn`, not called because the document makes a valid call impossible (a WARN row). */
export type PlanOrDefect = ParamPlan | { warn: string };

export interface ProtocolCheck {
  name: string;
  run(rpc: RpcTransport): Promise<CheckResult>;
}

/** What a kind of endpoint adds to the generic run. */
export interface ConformanceProfile<F = unknown> {
  /** Runs once before the checks; what it returns is the report's `facts`. A throw becomes `discoveryError`. */
  discover?(rpc: RpcTransport): Promise<F>;
  /** Lines for the text report describing the facts. */
  summarize?(facts: F): string[];
  /** The params of one method's call, from its first example. Absent: the example as it is. Not called when
   *  discovery failed. */
  plan?(method: string, paramNames: readonly string[], example: readonly unknown[], facts: F): ParamPlan;
  /** Several calls for one method, one row each (used instead of `plan`; the contract's examples are the profile's
   *  to read). Not called when discovery failed. */
  plans?(method: string, descriptor: MethodDescriptor, facts: F): PlanOrDefect[];
  /** Protocol checks run after the generic ones. */
  protocolChecks?: readonly ProtocolCheck[];
}

export interface OpenRpcDoc {
  methods: { name: string; examples?: unknown[]; result?: unknown }[];
  [k: string]: unknown;
}

export interface ConformanceContract {
  document: OpenRpcDoc;
  methods: MethodTable;
  validators: ValidatorTable;
  /** Where the validators come from: generated/ (default) or compiled from the document at run time. */
  validatorsFrom?: 'generated' | 'runtime';
}

export interface ConformanceOptions<F = unknown> {
  contract: ConformanceContract;
  profile?: ConformanceProfile<F>;
  /** Only these methods (and `protocol:<check>` names); default all. */
  only?: string[];
  timeoutMs?: number;
  headers?: Record<string, string>;
}

/** Resolves a local `$ref` (`#/components/...`) in the contract; examples may be referenced. */
function deref(doc: unknown, v: unknown): unknown {
  for (
    let i = 0;
    i < 16 && typeof v === 'object' && v !== null && typeof (v as { $ref?: unknown }).$ref === 'string';
    i++
  ) {
    const ref = (v as { $ref: string }).$ref;
    if (!ref.startsWith('#/')) return v;
    v = ref
      .slice(2)
      .split('/')
      .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'))
      .reduce<unknown>((o, k) => (o as Record<string, unknown> | undefined)?.[k], doc);
  }
  return v;
}

/** Positional values of the first example of a method. */
export function firstExampleParams(doc: OpenRpcDoc, method: string): unknown[] | undefined {
  const m = doc.methods.find((x) => x.name === method);
  const ex = deref(doc, m?.examples?.[0]) as { params?: unknown[] } | undefined;
  if (!ex || !Array.isArray(ex.params)) return undefined;
  return ex.params.map((p) => (deref(doc, p) as { value?: unknown }).value);
}

export function brief(v: unknown): string {
  const s = JSON.stringify(v) ?? String(v);
  return s.length > 80 ? `${s.slice(0, 77)}...` : s;
}

export function ajvProblem(fn: ValidateFn): string {
  const e = fn.errors?.[0];
  return e ? `${e.instancePath || '(root)'} ${e.message ?? e.keyword} (schema ${e.schemaPath})` : 'invalid';
}

function envelopeProblem(out: CallOutcome): string | undefined {
  if (out.transport) return out.transport;
  if (out.envelope.length) return `envelope: ${out.envelope.join('; ')}`;
  return undefined;
}

export async function runConformance<F = unknown>(
  url: string,
  opts: ConformanceOptions<F>,
): Promise<ConformanceReport<F>> {
  const { contract, profile } = opts;
  const rpc = new RpcTransport(url, { timeoutMs: opts.timeoutMs ?? 15_000, headers: opts.headers });
  const explainer = new ResultExplainer(
    contract.document,
    contract.validatorsFrom === 'runtime'
      ? 'the explaining schema accepts this result although the validator compiled from the document refused it'
      : undefined,
  );
  const wanted = (name: string) => !opts.only?.length || opts.only.includes(name);
  const report: ConformanceReport<F> = {
    url,
    ok: false,
    methods: [],
    protocol: [],
    summary: { passed: 0, failed: 0, skipped: 0, warnings: 0 },
  };
  const protocolChecks = [...GENERIC_PROTOCOL_CHECKS(contract), ...(profile?.protocolChecks ?? [])];

  let discovered = profile?.discover === undefined;
  if (profile?.discover !== undefined) {
    try {
      report.facts = await profile.discover(rpc);
      report.factsSummary = profile.summarize?.(report.facts);
      discovered = true;
    } catch (err) {
      report.discoveryError = describe(err);
    }
  }

  for (const [name, descriptor] of Object.entries(contract.methods)) {
    if (!wanted(name)) continue;
    report.methods.push(
      ...(await checkMethod(rpc, contract, profile, explainer, name, descriptor, report, discovered)),
    );
  }
  if (opts.only?.length) {
    const known = new Set([...Object.keys(contract.methods), ...protocolChecks.map((c) => c.name)]);
    for (const n of opts.only.filter((x) => !known.has(x)))
      report.methods.push({ name: n, status: 'FAIL', ms: 0, detail: 'not a method of the contract' });
  }
  for (const check of protocolChecks) if (wanted(check.name)) report.protocol.push(await check.run(rpc));

  for (const r of [...report.methods, ...report.protocol]) {
    if (r.status === 'PASS') report.summary.passed++;
    else if (r.status === 'FAIL') report.summary.failed++;
    else if (r.status === 'WARN') report.summary.warnings++;
    else report.summary.skipped++;
  }
  report.ok = report.summary.failed === 0;
  return report;
}

async function checkMethod<F>(
  rpc: RpcTransport,
  contract: ConformanceContract,
  profile: ConformanceProfile<F> | undefined,
  explainer: ResultExplainer,
  name: string,
  descriptor: MethodDescriptor,
  report: ConformanceReport<F>,
  discovered: boolean,
): Promise<CheckResult[]> {
  const validator = contract.validators[name];
  if (!validator) return [{ name, status: 'FAIL', ms: 0, detail: 'no generated validator for this method' }];
  const paramNames = descriptor.params.map((p) => p.name);

  if (profile?.plans !== undefined) {
    if (!discovered) return [{ name, status: 'FAIL', ms: 0, detail: `discovery failed: ${report.discoveryError}` }];
    const rows: CheckResult[] = [];
    for (const plan of profile.plans(name, descriptor, report.facts as F))
      rows.push(await callPlanned(rpc, validator, explainer, name, paramNames, plan));
    return rows;
  }
  return [await checkFirstExample(rpc, contract, profile, explainer, name, paramNames, report, discovered)];
}

/** One planned call and its verdict. */
async function callPlanned(
  rpc: RpcTransport,
  validator: { params: ValidateFn; result: ValidateFn },
  explainer: ResultExplainer,
  name: string,
  paramNames: string[],
  plan: PlanOrDefect,
): Promise<CheckResult> {
  const example = 'example' in plan && plan.example !== undefined ? { example: plan.example } : {};
  if ('skip' in plan) return { name, ...example, status: 'SKIP', ms: 0, detail: plan.skip };
  if ('warn' in plan) return { name, ...example, status: 'WARN', ms: 0, detail: plan.warn };
  if (!plan.invalidParams && !validator.params(plan.params)) {
    return {
      name,
      ...example,
      status: 'FAIL',
      ms: 0,
      params: plan.params,
      detail: `planned params fail the contract: ${ajvProblem(validator.params)}`,
    };
  }
  const sent: RpcParams = plan.byName ? Object.fromEntries(plan.params.map((v, i) => [paramNames[i], v])) : plan.params;
  const out = await rpc.call(name, sent);
  return judge(
    { name, ...example, ms: round(out.ms), params: plan.params, ...(plan.byName ? { byName: true } : {}) },
    out,
    validator.result,
    plan,
    explainer,
  );
}

async function checkFirstExample<F>(
  rpc: RpcTransport,
  contract: ConformanceContract,
  profile: ConformanceProfile<F> | undefined,
  explainer: ResultExplainer,
  name: string,
  paramNames: string[],
  report: ConformanceReport<F>,
  discovered: boolean,
): Promise<CheckResult> {
  const validator = contract.validators[name];
  if (name === 'rpc.discover') {
    const out = await rpc.call(name, []);
    const base = { name, ms: round(out.ms), params: [] };
    if (out.error?.code === -32601)
      return {
        ...base,
        status: 'SKIP',
        detail: 'endpoint has no rpc.discover (OpenRPC service discovery is optional)',
      };
    return judge(base, out, validator.result, { params: [] }, explainer);
  }

  if (!discovered) return { name, status: 'FAIL', ms: 0, detail: `discovery failed: ${report.discoveryError}` };
  const example = firstExampleParams(contract.document, name);
  if (!example) return { name, status: 'FAIL', ms: 0, detail: 'the contract has no example params for this method' };
  const plan: ParamPlan =
    profile?.plan === undefined ? { params: example } : profile.plan(name, paramNames, example, report.facts as F);
  if ('skip' in plan) return { name, status: 'SKIP', ms: 0, detail: plan.skip };
  // The planned params must still honour the contract, or we would be testing our own mistake.
  if (!validator.params(plan.params)) {
    return {
      name,
      status: 'FAIL',
      ms: 0,
      params: plan.params,
      detail: `planned params fail the contract: ${ajvProblem(validator.params)}`,
    };
  }
  const out = await rpc.call(name, plan.params);
  return judge({ name, ms: round(out.ms), params: plan.params }, out, validator.result, plan, explainer);
}

function judge(
  base: Omit<CheckResult, 'status' | 'detail'>,
  out: CallOutcome,
  result: ValidateFn,
  plan: PlannedCall,
  explainer: ResultExplainer,
): CheckResult {
  const note = [plan.note, plan.invalidParams]
    .filter(Boolean)
    .map((n) => ` (${n})`)
    .join('');
  const problem = envelopeProblem(out);
  if (problem) return { ...base, status: 'FAIL', detail: `${problem}${note}` };
  if (plan.documentDefect !== undefined && (out.error || !result(out.result))) {
    const got = out.error ? `error ${out.error.code} "${out.error.message}"` : `result ${brief(out.result)}`;
    return { ...base, status: 'WARN', detail: `document defect: ${plan.documentDefect}; the endpoint answered ${got}` };
  }
  if (plan.expectErrorCode !== undefined) {
    const want = plan.expectErrorCode;
    if (out.error?.code === want)
      return { ...base, status: 'PASS', detail: `error ${want} "${out.error.message}" as the example shows${note}` };
    return {
      ...base,
      status: 'FAIL',
      detail: `expected error ${want} (the example shows it), got ${out.error ? `error ${out.error.code} ${out.error.message}` : `result ${brief(out.result)}`}${note}`,
    };
  }
  if (plan.allowedErrors && out.error) {
    const why = out.error.code === -32601 ? undefined : plan.allowedErrors.get(out.error.code);
    if (why)
      return { ...base, status: 'PASS', detail: `error ${out.error.code} "${out.error.message}": ${why}${note}` };
    const declared = [...plan.allowedErrors.keys()];
    const refusal =
      out.error.code === -32601
        ? 'method not found, but the document declares this method'
        : `error ${out.error.code} is not an answer the document allows here (${declared.length ? `allowed: ${declared.join(', ')}` : 'the method declares no errors'})`;
    return { ...base, status: 'FAIL', detail: `${refusal}: "${out.error.message}"${note}` };
  }
  if (plan.expectError) {
    // Any refusal is conformant except "method not found": the method must exist.
    if (out.error?.code === -32601)
      return { ...base, status: 'FAIL', detail: `method not supported: ${out.error.message}` };
    return out.error
      ? { ...base, status: 'PASS', detail: `error ${out.error.code} "${out.error.message}" as expected${note}` }
      : { ...base, status: 'FAIL', detail: `expected an error, got result ${brief(out.result)}` };
  }
  if (out.error) return { ...base, status: 'FAIL', detail: `error ${out.error.code} ${out.error.message}` };
  if (!result(out.result)) {
    const why = explainer.explain(base.name, out.result) ?? ajvProblem(result);
    return { ...base, status: 'FAIL', detail: `result fails the contract: ${why}; got ${brief(out.result)}${note}` };
  }
  const semantic = plan.expect?.(out.result);
  if (semantic) return { ...base, status: 'FAIL', detail: semantic };
  return { ...base, status: 'PASS', detail: `${brief(out.result)}${note}` };
}

const round = (ms: number) => Math.round(ms * 10) / 10;

/** A protocol check: `method(params)` must be refused with `code`. */
export function expectCode(name: string, method: string, params: unknown[], code: number, what: string): ProtocolCheck {
  return {
    name,
    async run(rpc: RpcTransport): Promise<CheckResult> {
      const out = await rpc.call(method, params);
      const base = { name, ms: round(out.ms), params };
      const problem = envelopeProblem(out);
      if (problem) return { ...base, status: 'FAIL', detail: problem };
      if (out.error?.code === code)
        return { ...base, status: 'PASS', detail: `${what}: ${code} "${out.error.message}"` };
      return {
        ...base,
        status: 'FAIL',
        detail: `${what}: expected ${code}, got ${out.error ? `${out.error.code} ${out.error.message}` : `result ${brief(out.result)}`}`,
      };
    },
  };
}

/** A protocol check: a batch of two calls is answered with two replies matched by id. Each reply must be a result,
 *  unless `allowErrors` (then a well-formed error reply counts: the batch mechanics are what is checked). */
export function batchCheck(
  calls: readonly { method: string; params: RpcParams }[],
  opts: { allowErrors?: boolean } = {},
): ProtocolCheck {
  return {
    name: 'protocol:batch',
    async run(rpc) {
      const started = performance.now();
      const { ids, replies, problem } = await rpc.batch(calls.map((c) => ({ method: c.method, params: c.params })));
      const base = { name: 'protocol:batch', ms: round(performance.now() - started) };
      if (problem) return { ...base, status: 'FAIL', detail: problem };
      if (!Array.isArray(replies) || replies.length !== calls.length)
        return {
          ...base,
          status: 'FAIL',
          detail: `expected an array of ${calls.length} replies, got ${brief(replies)}`,
        };
      // Replies may come in any order: match by id.
      for (const id of ids) {
        const reply = replies.find((r) => typeof r === 'object' && r !== null && (r as { id?: unknown }).id === id);
        if (!reply) return { ...base, status: 'FAIL', detail: `no reply with id ${JSON.stringify(id)}` };
        const env = checkEnvelope(reply, id);
        if (env.envelope.length || (!env.hasResult && !opts.allowErrors))
          return {
            ...base,
            status: 'FAIL',
            detail: `reply ${JSON.stringify(id)}: ${env.envelope.join('; ') || `error ${brief(env.error)}`}`,
          };
      }
      const what = [...new Set(calls.map((c) => c.method))].join(', ');
      return { ...base, status: 'PASS', detail: `batch of ${calls.length} ${what} answered, ids matched` };
    },
  };
}

/** Checks every JSON-RPC 2.0 endpoint must pass, whatever its contract: an unknown method is -32601. */
function GENERIC_PROTOCOL_CHECKS(_contract: ConformanceContract): ProtocolCheck[] {
  return [expectCode('protocol:unknown-method', 'rpcgate_conformanceNoSuchMethod', [], -32601, 'unknown method')];
}
