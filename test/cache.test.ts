// The response cache (issue 13 item 1), with real processes and real HTTP:
//   1. NetworkCache over a real UpstreamPool in front of a stand-in node whose chain the test moves (mine, reorg,
//      finality on/off): hit/miss counting, final vs head answers across a new block, `null` for a future block or an
//      unknown transaction not sticking, receipts by their block's finality, reorg drops, byte-bound eviction;
//   2. rpcgate (startService) with the cache: per-network and per-method off switches, a hit consumes quota and is
//      metered (rpcgate_requests_total and rpcgate_cache_requests_total), hits answer the node's bytes;
//   3. two rpcgate instances sharing the cache in Redis (skipped with a message when Redis is unreachable, unless CI);
//      and a Redis of the test's own killed and restarted under a running rpcgate;
//   4. the embedded anvil: hits equal anvil's own answers; anvil_reorg replaces blocks → their cached answers go.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createServer as netServer, type AddressInfo } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { methods } from '../generated/node/methods.js';
import {
  NetworkCache,
  blockNumberOf,
  decide,
  isCacheHit,
  type NetworkCacheOptions,
} from '../src/gateway/cache/index.js';
import { defaults } from '../src/gateway/config/config.js';
import { meaningTable } from '../src/gateway/method-meaning.js';
import { Metrics } from '../src/gateway/metering/index.js';
import { loadOrCreateServerSecret, hashPassword } from '../src/gateway/secrets/index.js';
import { startService, type RunningService } from '../src/gateway/server/index.js';
import { createNetworkKey, createUser, openStore } from '../src/gateway/store/index.js';
import { UpstreamPool } from '../src/gateway/upstream/index.js';
import { RawResult } from '../packages/toolkit/src/rpc/engine.js';
import { startChainNode, type ChainNode } from './helpers/chain-node.js';
import { deleteRedisKeys, redisReachable, REDIS_URL, scratchPrefix, skipUnless } from './helpers/services.js';

const meanings = meaningTable(methods);
const hex = (n: number) => `0x${n.toString(16)}`;
const TX = `0x${'ab'.repeat(32)}`;
const dirs: string[] = [];
const tmp = () => {
  const d = mkdtempSync(join(tmpdir(), 'rpcgate-cache-'));
  dirs.push(d);
  return d;
};
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** The JSON text of an answer (a hit or miss hands out RawResult: the node's bytes). */
async function text(v: unknown): Promise<string> {
  const r = await v;
  return r instanceof RawResult ? r.json : JSON.stringify(r);
}

interface Rpc {
  result?: unknown;
  error?: { code: number; message: string; data?: Record<string, unknown> };
}
async function post(
  url: string,
  method: string,
  params: unknown[] = [],
): Promise<{ status: number; body: Rpc; raw: string }> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
    signal: AbortSignal.timeout(10_000),
  });
  const raw = await res.text();
  return { status: res.status, body: JSON.parse(raw) as Rpc, raw };
}
/** The `result` member's text as answered (to compare bytes with the node's). */
const resultText = (raw: string) => raw.slice(raw.indexOf('"result":') + 9, raw.lastIndexOf('}'));

describe('what an answer may be cached as (policy)', () => {
  const pos = { head: 100, finalized: 90 };
  const m = (name: string) => meanings.get(name)!;
  const H = `0x${'aa'.repeat(32)}`;
  it.each([
    ['eth_chainId', [], pos, 'final'],
    ['eth_blockNumber', [], pos, 'head'],
    ['web3_clientVersion', [], pos, 'head'], // the same for a block; an upgraded node shows within one
    ['eth_syncing', [], pos, 'none'],
    ['eth_blockNumber', [], { head: undefined, finalized: undefined }, 'none'],
    ['eth_getBlockByNumber', ['0x5a', false], pos, 'final'], // 90 = finalized
    ['eth_getBlockByNumber', ['0x5b', false], pos, 'block'],
    ['eth_getBlockByNumber', ['0x65', false], pos, 'none'], // above the head: does not exist yet
    ['eth_getBlockByNumber', ['earliest', false], pos, 'final'],
    ['eth_getBlockByNumber', ['safe', false], pos, 'head'],
    ['eth_getBalance', [`0x${'11'.repeat(20)}`], pos, 'head'], // absent block = latest
    ['eth_getBalance', [`0x${'11'.repeat(20)}`, 'pending'], pos, 'none'],
    ['eth_getBalance', [`0x${'11'.repeat(20)}`, H], pos, 'final'],
    ['eth_getBalance', [`0x${'11'.repeat(20)}`, { blockHash: H }], pos, 'final'],
    ['eth_getBalance', [`0x${'11'.repeat(20)}`, { blockHash: H, requireCanonical: true }], pos, 'none'],
    ['eth_getBalance', [`0x${'11'.repeat(20)}`, { blockNumber: '0x10' }], pos, 'final'],
    ['eth_getLogs', [{ fromBlock: '0x1', toBlock: '0x50' }], pos, 'final'],
    ['eth_getLogs', [{ fromBlock: '0x1', toBlock: '0x60' }], pos, 'block'],
    ['eth_getLogs', [{ fromBlock: '0x1' }], pos, 'head'], // toBlock absent = latest
    ['eth_getLogs', [{ blockHash: H }], pos, 'final'],
    ['eth_getTransactionReceipt', [H], pos, 'result'],
    ['eth_sendRawTransaction', ['0x00'], pos, 'none'],
  ] as const)('%s %j → %s', (name, params, p, kind) => {
    expect(decide(m(name), params as readonly unknown[], p).kind).toBe(kind);
  });
  it('a block height of a block in a receipt is read without parsing; pending transactions have none', () => {
    expect(blockNumberOf('{"blockHash":"0x1","blockNumber":"0x1f","logs":[]}')).toBe(31);
    expect(blockNumberOf('{"blockNumber":null,"hash":"0x1"}')).toBeUndefined();
  });
});

describe('NetworkCache over a real pool and a stand-in node', () => {
  let node: ChainNode;
  let pool: UpstreamPool;
  let cache: NetworkCache;
  const metrics = new Metrics();

  function make(o: Partial<NetworkCacheOptions> = {}): NetworkCache {
    pool = new UpstreamPool({ network: 'mainnet', urls: [node.url], config: defaults.upstream, methods: meanings });
    // A poll interval of an hour: the test drives the tracker with tick().
    cache = new NetworkCache({
      network: 'mainnet',
      upstream: pool,
      meanings,
      maxBytes: 1 << 20,
      finalityDepth: 16,
      pollMs: 3_600_000,
      idleMs: 3_600_000,
      metrics,
      ...o,
    });
    return cache;
  }

  beforeAll(async () => {
    node = await startChainNode({ head: 100, finalityDepth: 8 });
  });
  afterEach(async () => {
    cache?.stop();
    await pool?.close();
  });
  afterAll(async () => {
    await node.close();
    node.head = 100;
  });

  it('an immutable answer: one node call, then hits with the same bytes; counted per method in rpcgate_cache_requests_total', async () => {
    make();
    const before = node.count('eth_chainId');
    const miss = await cache.call('eth_chainId', []);
    const first = await text(miss);
    const again = await text(cache.call('eth_chainId', []));
    const third = cache.call('eth_chainId', []);
    expect(third).toBeInstanceOf(RawResult); // a hit is answered synchronously, the stored object itself
    // What metering tells hits by (usage cache_hits): the stored object's class, never the miss's answer.
    expect([isCacheHit(miss), isCacheHit(third)]).toEqual([false, true]);
    expect(first).toBe('"0x7a69"');
    expect(again).toBe(first);
    expect(node.count('eth_chainId') - before).toBe(1);
    expect(cache.stats).toMatchObject({ hits: 2, misses: 1 });
    const m = await metrics.metricsText();
    expect(m).toContain('rpcgate_cache_requests_total{network="mainnet",method="eth_chainId",result="hit"} 2');
    expect(m).toContain('rpcgate_cache_requests_total{network="mainnet",method="eth_chainId",result="miss"} 1');
  });

  it('finalized blocks stay across new heads; head answers and unfinalized ones follow the head', async () => {
    make();
    await cache.tracker.tick();
    expect({ head: cache.tracker.head, finalized: cache.tracker.finalized }).toEqual({
      head: node.head,
      finalized: node.head - 8,
    });
    const fin = hex(node.head - 10);
    const calls = () => node.count('eth_getBlockByNumber');
    const b0 = calls();
    const block = await text(cache.call('eth_getBlockByNumber', [fin, false]));
    expect(JSON.parse(block)).toEqual(node.blockJson(node.head - 10));
    await text(cache.call('eth_getBlockByNumber', [fin, false]));
    expect(calls() - b0).toBe(1);
    // head: eth_blockNumber and `latest` are hits until the head moves.
    const n0 = node.count('eth_blockNumber');
    expect(await text(cache.call('eth_blockNumber', []))).toBe(`"${hex(node.head)}"`);
    expect(await text(cache.call('eth_blockNumber', []))).toBe(`"${hex(node.head)}"`);
    expect(node.count('eth_blockNumber') - n0).toBe(1);
    const bal0 = node.count('eth_getBalance');
    await text(cache.call('eth_getBalance', [`0x${'11'.repeat(20)}`, 'latest']));
    await text(cache.call('eth_getBalance', [`0x${'11'.repeat(20)}`])); // absent block = latest: its own key, a head answer
    await text(cache.call('eth_getBalance', [`0x${'11'.repeat(20)}`, 'latest']));
    expect(node.count('eth_getBalance') - bal0).toBe(2);
    node.mine();
    await cache.tracker.tick();
    expect(await text(cache.call('eth_blockNumber', []))).toBe(`"${hex(node.head)}"`);
    expect(node.count('eth_blockNumber') - n0).toBe(2);
    // the finalized block is still a hit
    expect(await text(cache.call('eth_getBlockByNumber', [fin, false]))).toBe(block);
    expect(calls() - b0).toBe(1);
    // pending is never cached (a wallet's next nonce)
    const p0 = node.count('eth_getBalance');
    await text(cache.call('eth_getBalance', [`0x${'11'.repeat(20)}`, 'pending']));
    await text(cache.call('eth_getBalance', [`0x${'11'.repeat(20)}`, 'pending']));
    expect(node.count('eth_getBalance') - p0).toBe(2);
  });

  it('null for a future block and for an unknown transaction does not stick; the answer once it exists is cached', async () => {
    make();
    await cache.tracker.tick();
    const next = hex(node.head + 1);
    expect(await text(cache.call('eth_getBlockByNumber', [next, false]))).toBe('null');
    expect(await text(cache.call('eth_getBlockByHash', [`0x${'ee'.repeat(32)}`, false]))).toBe('null');
    expect(await text(cache.call('eth_getBlockByHash', [`0x${'ee'.repeat(32)}`, false]))).toBe('null');
    expect(await text(cache.call('eth_getTransactionReceipt', [TX]))).toBe('null');
    expect(await text(cache.call('eth_getTransactionReceipt', [TX]))).toBe('null');
    expect(cache.stats.hits).toBe(0);
    node.addTx(TX, node.head + 1);
    node.mine();
    await cache.tracker.tick();
    const block = await text(cache.call('eth_getBlockByNumber', [next, false]));
    expect(JSON.parse(block)).toEqual(node.blockJson(node.head));
    const receipt = await text(cache.call('eth_getTransactionReceipt', [TX]));
    expect(JSON.parse(receipt)).toMatchObject({ transactionHash: TX, blockNumber: next });
    // now both are cached (the receipt as an unfinalized answer: its block is the head)
    const r0 = node.count('eth_getTransactionReceipt');
    expect(await text(cache.call('eth_getTransactionReceipt', [TX]))).toBe(receipt);
    expect(node.count('eth_getTransactionReceipt')).toBe(r0);
  });

  it('a reorg drops the answers for the replaced heights and above; lower ones stay', async () => {
    make();
    await cache.tracker.tick();
    const h = node.head;
    const heights = [h - 4, h - 2, h - 1, h]; // all above the finalized block (head - 8)
    const before = new Map<number, string>();
    for (const n of heights) before.set(n, await text(cache.call('eth_getBlockByNumber', [hex(n), false])));
    const bal = await text(cache.call('eth_getBalance', [`0x${'22'.repeat(20)}`, hex(h - 1)]));
    const c0 = node.count('eth_getBlockByNumber');
    for (const n of heights) await text(cache.call('eth_getBlockByNumber', [hex(n), false]));
    expect(node.count('eth_getBlockByNumber')).toBe(c0); // all hits
    node.reorg(h - 2);
    node.mine(); // the new branch is one longer
    await cache.tracker.tick();
    expect(cache.stats.dropped).toBeGreaterThanOrEqual(4); // h-2, h-1, h and the balance at h-1
    for (const n of heights) {
      const now = await text(cache.call('eth_getBlockByNumber', [hex(n), false]));
      expect(JSON.parse(now)).toEqual(node.blockJson(n));
      if (n >= h - 2) expect(now).not.toBe(before.get(n));
      else expect(now).toBe(before.get(n));
    }
    const bal2 = await text(cache.call('eth_getBalance', [`0x${'22'.repeat(20)}`, hex(h - 1)]));
    expect(bal2).not.toBe(bal);
    // same-height reorg (the head replaced, no new block)
    const tip = await text(cache.call('eth_getBlockByNumber', [hex(node.head), false]));
    node.reorg(node.head);
    await cache.tracker.tick();
    expect(await text(cache.call('eth_getBlockByNumber', [hex(node.head), false]))).not.toBe(tip);
  });

  it('without the "finalized" tag, finality is the configured depth below the head', async () => {
    node.finalityDepth = null;
    try {
      make({ finalityDepth: 20 });
      await cache.tracker.tick();
      expect(cache.tracker.finalized).toBe(node.head - 20);
    } finally {
      node.finalityDepth = 8;
    }
  });

  it('a receipt of a transaction in a finalized block stays through a reorg above it', async () => {
    make();
    const tx = `0x${'cd'.repeat(32)}`;
    node.addTx(tx, node.head - 12);
    await cache.tracker.tick();
    const r = await text(cache.call('eth_getTransactionReceipt', [tx]));
    node.reorg(node.head - 3);
    node.mine();
    await cache.tracker.tick();
    const c0 = node.count('eth_getTransactionReceipt');
    expect(await text(cache.call('eth_getTransactionReceipt', [tx]))).toBe(r);
    expect(node.count('eth_getTransactionReceipt')).toBe(c0);
  });

  it('bounded by bytes: the least recently used answers leave, the bound holds', async () => {
    make({ maxBytes: 4000 });
    await cache.tracker.tick();
    const fin = node.head - 8;
    const size = (await text(cache.call('eth_getBlockByNumber', [hex(0), false]))).length;
    expect(size).toBeGreaterThan(200);
    for (let n = 1; n <= 40; n++) await cache.call('eth_getBlockByNumber', [hex(n), false]);
    expect(cache.bytes).toBeLessThanOrEqual(4000);
    expect(cache.bytes).toBeGreaterThan(4000 - 2 * (size + 200));
    const c0 = node.count('eth_getBlockByNumber');
    await cache.call('eth_getBlockByNumber', [hex(40), false]); // recent: a hit
    expect(node.count('eth_getBlockByNumber')).toBe(c0);
    await cache.call('eth_getBlockByNumber', [hex(0), false]); // evicted: a miss
    expect(node.count('eth_getBlockByNumber')).toBe(c0 + 1);
    expect(fin).toBeGreaterThan(40);
  });

  it('errors are never cached', async () => {
    make();
    await cache.tracker.tick();
    const c0 = node.count('eth_getBalance');
    const future = hex(node.head + 5);
    await expect(
      cache.call('eth_getBalance', [`0x${'33'.repeat(20)}`, future]) as Promise<unknown>,
    ).rejects.toMatchObject({ code: -32000 });
    // The pool may retry a retryable node error ("header not found"): count node requests per call, not calls.
    const perCall = node.count('eth_getBalance') - c0;
    expect(perCall).toBeGreaterThanOrEqual(1);
    await expect(
      cache.call('eth_getBalance', [`0x${'33'.repeat(20)}`, future]) as Promise<unknown>,
    ).rejects.toMatchObject({ code: -32000 });
    expect(node.count('eth_getBalance') - c0).toBe(2 * perCall);
  });

  it('the poll runs only with traffic: none while idle; after idleMs the next call forgets unfinalized answers', async () => {
    make({ pollMs: 50, idleMs: 400 });
    const tagPolls = () => node.count('eth_getBlockByNumber:latest');
    await text(cache.call('eth_getBlockByNumber', [hex(node.head - 1), false])); // head unknown yet: not cached
    await until(() => cache.tracker.head !== undefined);
    await text(cache.call('eth_getBlockByNumber', [hex(node.head - 1), false]));
    const c0 = node.count('eth_getBlockByNumber');
    await text(cache.call('eth_getBlockByNumber', [hex(node.head - 1), false])); // a hit
    expect(node.count('eth_getBlockByNumber')).toBe(c0);
    await new Promise((r) => setTimeout(r, 100));
    const p0 = tagPolls();
    await new Promise((r) => setTimeout(r, 500)); // no calls: no polls
    expect(tagPolls()).toBe(p0);
    // the next call finds the position older than idleMs: forgotten, the unfinalized answer dropped
    await text(cache.call('eth_getBlockByNumber', [hex(node.head - 1), false]));
    expect(node.count('eth_getBlockByNumber')).toBe(c0 + 1);
    expect(tagPolls()).toBe(p0 + 1);
  });

  it('a head answer older than two poll intervals is not served: the head may have moved without a poll', async () => {
    make({ pollMs: 100, idleMs: 60_000 });
    cache.call('eth_chainId', []);
    await until(() => cache.tracker.head !== undefined);
    await text(cache.call('eth_blockNumber', []));
    const n0 = node.count('eth_blockNumber');
    await text(cache.call('eth_blockNumber', []));
    expect(node.count('eth_blockNumber')).toBe(n0);
    node.mine();
    await new Promise((r) => setTimeout(r, 300)); // no traffic, so no poll saw the new block
    expect(await text(cache.call('eth_blockNumber', []))).toBe(`"${hex(node.head)}"`);
  });
});

async function until(pred: () => boolean, ms = 5000): Promise<void> {
  const end = Date.now() + ms;
  while (!pred()) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('rpcgate with the response cache', () => {
  let node: ChainNode;
  let svc: RunningService;
  let key: string;
  const KEY = `static_${randomBytes(8).toString('hex')}`;

  beforeAll(async () => {
    node = await startChainNode({ head: 200, finalityDepth: 8 });
    const dataDir = tmp();
    // An account's network key on mainnet with a daily quota of 5 (access point B).
    const store = await openStore({ dataDir });
    try {
      const secret = loadOrCreateServerSecret(dataDir);
      const user = await createUser(store.db, {
        email: `cache-${randomBytes(6).toString('hex')}@example.com`,
        passwordHash: await hashPassword('x'.repeat(16)),
      });
      key = (await createNetworkKey(store.db, secret, user.id, { name: 'cache', network: 'mainnet' })).key;
    } finally {
      await store.close();
    }
    svc = await startService({
      port: 0,
      dataDir,
      logLevel: 'silent',
      keys: [KEY],
      limits: { b: { dailyPerUser: 5 } },
      networks: {
        mainnet: { upstreams: [node.url], chainId: 31337, blockTime: 1 },
        testnet: { upstreams: [node.url], chainId: 31338, blockTime: 1 },
      },
      cache: {
        disabledMethods: ['eth_getBalance'],
        networks: { testnet: { enabled: false }, mainnet: { disabledMethods: ['eth_gasPrice'] } },
      },
    });
  }, 60_000);
  afterAll(async () => {
    await svc?.stop();
    await node?.close();
  });

  it("a hit consumes quota and is metered like any call; it answers the node's bytes", async () => {
    const url = `${svc.url}/mainnet/${key}`;
    const before = node.count('eth_chainId');
    const answers: string[] = [];
    for (let i = 0; i < 5; i++) {
      const r = await post(url, 'eth_chainId');
      expect(r.status).toBe(200);
      answers.push(resultText(r.raw));
    }
    expect(node.count('eth_chainId') - before).toBe(1);
    expect(new Set(answers)).toEqual(new Set(['"0x7a69"']));
    const refused = await post(url, 'eth_chainId');
    expect(refused.status).toBe(402);
    expect(refused.body.error?.code).toBe(-32005);
    const m = await svc.metrics.metricsText();
    expect(m).toContain('rpcgate_cache_requests_total{network="mainnet",method="eth_chainId",result="hit"} 4');
    expect(m).toContain('rpcgate_cache_requests_total{network="mainnet",method="eth_chainId",result="miss"} 1');
    expect(m).toMatch(/rpcgate_requests_total\{network="mainnet",method="eth_chainId",outcome="ok"\} 5\n/);
    expect(m).toMatch(/rpcgate_cache_bytes\{network="mainnet"\} [1-9]/);
  });

  it('switches: a method off everywhere, a method off on one network, the cache off on a network', async () => {
    const main = `${svc.url}/mainnet/${KEY}`;
    const test = `${svc.url}/testnet/${KEY}`;
    const count = async (url: string, method: string, params: unknown[]) => {
      const c0 = node.count(method);
      for (let i = 0; i < 3; i++) expect((await post(url, method, params)).body.error).toBeUndefined();
      return node.count(method) - c0;
    };
    const fin = hex(150);
    expect(await count(main, 'eth_getBalance', [`0x${'44'.repeat(20)}`, fin])).toBe(3); // global disabledMethods
    expect(await count(main, 'eth_getBlockByNumber', [fin, false])).toBe(1); // cached on mainnet
    expect(await count(test, 'eth_getBlockByNumber', [fin, false])).toBe(3); // cache off on testnet
    expect(await count(test, 'eth_chainId', [])).toBe(3);
    // eth_gasPrice off on mainnet only: wait for the head so that it would otherwise be cached
    await until(() => svc.caches.get('mainnet')!.tracker.head !== undefined);
    expect(await count(main, 'eth_gasPrice', [])).toBe(3);
    expect(svc.caches.has('testnet')).toBe(false);
    expect(svc.caches.get('mainnet')!.caches('eth_gasPrice')).toBe(false);
    expect(svc.caches.get('mainnet')!.caches('eth_blockNumber')).toBe(true);
  });
});

const noRedis = skipUnless(await redisReachable(), 'cache', 'Redis');

describe.skipIf(noRedis)('two rpcgate instances sharing the cache in Redis', () => {
  let node: ChainNode;
  const svcs: RunningService[] = [];
  const prefix = scratchPrefix();
  const KEY = `static_${randomBytes(8).toString('hex')}`;

  beforeAll(async () => {
    node = await startChainNode({ head: 300, finalityDepth: 8 });
    for (let i = 0; i < 2; i++) {
      svcs.push(
        await startService({
          port: 0,
          dataDir: tmp(),
          logLevel: 'silent',
          keys: [KEY],
          networks: { mainnet: { upstreams: [node.url], chainId: 31337, blockTime: 1 } },
          cache: { redis: { enabled: true, url: REDIS_URL, prefix, headTtlMs: 5000 }, pollIntervalMs: 3_600_000 },
        }),
      );
    }
  }, 60_000);
  afterAll(async () => {
    for (const s of svcs) await s.stop();
    await node?.close();
    await deleteRedisKeys(prefix);
  });

  it('an answer cached by one instance is a hit on the other (final and head answers); the node is asked once', async () => {
    const [a, b] = svcs;
    for (const s of svcs) await post(`${s.url}/mainnet/${KEY}`, 'eth_blockNumber'); // starts each tracker
    await until(() => svcs.every((s) => s.caches.get('mainnet')!.tracker.head !== undefined));
    const fin = hex(280);
    const c0 = node.count('eth_getBlockByNumber');
    const ra = await post(`${a.url}/mainnet/${KEY}`, 'eth_getBlockByNumber', [fin, false]);
    // the write to Redis is not awaited by the call: wait until it is there
    const { Redis } = await import('ioredis');
    const r = new Redis(REDIS_URL);
    try {
      const k = `${prefix}:mainnet:f:eth_getBlockByNumber${JSON.stringify([fin, false])}`;
      await untilAsync(async () => (await r.exists(k)) === 1);
      expect(await r.ttl(k)).toBeGreaterThan(86000);
    } finally {
      r.disconnect();
    }
    const rb = await post(`${b.url}/mainnet/${KEY}`, 'eth_getBlockByNumber', [fin, false]);
    expect(node.count('eth_getBlockByNumber') - c0).toBe(1);
    expect(resultText(rb.raw)).toBe(resultText(ra.raw));
    expect(b.caches.get('mainnet')!.stats.hits).toBeGreaterThanOrEqual(1);
    // a head answer (both trackers at the same head): eth_gasPrice from a, hit on b
    const g0 = node.count('eth_gasPrice');
    const ga = await post(`${a.url}/mainnet/${KEY}`, 'eth_gasPrice');
    await new Promise((res) => setTimeout(res, 100));
    const gb = await post(`${b.url}/mainnet/${KEY}`, 'eth_gasPrice');
    expect(node.count('eth_gasPrice') - g0).toBe(1);
    expect(gb.body.result).toBe(ga.body.result);
  });

  it('an unfinalized block is shared under its hash: a hit on the other instance; after a reorg there, the new block', async () => {
    const [a, b] = svcs;
    const trackers = svcs.map((s) => s.caches.get('mainnet')!.tracker);
    node.mine();
    await Promise.all(trackers.map((t) => t.tick()));
    const h = node.head; // above the finalized block (head - 8), and a head both trackers saw
    expect(trackers.map((t) => t.hashAt(h))).toEqual([node.blockJson(h).hash, node.blockJson(h).hash]);
    const c0 = node.count('eth_getBlockByNumber');
    const ra = await post(`${a.url}/mainnet/${KEY}`, 'eth_getBlockByNumber', [hex(h), false]);
    const { Redis } = await import('ioredis');
    const r = new Redis(REDIS_URL);
    try {
      const k = `${prefix}:mainnet:b:${h}:${node.blockJson(h).hash}:eth_getBlockByNumber${JSON.stringify([hex(h), false])}`;
      await untilAsync(async () => (await r.exists(k)) === 1);
    } finally {
      r.disconnect();
    }
    const rb = await post(`${b.url}/mainnet/${KEY}`, 'eth_getBlockByNumber', [hex(h), false]);
    expect(node.count('eth_getBlockByNumber') - c0).toBe(1);
    expect(resultText(rb.raw)).toBe(resultText(ra.raw));
    // The block at h is replaced: each instance's tracker sees the new hash; the old key is never read again.
    node.reorg(h);
    node.mine();
    await Promise.all(trackers.map((t) => t.tick()));
    const c1 = node.count('eth_getBlockByNumber');
    const hashOf = (x: { body: { result?: unknown } }) => (x.body.result as { hash: string }).hash;
    const after = await post(`${b.url}/mainnet/${KEY}`, 'eth_getBlockByNumber', [hex(h), false]);
    expect(hashOf(after)).toBe(node.blockJson(h).hash);
    expect(hashOf(after)).not.toBe(hashOf(ra));
    expect(node.count('eth_getBlockByNumber') - c1).toBe(1);
    const againA = await post(`${a.url}/mainnet/${KEY}`, 'eth_getBlockByNumber', [hex(h), false]);
    expect(hashOf(againA)).toBe(node.blockJson(h).hash);
  });
});

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = netServer();
    s.on('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const p = (s.address() as AddressInfo).port;
      s.close(() => resolve(p));
    });
  });
}

async function untilAsync(pred: () => Promise<boolean>, ms = 5000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await pred())) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('the embedded anvil behind the cache', () => {
  let svc: RunningService;
  let url: string;
  let anvil: string;
  const KEY = `static_${randomBytes(8).toString('hex')}`;
  const direct = async (method: string, params: unknown[]) => {
    const res = await fetch(anvil, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
    });
    return resultText(await res.text());
  };

  beforeAll(async () => {
    svc = await startService({
      port: 0,
      dataDir: tmp(),
      logLevel: 'silent',
      keys: [KEY],
      // No automatic mining (a long block time) and no activity: the test mines.
      networks: { mainnet: { upstreams: [], chainId: 31337, blockTime: 3600, activityIntervalMs: 0 } },
      cache: { pollIntervalMs: 3_600_000 },
    });
    url = `${svc.url}/mainnet/${KEY}`;
    anvil = svc.networks.mainnet.upstreams[0];
    await direct('anvil_mine', ['0x50']);
  }, 120_000);
  afterAll(async () => {
    await svc?.stop();
  });

  it('hits answer exactly what anvil answers (finalized block, receipt, chain id); anvil\'s "finalized" is head - 64', async () => {
    const cache = svc.caches.get('mainnet')!;
    await cache.tracker.tick();
    const head = Number(JSON.parse(await direct('eth_blockNumber', [])));
    expect(cache.tracker.head).toBe(head);
    expect(cache.tracker.finalized).toBe(head - 64);
    const tx = svc.seeded.mainnet.txHash;
    const calls: [string, unknown[]][] = [
      ['eth_chainId', []],
      ['eth_getBlockByNumber', [hex(2), true]],
      ['eth_getBlockByNumber', ['earliest', false]],
      ['eth_getTransactionReceipt', [tx]],
      ['eth_getTransactionByHash', [tx]],
      ['eth_getLogs', [{ fromBlock: svc.seeded.mainnet.fromBlock, toBlock: svc.seeded.mainnet.toBlock }]],
    ];
    const h0 = cache.stats.hits;
    for (const [m, p] of calls) {
      const miss = resultText((await post(url, m, p)).raw);
      const hit = resultText((await post(url, m, p)).raw);
      expect(hit).toBe(miss);
      expect(hit).toBe(await direct(m, p));
    }
    expect(cache.stats.hits - h0).toBe(calls.length);
  });

  it("anvil_reorg: answers cached for the replaced blocks are dropped; the new answers are anvil's", async () => {
    const cache = svc.caches.get('mainnet')!;
    await cache.tracker.tick();
    const head = cache.tracker.head!;
    const target = hex(head - 1);
    const before = resultText((await post(url, 'eth_getBlockByNumber', [target, false])).raw);
    const keep = resultText((await post(url, 'eth_getBlockByNumber', [hex(head - 5), false])).raw);
    const h0 = cache.stats.hits;
    await post(url, 'eth_getBlockByNumber', [target, false]);
    expect(cache.stats.hits - h0).toBe(1);
    await direct('anvil_reorg', [3, []]);
    await direct('anvil_mine', ['0x1']);
    await cache.tracker.tick();
    expect(cache.stats.dropped).toBeGreaterThanOrEqual(1);
    const after = resultText((await post(url, 'eth_getBlockByNumber', [target, false])).raw);
    expect(after).not.toBe(before);
    expect(after).toBe(await direct('eth_getBlockByNumber', [target, false]));
    const h1 = cache.stats.hits;
    expect(resultText((await post(url, 'eth_getBlockByNumber', [hex(head - 5), false])).raw)).toBe(keep);
    expect(cache.stats.hits - h1).toBe(1); // below the reorg: still a hit
  });
});

// A Redis of the test's own (redis-server on a free port, no persistence), stopped and restarted by PID.
const haveRedisServer = spawnSync('sh', ['-c', 'command -v redis-server'], { stdio: 'ignore' }).status === 0;
if (!haveRedisServer && !process.env.CI)
  console.warn('[cache] redis-server not installed: the Redis fault case is SKIPPED (required when CI is set)');

describe.skipIf(!haveRedisServer && !process.env.CI)('the cache when its Redis fails', () => {
  let node: ChainNode;
  let svc: RunningService;
  let redis: ChildProcess | undefined;
  let port: number;
  const KEY = `static_${randomBytes(8).toString('hex')}`;
  const startRedis = async () => {
    redis = spawn('redis-server', ['--port', String(port), '--save', '', '--appendonly', 'no', '--bind', '127.0.0.1'], {
      stdio: 'ignore',
    });
    await untilAsync(() => redisReachable(`redis://127.0.0.1:${port}`));
  };
  const stopRedis = async () => {
    const r = redis;
    redis = undefined;
    if (r?.pid === undefined || r.exitCode !== null) return;
    const gone = new Promise((res) => r.once('exit', res));
    process.kill(r.pid, 'SIGKILL');
    await gone;
  };

  beforeAll(async () => {
    port = await freePort();
    await startRedis();
    node = await startChainNode({ head: 400, finalityDepth: 8 });
    svc = await startService({
      port: 0,
      dataDir: tmp(),
      logLevel: 'silent',
      keys: [KEY],
      networks: { mainnet: { upstreams: [node.url], chainId: 31337, blockTime: 1 } },
      cache: {
        redis: { enabled: true, url: `redis://127.0.0.1:${port}`, prefix: scratchPrefix() },
        pollIntervalMs: 3_600_000,
      },
    });
  }, 60_000);
  afterAll(async () => {
    await svc?.stop();
    await node?.close();
    await stopRedis();
  });

  it('Redis killed: calls still answer (memory hits, misses to the node), fast; Redis back: it is used again', async () => {
    const url = `${svc.url}/mainnet/${KEY}`;
    const cache = svc.caches.get('mainnet')!;
    await post(url, 'eth_chainId'); // starts the head poll: block numbers are judged by it
    await until(() => cache.tracker.finalized !== undefined);
    const first = await post(url, 'eth_getBlockByNumber', [hex(100), false]);
    expect(first.body.result).toMatchObject({ number: hex(100) });
    await stopRedis();
    const c0 = node.count('eth_getBlockByNumber');
    const t0 = performance.now();
    const hit = await post(url, 'eth_getBlockByNumber', [hex(100), false]); // memory tier
    expect(hit.raw).toBe(first.raw);
    const miss = await post(url, 'eth_getBlockByNumber', [hex(101), false]); // Redis down: a miss, to the node
    expect(miss.body.result).toMatchObject({ number: hex(101) });
    expect(performance.now() - t0).toBeLessThan(3000);
    expect(node.count('eth_getBlockByNumber') - c0).toBe(1);
    await startRedis();
    const { Redis } = await import('ioredis');
    const r = new Redis({ port });
    try {
      // the client reconnects by itself; then a new final answer is written there
      await untilAsync(async () => {
        await post(url, 'eth_getBlockByNumber', [hex(102 + cache.stats.misses), false]);
        return (await r.dbsize()) > 0;
      }, 10_000);
    } finally {
      r.disconnect();
    }
  });
});
