// The node API over WebSocket (packages/toolkit/src/ws, src/gateway/server/ws-route.ts, src/gateway/subscriptions) against a
// real rpcgate in front of its embedded anvil (blockTime 1 s, so the chain moves): ethers v6 WebSocketProvider on both
// URL shapes (calls, on('block'), on(filter) with a Transfer sent here), viem's webSocket transport, web3.js v4
// subscriptions, then the refusals and bounds with a raw `ws` client: bad key / wrong network / per-key cap at the
// upgrade (the socket opens, calls get the error with their ids, close 4401/4403/4429), too many subscriptions, a
// message over the size cap (1009), a key's quota running out mid-stream (final error notification, close 4402), a slow consumer (closed, 4008, not buffered),
// and SIGTERM of an rpcgate process (close 1001, exit 0).
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Interface, WebSocketProvider, type Log } from 'ethers';
import { createPublicClient, webSocket } from 'viem';
import { Web3 } from 'web3';
import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Raw, until } from './helpers/ws-client.js';
import { startService, type RunningService } from '../src/gateway/server/index.js';
import { createApp, createNetworkKey, createUser, setAllowlist } from '../src/gateway/store/index.js';
import { rpc } from '../src/gateway/chain/index.js';
import { NetworkFeed, type FeedSubscriber } from '../src/gateway/subscriptions/index.js';
import { fakeConnection, subscriptionsOn } from './helpers/fake-socket.js';
import { ChainHead } from '../src/gateway/heads/index.js';
import { pino } from 'pino';

const ROOT = resolve(import.meta.dirname, '..');
const TRANSFER = new Interface([
  'event Transfer(address indexed from, address indexed to, uint256 value)',
  'function transfer(address to, uint256 amount)',
]);
const TRANSFER_TOPIC = TRANSFER.getEvent('Transfer')!.topicHash;
type Json = any; // eslint-disable-line @typescript-eslint/no-explicit-any

const dirs: string[] = [];
let svc: RunningService;
let anvilUrl: string;
let ws: { A: string; B: string };
const QUOTA = 6;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const toWs = (u: string) => u.replace(/^http/, 'ws');

/** An upgrade that must be refused with HTTP (unknown path): its HTTP status and JSON body (via ws' 'unexpected-response'). */
function refusedUpgrade(url: string): Promise<{ status: number; body: Json; contentType: string | undefined }> {
  return new Promise((res, rej) => {
    const s = new WebSocket(url);
    s.on('error', () => undefined);
    s.once('open', () => rej(new Error('upgrade accepted')));
    s.once('unexpected-response', (_req, r) => {
      let body = '';
      r.on('data', (c: Buffer) => (body += c));
      r.on('end', () => res({ status: r.statusCode!, body: JSON.parse(body), contentType: r.headers['content-type'] }));
    });
  });
}

/**
 * A refused key's socket (issue 21): the upgrade is accepted, a call (string id) and a batch (numeric ids and a
 * notification) get the refusal with their ids, then the socket closes with 4000 + the HTTP status.
 */
async function refusedSocket(
  url: string,
  headers: Record<string, string> = {},
): Promise<{ single: Json; batch: Json; closed: { code: number; reason: string } }> {
  const c = await new Promise<Raw>((res, rej) => {
    const s = new WebSocket(url, { headers });
    s.once('open', () => res(new Raw(s)));
    s.once('error', rej);
    s.once('unexpected-response', (_req, r) => rej(new Error(`upgrade refused with HTTP ${r.statusCode}`)));
  });
  c.socket.send(JSON.stringify({ jsonrpc: '2.0', id: 'first', method: 'eth_chainId', params: [] }));
  c.socket.send(
    JSON.stringify([
      { jsonrpc: '2.0', id: 7, method: 'eth_chainId' },
      { jsonrpc: '2.0', method: 'eth_chainId' },
      { jsonrpc: '2.0', id: 8, method: 'eth_blockNumber' },
    ]),
  );
  const closed = await c.waitClosed(5000);
  return { single: c.messages.find((m) => !Array.isArray(m)), batch: c.messages.find((m) => Array.isArray(m)), closed };
}

async function newBKey(network = 'mainnet'): Promise<string> {
  const user = await createUser(svc.store.db, { email: `${randomUUID()}@example.com`, passwordHash: 'x' });
  const k = await createNetworkKey(svc.store.db, svc.secret, user.id, { name: 'ws', network });
  await svc.access.sync();
  return k.key;
}

/** A token transfer sent straight to anvil (its accounts are unlocked); resolves with the tx hash. */
async function sendTransfer(amount: bigint): Promise<string> {
  const s = svc.seeded.mainnet;
  const data = TRANSFER.encodeFunctionData('transfer', [s.accounts[3], amount]);
  return rpc<string>(anvilUrl, 'eth_sendTransaction', [{ from: s.accounts[1], to: s.token.address, data }]);
}

beforeAll(async () => {
  const d = mkdtempSync(join(tmpdir(), 'rpcgate-ws-'));
  dirs.push(d);
  svc = await startService({
    port: 0,
    logLevel: 'silent',
    dataDir: d,
    devKey: true,
    // testnet's upstream is never reached: it exists so a mainnet key can be refused on another network.
    networks: { mainnet: { blockTime: 1 }, testnet: { upstreams: ['http://127.0.0.1:9'] } },
    limits: { b: { dailyPerUser: QUOTA } },
    websocket: {
      maxPayloadBytes: 16_384,
      maxInFlight: 32,
      maxBufferedBytes: 65_536,
      pingIntervalMs: 1000,
      maxConnectionsPerKey: 4,
      maxSubscriptionsPerConnection: 3,
      pollIntervalMs: 0,
    },
  });
  anvilUrl = svc.networks.mainnet.upstreams[0];
  ws = { A: toWs(svc.urls.mainnet.A), B: toWs(svc.urls.mainnet.B) };
}, 120_000);

afterAll(async () => {
  await svc?.stop();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe.each(['A', 'B'] as const)('ethers v6 WebSocketProvider, URL shape %s', (shape) => {
  it('calls, on("block") sees consecutive new blocks, on(filter) sees the Transfer sent', async () => {
    const p = new WebSocketProvider(ws[shape]);
    try {
      const n0 = await p.getBlockNumber();
      expect(n0).toBe(Number(await rpc<string>(anvilUrl, 'eth_blockNumber')));
      expect((await p.getNetwork()).chainId).toBe(BigInt(svc.networks.mainnet.chainId!));

      const blocks: number[] = [];
      const logs: Log[] = [];
      await p.on('block', (n: number) => void blocks.push(n));
      await p.on(
        { address: svc.seeded.mainnet.token.address, topics: [TRANSFER_TOPIC] },
        (log: Log) => void logs.push(log),
      );
      await until('3 blocks', () => blocks.length >= 3);
      for (let i = 1; i < blocks.length; i++) expect(blocks[i]).toBe(blocks[i - 1] + 1);
      expect(blocks[0]).toBeGreaterThanOrEqual(n0);

      const amount = BigInt(1000 + (shape === 'A' ? 1 : 2));
      const hash = await sendTransfer(amount);
      const got = await until('the Transfer log', () => logs.find((l) => l.transactionHash === hash));
      expect(got.address.toLowerCase()).toBe(svc.seeded.mainnet.token.address.toLowerCase());
      expect(BigInt(got.data)).toBe(amount);
      expect(got.removed).toBe(false);
      expect(logs.filter((l) => l.transactionHash === hash)).toHaveLength(1);
    } finally {
      await p.destroy();
    }
  }, 30_000);
});

describe('other clients', () => {
  it('viem webSocket transport: watchBlockNumber sees consecutive blocks', async () => {
    const client = createPublicClient({ transport: webSocket(ws.A, { reconnect: false }) });
    const seen: bigint[] = [];
    const errors: unknown[] = [];
    const unwatch = client.watchBlockNumber({
      onBlockNumber: (n) => void seen.push(n),
      onError: (e) => void errors.push(e),
      emitMissed: true,
    });
    try {
      await until('3 block numbers', () => seen.length >= 3);
      for (let i = 1; i < seen.length; i++) expect(seen[i]).toBe(seen[i - 1] + 1n);
      expect(await client.getBlockNumber({ cacheTime: 0 })).toBeGreaterThanOrEqual(seen[0]);
      expect(errors).toEqual([]);
    } finally {
      unwatch();
      (await client.transport.getRpcClient()).close();
    }
  }, 30_000);

  it('web3.js v4: subscribe("newBlockHeaders")', async () => {
    const web3 = new Web3(new Web3.providers.WebsocketProvider(ws.B));
    try {
      const sub = await web3.eth.subscribe('newBlockHeaders');
      const heads: Json[] = [];
      sub.on('data', (h) => void heads.push(h));
      await until('2 headers', () => heads.length >= 2);
      expect(Number(heads[1].number)).toBe(Number(heads[0].number) + 1);
      expect(heads[1].parentHash).toBe(heads[0].hash);
      await sub.unsubscribe();
    } finally {
      (web3.currentProvider as { disconnect(): void }).disconnect();
    }
  }, 30_000);

  it('newPendingTransactions: the hash of a transaction sent to the node arrives', async () => {
    const c = await Raw.open(ws.B);
    try {
      const sub = (await c.call('eth_subscribe', ['newPendingTransactions'])).result as string;
      await sleep(1200); // the feed's upstream filter exists from its first tick
      const hash = await sendTransfer(7n);
      await until('the pending hash', () => c.notifications(sub).some((m) => m.params.result === hash));
    } finally {
      c.socket.close();
    }
  }, 30_000);

  it('notifications have the standard shape; unsubscribe stops them; another id is false; over HTTP -32601', async () => {
    const c = await Raw.open(ws.A);
    try {
      const sub = (await c.call('eth_subscribe', ['newHeads'])).result as string;
      expect(sub).toMatch(/^0x[0-9a-f]{32}$/);
      const [first] = await until('a notification', () =>
        c.notifications(sub).length > 0 ? c.notifications(sub) : undefined,
      );
      expect(Object.keys(first).sort()).toEqual(['jsonrpc', 'method', 'params']);
      expect(first.params.result.number).toMatch(/^0x/);
      expect(first.params.result.transactions).toBeUndefined();
      expect((await c.call('eth_unsubscribe', [sub])).result).toBe(true);
      expect((await c.call('eth_unsubscribe', [sub])).result).toBe(false);
      const after = c.notifications(sub).length;
      await sleep(2500);
      expect(c.notifications(sub).length).toBe(after);
      // A batch over the socket works as over HTTP.
      c.socket.send(
        JSON.stringify([
          { jsonrpc: '2.0', id: 'a', method: 'eth_chainId' },
          { jsonrpc: '2.0', method: 'eth_blockNumber' },
        ]),
      );
      const batch = await until('batch answer', () => c.messages.find((m) => Array.isArray(m)));
      expect(batch).toEqual([{ jsonrpc: '2.0', id: 'a', result: `0x${svc.networks.mainnet.chainId!.toString(16)}` }]);
      // Bad params are the contract's -32602.
      expect((await c.call('eth_subscribe', ['syncingX'])).error.code).toBe(-32602);
    } finally {
      c.socket.close();
    }
    const r = await fetch(svc.urls.mainnet.A, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_subscribe', params: ['newHeads'] }),
    });
    const body = (await r.json()) as Json;
    expect([r.status, body.error.code]).toEqual([200, -32601]);
    expect(body.error.message).toMatch(/notifications not supported/);
  }, 30_000);
});

describe('refusals and bounds', () => {
  it('a refused key: the socket opens, each call gets the error with its id (a batch per item), then close 4401 / 4403 / 4429; unknown path 404', async () => {
    const bad = await refusedSocket(`${toWs(svc.url)}/mainnet/${'x'.repeat(32)}`);
    expect([bad.single.id, bad.single.error.code, bad.single.error.message, bad.single.error.data.reason]).toEqual([
      'first',
      -32016,
      'invalid API key',
      'key',
    ]);
    expect(bad.batch.map((m: Json) => [m.id, m.error.code])).toEqual([
      [7, -32016],
      [8, -32016],
    ]);
    expect(bad.closed).toEqual({ code: 4401, reason: 'invalid API key' });
    const key = await newBKey();
    const other = await refusedSocket(`${toWs(svc.url)}/testnet/${key}`);
    expect([other.single.id, other.single.error.code, other.single.error.data.reason, other.closed.code]).toEqual([
      'first',
      -32041,
      'network',
      4403,
    ]);
    // A socket that sends nothing is closed after a few seconds all the same.
    const idle = await Raw.open(`${toWs(svc.url)}/mainnet/${'y'.repeat(32)}`);
    expect((await idle.waitClosed(6000)).code).toBe(4401);
    const none = await refusedUpgrade(`${toWs(svc.url)}/nowhere/${key}`);
    expect(none.status).toBe(404);

    const before = svc.websockets.connections();
    const open = await Promise.all([1, 2, 3, 4].map(() => Raw.open(`${toWs(svc.url)}/mainnet/${key}`)));
    const fifth = await refusedSocket(`${toWs(svc.url)}/mainnet/${key}`);
    expect([fifth.single.id, fifth.single.error.code, fifth.single.error.data.reason, fifth.closed.code]).toEqual([
      'first',
      -32005,
      'connections',
      4429,
    ]);
    for (const c of open) c.socket.close();
    await Promise.all(open.map((c) => c.waitClosed()));
    // Closed sockets free their places.
    await until('the server to see them closed', () => svc.websockets.connections() === before);
    const again = await Raw.open(`${toWs(svc.url)}/mainnet/${key}`);
    again.socket.close();
  }, 30_000);

  it("an app's origin allowlist at the upgrade (403 reason origin: answered on the socket, close 4403); its method allowlist per call over the socket", async () => {
    const user = await createUser(svc.store.db, { email: `${randomUUID()}@example.com`, passwordHash: 'x' });
    const app = await createApp(svc.store.db, svc.secret, user.id, {
      name: 'app',
      useCase: 'Defi',
      chain: 'ethereum',
      services: ['node-api'],
    });
    await setAllowlist(svc.store.db, user.id, app.id, 'origin', ['https://dapp.example']);
    await setAllowlist(svc.store.db, user.id, app.id, 'method', ['eth_chainId', 'eth_subscribe']);
    await svc.access.sync();
    const url = `${toWs(svc.url)}/mainnet/v2/${app.key}`;
    const wrong = await refusedSocket(url, { origin: 'https://evil.example' });
    expect([wrong.single.id, wrong.single.error.code, wrong.single.error.data.reason, wrong.closed.code]).toEqual([
      'first',
      -32041,
      'origin',
      4403,
    ]);
    const c = await new Promise<Raw>((res, rej) => {
      const s = new WebSocket(url, { headers: { origin: 'https://dapp.example' } });
      s.once('open', () => res(new Raw(s)));
      s.once('error', rej);
    });
    try {
      expect((await c.call('eth_chainId')).result).toBe(`0x${svc.networks.mainnet.chainId!.toString(16)}`);
      const refused = await c.call('eth_blockNumber');
      expect([refused.error.code, refused.error.data.reason]).toEqual([-32601, 'method']);
      expect((await c.call('eth_subscribe', ['newHeads'])).result).toMatch(/^0x/);
    } finally {
      c.socket.close();
    }
  }, 30_000);

  it('an app\'s contract-address allowlist on eth_subscribe("logs"): no address or an unlisted one is -32041, as eth_getLogs', async () => {
    const token = svc.seeded.mainnet.token.address;
    const other = svc.seeded.mainnet.accounts[2];
    const user = await createUser(svc.store.db, { email: `${randomUUID()}@example.com`, passwordHash: 'x' });
    const app = await createApp(svc.store.db, svc.secret, user.id, {
      name: 'app',
      useCase: 'Defi',
      chain: 'ethereum',
      services: ['node-api'],
    });
    await setAllowlist(svc.store.db, user.id, app.id, 'address', [token]);
    await svc.access.sync();
    const c = await Raw.open(`${toWs(svc.url)}/mainnet/v2/${app.key}`);
    try {
      for (const filter of [
        {},
        { topics: [TRANSFER_TOPIC] },
        { address: other },
        { address: [token, other] },
        { address: [] },
      ]) {
        const r = await c.call('eth_subscribe', ['logs', filter]);
        expect([r.error?.code, r.error?.data?.reason, r.error?.data?.source], JSON.stringify(filter)).toEqual([
          -32041,
          'address',
          'rpcgate',
        ]);
      }
      const r = await c.call('eth_subscribe', ['logs']);
      expect(r.error?.code).toBe(-32041);
      // The listed contract's logs arrive (and only those: the refused ones above delivered nothing).
      const sub = (await c.call('eth_subscribe', ['logs', { address: token }])).result as string;
      await sendTransfer(7n);
      await until('a log of the listed token', () => c.notifications(sub).length > 0, 20_000);
      const got = c.messages.filter((m) => m.method === 'eth_subscription');
      expect(
        got.every(
          (m) => m.params.subscription === sub && m.params.result.address.toLowerCase() === token.toLowerCase(),
        ),
      ).toBe(true);
      expect(c.closed).toBeUndefined();
    } finally {
      c.socket.close();
    }
  }, 40_000);

  it("a log filter's polls never hand out a log of an address its app no longer lists", async () => {
    const token = svc.seeded.mainnet.token.address;
    const other = svc.seeded.mainnet.accounts[2];
    const user = await createUser(svc.store.db, { email: `${randomUUID()}@example.com`, passwordHash: 'x' });
    const app = await createApp(svc.store.db, svc.secret, user.id, {
      name: 'app',
      useCase: 'Defi',
      chain: 'ethereum',
      services: ['node-api'],
    });
    await setAllowlist(svc.store.db, user.id, app.id, 'address', [token]);
    await svc.access.sync();
    const url = `${svc.url}/mainnet/v2/${app.key}`;
    const call = async (method: string, params: unknown[]): Promise<Json> =>
      await (
        await fetch(url, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
        })
      ).json();
    const id = (await call('eth_newFilter', [{ address: token }])).result as string;
    expect(id).toMatch(/^0x/);
    await sendTransfer(3n);
    await until(
      "the listed token's log in a poll",
      async () => ((await call('eth_getFilterChanges', [id])).result as Json[]).length > 0,
      20_000,
    );
    // The app's allowlist changes: the token is no longer listed. Polls go on, but hand out none of its logs.
    await setAllowlist(svc.store.db, user.id, app.id, 'address', [other]);
    await svc.access.sync();
    await sendTransfer(4n);
    const seen: Json[] = [];
    const head0 = Number(await rpc<string>(anvilUrl, 'eth_blockNumber', []));
    await until(
      '3 more blocks',
      async () => {
        seen.push(...((await call('eth_getFilterChanges', [id])).result as Json[]));
        return Number(await rpc<string>(anvilUrl, 'eth_blockNumber', [])) >= head0 + 3;
      },
      20_000,
    );
    seen.push(...((await call('eth_getFilterChanges', [id])).result as Json[]));
    seen.push(...((await call('eth_getFilterLogs', [id])).result as Json[]));
    expect(seen).toEqual([]);
  }, 40_000);

  it('too many subscriptions on a connection: -32005 (reason subscriptions), the others keep working', async () => {
    const c = await Raw.open(ws.B);
    try {
      const ids: string[] = [];
      for (let i = 0; i < 3; i++) ids.push((await c.call('eth_subscribe', ['newHeads'])).result);
      const r = await c.call('eth_subscribe', ['logs', { address: svc.seeded.mainnet.token.address }]);
      expect([r.error.code, r.error.data.reason]).toEqual([-32005, 'subscriptions']);
      await until('notifications on all three', () => ids.every((id) => c.notifications(id).length > 0));
      expect(c.closed).toBeUndefined();
    } finally {
      c.socket.close();
    }
  }, 30_000);

  // Issue 26 item 3: the cap under a race, on every credential kind — a batch of 50 eth_subscribe and 50 single ones
  // sent at once on one connection: exactly maxSubscriptionsPerConnection (3) are created.
  it('100 eth_subscribe at once (a batch of 50 and 50 singles) on one connection: exactly 3 subscriptions, on a development key, an app and a network key', async () => {
    const user = await createUser(svc.store.db, { email: `${randomUUID()}@example.com`, passwordHash: 'x' });
    const app = await createApp(svc.store.db, svc.secret, user.id, {
      name: 'ws',
      useCase: 'Defi',
      chain: 'ethereum',
      services: ['node-api'],
    });
    await svc.access.sync();
    const urls = {
      'development key': ws.A,
      app: `${toWs(svc.url)}/mainnet/v2/${app.key}`,
      'network key': `${toWs(svc.url)}/mainnet/${await newBKey()}`,
    };
    for (const [kind, url] of Object.entries(urls)) {
      const c = await Raw.open(url);
      try {
        const sub = (id: number) => ({
          jsonrpc: '2.0',
          id,
          method: 'eth_subscribe',
          params: [id % 2 ? 'newHeads' : 'newPendingTransactions'],
        });
        c.socket.send(JSON.stringify(Array.from({ length: 50 }, (_, i) => sub(i))));
        for (let i = 50; i < 100; i++) c.socket.send(JSON.stringify(sub(i)));
        const answers = await until(`${kind}: 100 answers`, () => {
          const flat = c.messages.flatMap((m) => (Array.isArray(m) ? m : m.id !== undefined ? [m] : []));
          // A batch refused whole by a limit is one answer without an id (the network key's daily quota of 6).
          return flat.length >= 51 && (flat.length === 100 || flat.some((m) => m.id === null)) && flat;
        });
        const created = answers.filter((m) => typeof m.result === 'string');
        const other = answers.filter(
          (m) =>
            !(typeof m.result === 'string') &&
            !(m.error?.code === -32005 && ['subscriptions', 'quota', 'rate'].includes(m.error.data?.reason)),
        );
        expect(other, kind).toEqual([]);
        expect([kind, created.length]).toEqual([kind, 3]);
        expect(
          answers.some((m) => m.error?.data?.reason === 'subscriptions'),
          kind,
        ).toBe(true);
      } finally {
        c.socket.close();
      }
    }
  }, 30_000);

  it('keep-alive: a peer that does not answer pings is terminated', async () => {
    const before = svc.websockets.connections();
    const s = new WebSocket(ws.A, { autoPong: false });
    s.on('error', () => undefined);
    await new Promise((r) => s.once('open', r));
    expect(svc.websockets.connections()).toBe(before + 1);
    // pingIntervalMs 1000: pinged at the first tick, terminated at the next one.
    await until('the server to drop it', () => svc.websockets.connections() === before, 5000);
    const code = await new Promise<number>((r) =>
      s.readyState === WebSocket.CLOSED ? r(1006) : s.once('close', (c) => r(c)),
    );
    expect(code).toBe(1006);
  }, 10_000);

  it('a message over maxPayloadBytes closes the connection with 1009', async () => {
    const c = await Raw.open(ws.A);
    c.socket.send(
      JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_chainId', params: [], pad: 'x'.repeat(20_000) }),
    );
    expect((await c.waitClosed()).code).toBe(1009);
  });

  it('quota exhausted mid-subscription: every notification counts; a final error notification, then close 4402', async () => {
    const key = await newBKey();
    const c = await Raw.open(`${toWs(svc.url)}/mainnet/${key}`);
    const sub = (await c.call('eth_subscribe', ['newHeads'])).result as string; // 1 of the quota
    const closed = await c.waitClosed(QUOTA * 1000 + 10_000);
    expect(closed).toEqual({ code: 4402, reason: 'quota exhausted' });
    const notes = c.notifications(sub);
    const results = notes.filter((m) => m.params.result !== undefined);
    expect(results).toHaveLength(QUOTA - 1);
    const last = notes[notes.length - 1];
    expect([last.params.error.code, last.params.error.data.reason]).toEqual([-32005, 'quota']);
    // Delivered notifications are metered as calls of method eth_subscription (Prometheus, usage rows).
    const metrics = await (await fetch(`${svc.url}/metrics`)).text();
    expect(metrics).toMatch(/rpcgate_[a-z_]+\{[^}]*method="eth_subscription"[^}]*\} [1-9]/);
    // And the key is out over HTTP too (the same counter).
    const r = await fetch(`${svc.url}/mainnet/${key}`, {
      method: 'POST',
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_chainId' }),
    });
    expect([r.status, r.headers.get('retry-after')]).toEqual([402, null]);
  }, 30_000);

  it('a slow consumer is closed (4008 sent, connection cut) instead of being buffered without bound', async () => {
    const before = svc.websockets.connections();
    const c = await Raw.open(ws.A);
    expect(svc.websockets.connections()).toBe(before + 1);
    // Stop reading, then ask for ~5 × 60 copies of the contract (rpc.discover, ~150 KB each).
    (c.socket as unknown as { _socket: { pause(): void } })._socket.pause();
    const batch = JSON.stringify(
      Array.from({ length: 60 }, (_, i) => ({ jsonrpc: '2.0', id: i, method: 'rpc.discover' })),
    );
    for (let i = 0; i < 5; i++) c.socket.send(batch);
    const rss0 = process.memoryUsage().rss;
    await until('the server to drop the connection', () => svc.websockets.connections() === before, 20_000);
    // Nothing like 45 MB was kept for it.
    expect(process.memoryUsage().rss - rss0).toBeLessThan(40 * 1024 * 1024);
    (c.socket as unknown as { _socket: { resume(): void } })._socket.resume();
    const closed = await c.waitClosed();
    expect([1006, 4008]).toContain(closed.code);
  }, 40_000);

  it('SIGTERM of an rpcgate process closes its sockets with 1001 and exits 0', async () => {
    const d = mkdtempSync(join(tmpdir(), 'rpcgate-ws-child-'));
    dirs.push(d);
    const key = 'ws-sigterm-key-1';
    const config = {
      port: 0,
      logLevel: 'silent',
      dataDir: d,
      devKey: false,
      keys: [key],
      networks: { mainnet: { upstreams: [anvilUrl], blockTime: 1 } },
    };
    const proc = spawn(
      process.execPath,
      ['--import', 'tsx', join(ROOT, 'test/helpers/limits-child.ts'), JSON.stringify(config)],
      { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] },
    );
    const killer = setTimeout(() => proc.kill('SIGKILL'), 60_000);
    try {
      const url = await new Promise<string>((res, rej) => {
        let out = '';
        proc.stdout!.on('data', (b: Buffer) => {
          out += b;
          const m = /READY (\S+)/.exec(out);
          if (m) res(m[1]);
        });
        proc.once('exit', (code) => rej(new Error(`child exited ${code}`)));
      });
      const c = await Raw.open(`${toWs(url)}/mainnet/${key}`);
      const sub = (await c.call('eth_subscribe', ['newHeads'])).result as string;
      await until('a notification', () => c.notifications(sub).length > 0);
      const exited = new Promise<number | null>((r) => proc.once('exit', (code) => r(code)));
      proc.kill('SIGTERM');
      expect((await c.waitClosed()).code).toBe(1001);
      expect(await exited).toBe(0);
    } finally {
      clearTimeout(killer);
      if (proc.exitCode === null) proc.kill('SIGKILL');
    }
  }, 90_000);
});

/** A scripted chain for the feed alone: blocks by number (a reorg replaces some), failures on demand. */
function scriptedChain() {
  const blocks: Json[] = [];
  const logs = new Map<string, Json[]>();
  let fail = 0;
  const hash = (n: number, fork: string) => `0x${(fork + n.toString(16)).padStart(64, '0')}`;
  const add = (n: number, fork: string, withLog: boolean) => {
    const h = hash(n, fork);
    blocks[n] = {
      number: `0x${n.toString(16)}`,
      hash: h,
      parentHash: n === 0 ? hash(0, 'f') : blocks[n - 1].hash,
      transactions: [],
    };
    logs.set(
      h,
      withLog
        ? [
            {
              address: `0x${'aa'.repeat(20)}`,
              topics: [`0x${'11'.repeat(32)}`],
              blockHash: h,
              blockNumber: blocks[n].number,
              removed: false,
            },
          ]
        : [],
    );
  };
  const upstream = {
    calls: [] as string[],
    async call(method: string, params: readonly unknown[] = []): Promise<unknown> {
      upstream.calls.push(method);
      if (fail > 0) {
        fail--;
        throw new Error('upstream down');
      }
      if (method === 'eth_blockNumber') return `0x${(blocks.length - 1).toString(16)}`;
      if (method === 'eth_getBlockByNumber')
        return (params[0] === 'latest' ? blocks[blocks.length - 1] : blocks[Number(params[0])]) ?? null;
      if (method === 'eth_getBlockByHash') return blocks.find((b) => b.hash === params[0]) ?? null;
      if (method === 'eth_getLogs') return logs.get((params[0] as Json).blockHash) ?? [];
      throw new Error(`unexpected ${method}`);
    },
  };
  return { upstream, add, failNext: (n: number) => (fail = n) };
}

function collector(kind: FeedSubscriber['kind'], filter?: FeedSubscriber['filter']): FeedSubscriber & { got: Json[] } {
  const got: Json[] = [];
  return { kind, filter, got, deliver: (r: unknown) => void got.push(r) };
}

describe('the shared feed (scripted upstream)', () => {
  const logger = pino({ level: 'silent' });

  it('resumes after upstream failures without gaps or duplicates', async () => {
    const chain = scriptedChain();
    for (let n = 0; n <= 5; n++) chain.add(n, 'a', false);
    const head = new ChainHead({
      network: 'x',
      upstream: chain.upstream,
      pollMs: 1_000_000,
      idleMs: 1_000_000,
      finalityDepth: 64,
    });
    const feed = new NetworkFeed('x', { head, upstream: chain.upstream, pollMs: 1_000_000, logger });
    const heads = collector('newHeads');
    feed.add(heads);
    await feed.tick();
    // Block 5 was the head before the subscriber came: not sent (a node sends only blocks that arrive after).
    expect(heads.got).toEqual([]);
    chain.add(6, 'a', false);
    await feed.tick();
    expect(heads.got.map((h) => Number(h.number))).toEqual([6]);
    expect(heads.got[0].transactions).toBeUndefined();
    for (let n = 7; n <= 9; n++) chain.add(n, 'a', false);
    chain.failNext(1);
    await feed.tick(); // fails: nothing delivered
    expect(heads.got).toHaveLength(1);
    await feed.tick(); // fills 7..9 in order
    expect(heads.got.map((h) => Number(h.number))).toEqual([6, 7, 8, 9]);
    await feed.tick(); // nothing new: nothing twice
    expect(heads.got).toHaveLength(4);
    feed.remove(heads);
    feed.stop();
  });

  it("a subscriber of an idle head has its place only once the head's first read is back: a block mined meanwhile is not lost after the answer", async () => {
    const chain = scriptedChain();
    for (let n = 0; n <= 5; n++) chain.add(n, 'a', false);
    // The head's first read of "latest" is held on its way; block 6 is mined meanwhile, so the read brings block 6.
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let held = 0;
    const upstream = {
      async call(method: string, params: readonly unknown[] = []): Promise<unknown> {
        if (method === 'eth_getBlockByNumber' && params[0] === 'latest' && held++ === 0) await gate;
        return chain.upstream.call(method, params);
      },
    };
    const head = new ChainHead({ network: 'x', upstream, pollMs: 1_000_000, idleMs: 1_000_000, finalityDepth: 64 });
    const feed = new NetworkFeed('x', { head, upstream, pollMs: 1_000_000, logger });
    const heads = collector('newHeads');
    let placedAt: number | undefined;
    const placed = feed.add(heads);
    expect(placed).toBeInstanceOf(Promise);
    void placed!.then(() => (placedAt = head.head?.number));
    await until('the head to ask for latest', () => held > 0 || undefined);
    chain.add(6, 'a', false); // mined after the subscription, before its place is known
    await sleep(20);
    expect(placedAt).toBeUndefined(); // no answer yet: the client could not count on block 6
    release();
    await placed;
    expect(placedAt).toBe(6); // placed after the block the read brought
    // Every block after the answer reaches it (a subscription answered before the read would have been placed the
    // same way, yet its client could have seen its id before block 6 was mined: block 6 would be lost to it).
    chain.add(7, 'a', false);
    await feed.tick();
    expect(heads.got.map((h) => Number(h.number))).toEqual([7]);
    // The head is following the chain now: a second subscriber has its place at once.
    expect(feed.add(collector('newHeads'))).toBeUndefined();
    feed.stop();
  });

  it('eth_subscribe on an idle head that cannot read is answered after the wait bound (2 s), and the subscription works when the node comes back', async () => {
    const chain = scriptedChain();
    for (let n = 0; n <= 2; n++) chain.add(n, 'a', false);
    let down = true;
    const upstream = {
      async call(method: string, params: readonly unknown[] = []): Promise<unknown> {
        if (down) throw new Error('node down');
        return chain.upstream.call(method, params);
      },
    };
    const { subs, head } = subscriptionsOn('x', { upstream, pollMs: 50 });
    const c = fakeConnection('x', { principal: { kind: 'static' } });
    const t0 = performance.now();
    const id = await subs.subscribe(['newHeads'], c.ctx);
    const waited = performance.now() - t0;
    expect(id).toMatch(/^0x[0-9a-f]{32}$/);
    expect(waited).toBeGreaterThanOrEqual(1_900);
    expect(waited).toBeLessThan(4_000);
    down = false; // the node is back: the head's next move places the subscription, later blocks reach it
    await until('the head to follow the chain', () => head.recentHead);
    chain.add(3, 'a', false);
    await until('block 3 notified', () => c.frames.find((t) => t.includes(id)));
    subs.stop();
  }, 15_000);

  it('fans out from a random subscriber each block: every one is reached first sometimes, each gets every block in order', async () => {
    const chain = scriptedChain();
    for (let n = 0; n <= 1; n++) chain.add(n, 'a', false);
    const head = new ChainHead({
      network: 'x',
      upstream: chain.upstream,
      pollMs: 1_000_000,
      idleMs: 1_000_000,
      finalityDepth: 64,
    });
    const feed = new NetworkFeed('x', { head, upstream: chain.upstream, pollMs: 1_000_000, logger });
    // Writing to a socket costs ~10 µs: in a fixed order the last subscriber of 1,000 would always wait ~10 ms.
    const order: number[][] = [];
    const subs = Array.from({ length: 5 }, (_, i) => {
      const c = collector('newHeads');
      const deliver = c.deliver;
      c.deliver = (r, json) => {
        (order.at(-1) as number[]).push(i);
        deliver(r, json);
      };
      return c;
    });
    for (const s of subs) feed.add(s);
    await feed.tick();
    const BLOCKS = 60;
    for (let n = 2; n < 2 + BLOCKS; n++) {
      chain.add(n, 'a', false);
      order.push([]);
      await feed.tick();
    }
    const firsts = new Set(order.map((o) => o[0]));
    expect(firsts.size).toBe(5); // P(some one never first in 60 blocks) = 5 · 0.8^60 ≈ 7e-6
    for (const o of order) expect([...o].sort()).toEqual([0, 1, 2, 3, 4]);
    for (const s of subs)
      expect(s.got.map((h) => Number(h.number))).toEqual(Array.from({ length: BLOCKS }, (_, i) => i + 2));
    for (const s of subs) feed.remove(s);
    feed.stop();
  });

  it("a reorg: removed: true for the dropped blocks' logs, then the new branch; the last subscriber stops the polling", async () => {
    const chain = scriptedChain();
    for (let n = 0; n <= 3; n++) chain.add(n, 'a', false);
    const head = new ChainHead({
      network: 'x',
      upstream: chain.upstream,
      pollMs: 1_000_000,
      idleMs: 1_000_000,
      finalityDepth: 64,
    });
    const feed = new NetworkFeed('x', { head, upstream: chain.upstream, pollMs: 1_000_000, logger });
    const logs = collector('logs', { address: [`0x${'aa'.repeat(20)}`] });
    const other = collector('logs', { address: [`0x${'bb'.repeat(20)}`] });
    const heads = collector('newHeads');
    feed.add(logs);
    feed.add(other);
    feed.add(heads);
    await feed.tick(); // at 3
    chain.add(4, 'a', true);
    chain.add(5, 'a', true);
    await feed.tick();
    expect(logs.got.map((l) => [Number(l.blockNumber), l.removed])).toEqual([
      [4, false],
      [5, false],
    ]);
    // Blocks 4 and 5 are replaced by 4', 5', 6' (only 5' has a log).
    chain.add(4, 'b', false);
    chain.add(5, 'b', true);
    chain.add(6, 'b', false);
    await feed.tick();
    expect(logs.got.map((l) => [Number(l.blockNumber), l.removed, l.blockHash.slice(-2)])).toEqual([
      [4, false, 'a4'],
      [5, false, 'a5'],
      [5, true, 'a5'],
      [4, true, 'a4'],
      [5, false, 'b5'],
    ]);
    expect(other.got).toEqual([]);
    // Not 3a: the head when they subscribed.
    expect(heads.got.map((h) => `${Number(h.number)}${h.hash.slice(-2, -1)}`)).toEqual(['4a', '5a', '4b', '5b', '6b']);
    feed.remove(logs);
    feed.remove(other);
    feed.remove(heads);
    const calls = chain.upstream.calls.length;
    await sleep(50);
    expect(chain.upstream.calls.length).toBe(calls);
    expect(feed.size).toBe(0);
    feed.stop();
  });
});
