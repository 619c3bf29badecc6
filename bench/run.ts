// rpcgate benchmark (`npm run bench`): one anvil; bounded wrk load against (a) anvil directly, (b) nginx
// proxying to it with upstream keep-alive, (c) rpcgate forwarding to it (and (c0) rpcgate with coalescing off),
// (d) rpcgate on the authenticated path (an account's network key, in-process limits) and (e) the same with Redis
// limits, for eth_blockNumber and eth_getBlockByNumber; then the param-validation micro-benchmark.
// Core budget (2 cores): the system under test always gets CPU 0 alone; wrk — and anvil whenever it is the
// upstream rather than the system under test — share CPU 1. See CORES below.
// Env: BENCH_SECONDS (measured, default 10), BENCH_WARMUP (default 2), BENCH_CONNECTIONS (default 32),
// BENCH_ONLY (comma list of system ids, e.g. "a,b"), BENCH_SKIP_VALIDATION=1, BENCH_ROUNDS (interleaved repeats,
// medians reported), BENCH_BASE_ROOT (A/B against another checkout), BENCH_REDIS_URL (for (e)).
import { mkdtempSync, mkdirSync, writeFileSync, rmSync, existsSync } from 'node:fs';
import { tmpdir, cpus as osCpus } from 'node:os';
import { randomBytes } from 'node:crypto';
import { connect } from 'node:net';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  installCleanup,
  isStopping,
  start,
  stop,
  stopAll,
  pin,
  cpuMicros,
  cpuBusyMicros,
  have,
  waitForOutput,
  type Managed,
} from './lib/procs.js';
import { anvilSystem, nginxSystem, startAnvil, waitForRpc, type System } from './lib/targets.js';
import {
  runWrk,
  writeScript,
  blockNumberWorkload,
  getBlockWorkload,
  type Workload,
  type WrkResult,
} from './lib/wrk.js';
import { runValidationBench, printValidation, type ValidationReport } from './validation.js';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..');
const num = (v: string | undefined, d: number) => (v && Number.isFinite(Number(v)) ? Number(v) : d);
const SECONDS = num(process.env.BENCH_SECONDS, 10);
const WARMUP = num(process.env.BENCH_WARMUP, 2);
const CONNECTIONS = num(process.env.BENCH_CONNECTIONS, 32);
const BLOCKS = 200;
const ONLY = process.env.BENCH_ONLY?.split(',').map((s) => s.trim());
/** Repeat the whole selection this many times, interleaved (a, b, c, …, a, b, c, …); the table shows medians. */
const ROUNDS = Math.max(1, Math.floor(num(process.env.BENCH_ROUNDS, 1)));
/** Another checkout (e.g. a `git worktree` of the last commit): each rpcgate system also runs from there, as
 *  `<id>@base`, right after its own run — an A/B comparison of code changes under the same noise. */
const BASE_ROOT = process.env.BENCH_BASE_ROOT;
const SUT_CPU = '0';
const LOAD_CPU = '1';
const DEV_KEY = 'benchDevKey0123456789';
const REDIS_URL = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';

const CORES = [
  `system under test on CPU ${SUT_CPU} alone: anvil in (a), nginx (master+worker) in (b), rpcgate in (c)/(c0)/(d)/(e)`,
  `redis-server (e) runs wherever the OS puts it (not pinned, not ours); its CPU time is not in rpcgate's`,
  `wrk (-t1) on CPU ${LOAD_CPU}; in (b)/(c)/(c0) the upstream anvil shares CPU ${LOAD_CPU} with wrk`,
  `the one anvil is re-pinned between phases (taskset -a -p): CPU ${SUT_CPU} for (a), CPU ${LOAD_CPU} for the rest`,
  `this orchestrator (idle during runs, reads /proc) on CPU ${LOAD_CPU}`,
];

interface Row {
  system: string;
  id: string;
  workload: string;
  rps: number;
  p50ms: number;
  p99ms: number;
  sutCpuUsPerReq: number;
  /** CPU time of the system under test / wall time: near 100% means it was the bottleneck. */
  sutBusyPct: number;
  /** Busy time of CPU 0 not spent by the system under test, % of wall time: other work on this (shared) machine. */
  otherOnSutCpuPct: number;
  anvilCpuUsPerReq: number | null;
  /** rpcgate only: client calls per upstream HTTP request (batching), and share of calls answered by dedupe. */
  callsPerUpstreamRequest?: number;
  dedupedPct?: number;
  requests: number;
  bad: number;
  socketErrors: number;
}

interface PoolStats {
  requests: number;
  calls: number;
  deduped: number;
}

/** Asks the rpcgate child for its upstream pool counters (SIGUSR2 → one `RPCGATE_STATS {…}` line). */
function poolStats(m: Managed): Promise<PoolStats | null> {
  return new Promise((resolve) => {
    let buf = '';
    const onData = (d: Buffer) => {
      buf += d.toString();
      const hit = /RPCGATE_STATS (.*)\n/.exec(buf);
      if (hit) done(JSON.parse(hit[1]) as PoolStats | null);
    };
    const timer = setTimeout(() => done(null), 2000);
    const done = (v: PoolStats | null) => {
      clearTimeout(timer);
      m.child.stdout?.off('data', onData);
      resolve(v);
    };
    m.child.stdout?.on('data', onData);
    m.child.kill('SIGUSR2');
  });
}

function preflight(): void {
  const missing: string[] = [];
  if (!have('nginx')) missing.push('nginx');
  if (!have('wrk')) missing.push('wrk');
  if (!have('taskset')) missing.push('taskset (util-linux)');
  if (missing.length) {
    console.error(
      `bench: missing ${missing.join(', ')}. Install the Debian packages first:\n  apt-get update && apt-get install -y nginx wrk\n(taskset is in util-linux)`,
    );
    process.exit(2);
  }
  if (osCpus().length < 2) {
    console.error('bench: needs at least 2 CPUs (one for the system under test, one for the load generator).');
    process.exit(2);
  }
}

async function main(): Promise<void> {
  preflight();
  installCleanup();
  pin(process.pid, LOAD_CPU);
  const tmp = mkdtempSync(join(tmpdir(), 'rpcgate-bench-'));
  process.on('exit', () => rmSync(tmp, { recursive: true, force: true }));

  console.log(
    `rpcgate bench: wrk -t1 -c${CONNECTIONS} -d${SECONDS}s (after ${WARMUP}s warm-up) per run; ${osCpus().length} CPUs`,
  );
  for (const c of CORES) console.log(`  cores: ${c}`);

  const anvil = await startAnvil(LOAD_CPU, BLOCKS);
  console.log(`anvil on ${anvil.url} (pid ${anvil.proc.pid}), ${BLOCKS} blocks mined`);

  const workloads: Workload[] = [blockNumberWorkload(), getBlockWorkload(BLOCKS)];
  const scripts = new Map(workloads.map((w) => [w.name, writeScript(tmp, w)]));

  let gate: Managed | undefined;
  const redisPrefix = `rpcgate-bench:${randomBytes(6).toString('hex')}`;
  const rpcgateSystem = (
    id: string,
    label: string,
    coalesce: boolean,
    auth?: 'memory' | 'redis',
    codeRoot = root,
    extra: Record<string, unknown> = {},
  ): System => ({
    id,
    label,
    async up() {
      if (auth === 'redis') await redisReachable(REDIS_URL);
      const input = {
        port: 0,
        host: '127.0.0.1',
        dataDir: join(tmp, `data-${id.replace(/\W/g, '-')}`),
        keys: [DEV_KEY],
        strictResults: false, // as in production
        logLevel: 'warn',
        // The complete set of networks: mainnet only, on the one anvil (so no embedded chain is started).
        networks: { mainnet: { upstreams: [anvil.url] } },
        upstream: { coalesce },
        // This bench measures forwarding (every call reaches anvil): the response cache, on by default, would answer
        // these repeated reads itself. Cache hits have their own bench (bench/cache.ts).
        // (A base checkout older than the cache has no `cache` setting.)
        ...(codeRoot === root ? { cache: { enabled: false } } : {}),
        // Authenticated runs: a B key's daily quota per user far above what a run sends (the limit is checked and
        // counted on every request, it just never refuses).
        ...(auth ? { limits: { b: { dailyPerUser: 1_000_000_000_000 } } } : {}),
        ...(auth === 'redis' ? { redisUrl: REDIS_URL, redisPrefix } : {}),
        // (d0): metering off, for the cost of metering; (dlog): a log line per request (debug level).
        ...extra,
      };
      const args = ['--import', 'tsx', join(codeRoot, 'bench', 'rpcgate-server.ts'), JSON.stringify(input)];
      if (auth) args.push(JSON.stringify({ networkKey: true }));
      gate = start(label, process.execPath, args, {
        cpus: SUT_CPU,
        cwd: codeRoot,
        env: { ...process.env, NODE_ENV: 'production' },
      });
      await waitForOutput(gate, (o) => /RPCGATE_READY \S+\n/.test(o), 60000);
      const url = /RPCGATE_READY (\S+)\n/.exec(gate.output())![1];
      if (auth ? !/\/mainnet\/[^/]+$/.test(url) || url.endsWith(`/${DEV_KEY}`) : !url.endsWith(`/mainnet/${DEV_KEY}`))
        throw new Error(
          `unexpected rpcgate URL ${url} (want B-style /mainnet/<key>${auth ? ' with an account network key' : ''})`,
        );
      await waitForRpc(url, gate, 10000);
      return { url, proc: gate };
    },
    async down() {
      if (gate) await stop(gate);
      gate = undefined;
    },
  });

  const gates: [string, string, boolean, ('memory' | 'redis')?, Record<string, unknown>?][] = [
    ['c', 'rpcgate', true],
    ['c0', 'rpcgate (no coalescing)', false],
    ['d', 'rpcgate auth, in-process limits', true, 'memory'],
    ['d0', 'rpcgate auth, in-process, no metering', true, 'memory', { metering: false }],
    ['dlog', 'rpcgate auth, in-process, log/request', true, 'memory', { logLevel: 'debug' }],
    ['e', 'rpcgate auth, Redis limits', true, 'redis'],
  ];
  const systems: System[] = [
    anvilSystem(anvil, SUT_CPU, LOAD_CPU),
    nginxSystem(tmp, anvil.port, SUT_CPU),
    ...gates.flatMap(([id, label, coalesce, auth, extra]) => [
      rpcgateSystem(id, label, coalesce, auth, root, extra),
      ...(BASE_ROOT ? [rpcgateSystem(`${id}@base`, `${label} [base]`, coalesce, auth, BASE_ROOT, extra)] : []),
    ]),
    // (d0) and (dlog) are comparisons for (d): only when asked for by BENCH_ONLY.
  ].filter((s) => (!ONLY ? !['d0', 'dlog'].includes(s.id) : ONLY.includes(s.id.replace(/@base$/, ''))));

  const runs: Row[] = [];

  const skipped: Record<string, string> = {};
  for (let round = 1; round <= ROUNDS; round++)
    for (const sys of systems) {
      if (skipped[sys.id]) continue;
      let target: { url: string; proc: Managed };
      try {
        target = await sys.up();
      } catch (e) {
        skipped[sys.id] = (e as Error).message.split('\n').slice(0, 6).join('\n');
        console.log(`\n(${sys.id}) ${sys.label}: SKIPPED — ${skipped[sys.id]}`);
        await sys.down().catch(() => undefined);
        continue;
      }
      console.log(
        `\n(${sys.id}) ${sys.label} at ${target.url} (pid ${target.proc.pid})${ROUNDS > 1 ? ` — round ${round}/${ROUNDS}` : ''}`,
      );
      try {
        for (const w of workloads) {
          const script = scripts.get(w.name)!;
          const warm = await runWrk({
            url: target.url,
            script,
            connections: CONNECTIONS,
            seconds: WARMUP,
            cpus: LOAD_CPU,
          });
          if (warm.bad > 0) console.log(`  warm-up: ${warm.bad} bad responses of ${warm.requests}`);
          const isGate = sys.id !== 'a' && sys.id !== 'b';
          const st0 = isGate ? await poolStats(target.proc) : null;
          const sut0 = cpuMicros(target.proc.pid);
          const busy0 = cpuBusyMicros(Number(SUT_CPU));
          const anv0 = sys.id === 'a' ? 0 : cpuMicros(anvil.proc.pid);
          const r: WrkResult = await runWrk({
            url: target.url,
            script,
            connections: CONNECTIONS,
            seconds: SECONDS,
            cpus: LOAD_CPU,
          });
          const sut1 = cpuMicros(target.proc.pid);
          const busy1 = cpuBusyMicros(Number(SUT_CPU));
          const anv1 = sys.id === 'a' ? 0 : cpuMicros(anvil.proc.pid);
          const st1 = isGate ? await poolStats(target.proc) : null;
          const row: Row = {
            system: sys.label,
            id: sys.id,
            workload: w.name,
            rps: r.rps,
            p50ms: r.p50us / 1000,
            p99ms: r.p99us / 1000,
            sutCpuUsPerReq: (sut1 - sut0) / Math.max(1, r.requests),
            sutBusyPct: ((sut1 - sut0) / (r.seconds * 1e6)) * 100,
            otherOnSutCpuPct: Math.max(0, ((busy1 - busy0 - (sut1 - sut0)) / (r.seconds * 1e6)) * 100),
            anvilCpuUsPerReq: sys.id === 'a' ? null : (anv1 - anv0) / Math.max(1, r.requests),
            ...(st0 && st1 && st1.requests > st0.requests
              ? {
                  callsPerUpstreamRequest:
                    (st1.calls - st0.calls - (st1.deduped - st0.deduped)) / (st1.requests - st0.requests),
                  dedupedPct: ((st1.deduped - st0.deduped) / Math.max(1, st1.calls - st0.calls)) * 100,
                }
              : {}),
            requests: r.requests,
            bad: r.bad,
            socketErrors: r.socketErrors,
          };
          runs.push(row);
          console.log(
            `  ${w.name.padEnd(22)} ${fmt(row.rps, 0).padStart(7)} req/s  p50 ${fmt(row.p50ms, 2)} ms  p99 ${fmt(row.p99ms, 2)} ms  ` +
              `CPU ${fmt(row.sutCpuUsPerReq, 1)} µs/req, ${fmt(row.sutBusyPct, 0)}% busy, others ${fmt(row.otherOnSutCpuPct, 0)}% of CPU ${SUT_CPU}${row.anvilCpuUsPerReq !== null ? ` (anvil ${fmt(row.anvilCpuUsPerReq, 1)})` : ''}` +
              (row.callsPerUpstreamRequest !== undefined
                ? `  [${fmt(row.callsPerUpstreamRequest, 1)} calls/upstream req, ${fmt(row.dedupedPct!, 0)}% deduped]`
                : '') +
              (row.bad || row.socketErrors ? `  BAD ${row.bad} socket-errors ${row.socketErrors}` : ''),
          );
        }
      } finally {
        await sys.down();
      }
    }

  const rows = ROUNDS > 1 ? medians(runs) : runs;

  let validation: ValidationReport | undefined;
  if (process.env.BENCH_SKIP_VALIDATION !== '1') {
    try {
      validation = await runValidationBench();
    } catch (e) {
      skipped.validation = (e as Error).message;
    }
  }
  await stopAll();

  // ---- report
  const ratios: Record<string, Record<string, number | null>> = {};
  const get = (id: string, w: string) => rows.find((r) => r.id === id && r.workload === w);
  for (const w of workloads) {
    const a = get('a', w.name),
      b = get('b', w.name),
      c = get('c', w.name),
      c0 = get('c0', w.name);
    const q = (x?: Row, y?: Row) => (x && y ? x.rps / y.rps : null);
    const cpu = (x?: Row, y?: Row) => (x && y ? x.sutCpuUsPerReq / y.sutCpuUsPerReq : null);
    const d = get('d', w.name),
      e = get('e', w.name),
      d0 = get('d0', w.name),
      dlog = get('dlog', w.name);
    ratios[w.name] = {
      'c/a': q(c, a),
      'c/b': q(c, b),
      'c0/b': q(c0, b),
      'c/c0': q(c, c0),
      'd/c': q(d, c),
      'e/c': q(e, c),
      'cpu c/b': cpu(c, b),
      'cpu c0/b': cpu(c0, b),
      'cpu d/c': cpu(d, c),
      'cpu e/c': cpu(e, c),
      'cpu d/d0': cpu(d, d0),
      'cpu dlog/d': cpu(dlog, d),
    };
  }

  console.log('\n=== results (req/s higher is better; latency and CPU lower is better) ===');
  const head = [
    'system',
    'workload',
    'req/s',
    'p50 ms',
    'p99 ms',
    'CPU µs/req',
    'SUT busy',
    'others',
    '1-core cap',
    'anvil µs/req',
    'calls/up-req',
    'deduped',
    'bad',
  ];
  const body = rows.map((r) => [
    `(${r.id}) ${r.system}`,
    r.workload,
    fmt(r.rps, 0),
    fmt(r.p50ms, 2),
    fmt(r.p99ms, 2),
    fmt(r.sutCpuUsPerReq, 1),
    `${fmt(r.sutBusyPct, 0)}%`,
    `${fmt(r.otherOnSutCpuPct, 0)}%`,
    fmt(1e6 / r.sutCpuUsPerReq, 0),
    r.anvilCpuUsPerReq === null ? '(is SUT)' : fmt(r.anvilCpuUsPerReq, 1),
    r.callsPerUpstreamRequest === undefined ? '' : fmt(r.callsPerUpstreamRequest, 1),
    r.dedupedPct === undefined ? '' : `${fmt(r.dedupedPct, 0)}%`,
    String(r.bad + r.socketErrors),
  ]);
  printTable(head, body);
  console.log('\nratios (req/s, and CPU µs per request of the system under test):');
  const keys = ['c/a', 'c/b', 'c0/b', 'c/c0', 'cpu c/b', 'cpu c0/b', 'cpu d/c', 'cpu e/c', 'cpu d/d0', 'cpu dlog/d'];
  printTable(
    [
      'workload',
      '',
      ...keys.map((k) =>
        k.startsWith('cpu')
          ? `CPU ${k.slice(4).replace(/(\w+)\/(\w+)/, '($1)/($2)')}`
          : `req/s ${k.replace(/(\w+)\/(\w+)/, '($1)/($2)')}`,
      ),
    ],
    Object.entries(ratios).map(([w, r]) => [w, '', ...keys.map((k) => (r[k] === null ? '—' : `${fmt(r[k]!, 2)}×`))]),
  );
  console.log(
    [
      '"SUT busy": CPU time of the system under test / wall time; well below 100% means it was not the bottleneck (wrk+anvil on',
      `CPU ${LOAD_CPU}, or other work, limited it) — then "1-core cap" = 1e6 / CPU µs/req estimates its one-core capacity.`,
      `"others": CPU ${SUT_CPU} busy time not spent by the system under test (other processes on a shared machine: noise).`,
      'Targets: req/s (c)/(b) ≥ 0.6; CPU (d)/(c) ≤ 1.10 (authenticated, in-process counters), CPU (e)/(c) ≤ 1.25 (Redis counters);',
      'CPU (d)/(d0) ≤ 1.05 (metering on vs off, BENCH_ONLY=d,d0). (dlog)/(d): the cost of a log line per request (debug level).',
    ].join('\n'),
  );
  const noisy = runs.filter((r) => r.otherOnSutCpuPct > 10);
  if (noisy.length)
    console.log(
      `WARNING: other processes used > 10% of CPU ${SUT_CPU} during ${noisy.length} of ${runs.length} runs — req/s figures are disturbed; re-run on a quiet machine.`,
    );
  console.log('\nworkloads:');
  for (const w of workloads) console.log(`  ${w.name}: ${w.note}`);
  console.log('cores:');
  for (const c of CORES) console.log(`  ${c}`);
  if (validation) printValidation(validation);
  for (const [k, v] of Object.entries(skipped)) console.log(`\nskipped ${k}: ${v}`);

  const outDir = join(here, 'out');
  if (!existsSync(outDir)) mkdirSync(outDir, { recursive: true });
  const file = join(outDir, `${new Date().toISOString().replace(/[:.]/g, '-')}.json`);
  writeFileSync(
    file,
    `${JSON.stringify(
      {
        date: new Date().toISOString(),
        node: process.version,
        cpus: osCpus().length,
        wrk: { threads: 1, connections: CONNECTIONS, seconds: SECONDS, warmupSeconds: WARMUP },
        cores: CORES,
        workloads: workloads.map((w) => ({ name: w.name, note: w.note })),
        rounds: ROUNDS,
        rows,
        ...(ROUNDS > 1 ? { runs } : {}),
        ratios,
        validation,
        skipped,
      },
      null,
      2,
    )}\n`,
  );
  console.log(`\nwritten ${file}`);
  const bad = runs.filter((r) => r.bad + r.socketErrors > 0.001 * r.requests);
  if (bad.length) {
    console.error(
      `\nbench: bad responses in ${bad.map((r) => `(${r.id}) ${r.workload}`).join(', ')} — figures not trustworthy`,
    );
    process.exitCode = 1;
  }
}

/** One row per (system, workload): the median of each figure over the rounds (requests and errors summed). */
function medians(runs: Row[]): Row[] {
  const groups = new Map<string, Row[]>();
  for (const r of runs) {
    const k = `${r.id}\0${r.workload}`;
    if (!groups.has(k)) groups.set(k, []);
    groups.get(k)!.push(r);
  }
  const med = (xs: number[]) => {
    const v = [...xs].sort((p, q) => p - q);
    return v.length % 2 ? v[(v.length - 1) / 2] : (v[v.length / 2 - 1] + v[v.length / 2]) / 2;
  };
  return [...groups.values()].map((g) => {
    const pick = (f: (r: Row) => number | null | undefined) => {
      const xs = g.map(f).filter((x): x is number => typeof x === 'number');
      return xs.length ? med(xs) : undefined;
    };
    return {
      ...g[0],
      rps: pick((r) => r.rps)!,
      p50ms: pick((r) => r.p50ms)!,
      p99ms: pick((r) => r.p99ms)!,
      sutCpuUsPerReq: pick((r) => r.sutCpuUsPerReq)!,
      sutBusyPct: pick((r) => r.sutBusyPct)!,
      otherOnSutCpuPct: pick((r) => r.otherOnSutCpuPct)!,
      anvilCpuUsPerReq: pick((r) => r.anvilCpuUsPerReq) ?? null,
      callsPerUpstreamRequest: pick((r) => r.callsPerUpstreamRequest),
      dedupedPct: pick((r) => r.dedupedPct),
      requests: g.reduce((n, r) => n + r.requests, 0),
      bad: g.reduce((n, r) => n + r.bad, 0),
      socketErrors: g.reduce((n, r) => n + r.socketErrors, 0),
    };
  });
}

/** (e) needs a Redis server: fail that system (reported as skipped) rather than the run when there is none. */
function redisReachable(url: string): Promise<void> {
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    const s = connect({ host: u.hostname, port: Number(u.port || 6379) });
    const t = setTimeout(() => (s.destroy(), reject(new Error(`no Redis at ${url} (set BENCH_REDIS_URL)`))), 2000);
    s.once('connect', () => (clearTimeout(t), s.end(), resolve()));
    s.once(
      'error',
      (e) => (clearTimeout(t), reject(new Error(`no Redis at ${url}: ${e.message} (set BENCH_REDIS_URL)`))),
    );
  });
}

function fmt(n: number, digits: number): string {
  return n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
}

function printTable(head: string[], rows: string[][]): void {
  const w = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (cells: string[]) => cells.map((c, i) => (i < 2 ? c.padEnd(w[i]) : c.padStart(w[i]))).join('  ');
  console.log(line(head));
  console.log(w.map((n) => '-'.repeat(n)).join('  '));
  for (const r of rows) console.log(line(r));
}

main().catch(async (e) => {
  if (isStopping()) return; // the signal handler is already cleaning up and exits
  console.error(`bench failed: ${(e as Error).stack ?? e}`);
  await stopAll();
  process.exit(1);
});
