// Notifications fan-out benchmark (issue 12): N WebSocket clients (default 1,000) subscribed to newHeads on ONE
// rpcgate replica in front of one anvil with a 1 s block time, against the same N clients subscribed directly to
// anvil's own WebSocket (same port as its HTTP), side by side in one run. Measured per side:
// - delivery latency: for every (client, block), the client's arrival time minus the arrival time of the same block
//   (by hash) at one reference subscriber connected directly to anvil for the whole run — "from the block's
//   appearance upstream to the client"; p50/p90/p99/max over all samples of the measured window;
// - completeness: notifications received vs N × blocks in the window (a missed or duplicated head shows here);
// - memory per idle socket: the server's RSS (/proc/<pid>/status VmRSS) after opening N sockets that have not
//   subscribed yet, minus its RSS before, / N; the same after the N subscriptions.
// The clients and the reference all live in this process (one clock, performance.now()); parsing N messages per
// block queues in this event loop the same way on both sides, so the ratio isolates what rpcgate adds.
// rpcgate runs in its own process (a small launcher written to a temp dir, `node --expose-gc`) so its RSS is its own;
// asked on stdin, it runs a full GC first and reports RSS and the JS heap in use, so the per-socket figure is
// what the sockets keep, not whatever garbage the heap held at that moment. anvil (Rust, no GC): RSS from /proc. Every process is started and
// ended by PID through bench/lib/procs.ts; the whole run is bounded (BENCH_WS_DEADLINE_S, default 240 s).
// Env: BENCH_WS_SOCKETS (1000), BENCH_WS_SECONDS (20, measured per side), BENCH_WS_POLL_MS (rpcgate's
// websocket.pollIntervalMs; 0 = its default, half the block time, at least 250 ms), BENCH_WS_DEADLINE_S (240),
// BENCH_WS_UPSTREAM (ws: rpcgate reaches anvil over its WebSocket, so heads are pushed — issue 23; http: polled, the
// issue-12 baseline).
import { mkdtempSync, mkdirSync, rmSync, writeFileSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, dirname } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import WebSocket from 'ws';
import { installCleanup, start, stop, stopAll, sleep, freePort, waitForOutput, type Managed } from './lib/procs.js';
import { anvilBinary, waitForRpc } from './lib/targets.js';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..');
const num = (v: string | undefined, d: number) => (v && Number.isFinite(Number(v)) ? Number(v) : d);
const SOCKETS = Math.max(1, Math.floor(num(process.env.BENCH_WS_SOCKETS, 1000)));
const SECONDS = num(process.env.BENCH_WS_SECONDS, 20);
const POLL_MS = Math.max(0, Math.floor(num(process.env.BENCH_WS_POLL_MS, 0)));
const DEADLINE_S = num(process.env.BENCH_WS_DEADLINE_S, 240);
const BLOCK_TIME = 1;
const UPSTREAM = process.env.BENCH_WS_UPSTREAM === 'http' ? 'http' : 'ws';
const KEY = 'benchWsFanoutKey0123456789';
/** Sockets opened at once (the handshakes of 1,000 at a time would only measure the accept queue). */
const OPEN_CONCURRENCY = 50;

interface Side {
  side: string;
  sockets: number;
  blocks: number;
  received: number;
  expected: number;
  p50ms: number;
  p90ms: number;
  p99ms: number;
  maxms: number;
  rssBeforeMB: number;
  rssIdleMB: number;
  rssSubscribedMB: number;
  kbPerIdleSocket: number;
  kbPerSubscribedSocket: number;
  /** rpcgate only: JS heap in use after a full GC, KB per socket. */
  heapKbPerIdleSocket?: number;
  heapKbPerSubscribedSocket?: number;
}

interface Mem {
  rssKb: number;
  heapKb?: number;
}

function rssKb(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  if (!m) throw new Error(`no VmRSS for ${pid}`);
  return Number(m[1]);
}
const pct = (sorted: number[], p: number) =>
  sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] : NaN;
const now = () => performance.now();

/** Arrival time of each block hash at the reference subscriber (direct to anvil, open the whole run). */
const reference = new Map<string, number>();

function openSocket(url: string): Promise<WebSocket> {
  return new Promise((res, rej) => {
    const s = new WebSocket(url, { perMessageDeflate: false });
    const t = setTimeout(() => (s.terminate(), rej(new Error(`open ${url}: timed out`))), 15_000);
    s.once('open', () => (clearTimeout(t), res(s)));
    s.once('error', (e) => (clearTimeout(t), rej(e)));
    s.once(
      'unexpected-response',
      (_q, r) => (clearTimeout(t), rej(new Error(`upgrade refused: HTTP ${r.statusCode}`))),
    );
  });
}

async function openMany(url: string, n: number): Promise<WebSocket[]> {
  const out: WebSocket[] = [];
  while (out.length < n)
    out.push(
      ...(await Promise.all(Array.from({ length: Math.min(OPEN_CONCURRENCY, n - out.length) }, () => openSocket(url)))),
    );
  return out;
}

/** Subscribes `s` to newHeads; resolves once the id is back. Later messages: (hash, arrival) to `onHead`. */
function subscribe(s: WebSocket, onHead: (hash: string, t: number) => void): Promise<void> {
  return new Promise((res, rej) => {
    let sub: string | undefined;
    const t = setTimeout(() => rej(new Error('eth_subscribe: no answer in 15 s')), 15_000);
    s.on('message', (d) => {
      const at = now();
      const m = JSON.parse(d.toString());
      if (m.id === 1) {
        clearTimeout(t);
        if (m.error) return rej(new Error(`eth_subscribe: ${JSON.stringify(m.error)}`));
        sub = m.result;
        return res();
      }
      if (m.method === 'eth_subscription' && m.params.subscription === sub && m.params.result?.hash)
        onHead(m.params.result.hash, at);
    });
    s.send(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_subscribe', params: ['newHeads'] }));
  });
}

async function runSide(side: string, url: string, mem: () => Promise<Mem>): Promise<Side> {
  await sleep(1000);
  const before = await mem();
  const rssBefore = before.rssKb;
  const sockets = await openMany(url, SOCKETS);
  await sleep(2000); // let the server settle (buffers allocated, timers armed)
  const idle = await mem();
  const rssIdle = idle.rssKb;
  const arrivals: Array<{ hash: string; t: number }> = [];
  let measuring = false;
  const onHead = (hash: string, t: number) => void (measuring && arrivals.push({ hash, t }));
  for (let i = 0; i < sockets.length; i += OPEN_CONCURRENCY)
    await Promise.all(sockets.slice(i, i + OPEN_CONCURRENCY).map((s) => subscribe(s, onHead)));
  await sleep(2000); // the first notifications after subscribing are not in the window
  const subscribed = await mem();
  const rssSubscribed = subscribed.rssKb;
  // The window: from just after one reference block to SECONDS later; a block counts if the reference saw it inside.
  const refBefore = new Set(reference.keys());
  measuring = true;
  const t0 = now();
  await sleep(SECONDS * 1000);
  const t1 = now();
  await sleep(2000); // let late deliveries of the window's last block arrive
  measuring = false;
  const windowBlocks = new Set(
    [...reference].filter(([h, t]) => !refBefore.has(h) && t >= t0 && t <= t1).map(([h]) => h),
  );
  const lat: number[] = [];
  let received = 0;
  for (const a of arrivals) {
    if (!windowBlocks.has(a.hash)) continue;
    received++;
    lat.push(a.t - reference.get(a.hash)!);
  }
  lat.sort((x, y) => x - y);
  for (const s of sockets) s.terminate();
  const mb = (kb: number) => Math.round(kb / 102.4) / 10;
  return {
    side,
    sockets: SOCKETS,
    blocks: windowBlocks.size,
    received,
    expected: windowBlocks.size * SOCKETS,
    p50ms: pct(lat, 50),
    p90ms: pct(lat, 90),
    p99ms: pct(lat, 99),
    maxms: lat.length ? lat[lat.length - 1] : NaN,
    rssBeforeMB: mb(rssBefore),
    rssIdleMB: mb(rssIdle),
    rssSubscribedMB: mb(rssSubscribed),
    kbPerIdleSocket: (rssIdle - rssBefore) / SOCKETS,
    kbPerSubscribedSocket: (rssSubscribed - rssBefore) / SOCKETS,
    ...(before.heapKb !== undefined
      ? {
          heapKbPerIdleSocket: (idle.heapKb! - before.heapKb) / SOCKETS,
          heapKbPerSubscribedSocket: (subscribed.heapKb! - before.heapKb) / SOCKETS,
        }
      : {}),
  };
}

async function main(): Promise<void> {
  installCleanup();
  const deadline = setTimeout(() => {
    process.stderr.write(`ws-fanout: not done after ${DEADLINE_S} s, stopping every process\n`);
    void stopAll().finally(() => process.exit(1));
  }, DEADLINE_S * 1000);
  deadline.unref();
  const dir = mkdtempSync(join(tmpdir(), 'rpcgate-ws-fanout-'));
  let anvil: Managed | undefined;
  let gate: Managed | undefined;
  let ref: WebSocket | undefined;
  try {
    const port = await freePort();
    anvil = start('anvil', anvilBinary(), [
      '--host',
      '127.0.0.1',
      '--port',
      String(port),
      '--chain-id',
      '31337',
      '--block-time',
      String(BLOCK_TIME),
      '--silent',
    ]);
    const anvilHttp = `http://127.0.0.1:${port}/`;
    await waitForRpc(anvilHttp, anvil);
    const anvilWs = `ws://127.0.0.1:${port}/`;
    ref = await openSocket(anvilWs);
    await subscribe(ref, (hash, t) => void (reference.has(hash) || reference.set(hash, t)));

    const config = {
      port: 0,
      host: '127.0.0.1',
      logLevel: 'silent',
      dataDir: dir,
      devKey: false,
      keys: [KEY],
      networks: {
        mainnet: { upstreams: [UPSTREAM === 'ws' ? anvilWs : anvilHttp], chainId: 31337, blockTime: BLOCK_TIME },
      },
      websocket: {
        maxPayloadBytes: 1_048_576,
        maxInFlight: 32,
        maxBufferedBytes: 4_194_304,
        pingIntervalMs: 30_000,
        maxConnectionsPerKey: SOCKETS + 10,
        maxSubscriptionsPerConnection: 100,
        pollIntervalMs: POLL_MS,
      },
    };
    const launcher = join(dir, 'gate.mts');
    writeFileSync(
      launcher,
      `import { startService } from ${JSON.stringify(pathToFileURL(join(root, 'src/gateway/server/index.ts')).href)};
const svc = await startService(JSON.parse(process.argv[2]));
process.stdout.write('RPCGATE_READY ' + svc.url + '\\n');
// "mem <n>" on stdin: full GC, then "MEM <n> <rss KB> <heapUsed KB>".
process.stdin.setEncoding('utf8').on('data', (d) => {
  for (const n of d.split('\\n').filter(Boolean)) {
    globalThis.gc(); globalThis.gc();
    const m = process.memoryUsage();
    process.stdout.write('MEM ' + n.split(' ')[1] + ' ' + Math.round(m.rss / 1024) + ' ' + Math.round(m.heapUsed / 1024) + '\\n');
  }
});
process.once('SIGTERM', () => void svc.stop().finally(() => process.exit(0)));
`,
    );
    gate = start('rpcgate', process.execPath, ['--expose-gc', '--import', 'tsx', launcher, JSON.stringify(config)], {
      cwd: root,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    await waitForOutput(gate, (o) => o.includes('RPCGATE_READY'), 60_000);
    const base = new URL(/RPCGATE_READY (\S+)/.exec(gate.output())![1]).origin.replace(/^http/, 'ws');
    let probes = 0;
    const g = gate;
    const gateMem = async (): Promise<Mem> => {
      const n = ++probes;
      g.child.stdin!.write(`mem ${n}\n`);
      const re = new RegExp(`MEM ${n} (\\d+) (\\d+)`);
      await waitForOutput(g, (o) => re.test(o), 15_000);
      const [, rss, heap] = re.exec(g.output())!;
      return { rssKb: Number(rss), heapKb: Number(heap) };
    };
    const a = anvil;
    const anvilMem = async (): Promise<Mem> => ({ rssKb: rssKb(a.pid) });

    console.log(
      `ws-fanout: ${SOCKETS} sockets per side, ${SECONDS} s measured, anvil block time ${BLOCK_TIME} s, rpcgate upstream ${UPSTREAM}, pollIntervalMs ${POLL_MS || 'default (half the block time, ≥ 250 ms)'}`,
    );
    const results: Side[] = [];
    results.push(await runSide('rpcgate (1 replica)', `${base}/mainnet/${KEY}`, gateMem));
    results.push(await runSide('anvil direct', anvilWs, anvilMem));

    const f = (v: number, d = 1) => (Number.isFinite(v) ? v.toFixed(d) : '-');
    console.log(
      '\nside                 | blocks | received/expected | p50 ms | p90 ms | p99 ms | max ms | RSS before MB | KB/idle socket | KB/subscribed socket',
    );
    for (const r of results)
      console.log(
        `${r.side.padEnd(20)} | ${String(r.blocks).padStart(6)} | ${`${r.received}/${r.expected}`.padStart(17)} | ${f(r.p50ms).padStart(6)} | ${f(r.p90ms).padStart(6)} | ${f(r.p99ms).padStart(6)} | ${f(r.maxms).padStart(6)} | ${f(r.rssBeforeMB).padStart(13)} | ${f(r.kbPerIdleSocket).padStart(14)} | ${f(r.kbPerSubscribedSocket).padStart(20)}`,
      );
    const [gr, ar] = results;
    if (gr.heapKbPerIdleSocket !== undefined)
      console.log(
        `rpcgate JS heap after GC: ${f(gr.heapKbPerIdleSocket)} KB per idle socket, ${f(gr.heapKbPerSubscribedSocket!)} KB per subscribed socket`,
      );
    // anvil-direct clients get the frame together with the reference, so its latency is this process's queueing
    // alone: the difference is what rpcgate adds; the ratio is printed too.
    console.log(`\nrpcgate − anvil direct: p50 +${f(gr.p50ms - ar.p50ms)} ms, p99 +${f(gr.p99ms - ar.p99ms)} ms`);
    console.log(
      `ratios rpcgate / anvil direct: p50 ${f(gr.p50ms / ar.p50ms, 2)}×, p99 ${f(gr.p99ms / ar.p99ms, 2)}×, RSS per idle socket ${f(gr.kbPerIdleSocket / ar.kbPerIdleSocket, 2)}×, per subscribed socket ${f(gr.kbPerSubscribedSocket / ar.kbPerSubscribedSocket, 2)}×`,
    );
    for (const r of results)
      if (r.received !== r.expected)
        console.log(`note: ${r.side} delivered ${r.received} of ${r.expected} notifications in the window`);
    mkdirSync(join(here, 'out'), { recursive: true });
    const file = join(here, 'out', `ws-fanout-${new Date().toISOString().replace(/[:.]/g, '-')}.json`);
    writeFileSync(
      file,
      JSON.stringify(
        { sockets: SOCKETS, seconds: SECONDS, blockTime: BLOCK_TIME, pollIntervalMs: POLL_MS, results },
        null,
        2,
      ),
    );
    console.log(`written ${file}`);
  } finally {
    ref?.terminate();
    if (gate) await stop(gate);
    if (anvil) await stop(anvil);
    rmSync(dir, { recursive: true, force: true });
    clearTimeout(deadline);
  }
}

main().catch(async (e: unknown) => {
  console.error(e);
  await stopAll();
  process.exit(1);
});
