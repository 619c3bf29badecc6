// Realistic-mix benchmark (`npx tsx bench/mix.ts`): a replayed trace of methods and block heights against a stand-in
// node that answers every HTTP request after 20 ms (bench/lib/standin-node.ts; its chain moves one block per 2 s),
// called (1) directly, (2) through rpcgate with the cache off, (3) through rpcgate with the cache on (default config).
// Printed: p50/p99 of each; the gateway's overhead over the direct call (goal: p50 ≤ 0.3 ms, p99 ≤ 2 ms) — for (2) all
// calls, for (3) the calls that went to the node (latency ≥ 15 ms; hits answer in well under that); the cache hit rate
// (client side, by that split, and as node calls per client call).
//
// The trace. Method shares approximate what node providers show of their traffic (Alchemy's and Infura's published
// "most used methods" charts, QuickNode's method-level pricing pages: eth_call far ahead, then block number/blocks,
// receipts, logs, balances); they are NOT a published table, only a plausible shape — edit MIX to try another:
//   eth_call 30 %, eth_blockNumber 14 %, eth_getBlockByNumber 12 %, eth_getTransactionReceipt 11 %, eth_getLogs 9 %,
//   eth_getBalance 8 %, eth_chainId 6 %, eth_getTransactionByHash 4 %, eth_gasPrice 3 %, eth_getTransactionCount 2 %,
//   eth_getCode 1 %.
// Heights: most calls at or near the head — `latest` (or no block) for most state reads, the last 10 blocks for block
// reads, receipts of transactions in the last 5 blocks; 5–20 % of each method reads old, finalized history.
// Popularity: contracts and accounts drawn Zipf-like from small sets (a few tokens and wallets are most of the calls).
// Core budget: rpcgate alone on CPU 0; this client and the stand-in node on CPU 1. Env: BENCH_SECONDS per system and
// round (default 4), BENCH_ROUNDS (3: the systems take turns), BENCH_WARMUP (2), BENCH_CONNECTIONS (32), BENCH_GATEWAY
// (JSON: top-level config blocks for both gateways, for experiments).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Pool } from 'undici';
import { installCleanup, pin, start, stop, stopAll, waitForOutput, type Managed } from './lib/procs.js';
import { waitForRpc } from './lib/targets.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const num = (v: string | undefined, d: number) => (v && Number.isFinite(Number(v)) ? Number(v) : d);
const SECONDS = num(process.env.BENCH_SECONDS, 4);
const ROUNDS = Math.max(1, Math.floor(num(process.env.BENCH_ROUNDS, 3)));
const WARMUP = num(process.env.BENCH_WARMUP, 2);
const CONNECTIONS = num(process.env.BENCH_CONNECTIONS, 32);
const LATENCY_MS = 20;
const BLOCK_MS = 2000;
const HIT_BELOW_MS = LATENCY_MS * 0.75;
const SUT_CPU = '0';
const LOAD_CPU = '1';
const KEY = 'benchMixKey0123456789';
const TRACE_LEN = 20_000;

const MIX: [string, number][] = [
  ['eth_call', 30],
  ['eth_blockNumber', 14],
  ['eth_getBlockByNumber', 12],
  ['eth_getTransactionReceipt', 11],
  ['eth_getLogs', 9],
  ['eth_getBalance', 8],
  ['eth_chainId', 6],
  ['eth_getTransactionByHash', 4],
  ['eth_gasPrice', 3],
  ['eth_getTransactionCount', 2],
  ['eth_getCode', 1],
];

/** Deterministic PRNG (mulberry32): the same trace every run. */
function rng(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const rand = rng(13);
const zipf = (n: number) => Math.min(n - 1, Math.floor(n * rand() ** 2.5)); // skewed to the low indexes
const addr = (i: number, tag: string) => `0x${(tag + i.toString(16)).padStart(40, '0')}`;
const CONTRACTS = 40;
const WALLETS = 400;

/** A trace item: params resolved against the head at send time (a block offset below the head, or a fixed old block). */
type Item = { method: string; params: (head: number) => unknown[] };
const rel = (head: number, back: number) => `0x${(head - back).toString(16)}`;
const txHash = (block: number, i: number) =>
  `0x${block.toString(16).padStart(16, '0')}${i.toString(16).padStart(48, '0')}`;

function item(method: string): Item {
  const old = 1000 + Math.floor(rand() * 100_000); // blocks back: finalized history
  const r = rand();
  switch (method) {
    case 'eth_call': {
      const to = addr(zipf(CONTRACTS), 'c');
      const data = `0x70a08231${addr(zipf(WALLETS), 'a').slice(2).padStart(64, '0')}`;
      const where =
        r < 0.8
          ? () => 'latest'
          : r < 0.95
            ? (h: number) => rel(h, 1 + Math.floor(rand() * 10))
            : (h: number) => rel(h, old);
      return { method, params: (h) => [{ to, data }, where(h)] };
    }
    case 'eth_getBlockByNumber': {
      const back = 1 + Math.floor(rand() * 10);
      return { method, params: (h) => [r < 0.5 ? 'latest' : r < 0.8 ? rel(h, back) : rel(h, old), false] };
    }
    case 'eth_getTransactionReceipt':
    case 'eth_getTransactionByHash': {
      const back = Math.floor(rand() * 5);
      const i = Math.floor(rand() * 4);
      // recent: the transactions of a block near the head; old: one far below
      return { method, params: (h) => [r < 0.8 ? txHash(h - back, i) : txHash(h - old, i)] };
    }
    case 'eth_getLogs': {
      const a = addr(zipf(CONTRACTS), 'c');
      return {
        method,
        params: (h) => [
          r < 0.7
            ? { address: a, fromBlock: rel(h, 5), toBlock: 'latest' }
            : { address: a, fromBlock: rel(h, old + 100), toBlock: rel(h, old) },
        ],
      };
    }
    case 'eth_getBalance':
    case 'eth_getCode': {
      const a = addr(zipf(WALLETS), 'a');
      return { method, params: (h) => [a, r < 0.9 ? 'latest' : rel(h, old)] };
    }
    case 'eth_getTransactionCount': {
      const a = addr(zipf(WALLETS), 'a');
      return { method, params: () => [a, r < 0.5 ? 'pending' : 'latest'] };
    }
    default:
      return { method, params: () => [] };
  }
}

function trace(): Item[] {
  const total = MIX.reduce((s, [, w]) => s + w, 0);
  const out: Item[] = [];
  for (let k = 0; k < TRACE_LEN; k++) {
    let x = rand() * total;
    const m = MIX.find(([, w]) => (x -= w) < 0)?.[0] ?? 'eth_call';
    out.push(item(m));
  }
  return out;
}

interface Run {
  lat: number[];
  /** The method of each latency sample (same index). */
  methods: string[];
  errors: number;
  calls: number;
}

/** Closed-loop replay: CONNECTIONS callers, each sending the next trace item when its last answer is in. */
async function replay(url: string, items: Item[], seconds: number, headAt: () => number): Promise<Run> {
  const u = new URL(url);
  const pool = new Pool(u.origin, { connections: CONNECTIONS, pipelining: 1 });
  const lat: number[] = [];
  const methods: string[] = [];
  let errors = 0;
  let next = 0;
  const end = performance.now() + seconds * 1000;
  const worker = async () => {
    while (performance.now() < end) {
      const it = items[next++ % items.length];
      const body = JSON.stringify({ jsonrpc: '2.0', id: next, method: it.method, params: it.params(headAt()) });
      const t0 = performance.now();
      const res = await pool.request({
        path: u.pathname,
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body,
      });
      const text = await res.body.text();
      lat.push(performance.now() - t0);
      methods.push(it.method);
      if (res.statusCode !== 200 || !text.includes('"result"')) errors++;
    }
  };
  await Promise.all(Array.from({ length: CONNECTIONS }, worker));
  await pool.close();
  return { lat, methods, errors, calls: lat.length };
}

const pct = (xs: number[], p: number) => {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
};

/** Sums of the gateway's own counters: calls (rpcgate_requests_total) and cache hits/misses. */
async function gatewayCounters(url: string): Promise<{ calls: number; hits: number; misses: number }> {
  const text = await (await fetch(new URL('/metrics', url))).text();
  const sum = (re: RegExp) => [...text.matchAll(re)].reduce((s, m) => s + Number(m[1]), 0);
  return {
    calls: sum(/^rpcgate_requests_total\{[^}]*\} (\S+)$/gm),
    hits: sum(/^rpcgate_cache_requests_total\{[^}]*result="hit"[^}]*\} (\S+)$/gm),
    misses: sum(/^rpcgate_cache_requests_total\{[^}]*result="miss"[^}]*\} (\S+)$/gm),
  };
}

function nodeStats(m: Managed): Promise<{ calls: number; requests: number }> {
  return new Promise((resolve) => {
    let buf = '';
    const on = (d: Buffer) => {
      buf += d.toString();
      const hit = /STANDIN_STATS (.*)\n/.exec(buf);
      if (hit) {
        m.child.stdout?.off('data', on);
        resolve(JSON.parse(hit[1]));
      }
    };
    m.child.stdout?.on('data', on);
    m.child.kill('SIGUSR2');
  });
}

async function main(): Promise<void> {
  installCleanup();
  pin(process.pid, LOAD_CPU);
  const tmp = mkdtempSync(join(tmpdir(), 'rpcgate-bench-mix-'));
  process.on('exit', () => rmSync(tmp, { recursive: true, force: true }));
  const node = start(
    'stand-in node',
    process.execPath,
    ['--import', 'tsx', join(root, 'bench', 'lib', 'standin-node.ts'), String(LATENCY_MS), String(BLOCK_MS)],
    { cpus: LOAD_CPU, cwd: root },
  );
  await waitForOutput(node, (o) => /STANDIN_READY /.test(o), 30000);
  const [, nodeUrl, t0s, head0s] = /STANDIN_READY (\S+) (\d+) (\d+)/.exec(node.output())!;
  const headAt = () => Number(head0s) + Math.floor((Date.now() - Number(t0s)) / BLOCK_MS);
  const items = trace();
  console.log(
    `rpcgate mix bench: ${CONNECTIONS} closed-loop callers, ${ROUNDS} × ${SECONDS}s measured per system after ${WARMUP}s warm-ups; stand-in node ${LATENCY_MS} ms/request, a block per ${BLOCK_MS / 1000}s`,
  );
  console.log(`  trace: ${TRACE_LEN} calls — ${MIX.map(([m, w]) => `${m} ${w}%`).join(', ')}`);
  console.log(`  cores: rpcgate alone on CPU ${SUT_CPU}; client and stand-in node on CPU ${LOAD_CPU}`);

  const gateway = async (id: string, cache: boolean): Promise<{ url: string; proc: Managed }> => {
    const input = {
      port: 0,
      host: '127.0.0.1',
      dataDir: join(tmp, `data-${id}`),
      keys: [KEY],
      logLevel: 'warn',
      networks: { mainnet: { upstreams: [nodeUrl], blockTime: BLOCK_MS / 1000 } },
      cache: { enabled: cache },
      // As many upstream connections as the direct run's client has: with fewer (default 16) calls wait for a free
      // connection to a 20 ms node, which would measure the pool's size, not the gateway.
      upstream: { connections: CONNECTIONS },
      // Experiments: BENCH_GATEWAY='{"upstream":{...}}' replaces top-level blocks of this config.
      ...(process.env.BENCH_GATEWAY ? (JSON.parse(process.env.BENCH_GATEWAY) as object) : {}),
    };
    const proc = start(
      `rpcgate ${id}`,
      process.execPath,
      ['--import', 'tsx', join(root, 'bench', 'rpcgate-server.ts'), JSON.stringify(input)],
      { cpus: SUT_CPU, cwd: root, env: { ...process.env, NODE_ENV: 'production' } },
    );
    await waitForOutput(proc, (o) => /RPCGATE_READY \S+\n/.test(o), 60000);
    const url = /RPCGATE_READY (\S+)\n/.exec(proc.output())![1];
    await waitForRpc(url, proc, 10000);
    return { url, proc };
  };

  const results: Record<string, Run & { nodeCalls: number; hits?: number; gatewayCalls?: number }> = {};
  const measure = async (id: string, url: string, gateway: boolean) => {
    await replay(url, items, WARMUP, headAt);
    const s0 = await nodeStats(node);
    const g0 = gateway ? await gatewayCounters(url) : undefined;
    const r = await replay(url, items, SECONDS, headAt);
    const g1 = gateway ? await gatewayCounters(url) : undefined;
    const s1 = await nodeStats(node);
    const prev = results[id];
    const add = (a: number | undefined, b: number | undefined) => (a === undefined || b === undefined ? b : a + b);
    results[id] =
      prev === undefined
        ? {
            ...r,
            nodeCalls: s1.calls - s0.calls,
            hits: g1 && g0 ? g1.hits - g0.hits : undefined,
            gatewayCalls: g1 && g0 ? g1.calls - g0.calls : undefined,
          }
        : {
            lat: prev.lat.concat(r.lat),
            methods: prev.methods.concat(r.methods),
            errors: prev.errors + r.errors,
            calls: prev.calls + r.calls,
            nodeCalls: prev.nodeCalls + s1.calls - s0.calls,
            hits: add(prev.hits, g1 && g0 ? g1.hits - g0.hits : undefined),
            gatewayCalls: add(prev.gatewayCalls, g1 && g0 ? g1.calls - g0.calls : undefined),
          };
    console.log(
      `  (${id}) ${r.calls} calls, ${(r.calls / SECONDS).toFixed(0)}/s, p50 ${pct(r.lat, 50).toFixed(2)} ms, p99 ${pct(r.lat, 99).toFixed(2)} ms, errors ${r.errors}, node calls ${s1.calls - s0.calls}`,
    );
  };

  // Both gateways up at once (an idle one costs nothing); the three systems measured in turn, ROUNDS times, so that a
  // shared machine's changing load falls on all three alike. Figures below pool the rounds.
  const off = await gateway('off', false);
  const on = await gateway('on', true);
  try {
    for (let round = 1; round <= ROUNDS; round++) {
      if (ROUNDS > 1) console.log(` round ${round}/${ROUNDS}`);
      await measure('direct', nodeUrl, false);
      await measure('rpcgate cache off', off.url, true);
      await measure('rpcgate cache on', on.url, true);
    }
  } finally {
    await stop(off.proc);
    await stop(on.proc);
  }

  const d = results.direct;
  const offR = results['rpcgate cache off'];
  const onR = results['rpcgate cache on'];
  const misses = onR.lat.filter((x) => x >= HIT_BELOW_MS);
  const f = (x: number) => `${x >= 0 ? '+' : ''}${x.toFixed(2)} ms`;
  const verdict = (x: number, goal: number) => (x <= goal ? 'met' : 'NOT met');
  console.log('\ngateway overhead over calling the node directly:');
  const o50 = pct(offR.lat, 50) - pct(d.lat, 50);
  const o99 = pct(offR.lat, 99) - pct(d.lat, 99);
  console.log(
    `  cache off, all calls:        p50 ${f(o50)} (goal ≤ 0.3: ${verdict(o50, 0.3)})   p99 ${f(o99)} (goal ≤ 2: ${verdict(o99, 2)})`,
  );
  const m50 = pct(misses, 50) - pct(d.lat, 50);
  const m99 = pct(misses, 99) - pct(d.lat, 99);
  console.log(
    `  cache on, calls to the node: p50 ${f(m50)} (goal ≤ 0.3: ${verdict(m50, 0.3)})   p99 ${f(m99)} (goal ≤ 2: ${verdict(m99, 2)})`,
  );
  console.log(
    `  cache on, all calls:         p50 ${pct(onR.lat, 50).toFixed(2)} ms, p99 ${pct(onR.lat, 99).toFixed(2)} ms (direct: ${pct(d.lat, 50).toFixed(2)} / ${pct(d.lat, 99).toFixed(2)} ms)`,
  );
  // Where the overhead is: p50 / p99 per method of each system (the tail of one method shows here first).
  const byMethod = (r: Run, m: string) => r.lat.filter((_, i) => r.methods[i] === m);
  console.log('  per method, p50 / p99 ms:         direct           cache off        cache on');
  for (const [m] of MIX) {
    const cell = (r: Run) => {
      const xs = byMethod(r, m);
      return `${pct(xs, 50).toFixed(2).padStart(6)} / ${pct(xs, 99).toFixed(2).padStart(6)}`;
    };
    console.log(`    ${m.padEnd(28)} ${cell(d)}  ${cell(offR)}  ${cell(onR)}`);
  }
  console.log(
    `cache hit rate: ${(((onR.hits ?? 0) / (onR.gatewayCalls || 1)) * 100).toFixed(1)} % of calls (rpcgate's counters: ${onR.hits} hits of ${onR.gatewayCalls} calls); ${((1 - misses.length / onR.calls) * 100).toFixed(1)} % answered in < ${HIT_BELOW_MS} ms`,
  );
  console.log(
    `node calls per client call: ${(onR.nodeCalls / onR.calls).toFixed(3)} with the cache, ${(offR.nodeCalls / offR.calls).toFixed(3)} without (the pool's dedupe of identical concurrent calls; both include the cache's head poll)`,
  );
  await stopAll();
}

main().catch(async (e: unknown) => {
  console.error(e);
  await stopAll();
  process.exit(1);
});
