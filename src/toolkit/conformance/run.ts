// `runConformance(url)`: checks any JSON-RPC endpoint against the node contract. Every method of the
// generated descriptor is called with the contract's first example adapted to the live chain, the reply's
// envelope is checked, and the result is validated with the GENERATED result validator — the same code
// rpcgate itself runs in strict mode, so "conformant" means one thing everywhere.
import { readFileSync } from 'node:fs';
import type { MethodTable, ValidateFn, ValidatorTable } from '../rpc/descriptor.js';
import { adaptParams, brief, type Adapted } from './adapt.js';
import { discoverChain, type ChainFacts } from './discover.js';
import { ResultExplainer } from './explain.js';
import { RpcTransport, checkEnvelope, describe, type CallOutcome } from './rpc.js';

export type Status = 'PASS' | 'FAIL' | 'SKIP';

export interface CheckResult {
  /** Method name, or `protocol:<check>` for the protocol checks. */
  name: string;
  status: Status;
  ms: number;
  detail: string;
  params?: unknown[];
}

export interface ConformanceReport {
  url: string;
  /** True when nothing failed. */
  ok: boolean;
  chain?: ChainFacts;
  /** Set when chain discovery failed (then every method fails). */
  discoveryError?: string;
  methods: CheckResult[];
  /** Unknown method, invalid params, batch: reported apart from the per-method table. */
  protocol: CheckResult[];
  summary: { passed: number; failed: number; skipped: number };
}

export interface ConformanceOptions {
  /** Only these methods (and `protocol:<check>` names); default all. */
  only?: string[];
  timeoutMs?: number;
  headers?: Record<string, string>;
  /** Blocks scanned back from the head for a real log (default 100000, in growing eth_getLogs windows). */
  scanBlocks?: number;
  /** First eth_getLogs window (default 16 blocks). */
  logWindow?: number;
  /** Recent blocks read one by one for a transaction when no log exists (default 256). */
  txScanBlocks?: number;
  /** The contract to check against; default the node contract (openrpc.json + generated/node). */
  contract?: { document: OpenRpcDoc; methods: MethodTable; validators: ValidatorTable };
}

interface OpenRpcDoc {
  methods: { name: string; examples?: unknown[]; result?: unknown }[];
  [k: string]: unknown;
}

const NODE_CONTRACT = new URL('../../../openrpc.json', import.meta.url);

// Loaded on first use, so a caller passing its own `contract` does not need generated/node.
async function loadNodeContract(): Promise<NonNullable<ConformanceOptions['contract']>> {
  const [{ methods }, { validators }] = await Promise.all([import('../../../generated/node/methods.js'), import('../../../generated/node/validators.js')]);
  const document = JSON.parse(readFileSync(NODE_CONTRACT, 'utf8')) as OpenRpcDoc;
  return { document, methods: methods as unknown as MethodTable, validators: validators as unknown as ValidatorTable };
}

/** Resolves a local `$ref` (`#/components/...`) in the contract; examples may be referenced. */
function deref(doc: unknown, v: unknown): unknown {
  for (let i = 0; i < 16 && typeof v === 'object' && v !== null && typeof (v as { $ref?: unknown }).$ref === 'string'; i++) {
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

function ajvProblem(fn: ValidateFn): string {
  const e = fn.errors?.[0];
  return e ? `${e.instancePath || '(root)'} ${e.message ?? e.keyword}` : 'invalid';
}

function envelopeProblem(out: CallOutcome): string | undefined {
  if (out.transport) return out.transport;
  if (out.envelope.length) return `envelope: ${out.envelope.join('; ')}`;
  return undefined;
}

export async function runConformance(url: string, opts: ConformanceOptions = {}): Promise<ConformanceReport> {
  const contract = opts.contract ?? (await loadNodeContract());
  const rpc = new RpcTransport(url, { timeoutMs: opts.timeoutMs ?? 15_000, headers: opts.headers });
  const explainer = new ResultExplainer(contract.document);
  const wanted = (name: string) => !opts.only?.length || opts.only.includes(name);
  const report: ConformanceReport = { url, ok: false, methods: [], protocol: [], summary: { passed: 0, failed: 0, skipped: 0 } };

  try {
    report.chain = await discoverChain(rpc, { scanBlocks: opts.scanBlocks ?? 100_000, logWindow: opts.logWindow ?? 16, txScanBlocks: opts.txScanBlocks ?? 256 });
  } catch (err) {
    report.discoveryError = describe(err);
  }

  for (const [name, descriptor] of Object.entries(contract.methods)) {
    if (!wanted(name)) continue;
    report.methods.push(await checkMethod(rpc, contract, explainer, name, descriptor.params.map((p) => p.name), report));
  }
  if (opts.only?.length) {
    const known = new Set([...Object.keys(contract.methods), ...PROTOCOL_CHECKS.map((c) => c.name)]);
    for (const n of opts.only.filter((x) => !known.has(x))) report.methods.push({ name: n, status: 'FAIL', ms: 0, detail: 'not a method of the contract' });
  }
  for (const check of PROTOCOL_CHECKS) if (wanted(check.name)) report.protocol.push(await check.run(rpc));

  for (const r of [...report.methods, ...report.protocol]) {
    if (r.status === 'PASS') report.summary.passed++;
    else if (r.status === 'FAIL') report.summary.failed++;
    else report.summary.skipped++;
  }
  report.ok = report.summary.failed === 0;
  return report;
}

async function checkMethod(
  rpc: RpcTransport,
  contract: NonNullable<ConformanceOptions['contract']>,
  explainer: ResultExplainer,
  name: string,
  paramNames: string[],
  report: ConformanceReport,
): Promise<CheckResult> {
  const validator = contract.validators[name];
  if (!validator) return { name, status: 'FAIL', ms: 0, detail: 'no generated validator for this method' };

  if (name === 'rpc.discover') {
    const out = await rpc.call(name, []);
    const base = { name, ms: round(out.ms), params: [] };
    if (out.error?.code === -32601) return { ...base, status: 'SKIP', detail: 'endpoint has no rpc.discover (a plain node, not rpcgate)' };
    return judge(base, out, validator.result, { params: [] }, explainer);
  }

  if (!report.chain) return { name, status: 'FAIL', ms: 0, detail: `chain discovery failed: ${report.discoveryError}` };
  const example = firstExampleParams(contract.document, name);
  if (!example) return { name, status: 'FAIL', ms: 0, detail: 'the contract has no example params for this method' };
  const adapted = adaptParams(name, paramNames, example, report.chain);
  if ('skip' in adapted) return { name, status: 'SKIP', ms: 0, detail: adapted.skip };
  // Our own adaptation must still honour the contract, or we would be testing our mistake.
  if (!validator.params(adapted.params)) {
    return { name, status: 'FAIL', ms: 0, params: adapted.params, detail: `adapted params fail the contract: ${ajvProblem(validator.params)}` };
  }
  const out = await rpc.call(name, adapted.params);
  return judge({ name, ms: round(out.ms), params: adapted.params }, out, validator.result, adapted, explainer);
}

function judge(base: Omit<CheckResult, 'status' | 'detail'>, out: CallOutcome, result: ValidateFn, adapted: Adapted, explainer: ResultExplainer): CheckResult {
  const note = adapted.note ? ` (${adapted.note})` : '';
  const problem = envelopeProblem(out);
  if (problem) return { ...base, status: 'FAIL', detail: problem };
  if (adapted.expectError) {
    // Any refusal is conformant except "method not found": the method must exist.
    if (out.error?.code === -32601) return { ...base, status: 'FAIL', detail: `method not supported: ${out.error.message}` };
    return out.error
      ? { ...base, status: 'PASS', detail: `node error ${out.error.code} "${out.error.message}" as expected${note}` }
      : { ...base, status: 'FAIL', detail: `expected a node error, got result ${brief(out.result)}` };
  }
  if (out.error) return { ...base, status: 'FAIL', detail: `error ${out.error.code} ${out.error.message}` };
  if (!result(out.result)) {
    const why = explainer.explain(base.name, out.result) ?? ajvProblem(result);
    return { ...base, status: 'FAIL', detail: `result fails the contract: ${why}; got ${brief(out.result)}` };
  }
  const semantic = adapted.expect?.(out.result);
  if (semantic) return { ...base, status: 'FAIL', detail: semantic };
  return { ...base, status: 'PASS', detail: `${brief(out.result)}${note}` };
}

const round = (ms: number) => Math.round(ms * 10) / 10;

function expectCode(name: string, method: string, params: unknown[], code: number, what: string) {
  return {
    name,
    async run(rpc: RpcTransport): Promise<CheckResult> {
      const out = await rpc.call(method, params);
      const base = { name, ms: round(out.ms), params };
      const problem = envelopeProblem(out);
      if (problem) return { ...base, status: 'FAIL', detail: problem };
      if (out.error?.code === code) return { ...base, status: 'PASS', detail: `${what}: ${code} "${out.error.message}"` };
      return { ...base, status: 'FAIL', detail: `${what}: expected ${code}, got ${out.error ? `${out.error.code} ${out.error.message}` : `result ${brief(out.result)}`}` };
    },
  };
}

export const PROTOCOL_CHECKS: { name: string; run(rpc: RpcTransport): Promise<CheckResult> }[] = [
  expectCode('protocol:unknown-method', 'rpcgate_conformanceNoSuchMethod', [], -32601, 'unknown method'),
  expectCode('protocol:invalid-params', 'eth_getBalance', ['0xnot-an-address', 'latest'], -32602, 'malformed address'),
  expectCode('protocol:missing-params', 'eth_getBlockByNumber', [], -32602, 'required params missing'),
  {
    name: 'protocol:batch',
    async run(rpc) {
      const started = performance.now();
      const { ids, replies, problem } = await rpc.batch([
        { method: 'eth_chainId', params: [] },
        { method: 'eth_blockNumber', params: [] },
      ]);
      const base = { name: 'protocol:batch', ms: round(performance.now() - started) };
      if (problem) return { ...base, status: 'FAIL', detail: problem };
      if (!Array.isArray(replies) || replies.length !== 2) return { ...base, status: 'FAIL', detail: `expected an array of 2 replies, got ${brief(replies)}` };
      // Replies may come in any order: match by id.
      for (const id of ids) {
        const reply = replies.find((r) => typeof r === 'object' && r !== null && (r as { id?: unknown }).id === id);
        if (!reply) return { ...base, status: 'FAIL', detail: `no reply with id ${JSON.stringify(id)}` };
        const env = checkEnvelope(reply, id);
        if (env.envelope.length || !env.hasResult) return { ...base, status: 'FAIL', detail: `reply ${JSON.stringify(id)}: ${env.envelope.join('; ') || `error ${brief(env.error)}`}` };
      }
      return { ...base, status: 'PASS', detail: 'batch of 2 answered, ids matched' };
    },
  },
];
