// Cost of the request log and of tracing per call (issue 25 items 1 and 4) — `npx tsx bench/telemetry.ts`.
// Three rpcgate processes, identical but for what is measured, each on the authenticated path (a real network key:
// key index, admission, limiter, metering — the request log records only calls of apps and keys):
//   (base)  request log off, tracing off
//   (log)   request log on (the default), tracing off
//   (trace) request log off, tracing on: OTEL_EXPORTER_OTLP_ENDPOINT → an OTLP/HTTP receiver in this process that
//           parses and counts the spans (so the exporter does its full work: batching, JSON, HTTP)
// in front of one stand-in node (bench/lib/standin-node.ts, answering at once), cache off (every call goes upstream,
// so each has its upstream span), eth_getBalance over rotating addresses (no dedupe) from CONNECTIONS closed-loop
// callers. Cores: the system under test alone on CPU 0; this client, the receiver and the node on CPU 1. The systems
// take turns, BENCH_ROUNDS times; per system the median of rpcgate's CPU µs per call (/proc utime+stime of the process
// and its children over the measured window / calls answered). Prints them and the ratios log/base (issue 25: ≤ 1.10)
// and trace/base — of the medians, and the median of each round's ratio — plus spans received per call. Env: BENCH_SECONDS (5), BENCH_WARMUP (2), BENCH_ROUNDS (3),
// BENCH_CONNECTIONS (32), BENCH_BASE_ROOT (another checkout: its base system runs too, e.g. from before tracing),
// BENCH_PROFILE (a directory for each rpcgate's CPU profile).
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Pool } from 'undici';
import { median } from './lib/latency.js';
import {
  cpuBusyMicros,
  cpuMicros,
  installCleanup,
  pin,
  start,
  stopAll,
  waitForOutput,
  type Managed,
} from './lib/procs.js';
import { waitForRpc } from './lib/targets.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const num = (v: string | undefined, d: number) => (v && Number.isFinite(Number(v)) ? Number(v) : d);
const SECONDS = num(process.env.BENCH_SECONDS, 5);
const WARMUP = num(process.env.BENCH_WARMUP, 2);
const ROUNDS = Math.max(1, Math.floor(num(process.env.BENCH_ROUNDS, 3)));
const CONNECTIONS = num(process.env.BENCH_CONNECTIONS, 32);
/** A directory: each rpcgate writes V8 CPU profiles to `<dir>/<system>/` on stop (one per thread: the largest is the
 * main thread's; open in Chrome DevTools). */
const PROFILE = process.env.BENCH_PROFILE;
const SUT_CPU = '0';
const LOAD_CPU = '1';
const ADDRESSES = Array.from({ length: 256 }, (_, i) => `0x${(i + 1).toString(16).padStart(40, '0')}`);

/** An OTLP/HTTP (JSON) receiver: counts the spans it is sent. */
async function startReceiver(): Promise<{ url: string; spans(): number; close(): void }> {
  let spans = 0;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
        resourceSpans?: { scopeSpans?: { spans?: unknown[] }[] }[];
      };
      for (const rs of body.resourceSpans ?? []) for (const ss of rs.scopeSpans ?? []) spans += ss.spans?.length ?? 0;
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    spans: () => spans,
    close: () => server.close(),
  };
}

/** Closed-loop callers for `seconds`: calls answered with a result, and errors. */
async function load(url: string, seconds: number): Promise<{ calls: number; errors: number }> {
  const u = new URL(url);
  const pool = new Pool(u.origin, { connections: CONNECTIONS, pipelining: 1 });
  const end = Date.now() + seconds * 1000;
  let calls = 0;
  let errors = 0;
  let i = 0;
  const caller = async () => {
    while (Date.now() < end) {
      const body = `{"jsonrpc":"2.0","id":1,"method":"eth_getBalance","params":["${ADDRESSES[i++ % ADDRESSES.length]}","latest"]}`;
      try {
        const r = await pool.request({
          path: u.pathname,
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body,
        });
        const text = await r.body.text();
        if (r.statusCode === 200 && text.includes('"result"')) calls++;
        else errors++;
      } catch {
        errors++;
      }
    }
  };
  await Promise.all(Array.from({ length: CONNECTIONS }, caller));
  await pool.close();
  return { calls, errors };
}

interface System {
  id: string;
  proc: Managed;
  url: string;
  cpuPerCall: number[];
  rate: number[];
  others: number[];
  errors: number;
}

async function main(): Promise<void> {
  installCleanup();
  pin(process.pid, LOAD_CPU);
  const tmp = mkdtempSync(join(tmpdir(), 'rpcgate-bench-telemetry-'));
  process.on('exit', () => rmSync(tmp, { recursive: true, force: true }));
  const receiver = await startReceiver();
  const node = start(
    'stand-in node',
    process.execPath,
    ['--import', 'tsx', join(root, 'bench', 'lib', 'standin-node.ts'), '0', '2000'],
    { cpus: LOAD_CPU, cwd: root },
  );
  await waitForOutput(node, (o) => /STANDIN_READY /.test(o), 30000);
  const nodeUrl = /STANDIN_READY (\S+)/.exec(node.output())![1];

  const gateway = async (id: string, requestLog: boolean, otlp: string | undefined, from = root): Promise<System> => {
    const input = {
      port: 0,
      host: '127.0.0.1',
      dataDir: join(tmp, `data-${id}`),
      devKey: false,
      logLevel: 'warn',
      networks: { mainnet: { upstreams: [nodeUrl] } },
      cache: { enabled: false },
      upstream: { connections: CONNECTIONS },
      requestLog: { enabled: requestLog },
      limits: { b: { dailyPerUser: 1e12 } },
    };
    const env: NodeJS.ProcessEnv = { ...process.env, NODE_ENV: 'production' };
    for (const k of Object.keys(env)) if (k.startsWith('OTEL_')) delete env[k];
    if (otlp !== undefined)
      Object.assign(env, { OTEL_EXPORTER_OTLP_ENDPOINT: otlp, OTEL_SERVICE_NAME: 'rpcgate-bench' });
    const proc = start(
      `rpcgate ${id}`,
      process.execPath,
      [
        ...(PROFILE ? ['--cpu-prof', `--cpu-prof-dir=${join(PROFILE, id)}`] : []),
        '--import',
        'tsx',
        join(from, 'bench', 'rpcgate-server.ts'),
        JSON.stringify(input),
        '{"networkKey":true}',
      ],
      { cpus: SUT_CPU, cwd: from, env },
    );
    await waitForOutput(proc, (o) => /RPCGATE_READY \S+\n/.test(o), 60000);
    const url = /RPCGATE_READY (\S+)\n/.exec(proc.output())![1];
    await waitForRpc(url, proc, 10000);
    return { id, proc, url, cpuPerCall: [], rate: [], others: [], errors: 0 };
  };

  console.log(
    `rpcgate telemetry bench: ${CONNECTIONS} closed-loop callers, eth_getBalance over ${ADDRESSES.length} addresses, cache off, ${ROUNDS} × ${SECONDS}s per system after ${WARMUP}s warm-ups`,
  );
  console.log(`  cores: rpcgate alone on CPU ${SUT_CPU}; client, OTLP receiver and stand-in node on CPU ${LOAD_CPU}`);
  const systems = [
    await gateway('base', false, undefined),
    await gateway('log', true, undefined),
    await gateway('trace', false, receiver.url),
  ];
  // A/B: the base system from another checkout too (e.g. from before tracing existed: what tracing off costs).
  const before = process.env.BENCH_BASE_ROOT;
  if (before) systems.push(await gateway('base@before', false, undefined, before));
  const trace = systems[2];
  let traceCalls = 0;
  const spans0 = receiver.spans();
  try {
    for (let round = 1; round <= ROUNDS; round++) {
      for (const s of systems) {
        const w = await load(s.url, WARMUP);
        if (s === trace) traceCalls += w.calls;
        const c0 = cpuMicros(s.proc.pid);
        const b0 = cpuBusyMicros(Number(SUT_CPU));
        const t0 = performance.now();
        const r = await load(s.url, SECONDS);
        const wall = (performance.now() - t0) * 1000;
        const cpu = cpuMicros(s.proc.pid) - c0;
        const others = Math.max(0, cpuBusyMicros(Number(SUT_CPU)) - b0 - cpu) / wall;
        s.cpuPerCall.push(cpu / r.calls);
        s.rate.push(r.calls / SECONDS);
        s.others.push(others);
        s.errors += r.errors;
        if (s === trace) traceCalls += r.calls;
        console.log(
          `  round ${round} (${s.id}) ${r.calls} calls, ${(r.calls / SECONDS).toFixed(0)}/s, ${(cpu / r.calls).toFixed(1)} µs CPU/call, errors ${r.errors}, others on CPU ${SUT_CPU} ${(others * 100).toFixed(1)} %`,
        );
      }
    }
  } finally {
    await stopAll();
  }
  // Every call of the trace system (warm-ups too) against every span it exported (the stop flushed the last ones).
  const spans = receiver.spans() - spans0;
  receiver.close();
  const [base, log] = systems;
  const m = (s: System) => median(s.cpuPerCall);
  console.log('\n  system   CPU µs/call (median)   req/s (median)   errors');
  for (const s of systems)
    console.log(
      `  ${s.id.padEnd(8)} ${m(s).toFixed(1).padStart(20)} ${median(s.rate).toFixed(0).padStart(16)} ${String(s.errors).padStart(8)}`,
    );
  // Per round too: a round's systems run back to back, so the machine's drift between rounds (±35 % seen on a shared
  // host) cancels in their ratio; the median of those ratios is the steadier figure.
  const paired = (s: System) => median(s.cpuPerCall.map((c, i) => c / base.cpuPerCall[i]));
  const rounds = (s: System) => s.cpuPerCall.map((c, i) => (c / base.cpuPerCall[i]).toFixed(3)).join(' ');
  console.log(
    `\n  request log on / off, CPU per call: ${(m(log) / m(base)).toFixed(3)}× of medians, ${paired(log).toFixed(3)}× median per round (${rounds(log)}) (issue 25: ≤ 1.10)`,
  );
  console.log(
    `  tracing on / off, CPU per call:     ${(m(trace) / m(base)).toFixed(3)}× of medians, ${paired(trace).toFixed(3)}× median per round`,
  );
  if (systems[3] !== undefined)
    console.log(`  base / base@before (${before}), CPU per call: ${(m(base) / m(systems[3])).toFixed(3)}×`);
  console.log(`  spans received: ${spans} for ${traceCalls} calls (${(spans / traceCalls).toFixed(2)} per call)`);
  const maxOthers = Math.max(...systems.flatMap((s) => s.others));
  if (maxOthers > 0.1)
    console.log(
      `  warning: other processes used up to ${(maxOthers * 100).toFixed(0)} % of CPU ${SUT_CPU}: noisy figures`,
    );
}

main().catch(async (e: unknown) => {
  console.error(e);
  await stopAll();
  process.exit(1);
});
