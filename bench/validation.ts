// Micro-benchmark: param validation per call (ns) — rpcgate's generated ajv standalone validators (with their fast
// checks) vs the same contract's validators compiled once at start from the document (packages/toolkit/src/contract/compile.ts,
// what the toolkit does for any document: mock, conformance, createServer) vs @open-rpc/schema-utils-js
// MethodCallValidator (constructed once with the dereferenced openrpc.json). Same inputs, many iterations, medians of
// alternating rounds. Also the costs each choice has outside the hot path: bytes of generated code, and start-up time
// (importing the generated module vs loading + compiling the document). Run alone: `tsx bench/validation.ts`.
import { readFileSync, statSync } from 'node:fs';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { dereferenceDocument, MethodCallValidator } from '@open-rpc/schema-utils-js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const TARGET = 20;

/** Valid calls, shaped as a client sends them. */
const cases: { method: string; params: unknown[] }[] = [
  { method: 'eth_blockNumber', params: [] },
  { method: 'eth_getBlockByNumber', params: ['0x64', false] },
  { method: 'eth_getBalance', params: ['0x5fbdb2315678afecb367f032d93f642f64180aa3', 'latest'] },
  {
    method: 'eth_getLogs',
    params: [
      {
        fromBlock: '0x1',
        toBlock: '0xc8',
        address: '0x5fbdb2315678afecb367f032d93f642f64180aa3',
        topics: ['0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef', null],
      },
    ],
  },
];

export interface ValidationRow {
  method: string;
  generatedNs: number;
  /** The same params validator compiled at start from the document (no fast check in front). */
  runtimeNs: number;
  methodCallValidatorNs: number;
  ratio: number;
  runtimeRatio: number;
}
export interface ValidationCosts {
  /** Bytes of generated/node/validators.ts. */
  generatedBytes: number;
  /** Bytes of the schemas the runtime compiles from (the document's methods + components, as JSON). */
  documentBytes: number;
  /** ms to import generated/node/validators.ts (first import in this process). */
  importMs: number;
  /** ms to load, validate and dereference openrpc.json and compile every validator (compileContract). */
  compileMs: number;
}
export interface ValidationReport {
  rows: ValidationRow[];
  costs: ValidationCosts;
  target: number;
  minRatio: number;
  meetsTarget: boolean;
}

/** ns per call of `a` and `b`, as medians over rounds that alternate between them (so load on a shared
 *  machine hits both alike); each round runs `iters` calls, after a warm-up round. */
function timePairNs(a: () => unknown, itersA: number, b: () => unknown, itersB: number, rounds = 11): [number, number] {
  let sink = 0;
  const round = (fn: () => unknown, iters: number) => {
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < iters; i++) sink += fn() ? 1 : 0;
    return Number(process.hrtime.bigint() - t0) / iters;
  };
  round(a, itersA);
  round(b, itersB);
  const ra: number[] = [];
  const rb: number[] = [];
  for (let r = 0; r < rounds; r++) ra.push(round(a, itersA)), rb.push(round(b, itersB));
  if (sink < 0) console.log(sink); // keeps the results observable
  const median = (x: number[]) => x.sort((p, q) => p - q)[Math.floor(x.length / 2)];
  return [median(ra), median(rb)];
}

export async function runValidationBench(): Promise<ValidationReport> {
  let t0 = performance.now();
  const { validators } = await import('../generated/node/validators.js');
  const importMs = performance.now() - t0;
  t0 = performance.now();
  const { loadDocument } = await import('../packages/toolkit/src/contract/model.js');
  const { compileContract } = await import('../packages/toolkit/src/contract/compile.js');
  const runtime = compileContract(await loadDocument(join(root, 'openrpc.json'), 'node')).validators;
  const compileMs = performance.now() - t0;
  const doc = JSON.parse(readFileSync(join(root, 'openrpc.json'), 'utf8'));
  const mcv = new MethodCallValidator(await dereferenceDocument(doc));
  const costs: ValidationCosts = {
    generatedBytes: statSync(join(root, 'generated/node/validators.ts')).size,
    documentBytes: Buffer.byteLength(JSON.stringify({ methods: doc.methods, components: doc.components })),
    importMs,
    compileMs,
  };

  const rows: ValidationRow[] = [];
  for (const { method, params } of cases) {
    const gen = validators[method]?.params;
    if (!gen) throw new Error(`generated/node/validators.ts has no params validator for ${method}`);
    // Both must accept the same input, or the comparison means nothing.
    if (!gen(params))
      throw new Error(`generated validator rejects ${method} ${JSON.stringify(params)}: ${JSON.stringify(gen.errors)}`);
    const m = mcv.validate(method, params);
    if (!Array.isArray(m) || m.length)
      throw new Error(`MethodCallValidator rejects ${method} ${JSON.stringify(params)}: ${String(m)}`);

    const rt = runtime[method].params;
    if (!rt(params)) throw new Error(`runtime-compiled validator rejects ${method} ${JSON.stringify(params)}`);

    const [generatedNs, methodCallValidatorNs] = timePairNs(
      () => gen(params),
      200_000,
      () => (mcv.validate(method, params) as unknown[]).length === 0,
      20_000,
    );
    const [runtimeNs] = timePairNs(
      () => rt(params),
      200_000,
      () => gen(params),
      200_000,
    );
    rows.push({
      method,
      generatedNs,
      runtimeNs,
      methodCallValidatorNs,
      ratio: methodCallValidatorNs / generatedNs,
      runtimeRatio: methodCallValidatorNs / runtimeNs,
    });
  }
  const minRatio = Math.min(...rows.map((r) => r.ratio));
  return { rows, costs, target: TARGET, minRatio, meetsTarget: minRatio >= TARGET };
}

export function printValidation(r: ValidationReport): void {
  console.log('\nparam validation per call (median of 11 alternating rounds):');
  const w = Math.max(...r.rows.map((x) => x.method.length));
  console.log(
    `${'method'.padEnd(w)}  ${'generated ns'.padStart(12)}  ${'at-start ns'.padStart(11)}  ${'MethodCallValidator ns'.padStart(22)}  ${'generated'.padStart(9)}  ${'at-start'.padStart(8)}`,
  );
  for (const x of r.rows) {
    console.log(
      `${x.method.padEnd(w)}  ${x.generatedNs.toFixed(0).padStart(12)}  ${x.runtimeNs.toFixed(0).padStart(11)}  ${x.methodCallValidatorNs.toFixed(0).padStart(22)}  ${(`${x.ratio.toFixed(1)}×`).padStart(9)}  ${(`${x.runtimeRatio.toFixed(1)}×`).padStart(8)}`,
    );
  }
  const c = r.costs;
  console.log(
    `generated validators.ts ${(c.generatedBytes / 1024).toFixed(0)} KB, imported in ${c.importMs.toFixed(0)} ms; compiled at start from ${(c.documentBytes / 1024).toFixed(0)} KB of schemas in ${c.compileMs.toFixed(0)} ms (load + validate + dereference + ajv)`,
  );
  console.log(`target ≥ ${r.target}×: ${r.meetsTarget ? 'met' : 'NOT met'} (lowest ${r.minRatio.toFixed(1)}×)`);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  printValidation(await runValidationBench());
}
