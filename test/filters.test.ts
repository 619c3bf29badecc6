// Filters over HTTP (issue 12, item 1), with real clients and real processes: two rpcgate services sharing
// PostgreSQL and Redis in front of one embedded anvil (A starts it, B forwards to it), plus a third service whose
// first upstream is a proxy the test cuts (failover) and which keeps filters in process. Activity comes from token
// transfers sent to the anvil by its unlocked dev accounts.
import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Contract, JsonRpcProvider, type Log } from 'ethers';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startService, type RunningService } from '../src/gateway/server/index.js';
import { createApp, createNetworkKey, createUser } from '../src/gateway/store/index.js';
import {
  deleteRedisKeys,
  pgReachable,
  redisReachable,
  REDIS_URL,
  scratchDatabase,
  scratchPrefix,
  skipUnless,
} from './helpers/services.js';

const skip = skipUnless((await pgReachable()) && (await redisReachable()), 'filters', 'PostgreSQL or Redis');

const TRANSFER = '0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef';
const KEYS = {
  alice: `alice_${randomBytes(8).toString('hex')}`,
  bob: `bob_${randomBytes(8).toString('hex')}`,
  carol: `carol_${randomBytes(8).toString('hex')}`,
};
const IDLE_MS = 2500;
const CAP = 6;

interface Rpc {
  result?: unknown;
  error?: { code: number; message: string; data?: Record<string, unknown> };
}
async function rpc(url: string, method: string, params: unknown[] = []): Promise<Rpc> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
    signal: AbortSignal.timeout(10_000),
  });
  return (await res.json()) as Rpc;
}
async function ok<T>(url: string, method: string, params: unknown[] = []): Promise<T> {
  const r = await rpc(url, method, params);
  if (r.error) throw new Error(`${method}: ${JSON.stringify(r.error)}`);
  return r.result as T;
}
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** Polls `fn` until it returns something, at most `ms`. */
async function until<T>(fn: () => Promise<T | undefined>, ms = 8000, what = 'condition'): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(100);
  }
}
const word = (hex: string) => hex.replace(/^0x/, '').toLowerCase().padStart(64, '0');
interface Log0 {
  transactionHash: string;
  blockHash: string;
  blockNumber: string;
  data: string;
  removed?: boolean;
}

describe.skipIf(skip)('filters over HTTP: two replicas on PostgreSQL + Redis, one anvil', () => {
  const db = scratchDatabase();
  const prefix = scratchPrefix();
  const dirs: string[] = [];
  let a: RunningService;
  let b: RunningService;
  let anvil: string;
  let token: string;
  let accounts: string[];
  let redis: Redis;
  let amount = 1000n;
  const url = (s: RunningService, who: keyof typeof KEYS, shape: 'A' | 'B' = 'A') =>
    shape === 'A' ? `${s.url}/mainnet/v2/${KEYS[who]}` : `${s.url}/mainnet/${KEYS[who]}`;

  /** A token transfer from dev account 0 with a value of its own; resolves with its receipt once mined. */
  async function transfer(): Promise<{ hash: string; value: bigint; blockNumber: string; blockHash: string }> {
    const value = ++amount;
    const hash = await ok<string>(anvil, 'eth_sendTransaction', [
      { from: accounts[0], to: token, data: `0xa9059cbb${word(accounts[1])}${word(value.toString(16))}` },
    ]);
    const receipt = await until(
      async () =>
        (await ok<{ blockNumber: string; blockHash: string } | null>(anvil, 'eth_getTransactionReceipt', [hash])) ??
        undefined,
      10_000,
      'receipt',
    );
    return { hash, value, blockNumber: receipt.blockNumber, blockHash: receipt.blockHash };
  }

  beforeAll(async () => {
    await db.create();
    const common = {
      port: 0,
      logLevel: 'silent' as const,
      devKey: false,
      databaseUrl: db.url,
      redisUrl: REDIS_URL,
      redisPrefix: prefix,
      secret: randomBytes(32).toString('hex'),
      keys: Object.entries(KEYS).map(([name, key]) => ({ key, name })),
      filters: { idleTimeoutMs: IDLE_MS, maxPerKey: CAP },
    };
    const dir = () => {
      const d = mkdtempSync(join(tmpdir(), 'rpcgate-filters-'));
      dirs.push(d);
      return d;
    };
    // The embedded chain's own activity off: these tests count exactly the transfers they send.
    a = await startService({
      ...common,
      dataDir: dir(),
      networks: { mainnet: { upstreams: [], chainId: 31337, blockTime: 1, activityIntervalMs: 0 } },
    });
    anvil = a.networks.mainnet.upstreams[0];
    b = await startService({
      ...common,
      dataDir: dir(),
      networks: { mainnet: { upstreams: [anvil], chainId: 31337, blockTime: 1 } },
    });
    token = a.seeded.mainnet.token.address;
    accounts = a.seeded.mainnet.accounts;
    redis = new Redis(REDIS_URL);
  }, 120_000);

  afterAll(async () => {
    await b?.stop();
    await a?.stop();
    redis?.disconnect();
    await deleteRedisKeys(prefix);
    await db.drop();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  }, 60_000);

  it('ethers v6 JsonRpcProvider: provider.on(filter) and contract.on("Transfer") see new transfers through a gateway filter, with no error', async () => {
    const rejections: unknown[] = [];
    const onRejection = (e: unknown) => rejections.push(e);
    process.on('unhandledRejection', onRejection);
    // ethers logs a failed filter poll with console.log("@TODO", error) instead of raising: catch that too.
    const logged: unknown[][] = [];
    const log = console.log;
    console.log = (...args: unknown[]) => void logged.push(args);
    const provider = new JsonRpcProvider(url(a, 'alice'), 31337, { staticNetwork: true, pollingInterval: 250 });
    const providerB = new JsonRpcProvider(url(b, 'alice', 'B'), 31337, { staticNetwork: true, pollingInterval: 250 });
    try {
      const seenRaw = new Map<string, Log>();
      await provider.on({ address: token, topics: [TRANSFER] }, (l: Log) => void seenRaw.set(l.transactionHash, l));
      const seenContract = new Map<bigint, string>();
      const contract = new Contract(
        token,
        ['event Transfer(address indexed from, address indexed to, uint256 value)'],
        providerB,
      );
      await contract.on('Transfer', (_from: string, to: string, value: bigint) => void seenContract.set(value, to));
      // Both subscribers installed their filters (eth_newFilter) in the shared store.
      await until(
        async () => ((await redis.keys(`${prefix}:filter:f:*`)).length >= 2 ? true : undefined),
        5000,
        'two filters in Redis',
      );
      const sent = [await transfer(), await transfer()];
      await until(
        async () => (sent.every((t) => seenRaw.has(t.hash) && seenContract.has(t.value)) ? true : undefined),
        6000,
        'both transfers seen',
      );
      for (const t of sent) {
        expect(seenRaw.get(t.hash)!.blockNumber).toBe(Number(t.blockNumber));
        expect(seenRaw.get(t.hash)!.removed).toBe(false);
        expect(seenContract.get(t.value)!.toLowerCase()).toBe(accounts[1].toLowerCase());
      }
      await provider.removeAllListeners();
      await contract.removeAllListeners();
      // Uninstalled on removal (ethers sends eth_uninstallFilter).
      await until(
        async () => ((await redis.keys(`${prefix}:filter:f:*`)).length === 0 ? true : undefined),
        5000,
        'filters uninstalled',
      );
      expect(rejections).toEqual([]);
      expect(logged).toEqual([]);
    } finally {
      console.log = log;
      process.off('unhandledRejection', onRejection);
      provider.destroy();
      providerB.destroy();
    }
  });

  it('a block filter returns the hashes of the new blocks, in order, on both URL shapes', async () => {
    for (const shape of ['A', 'B'] as const) {
      const u = url(b, 'alice', shape);
      const id = await ok<string>(u, 'eth_newBlockFilter');
      expect(id).toMatch(/^0x[1-9a-f][0-9a-f]{0,31}$/);
      const start = Number(await ok<string>(anvil, 'eth_blockNumber'));
      // Each poll returns what is new since the previous one: collect three blocks' worth.
      const hashes: string[] = [];
      await until(
        async () => {
          hashes.push(...(await ok<string[]>(u, 'eth_getFilterChanges', [id])));
          return hashes.length >= 3 ? true : undefined;
        },
        8000,
        'three new blocks',
      );
      expect(new Set(hashes).size).toBe(hashes.length);
      for (const [i, h] of hashes.entries()) {
        const blk = await ok<{ hash: string; number: string }>(anvil, 'eth_getBlockByHash', [h, false]);
        expect(blk.hash).toBe(h);
        if (i > 0)
          expect(Number(blk.number)).toBe(
            Number((await ok<{ number: string }>(anvil, 'eth_getBlockByHash', [hashes[i - 1], false])).number) + 1,
          );
        else expect(Number(blk.number)).toBeGreaterThanOrEqual(start);
      }
      expect(await ok(u, 'eth_uninstallFilter', [id])).toBe(true);
    }
  });

  it('created on A, polled on B; another key gets "filter not found"; getFilterLogs; uninstall', async () => {
    const id = await ok<string>(url(a, 'alice'), 'eth_newFilter', [{ address: token, topics: [TRANSFER] }]);
    const t = await transfer();
    const logs = await until(
      async () => {
        const l = await ok<Log0[]>(url(b, 'alice', 'B'), 'eth_getFilterChanges', [id]);
        return l.length > 0 ? l : undefined;
      },
      6000,
      'the transfer log on B',
    );
    expect(logs.map((l) => l.transactionHash)).toEqual([t.hash]);
    expect(logs[0]).toMatchObject({
      blockHash: t.blockHash,
      blockNumber: t.blockNumber,
      removed: false,
      data: `0x${word(t.value.toString(16))}`,
    });
    // Delivered once: the next poll (on A) has nothing new.
    expect(await ok(url(a, 'alice'), 'eth_getFilterChanges', [id])).toEqual([]);

    // Another key: the same answer as an id that does not exist, on every filter method.
    // geth's code and message (ethers and web3 match them), with rpcgate's data.source and reason.
    const notFound = {
      code: -32000,
      message: 'filter not found',
      data: { source: 'rpcgate', reason: 'filter-not-found' },
    };
    expect((await rpc(url(b, 'bob'), 'eth_getFilterChanges', [id])).error).toEqual(notFound);
    expect((await rpc(url(b, 'bob'), 'eth_getFilterLogs', [id])).error).toEqual(notFound);
    expect((await rpc(url(b, 'alice'), 'eth_getFilterChanges', ['0x1234'])).error).toEqual(notFound);
    expect(await ok(url(a, 'bob'), 'eth_uninstallFilter', [id])).toBe(false);

    // eth_getFilterLogs: the filter's own criteria (no range: latest), so the log of a transfer in the latest block.
    const ranged = await ok<string>(url(b, 'alice'), 'eth_newFilter', [
      { fromBlock: t.blockNumber, toBlock: t.blockNumber, address: token },
    ]);
    const all = await ok<Log0[]>(url(a, 'alice'), 'eth_getFilterLogs', [ranged]);
    expect(all.map((l) => l.transactionHash)).toContain(t.hash);
    const blocks = await ok<string>(url(a, 'alice'), 'eth_newBlockFilter');
    expect((await rpc(url(a, 'alice'), 'eth_getFilterLogs', [blocks])).error).toEqual(notFound);
    // Pending-transaction filters: installed, always empty (documented).
    const pending = await ok<string>(url(a, 'alice'), 'eth_newPendingTransactionFilter');
    await transfer();
    expect(await ok(url(b, 'alice'), 'eth_getFilterChanges', [pending])).toEqual([]);

    for (const f of [id, ranged, blocks, pending])
      expect(await ok(url(b, 'alice'), 'eth_uninstallFilter', [f])).toBe(true);
    expect((await rpc(url(a, 'alice'), 'eth_getFilterChanges', [id])).error).toEqual(notFound);
    expect(await ok(url(a, 'alice'), 'eth_uninstallFilter', [id])).toBe(false);
    // A reversed range is refused before anything is stored.
    const bad = await rpc(url(a, 'alice'), 'eth_newFilter', [{ fromBlock: '0x10', toBlock: '0x2' }]);
    expect(bad.error?.code).toBe(-32602);
  });

  it(`an idle filter expires after filters.idleTimeoutMs (${IDLE_MS} ms here): a Redis key TTL, restarted by each poll`, async () => {
    const id = await ok<string>(url(a, 'alice'), 'eth_newBlockFilter');
    const pttl = await redis.pttl(`${prefix}:filter:f:${id}`);
    expect(pttl).toBeGreaterThan(0);
    expect(pttl).toBeLessThanOrEqual(IDLE_MS);
    // Polled every second for longer than the timeout: alive.
    for (let i = 0; i < 4; i++) {
      await sleep(900);
      expect((await rpc(url(i % 2 ? a : b, 'alice'), 'eth_getFilterChanges', [id])).error).toBeUndefined();
    }
    await sleep(IDLE_MS + 300);
    expect((await rpc(url(b, 'alice'), 'eth_getFilterChanges', [id])).error).toEqual({
      code: -32000,
      message: 'filter not found',
      data: { source: 'rpcgate', reason: 'filter-not-found' },
    });
    expect(await redis.exists(`${prefix}:filter:f:${id}`)).toBe(0);
  });

  it(`at most ${CAP} filters per key across replicas; the next is refused with the cap in data`, async () => {
    const ids: string[] = [];
    for (let i = 0; i < CAP; i++)
      ids.push(
        await ok<string>(
          url(i % 2 ? a : b, 'carol'),
          i % 2 ? 'eth_newBlockFilter' : 'eth_newFilter',
          i % 2 ? [] : [{ address: token }],
        ),
      );
    expect(new Set(ids).size).toBe(CAP);
    const over = await rpc(url(a, 'carol'), 'eth_newBlockFilter');
    expect(over.error).toMatchObject({ code: -32000, data: { source: 'rpcgate', reason: 'filters', limit: CAP } });
    expect(over.error!.message).toContain(`at most ${CAP} per key`);
    // Another key is not affected by carol's cap.
    const other = await ok<string>(url(b, 'bob'), 'eth_newBlockFilter');
    expect(await ok(url(b, 'bob'), 'eth_uninstallFilter', [other])).toBe(true);
    // Room again after an uninstall.
    expect(await ok(url(b, 'carol'), 'eth_uninstallFilter', [ids[0]])).toBe(true);
    ids[0] = await ok<string>(url(a, 'carol'), 'eth_newBlockFilter');
    for (const id of ids) expect(await ok(url(a, 'carol'), 'eth_uninstallFilter', [id])).toBe(true);
  });

  // Issue 26 item 3: the cap under a race on every credential kind — a config key, an app, a network key — as an
  // attacker would try it: 100 creates at once, as HTTP batches and single requests, through both replicas.
  it(`100 filter creates at once through both replicas (batches and singles): exactly ${CAP} on a config key, an app and a network key`, async () => {
    const user = await createUser(a.store.db, {
      email: `filters-race-${randomBytes(4).toString('hex')}@example.com`,
      passwordHash: 'x',
    });
    const app = await createApp(a.store.db, a.secret, user.id, {
      name: 'race',
      useCase: 'Defi',
      chain: 'ethereum',
      services: ['node-api'],
    });
    const key = await createNetworkKey(a.store.db, a.secret, user.id, { name: 'race', network: 'mainnet' });
    await Promise.all([a.access.sync(), b.access.sync()]);
    const urls: Record<string, [string, string]> = {
      'config key': [url(a, 'bob'), url(b, 'bob', 'B')],
      app: [`${a.url}/mainnet/v2/${app.key}`, `${b.url}/mainnet/v2/${app.key}`],
      'network key': [`${a.url}/mainnet/${key.key}`, `${b.url}/mainnet/${key.key}`],
    };
    const post = async (u: string, body: unknown): Promise<Rpc[]> => {
      const res = await fetch(u, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(30_000),
      });
      const j = (await res.json()) as Rpc | Rpc[];
      return Array.isArray(j) ? j : [j];
    };
    const create = (i: number) =>
      i % 2
        ? { jsonrpc: '2.0', id: i, method: 'eth_newBlockFilter', params: [] }
        : { jsonrpc: '2.0', id: i, method: 'eth_newFilter', params: [{ address: token }] };
    for (const [kind, [ua, ub]] of Object.entries(urls)) {
      const sends: Promise<Rpc[]>[] = [];
      // 5 batches of 10, then 50 single requests, alternating replicas.
      for (let j = 0; j < 5; j++)
        sends.push(
          post(
            j % 2 ? ub : ua,
            Array.from({ length: 10 }, (_, i) => create(j * 10 + i)),
          ),
        );
      for (let i = 50; i < 100; i++) sends.push(post(i % 2 ? ub : ua, create(i)));
      const answers = (await Promise.all(sends)).flat();
      const created = answers.filter((r) => typeof r.result === 'string').map((r) => r.result as string);
      const capped = answers.filter((r) => r.error?.code === -32000 && r.error.data?.reason === 'filters');
      const other = answers.filter((r) => typeof r.result !== 'string' && r.error?.data?.reason !== 'filters');
      expect(
        other.map((r) => JSON.stringify(r).slice(0, 200)),
        kind,
      ).toEqual([]);
      expect([kind, created.length, capped.length]).toEqual([kind, CAP, 100 - CAP]);
      await sleep(1100); // past the second of the app's per-second rate (its creates used it up)
      for (const id of created) expect(await ok(ua, 'eth_uninstallFilter', [id])).toBe(true);
    }
  }, 60_000);

  it('an upstream failover keeps the filter: first upstream cut mid-way, polls go on through the second', async () => {
    // A proxy in front of the anvil as the first upstream; the anvil itself is the second.
    let cut = false;
    let proxied = 0;
    const proxy: Server = createServer((req, res) => {
      if (cut) return void req.socket.destroy();
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        proxied++;
        void fetch(anvil, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: Buffer.concat(chunks),
        })
          .then(async (r) => res.writeHead(r.status, { 'content-type': 'application/json' }).end(await r.text()))
          .catch(() => req.socket.destroy());
      });
    });
    await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', () => r()));
    const proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
    const dataDir = mkdtempSync(join(tmpdir(), 'rpcgate-filters-'));
    dirs.push(dataDir);
    // In-process filters here (no Redis): the other store.
    const c = await startService({
      port: 0,
      logLevel: 'silent',
      devKey: false,
      dataDir,
      keys: [{ key: KEYS.alice, name: 'alice' }],
      networks: { mainnet: { upstreams: [proxyUrl, anvil], chainId: 31337, blockTime: 1 } },
    });
    try {
      const u = url(c, 'alice');
      const id = await ok<string>(u, 'eth_newFilter', [{ address: token, topics: [TRANSFER] }]);
      const t1 = await transfer();
      const first = await until(
        async () => {
          const l = await ok<Log0[]>(u, 'eth_getFilterChanges', [id]);
          return l.length ? l : undefined;
        },
        6000,
        'first log',
      );
      expect(first.map((l) => l.transactionHash)).toEqual([t1.hash]);
      expect(proxied).toBeGreaterThan(0);
      cut = true;
      proxy.closeAllConnections();
      const t2 = await transfer();
      const second = await until(
        async () => {
          const l = await ok<Log0[]>(u, 'eth_getFilterChanges', [id]);
          return l.length ? l : undefined;
        },
        8000,
        'second log after the cut',
      );
      expect(second.map((l) => l.transactionHash)).toEqual([t2.hash]);
      // The cut upstream's failures were seen (its circuit opens after upstream.circuitBreaker.failureThreshold in a row).
      expect(
        c.pools
          .get('mainnet')!
          .status()
          .find((s) => s.url === proxyUrl)?.lastError,
      ).toMatch(/upstream connection failed|cannot connect/);
      // Nothing lost or repeated: everything between creation and now, exactly once.
      expect(await ok(u, 'eth_getFilterChanges', [id])).toEqual([]);
    } finally {
      await c.stop();
      await new Promise<void>((r) => proxy.close(() => r()));
    }
  }, 60_000);

  it("a reorg: logs of dropped blocks come again with removed: true, then the new chain's logs", async () => {
    const u = url(b, 'alice');
    const id = await ok<string>(u, 'eth_newFilter', [{ address: token, topics: [TRANSFER] }]);
    const blocks = await ok<string>(u, 'eth_newBlockFilter');
    await ok(u, 'eth_getFilterChanges', [blocks]);
    const snapshot = await ok<string>(anvil, 'evm_snapshot');
    const dropped = await transfer();
    const seen = await until(
      async () => {
        const l = await ok<Log0[]>(u, 'eth_getFilterChanges', [id]);
        return l.length ? l : undefined;
      },
      6000,
      'the log to be dropped',
    );
    expect(seen.map((l) => [l.transactionHash, l.removed])).toEqual([[dropped.hash, false]]);
    const oldHashes = await ok<string[]>(u, 'eth_getFilterChanges', [blocks]);
    expect(oldHashes).toContain(dropped.blockHash);
    // Back before the transfer; a different transfer is mined on the new chain.
    expect(await ok(anvil, 'evm_revert', [snapshot])).toBe(true);
    const replacement = await transfer();
    expect(replacement.blockHash).not.toBe(dropped.blockHash);
    const after = await until(
      async () => {
        const l = await ok<Log0[]>(u, 'eth_getFilterChanges', [id]);
        return l.length ? l : undefined;
      },
      6000,
      'the reorg changes',
    );
    expect(after.map((l) => [l.transactionHash, l.blockHash, l.removed])).toEqual([
      [dropped.hash, dropped.blockHash, true],
      [replacement.hash, replacement.blockHash, false],
    ]);
    // The block filter follows the new chain: the replacement block's hash, not the dropped one again.
    const newHashes = await until(
      async () => {
        const h = await ok<string[]>(u, 'eth_getFilterChanges', [blocks]);
        return h.includes(replacement.blockHash) ? h : undefined;
      },
      6000,
      'new chain hashes',
    );
    expect(newHashes).not.toContain(dropped.blockHash);
    for (const f of [id, blocks]) expect(await ok(u, 'eth_uninstallFilter', [f])).toBe(true);
  }, 30_000);
});
