// Following the chain with real clients (issue 12, item 7): two rpcgate replicas sharing PostgreSQL (a scratch
// database) and Redis (a key prefix of their own) in front of ONE anvil this test starts and seeds itself. A user signs
// up through the account API and creates an app (key A, URL …/v2/<key>) and a network key (key B, URL …/<key>). Every
// client — ethers v6 over HTTP and WebSocket, viem over http (polling a gateway filter) and webSocket, web3.js v4 — is
// pointed at one replica and one URL shape, token transfers are sent to anvil from a seeded account, and each client
// must see every one of them, exactly once (counted by tx hash), within a few seconds, with no client error (unhandled
// rejections, provider 'error' events, viem onError, ethers' console "@TODO" poll errors are all captured). Then the
// refusals: bad key at the upgrade, another key's filter id, a quota running out mid-stream, too many subscriptions;
// and a filter created on replica 1 polled on replica 2 with ethers.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Contract, Interface, JsonRpcProvider, WebSocketProvider, type ContractEventPayload, type Log } from 'ethers';
import { createPublicClient, http, parseAbiItem, webSocket, type PublicClient } from 'viem';
import { Web3 } from 'web3';
import { Redis } from 'ioredis';
import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Raw, until } from './helpers/ws-client.js';
import { startService, type RunningService } from '../src/gateway/server/index.js';
import { compileToken, rpc, seedChain, startAnvil, type Anvil, type SeededChain } from '../src/gateway/chain/index.js';
import { account, signUpAndLogIn } from './helpers/account.js';
import {
  deleteRedisKeys,
  pgReachable,
  redisReachable,
  REDIS_URL,
  scratchDatabase,
  scratchPrefix,
  skipUnless,
} from './helpers/services.js';

const skip = skipUnless((await pgReachable()) && (await redisReachable()), 'follow-chain', 'PostgreSQL or Redis');

type Json = any; // eslint-disable-line @typescript-eslint/no-explicit-any
const TOKEN = new Interface([
  'event Transfer(address indexed from, address indexed to, uint256 value)',
  'function transfer(address to, uint256 amount)',
]);
const TRANSFER_TOPIC = TOKEN.getEvent('Transfer')!.topicHash;
const TRANSFER_EVENT = parseAbiItem('event Transfer(address indexed from, address indexed to, uint256 value)');
const MAX_SUBS = 4;
const QUOTA = 5;
/** "Within a few seconds": from the last transfer sent to the last one seen. */
const SEE_MS = 6000;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const toWs = (u: string) => u.replace(/^http/, 'ws');
async function post(url: string, method: string, params: unknown[] = []): Promise<{ status: number; body: Json }> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
    signal: AbortSignal.timeout(10_000),
  });
  return { status: res.status, body: await res.json() };
}

/** Everything that counts as a client error during one test: unhandled rejections and ethers' console-logged poll errors. */
function captureErrors(): { errors: unknown[]; stop(): void } {
  const errors: unknown[] = [];
  const onRejection = (e: unknown) => void errors.push(e);
  process.on('unhandledRejection', onRejection);
  const log = console.log;
  // ethers logs a failed filter poll with console.log("@TODO", error) instead of raising it.
  console.log = (...args: unknown[]) => (args[0] === '@TODO' ? void errors.push(args) : log(...args));
  return {
    errors,
    stop() {
      process.off('unhandledRejection', onRejection);
      console.log = log;
    },
  };
}

describe.skipIf(skip)('following the chain with real clients: two replicas on PostgreSQL + Redis, one anvil', () => {
  const db = scratchDatabase();
  const prefix = scratchPrefix();
  const dirs: string[] = [];
  const secret = randomBytes(32).toString('hex');
  let anvil: Anvil;
  let seeded: SeededChain;
  let r1: RunningService;
  let r2: RunningService;
  let keyA: string;
  let keyB: string;
  let amount = 10_000n;
  let redis: Redis;
  const dir = () => {
    const d = mkdtempSync(join(tmpdir(), 'rpcgate-follow-'));
    dirs.push(d);
    return d;
  };
  const common = () => ({
    port: 0,
    logLevel: 'silent' as const,
    devKey: false,
    dataDir: dir(),
    databaseUrl: db.url,
    redisUrl: REDIS_URL,
    redisPrefix: prefix,
    secret,
    networks: { mainnet: { upstreams: [anvil.url], chainId: 31337, blockTime: 1 } },
    websocket: {
      maxPayloadBytes: 1_048_576,
      maxInFlight: 32,
      maxBufferedBytes: 4_194_304,
      pingIntervalMs: 30_000,
      maxConnectionsPerKey: 100,
      maxSubscriptionsPerConnection: MAX_SUBS,
      pollIntervalMs: 250,
    },
  });
  /** HTTP URL of key A (…/v2/<key>) or B (…/<key>) on a replica. */
  const url = (r: RunningService, shape: 'A' | 'B') =>
    shape === 'A' ? `${r.url}/mainnet/v2/${keyA}` : `${r.url}/mainnet/${keyB}`;

  /** Sends `n` token transfers from a seeded account (distinct amounts), each mined; resolves with their tx hashes. */
  async function transfers(n: number): Promise<string[]> {
    const hashes: string[] = [];
    for (let i = 0; i < n; i++) {
      const data = TOKEN.encodeFunctionData('transfer', [seeded.accounts[2], ++amount]);
      hashes.push(
        await rpc<string>(anvil.url, 'eth_sendTransaction', [
          { from: seeded.accounts[0], to: seeded.token.address, data },
        ]),
      );
    }
    for (const h of hashes)
      await until(
        'receipt',
        () => rpc<Json>(anvil.url, 'eth_getTransactionReceipt', [h]).then((r) => r ?? undefined),
        10_000,
      );
    return hashes;
  }

  /**
   * The one check every client goes through: `seen` is every tx hash the client reported, in order. A warm-up
   * transfer is sent until the client reports it (its subscription or filter is live, however it installs it), then
   * three counted transfers: each must be reported exactly once within SEE_MS, and no hash ever twice.
   */
  async function seesEveryTransfer(seen: string[], errors: unknown[]): Promise<void> {
    await until(
      'the client to be live (a warm-up transfer seen)',
      async () => {
        const [h] = await transfers(1);
        return until('warm-up', () => seen.includes(h), 3000).catch(() => false);
      },
      20_000,
    );
    const sent = await transfers(3);
    const t0 = Date.now();
    await until('every transfer', () => sent.every((h) => seen.includes(h)), SEE_MS);
    expect(Date.now() - t0).toBeLessThan(SEE_MS);
    await sleep(1500); // late duplicates would show up here
    for (const h of sent) expect(seen.filter((x) => x === h)).toHaveLength(1);
    expect(new Set(seen).size).toBe(seen.length);
    expect(errors).toEqual([]);
  }

  /** Block numbers a client reported: at least three, consecutive, none twice. */
  async function consecutiveBlocks(blocks: number[]): Promise<void> {
    await until('3 blocks', () => blocks.length >= 3, 10_000);
    for (let i = 1; i < blocks.length; i++) expect(blocks[i]).toBe(blocks[i - 1] + 1);
  }

  beforeAll(async () => {
    await db.create();
    anvil = await startAnvil({ chainId: 31337, blockTime: 1 });
    seeded = await seedChain(anvil.url, compileToken(dir()), 'mainnet');
    r1 = await startService(common());
    r2 = await startService(common());
    redis = new Redis(REDIS_URL);
    // A user of the account API (on replica 1): an app (key A) and a network key (key B).
    const api = account(r1);
    await signUpAndLogIn(api, {
      email: `follow-${randomBytes(4).toString('hex')}@example.com`,
      password: 'a long enough password',
    });
    const [chain] = await api.request('chains_list', ['31337']);
    const app = await api.request('apps_create', [
      { name: 'follow', useCase: 'Defi', chain: chain.id, services: ['node-api'] },
    ]);
    const key = await api.request('keys_create', [{ name: 'follow', network: 'Mainnet' }]);
    keyA = app.key;
    keyB = key.key;
    expect(app.urls.mainnet).toBe(url(r1, 'A'));
    expect(key.url).toBe(url(r1, 'B'));
    // Replica 2 learns the keys from the shared store's change feed.
    for (const shape of ['A', 'B'] as const)
      await until(
        `key ${shape} on replica 2`,
        async () => (await post(url(r2, shape), 'eth_chainId')).status === 200,
        10_000,
      );
  }, 120_000);

  afterAll(async () => {
    await r2?.stop();
    await r1?.stop();
    await anvil?.stop();
    redis?.disconnect();
    await deleteRedisKeys(prefix);
    await db.drop();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  }, 60_000);

  it('ethers v6 JsonRpcProvider.on(filter) (replica 1, …/v2/<key>) and contract.on("Transfer") (replica 2, …/<key>)', async () => {
    const cap = captureErrors();
    const p1 = new JsonRpcProvider(url(r1, 'A'), 31337, { staticNetwork: true, pollingInterval: 250 });
    const p2 = new JsonRpcProvider(url(r2, 'B'), 31337, { staticNetwork: true, pollingInterval: 250 });
    p1.on('error', (e) => void cap.errors.push(e));
    p2.on('error', (e) => void cap.errors.push(e));
    try {
      const raw: string[] = [];
      const viaContract: string[] = [];
      await p1.on(
        { address: seeded.token.address, topics: [TRANSFER_TOPIC] },
        (l: Log) => void raw.push(l.transactionHash),
      );
      const token = new Contract(seeded.token.address, TOKEN, p2);
      await token.on(
        'Transfer',
        (_from: string, _to: string, _value: bigint, ev: ContractEventPayload) =>
          void viaContract.push(ev.log.transactionHash),
      );
      // Both are gateway filters (eth_newFilter) in the shared Redis, not an eth_getLogs fallback.
      await until('two filters in Redis', async () => (await redis.keys(`${prefix}:filter:f:*`)).length === 2, 5000);
      await seesEveryTransfer(raw, cap.errors);
      await seesEveryTransfer(viaContract, cap.errors);
      await p1.removeAllListeners();
      await token.removeAllListeners();
      // Removal uninstalls both gateway filters (eth_uninstallFilter): wait for it before destroying the providers.
      await until('filters uninstalled', async () => (await redis.keys(`${prefix}:filter:f:*`)).length === 0, 5000);
    } finally {
      cap.stop();
      p1.destroy();
      p2.destroy();
    }
  }, 90_000);

  describe.each([
    ['replica 2', 'A'],
    ['replica 1', 'B'],
  ] as const)('ethers v6 WebSocketProvider on %s, URL shape %s', (replica, shape) => {
    it('on("block") sees consecutive blocks, on(filter) every transfer', async () => {
      const cap = captureErrors();
      const p = new WebSocketProvider(toWs(url(replica === 'replica 1' ? r1 : r2, shape)));
      p.on('error', (e) => void cap.errors.push(e));
      try {
        const blocks: number[] = [];
        const logs: string[] = [];
        await p.on('block', (n: number) => void blocks.push(n));
        await p.on(
          { address: seeded.token.address, topics: [TRANSFER_TOPIC] },
          (l: Log) => void logs.push(l.transactionHash),
        );
        await seesEveryTransfer(logs, cap.errors);
        await consecutiveBlocks(blocks);
      } finally {
        cap.stop();
        await p.destroy();
      }
    }, 90_000);
  });

  it('viem watchEvent over http (a gateway filter, polled; replica 1, …/<key>) and over webSocket (replica 2, …/v2/<key>); watchBlockNumber over webSocket (replica 1)', async () => {
    const cap = captureErrors();
    const clients: PublicClient[] = [
      createPublicClient({ transport: http(url(r1, 'B'), { retryCount: 0 }), pollingInterval: 250 }) as PublicClient,
      createPublicClient({
        transport: webSocket(toWs(url(r2, 'A')), { reconnect: false, retryCount: 0 }),
      }) as PublicClient,
      createPublicClient({
        transport: webSocket(toWs(url(r1, 'A')), { reconnect: false, retryCount: 0 }),
      }) as PublicClient,
    ];
    const unwatch: Array<() => void> = [];
    try {
      const seen: string[][] = [[], []];
      for (const [i, c] of clients.slice(0, 2).entries()) {
        unwatch.push(
          c.watchEvent({
            address: seeded.token.address,
            event: TRANSFER_EVENT,
            // http: eth_newFilter + eth_getFilterChanges (viem's default when the node has filters); ws: eth_subscribe logs.
            onLogs: (logs) => void seen[i].push(...logs.map((l) => l.transactionHash!)),
            onError: (e) => void cap.errors.push(e),
          }),
        );
      }
      const blocks: number[] = [];
      unwatch.push(
        clients[2].watchBlockNumber({
          onBlockNumber: (n) => void blocks.push(Number(n)),
          onError: (e) => void cap.errors.push(e),
          emitMissed: true,
        }),
      );
      await seesEveryTransfer(seen[0], cap.errors);
      // The http watcher really polls a gateway filter (the one in Redis), not viem's eth_getLogs fallback.
      expect(await redis.keys(`${prefix}:filter:f:*`)).toHaveLength(1);
      await seesEveryTransfer(seen[1], cap.errors);
      await consecutiveBlocks(blocks);
    } finally {
      cap.stop();
      for (const u of unwatch) u();
      for (const c of clients.slice(1))
        (await (c.transport as unknown as { getRpcClient(): Promise<{ close(): void }> }).getRpcClient()).close();
    }
  }, 90_000);

  it('web3.js v4 subscribe("logs") and subscribe("newBlockHeaders") (replica 2, …/<key>)', async () => {
    const cap = captureErrors();
    const provider = new Web3.providers.WebsocketProvider(toWs(url(r2, 'B')));
    provider.on('error', (e: unknown) => void cap.errors.push(e));
    const web3 = new Web3(provider);
    try {
      const logs = await web3.eth.subscribe('logs', { address: seeded.token.address, topics: [TRANSFER_TOPIC] });
      const heads = await web3.eth.subscribe('newBlockHeaders');
      const seen: string[] = [];
      const blocks: number[] = [];
      logs.on('data', (l) => void seen.push(l.transactionHash as string));
      heads.on('data', (h) => void blocks.push(Number(h.number)));
      logs.on('error', (e) => void cap.errors.push(e));
      heads.on('error', (e) => void cap.errors.push(e));
      await seesEveryTransfer(seen, cap.errors);
      await consecutiveBlocks(blocks);
      await logs.unsubscribe();
      await heads.unsubscribe();
    } finally {
      cap.stop();
      provider.disconnect();
    }
  }, 90_000);

  it('a filter created on replica 1 is polled through replica 2 with ethers (its own provider, the id)', async () => {
    const id = (
      await post(url(r1, 'A'), 'eth_newFilter', [{ address: seeded.token.address, topics: [TRANSFER_TOPIC] }])
    ).body.result as string;
    expect(id).toMatch(/^0x[0-9a-f]+$/);
    const p2 = new JsonRpcProvider(url(r2, 'A'), 31337, { staticNetwork: true });
    try {
      const sent = await transfers(3);
      const seen: string[] = [];
      await until(
        'the three logs through replica 2',
        async () => {
          seen.push(...((await p2.send('eth_getFilterChanges', [id])) as Json[]).map((l) => l.transactionHash));
          return sent.every((h) => seen.includes(h));
        },
        SEE_MS,
      );
      expect(seen.sort()).toEqual([...sent].sort());
      expect(await p2.send('eth_getFilterChanges', [id])).toEqual([]);
      // Another key's filter id: not found, on either replica (same answer as an id that never existed).
      for (const r of [r1, r2]) {
        const other = await post(url(r, 'B'), 'eth_getFilterChanges', [id]);
        expect(other.body.error).toEqual({
          code: -32000,
          message: 'filter not found',
          data: { source: 'rpcgate', reason: 'filter-not-found' },
        });
        const err = await new JsonRpcProvider(url(r, 'B'), 31337, { staticNetwork: true })
          .send('eth_getFilterLogs', [id])
          .catch((e: Json) => e);
        expect(err.error ?? err.info?.error).toMatchObject({ code: -32000, message: 'filter not found' });
      }
      expect(await p2.send('eth_uninstallFilter', [id])).toBe(true);
    } finally {
      p2.destroy();
    }
  }, 30_000);

  it("refused at the upgrade: a bad key's socket opens, its call gets -32016 with its id, then close 4401 — on both replicas and both shapes", async () => {
    for (const r of [r1, r2]) {
      for (const path of [`/mainnet/v2/${'x'.repeat(32)}`, `/mainnet/${'y'.repeat(32)}`]) {
        const c = await Raw.open(`${toWs(r.url)}${path}`);
        const answer = await c.call('eth_blockNumber');
        expect([answer.id, answer.error.code, answer.error.data.reason]).toEqual([1, -32016, 'key']);
        expect(await c.waitClosed(5000)).toEqual({ code: 4401, reason: 'invalid API key' });
      }
    }
    // A client that sends nothing is not left on a half-open socket: closed 4401 within a few seconds.
    const s = new WebSocket(`${toWs(r2.url)}/mainnet/${'z'.repeat(32)}`);
    s.on('error', () => undefined);
    const code = await new Promise<number>((r) => s.once('close', (c) => r(c)));
    expect(code).toBe(4401);
  });

  it('too many subscriptions on one connection: -32005 (reason subscriptions), the others keep delivering', async () => {
    const c = await Raw.open(toWs(url(r1, 'A')));
    try {
      const ids: string[] = [];
      for (let i = 0; i < MAX_SUBS; i++)
        ids.push(
          (
            await c.call('eth_subscribe', [
              i % 2 ? 'newHeads' : 'logs',
              ...(i % 2 ? [] : [{ address: seeded.token.address }]),
            ])
          ).result,
        );
      const over = await c.call('eth_subscribe', ['newHeads']);
      expect([over.error.code, over.error.data.reason]).toEqual([-32005, 'subscriptions']);
      const [h] = await transfers(1);
      await until(
        'every subscription delivering',
        () =>
          ids.every((id, i) =>
            c.notifications(id).some((m) => (i % 2 ? m.params.result.number : m.params.result.transactionHash === h)),
          ),
        SEE_MS,
      );
      expect(c.closed).toBeUndefined();
    } finally {
      c.socket.close();
    }
  }, 30_000);

  it('quota exhausted mid-stream: a third replica on a tiny B plan sends the last notifications, a final error, then closes 4402', async () => {
    // Plans are configuration, so the tiny quota lives on its own replica (same store and Redis counters) and a
    // second user's key: the main keys keep their quota for the other tests.
    const r3 = await startService({ ...common(), limits: { b: { dailyPerUser: QUOTA } } });
    try {
      const api = account(r1);
      await signUpAndLogIn(api, {
        email: `quota-${randomBytes(4).toString('hex')}@example.com`,
        password: 'a long enough password',
      });
      const key = (await api.request('keys_create', [{ name: 'tiny', network: 'Mainnet' }])).key;
      await r3.access.sync(); // no probing call: every call counts
      const c = await Raw.open(`${toWs(r3.url)}/mainnet/${key}`);
      const sub = (await c.call('eth_subscribe', ['newHeads'])).result as string; // 1 of the quota
      await until('the close', () => c.closed, QUOTA * 1000 + 10_000);
      expect(c.closed).toEqual({ code: 4402, reason: 'quota exhausted' });
      const notes = c.notifications(sub);
      expect(notes.filter((m) => m.params.result !== undefined)).toHaveLength(QUOTA - 1);
      const last = notes[notes.length - 1];
      expect([last.params.error.code, last.params.error.data.reason]).toEqual([-32005, 'quota']);
      // Out over HTTP too: the same counter.
      expect((await post(`${r3.url}/mainnet/${key}`, 'eth_chainId')).status).toBe(402);
    } finally {
      await r3.stop();
    }
  }, 60_000);
});
