// Notification lag benchmark (issue 23): one anvil mining a block every BENCH_LAG_BLOCK_MS (150) — each block holds
// one transaction whose contract creation emits a log — one rpcgate process in front of it with anvil's WebSocket as
// its upstream, and in the same run one subscriber on rpcgate and one on anvil itself, each subscribed to newHeads
// and to logs. A notification's lag is its arrival on rpcgate's subscriber minus the arrival of the same block (by
// hash) or log (by block hash and log index) on anvil's subscriber; p50/p95/p99/max, and the count of items that
// arrived on one side and not the other (a gap or duplicate shows there). Both subscribers live in this process (one
// clock). Processes are started and ended by PID (bench/lib/procs.ts); bounded by BENCH_LAG_DEADLINE_S (120).
// Under load: BENCH_LAG_SOCKETS (1,000) more sockets on rpcgate, each subscribed to newHeads and logs and reading what
// comes (idle clients), held by a child process (this file run with --background) so that their messages do not queue
// in the measuring process's event loop; the measured subscriber is one more socket, and the report says how many
// notifications the background sockets got (each should get every block and log: sockets × blocks × 2).
// Env: BENCH_LAG_BLOCK_MS (150), BENCH_LAG_BLOCKS (200), BENCH_LAG_SOCKETS (1000), BENCH_LAG_CPU_PROF (a directory:
// rpcgate runs with node --cpu-prof and writes its profile there when it stops).
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import WebSocket from 'ws';
import { freePort, installCleanup, sleep, start, stop, stopAll, waitForOutput, type Managed } from './lib/procs.js';
import { anvilBinary, rpc, waitForRpc } from './lib/targets.js';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..');
const num = (v: string | undefined, d: number) => (v && Number.isFinite(Number(v)) ? Number(v) : d);
const BLOCK_MS = Math.max(20, num(process.env.BENCH_LAG_BLOCK_MS, 150));
const BLOCKS = Math.max(10, Math.floor(num(process.env.BENCH_LAG_BLOCKS, 200)));
const DEADLINE_S = num(process.env.BENCH_LAG_DEADLINE_S, 240);
const SOCKETS = Math.max(0, Math.floor(num(process.env.BENCH_LAG_SOCKETS, 1000)));
const CPU_PROF = process.env.BENCH_LAG_CPU_PROF;
const KEY = 'benchWsLagKey0123456789abc';
/** Background sockets opened at once. */
const OPEN_CONCURRENCY = 50;
/** anvil's first dev account (unlocked). */
const FROM = '0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266';
/** Creation code that emits one LOG0 (PUSH1 0, PUSH1 0, LOG0) and deploys nothing. */
const EMIT_LOG = '0x60006000a0';

const pct = (sorted: number[], p: number) =>
  sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] : Number.NaN;

interface Arrivals {
  heads: Map<string, number>;
  logs: Map<string, number>;
  duplicates: number;
}

function openSocket(url: string): Promise<WebSocket> {
  return new Promise((res, rej) => {
    const s = new WebSocket(url, { perMessageDeflate: false });
    s.once('open', () => res(s));
    s.once('error', rej);
    s.once('unexpected-response', (_q, r) => rej(new Error(`upgrade refused: HTTP ${r.statusCode}`)));
  });
}

/** Subscribes to newHeads (id 1) and logs (id 2) on one socket; records each item's first arrival. */
async function subscriber(url: string): Promise<{ socket: WebSocket; arrivals: Arrivals }> {
  const socket = await openSocket(url);
  const arrivals: Arrivals = { heads: new Map(), logs: new Map(), duplicates: 0 };
  const subs = new Map<string, 'heads' | 'logs'>();
  let answered = 0;
  await new Promise<void>((res, rej) => {
    socket.on('message', (d) => {
      const at = performance.now();
      const m = JSON.parse(d.toString());
      if (m.id === 1 || m.id === 2) {
        if (m.error) return rej(new Error(`eth_subscribe: ${JSON.stringify(m.error)}`));
        subs.set(m.result, m.id === 1 ? 'heads' : 'logs');
        if (++answered === 2) res();
        return;
      }
      if (m.method !== 'eth_subscription') return;
      const kind = subs.get(m.params.subscription);
      const r = m.params.result;
      const id = kind === 'heads' ? r.hash : `${r.blockHash}:${r.logIndex}:${r.removed === true}`;
      const seen = kind === 'heads' ? arrivals.heads : arrivals.logs;
      if (seen.has(id)) arrivals.duplicates++;
      else seen.set(id, at);
    });
    socket.send(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_subscribe', params: ['newHeads'] }));
    socket.send(JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'eth_subscribe', params: ['logs', {}] }));
  });
  return { socket, arrivals };
}

function lag(gate: Map<string, number>, node: Map<string, number>) {
  const d: number[] = [];
  let missing = 0;
  for (const [id, t] of node) {
    const g = gate.get(id);
    if (g === undefined) missing++;
    else d.push(g - t);
  }
  const extra = [...gate.keys()].filter((id) => !node.has(id)).length;
  d.sort((a, b) => a - b);
  const r = (x: number) => Math.round(x * 100) / 100;
  return {
    samples: d.length,
    missing,
    extra,
    p50ms: r(pct(d, 50)),
    p95ms: r(pct(d, 95)),
    p99ms: r(pct(d, 99)),
    maxms: r(d.at(-1) ?? Number.NaN),
  };
}

/** The background child: `n` sockets on `url`, each subscribed to newHeads and logs, reading (not parsing) what
 *  comes; prints BACKGROUND_READY once all are subscribed, and BACKGROUND_COUNT <notifications> when ended. */
async function background(url: string, n: number): Promise<void> {
  let count = 0;
  const sockets: WebSocket[] = [];
  for (let i = 0; i < n; i += OPEN_CONCURRENCY)
    await Promise.all(
      Array.from({ length: Math.min(OPEN_CONCURRENCY, n - i) }, async () => {
        const s = await openSocket(url);
        sockets.push(s);
        await new Promise<void>((res, rej) => {
          let answered = 0;
          s.on('message', (d: Buffer) => {
            // Answers carry "id"; notifications do not (counted without parsing).
            if (answered < 2 && d.includes('"id"')) {
              if (d.includes('"error"')) rej(new Error(`eth_subscribe: ${d.toString()}`));
              else if (++answered === 2) res();
              return;
            }
            count++;
          });
          s.send('{"jsonrpc":"2.0","id":1,"method":"eth_subscribe","params":["newHeads"]}');
          s.send('{"jsonrpc":"2.0","id":2,"method":"eth_subscribe","params":["logs",{}]}');
        });
      }),
    );
  process.stdout.write(`BACKGROUND_READY ${sockets.length}\n`);
  const closed = () => sockets.filter((s) => s.readyState !== WebSocket.OPEN).length;
  process.once('SIGTERM', () => {
    process.stdout.write(`BACKGROUND_COUNT ${count} closed ${closed()}\n`);
    for (const s of sockets) s.terminate();
    process.exit(0);
  });
}

interface Lag {
  samples: number;
  missing: number;
  extra: number;
  p50ms: number;
  p95ms: number;
  p99ms: number;
  maxms: number;
}

interface PhaseResult {
  system: string;
  heads: Lag;
  logs: Lag;
  duplicates: { system: number; node: number };
  background?: { sockets: number; notifications: number; expected: number; closed: number };
}

/** One system's turn: SOCKETS background sockets on `url`, one measured subscriber there and one on the node, BLOCKS
 *  blocks mined; the lags of the measured subscriber against the node's. */
async function phase(system: string, url: string, anvilHttp: string, anvilWs: string): Promise<PhaseResult> {
  let bg: Managed | undefined;
  const sockets: WebSocket[] = [];
  try {
    if (SOCKETS > 0) {
      bg = start(
        `background (${system})`,
        process.execPath,
        ['--import', 'tsx', fileURLToPath(import.meta.url), '--background', url, String(SOCKETS)],
        { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] },
      );
      await waitForOutput(bg, (o) => o.includes('BACKGROUND_READY'), 120_000);
    }
    const node = await subscriber(anvilWs);
    const via = await subscriber(url);
    sockets.push(node.socket, via.socket);
    await sleep(500);
    for (let i = 0; i < BLOCKS; i++) {
      const t = performance.now();
      await rpc(anvilHttp, 'eth_sendTransaction', [{ from: FROM, data: EMIT_LOG, gas: '0x10000' }]);
      await rpc(anvilHttp, 'evm_mine', []);
      const left = BLOCK_MS - (performance.now() - t);
      if (left > 0) await sleep(left);
    }
    await sleep(2000); // the last notifications
    const result: PhaseResult = {
      system,
      heads: lag(via.arrivals.heads, node.arrivals.heads),
      logs: lag(via.arrivals.logs, node.arrivals.logs),
      duplicates: { system: via.arrivals.duplicates, node: node.arrivals.duplicates },
    };
    if (bg !== undefined) {
      await stop(bg);
      const m = /BACKGROUND_COUNT (\d+) closed (\d+)/.exec(bg.output());
      result.background = {
        sockets: SOCKETS,
        notifications: m ? Number(m[1]) : Number.NaN,
        // Every background socket gets what the measured one got (the same heads and logs).
        expected: SOCKETS * (via.arrivals.heads.size + via.arrivals.logs.size),
        closed: m ? Number(m[2]) : Number.NaN,
      };
    }
    return result;
  } finally {
    for (const s of sockets) s.terminate();
    if (bg) await stop(bg);
  }
}

async function main(): Promise<void> {
  installCleanup();
  const deadline = setTimeout(async () => {
    console.error(`ws-lag: over ${DEADLINE_S} s, stopping`);
    await stopAll();
    process.exit(1);
  }, DEADLINE_S * 1000);
  deadline.unref();
  const dir = mkdtempSync(join(tmpdir(), 'rpcgate-ws-lag-'));
  let anvil: Managed | undefined;
  let gate: Managed | undefined;
  let relay: Managed | undefined;
  try {
    const port = await freePort();
    // No interval mining: this process mines (one log-emitting transaction, then evm_mine) every BLOCK_MS.
    anvil = start('anvil', anvilBinary(), [
      '--host',
      '127.0.0.1',
      '--port',
      String(port),
      '--chain-id',
      '31337',
      '--no-mining',
      '--silent',
    ]);
    const anvilHttp = `http://127.0.0.1:${port}/`;
    const anvilWs = `ws://127.0.0.1:${port}/`;
    await waitForRpc(anvilHttp, anvil);
    console.log(
      `ws-lag: ${BLOCKS} blocks per system, one every ${BLOCK_MS} ms, each with one log; rpcgate upstream ws; ${SOCKETS} background sockets per system (newHeads + logs); systems in turn: rpcgate, then the bare relay (bench/lib/ws-relay.ts)`,
    );
    const config = {
      port: 0,
      host: '127.0.0.1',
      logLevel: 'silent',
      dataDir: dir,
      devKey: false,
      keys: [KEY],
      networks: { mainnet: { upstreams: [anvilWs], chainId: 31337 } },
      websocket: { maxConnectionsPerKey: SOCKETS + 10 },
    };
    const launcher = join(dir, 'gate.mts');
    writeFileSync(
      launcher,
      `import { startService } from ${JSON.stringify(pathToFileURL(join(root, 'src/gateway/server/index.ts')).href)};
const svc = await startService(JSON.parse(process.argv[2]));
process.stdout.write('RPCGATE_READY ' + svc.url + '\\n');
process.once('SIGTERM', () => void svc.stop().finally(() => process.exit(0)));
`,
    );
    const prof = CPU_PROF ? ['--cpu-prof', '--cpu-prof-dir', CPU_PROF] : [];
    gate = start('rpcgate', process.execPath, [...prof, '--import', 'tsx', launcher, JSON.stringify(config)], {
      cwd: root,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    await waitForOutput(gate, (o) => o.includes('RPCGATE_READY'), 60_000);
    const gateWs = `${new URL(/RPCGATE_READY (\S+)/.exec(gate.output())![1]).origin.replace(/^http/, 'ws')}/mainnet/${KEY}`;
    const results = [await phase('rpcgate', gateWs, anvilHttp, anvilWs)];
    await stop(gate);
    gate = undefined;

    relay = start('relay', process.execPath, ['--import', 'tsx', join(here, 'lib', 'ws-relay.ts'), anvilWs], {
      cwd: root,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    await waitForOutput(relay, (o) => o.includes('RELAY_READY'), 60_000);
    const relayWs = /RELAY_READY (\S+)/.exec(relay.output())![1];
    results.push(await phase('relay', relayWs, anvilHttp, anvilWs));
    await stop(relay);
    relay = undefined;

    console.log('\nsystem  | kind     | samples | missing | extra | p50 ms | p95 ms | p99 ms | max ms');
    for (const r of results)
      for (const [k, v] of [
        ['newHeads', r.heads],
        ['logs', r.logs],
      ] as const)
        console.log(
          `${r.system.padEnd(7)} | ${k.padEnd(8)} | ${String(v.samples).padStart(7)} | ${String(v.missing).padStart(7)} | ${String(v.extra).padStart(5)} | ${String(v.p50ms).padStart(6)} | ${String(v.p95ms).padStart(6)} | ${String(v.p99ms).padStart(6)} | ${String(v.maxms).padStart(6)}`,
        );
    for (const r of results) {
      console.log(`${r.system}: duplicates ${r.duplicates.system} (node ${r.duplicates.node})`);
      const b = r.background;
      if (b !== undefined)
        console.log(
          `${r.system}: ${b.sockets} background sockets got ${b.notifications} notifications (${b.expected} expected), ${b.closed} closed`,
        );
    }
    const [gateR, relayR] = results;
    const ratio = (a: number, b: number) => (b > 0 ? `${(a / b).toFixed(2)}×` : 'n/a');
    for (const k of ['heads', 'logs'] as const)
      console.log(
        `rpcgate / relay, ${k === 'heads' ? 'newHeads' : 'logs'}: p50 ${ratio(gateR[k].p50ms, relayR[k].p50ms)}, p99 ${ratio(gateR[k].p99ms, relayR[k].p99ms)}`,
      );
    console.log(
      '(lag = arrival on the system − arrival of the same item on the node’s own subscriber, same process; the relay is the floor: one ws.send per subscription, nothing else)',
    );
    mkdirSync(join(here, 'out'), { recursive: true });
    const file = join(here, 'out', `ws-lag-${new Date().toISOString().replace(/[:.]/g, '-')}.json`);
    writeFileSync(file, JSON.stringify({ blockMs: BLOCK_MS, blocks: BLOCKS, sockets: SOCKETS, results }, null, 2));
    console.log(`written ${file}`);
  } finally {
    if (relay) await stop(relay);
    if (gate) await stop(gate);
    if (anvil) await stop(anvil);
    rmSync(dir, { recursive: true, force: true });
    clearTimeout(deadline);
  }
}

(process.argv[2] === '--background' ? background(process.argv[3], Number(process.argv[4])) : main()).catch(
  async (e: unknown) => {
    console.error(e);
    await stopAll();
    process.exit(1);
  },
);
