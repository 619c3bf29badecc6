// The anchor table of issue 19: every corpus document (test/helpers/openrpc-corpus.ts) through rpcgate's toolkit and
// through the official OpenRPC tools that are dev dependencies here, side by side — pass/fail, time and peak memory of
// each step, each in its own process (bench/lib/anchor-step.ts) with the same heap cap and timeout, one after another
// (a machine of 2 cores: two steps at once would time each other). `tsx bench/toolkit-anchors.ts`; env:
// ANCHORS_ONLY=<name,…> (documents), ANCHORS_HEAP_MB (4096), ANCHORS_TIMEOUT_S (180). Prints the table and the totals,
// writes bench/out/anchors-<timestamp>.json.
//
// Steps: rpcgate generate, tsc --strict (NodeNext) on its output, docs, mock + conformance against the same document;
// @open-rpc/generator's TypeScript client and tsc --strict on it (with the tsconfig it writes; its runtime package
// @open-rpc/client-js is not installed, so "cannot find module" for it is not counted); @open-rpc/schema-utils-js
// dereference; @open-rpc/mock-server (a dev dependency, 1.7.8) started as its CLI starts it and checked by rpcgate's
// conformance against the same document. Not run: @open-rpc/generator's docs component (Gatsby; it installs packages
// from the network).
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { corpus, type CorpusDocument } from '../test/helpers/openrpc-corpus.js';

const root = resolve(import.meta.dirname, '..');
const HEAP_MB = Number(process.env.ANCHORS_HEAP_MB ?? 4096);
const TIMEOUT_MS = Number(process.env.ANCHORS_TIMEOUT_S ?? 180) * 1000;
const only = process.env.ANCHORS_ONLY?.split(',').filter(Boolean);

const STEPS = [
  ['rpcgate-generate', 'rg gen'],
  ['rpcgate-tsc', 'rg tsc'],
  ['rpcgate-docs', 'rg docs'],
  ['rpcgate-mock-conformance', 'rg mock+conf'],
  ['official-generate', 'og gen'],
  ['official-tsc', 'og tsc'],
  ['official-mock-conformance', 'om mock+conf'],
  ['official-deref', 'su deref'],
] as const;
type Step = (typeof STEPS)[number][0];

interface Result {
  ok: boolean;
  /** The step's own work, ms (start-up excluded): wall, and CPU (user + system; steadier on a shared machine). */
  ms: number;
  cpuMs?: number;
  /** Peak RSS of the whole process (VmHWM), MB. */
  peakMB: number;
  detail: string;
  /** 'oom' | 'timeout' | 'crash' when the process did not report. */
  ended?: string;
}

/** Peak RSS of a running process, from /proc (kept after each read: the last one before exit is the peak). */
function vmHwmMB(pid: number): number | undefined {
  try {
    const m = readFileSync(`/proc/${pid}/status`, 'utf8').match(/VmHWM:\s+(\d+) kB/);
    return m ? Math.round(Number(m[1]) / 1024) : undefined;
  } catch {
    return undefined;
  }
}

/** The step running now: ended by its PID if this bench is interrupted. */
let current: ReturnType<typeof spawn> | undefined;
for (const signal of ['SIGINT', 'SIGTERM'] as const)
  process.on(signal, () => {
    current?.kill('SIGKILL');
    process.exit(130);
  });

function runStep(step: Step, doc: CorpusDocument, work: string): Promise<Result> {
  return new Promise((done) => {
    const child = spawn(
      process.execPath,
      [
        `--max-old-space-size=${HEAP_MB}`,
        '--import',
        'tsx',
        join(root, 'bench/lib/anchor-step.ts'),
        step,
        doc.file,
        work,
      ],
      { cwd: doc.cwd ?? root, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    current = child;
    let out = '';
    let err = '';
    let peak = 0;
    let timedOut = false;
    child.stdout.on('data', (b) => {
      out += b;
    });
    child.stderr.on('data', (b) => {
      err += b;
      if (err.length > 20_000) err = err.slice(-10_000);
    });
    const poll = setInterval(() => {
      peak = Math.max(peak, vmHwmMB(child.pid!) ?? 0);
    }, 25);
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL'); // ends only the process this bench started, by its PID
    }, TIMEOUT_MS);
    const t0 = performance.now();
    child.on('exit', (code, signal) => {
      current = undefined;
      clearInterval(poll);
      clearTimeout(timer);
      const wall = Math.round(performance.now() - t0);
      const line = out.trim().split('\n').pop() ?? '';
      try {
        const r = JSON.parse(line) as { ok: boolean; ms: number; cpuMs: number; detail: string };
        return done({ ...r, peakMB: peak });
      } catch {
        const oom = /heap out of memory|Allocation failed/i.test(err);
        const ended = timedOut ? 'timeout' : oom ? 'oom' : 'crash';
        const why = timedOut
          ? `no answer in ${TIMEOUT_MS / 1000} s`
          : oom
            ? `out of memory (heap cap ${HEAP_MB} MB)`
            : `exit ${code ?? signal}: ${err.trim().split('\n').slice(-1)[0]?.slice(0, 160) ?? ''}`;
        done({ ok: false, ms: wall, peakMB: peak, detail: why, ended });
      }
    });
  });
}

const fmtCell = (r: Result) =>
  `${r.ok ? 'pass' : r.ended ? r.ended.toUpperCase() : 'FAIL'} ${((r.cpuMs ?? r.ms) / 1000).toFixed(1)}s ${r.peakMB}MB`;

async function main() {
  // issue 19's documents (the large and the awkward ones) first: a run cut short still has the informative rows
  const docs = corpus()
    .filter((d) => !only || only.includes(d.name))
    .sort((a, b) => b.issue - a.issue);
  const file = join(root, 'bench/out', `anchors-${new Date().toISOString().replace(/[:.]/g, '-')}.json`);
  mkdirSync(join(root, 'bench/out'), { recursive: true });
  // inside the repository: the official client's tsc resolves lodash and @open-rpc/* from its node_modules
  const base = mkdtempSync(join(root, 'bench/out/anchors-work-'));
  const rows: { doc: string; sizeKB: number; results: Partial<Record<Step, Result>> }[] = [];
  try {
    for (const doc of docs) {
      const work = join(base, doc.name);
      mkdirSync(work, { recursive: true });
      const results: Partial<Record<Step, Result>> = {};
      for (const [step] of STEPS) {
        results[step] = await runStep(step, doc, work);
        process.stderr.write(`${doc.name} ${step}: ${fmtCell(results[step]!)} — ${results[step]!.detail}\n`);
      }
      const sizeKB = Math.round(readFileSync(doc.file).length / 1024);
      rows.push({ doc: doc.name, sizeKB, results });
      writeFileSync(file, JSON.stringify({ heapMB: HEAP_MB, timeoutMs: TIMEOUT_MS, rows }, null, 2)); // row by row
      rmSync(work, { recursive: true, force: true });
    }
  } finally {
    rmSync(base, { recursive: true, force: true });
  }

  const header = ['document', 'KB', ...STEPS.map(([, label]) => label)];
  const table = rows.map((r) => [r.doc, String(r.sizeKB), ...STEPS.map(([s]) => fmtCell(r.results[s]!))]);
  const widths = header.map((h, i) => Math.max(h.length, ...table.map((row) => row[i].length)));
  const line = (cells: string[]) =>
    cells.map((c, i) => (i === 1 ? c.padStart(widths[i]) : c.padEnd(widths[i]))).join('  ');
  console.log(
    `heap cap ${HEAP_MB} MB, timeout ${TIMEOUT_MS / 1000} s per step; time = CPU seconds of the step's own work (wall when the process did not report: OOM, timeout), memory = peak RSS of its whole process (node + tsx ≈ 200 MB of it)`,
  );
  console.log(line(header));
  for (const row of table) console.log(line(row));
  const totals = STEPS.map(([s]) => {
    const rs = rows.map((r) => r.results[s]!);
    const pass = rs.filter((r) => r.ok).length;
    const cpu = rs.reduce((n, r) => n + (r.cpuMs ?? r.ms), 0);
    return `${pass}/${rs.length} ${(cpu / 1000).toFixed(0)}s max ${Math.max(...rs.map((r) => r.peakMB))}MB`;
  });
  console.log(line(['totals', '', ...totals]));
  const e2e = (prefix: 'rpcgate' | 'official') =>
    rows.filter((r) => STEPS.filter(([s]) => s.startsWith(prefix)).every(([s]) => r.results[s]!.ok)).length;
  console.log(
    `end to end: rpcgate (generate, tsc, docs, mock+conformance) ${e2e('rpcgate')}/${rows.length}; official (generate, tsc, mock+conformance, dereference) ${e2e('official')}/${rows.length}`,
  );
  console.log('@open-rpc/generator docs: not run (Gatsby; installs packages from the network)');
  console.log(`written ${file.slice(root.length + 1)}`);
}

await main();
