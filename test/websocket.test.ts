// The node API over WebSocket (packages/toolkit/src/ws, src/gateway/server/ws-route.ts, src/gateway/subscriptions) against a
// real rpcgate in front of its embedded anvil (blockTime 1 s, so the chain moves): ethers v6 WebSocketProvider on both
// URL shapes (calls, on('block'), on(filter) with a Transfer sent here), viem's webSocket transport, web3.js v4
// subscriptions, then the refusals and bounds with a raw `ws` client: bad key / wrong network / per-key cap at the
// upgrade (HTTP 401/403/429 with a JSON body), too many subscriptions, a message over the size cap (1009), a key's
// quota running out mid-stream (final error notification, close 4429), a slow consumer (closed, 4008, not buffered),
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
import { pino } from 'pino';

const ROOT = resolve(import.meta.dirname, '..');
const TRANSFER = new Interface(['event Transfer(address indexed from, address indexed to, uint256 value)', 'function transfer(address to, uint256 amount)']);
const TRANSFER_TOPIC = TRANSFER.getEvent('Transfer')!.topicHash;
type Json = any; // eslint-disable-line @typescript-eslint/no-explicit-any

const dirs: string[] = [];
let svc: RunningService;
let anvilUrl: string;
let ws: { A: string; B: string };
const QUOTA = 6;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const toWs = (u: string) => u.replace(/^http/, 'ws');



/** An upgrade that must be refused: its HTTP status and JSON body (via ws' 'unexpected-response'). */
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
    websocket: { maxPayloadBytes: 16_384, maxInFlight: 32, maxBufferedBytes: 65_536, pingIntervalMs: 1000, maxConnectionsPerKey: 4, maxSubscriptionsPerConnection: 3, pollIntervalMs: 0 },
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
      await p.on({ address: svc.seeded.mainnet.token.address, topics: [TRANSFER_TOPIC] }, (log: Log) => void logs.push(log));
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
    const unwatch = client.watchBlockNumber({ onBlockNumber: (n) => void seen.push(n), onError: (e) => void errors.push(e), emitMissed: true });
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
      const [first] = await until('a notification', () => (c.notifications(sub).length > 0 ? c.notifications(sub) : undefined));
      expect(Object.keys(first).sort()).toEqual(['jsonrpc', 'method', 'params']);
      expect(first.params.result.number).toMatch(/^0x/);
      expect(first.params.result.transactions).toBeUndefined();
      expect((await c.call('eth_unsubscribe', [sub])).result).toBe(true);
      expect((await c.call('eth_unsubscribe', [sub])).result).toBe(false);
      const after = c.notifications(sub).length;
      await sleep(2500);
      expect(c.notifications(sub).length).toBe(after);
      // A batch over the socket works as over HTTP.
      c.socket.send(JSON.stringify([{ jsonrpc: '2.0', id: 'a', method: 'eth_chainId' }, { jsonrpc: '2.0', method: 'eth_blockNumber' }]));
      const batch = await until('batch answer', () => c.messages.find((m) => Array.isArray(m)));
      expect(batch).toEqual([{ jsonrpc: '2.0', id: 'a', result: '0x' + svc.networks.mainnet.chainId!.toString(16) }]);
      // Bad params are the contract's -32602.
      expect((await c.call('eth_subscribe', ['syncingX'])).error.code).toBe(-32602);
    } finally {
      c.socket.close();
    }
    const r = await fetch(svc.urls.mainnet.A, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_subscribe', params: ['newHeads'] }) });
    const body = (await r.json()) as Json;
    expect([r.status, body.error.code]).toEqual([200, -32601]);
    expect(body.error.message).toMatch(/notifications not supported/);
  }, 30_000);
});

describe('refusals and bounds', () => {
  it('at the upgrade: bad key 401, wrong network 403, unknown path 404, per-key cap 429 — HTTP with a JSON-RPC body', async () => {
    const bad = await refusedUpgrade(`${toWs(svc.url)}/mainnet/${'x'.repeat(32)}`);
    expect([bad.status, bad.contentType, bad.body.error.code, bad.body.error.data.reason]).toEqual([401, 'application/json', -32016, 'key']);
    const key = await newBKey();
    const other = await refusedUpgrade(`${toWs(svc.url)}/testnet/${key}`);
    expect([other.status, other.body.error.code, other.body.error.data.reason]).toEqual([403, -32041, 'network']);
    const none = await refusedUpgrade(`${toWs(svc.url)}/nowhere/${key}`);
    expect(none.status).toBe(404);

    const before = svc.websockets.connections();
    const open = await Promise.all([1, 2, 3, 4].map(() => Raw.open(`${toWs(svc.url)}/mainnet/${key}`)));
    const fifth = await refusedUpgrade(`${toWs(svc.url)}/mainnet/${key}`);
    expect([fifth.status, fifth.body.error.code, fifth.body.error.data.reason]).toEqual([429, -32005, 'connections']);
    for (const c of open) c.socket.close();
    await Promise.all(open.map((c) => c.waitClosed()));
    // Closed sockets free their places.
    await until('the server to see them closed', () => svc.websockets.connections() === before);
    const again = await Raw.open(`${toWs(svc.url)}/mainnet/${key}`);
    again.socket.close();
  }, 30_000);

  it('an app\'s origin allowlist at the upgrade (403 reason origin); its method allowlist per call over the socket', async () => {
    const user = await createUser(svc.store.db, { email: `${randomUUID()}@example.com`, passwordHash: 'x' });
    const app = await createApp(svc.store.db, svc.secret, user.id, { name: 'app', useCase: 'Defi', chain: 'ethereum', services: ['node-api'] });
    await setAllowlist(svc.store.db, user.id, app.id, 'origin', ['https://dapp.example']);
    await setAllowlist(svc.store.db, user.id, app.id, 'method', ['eth_chainId', 'eth_subscribe']);
    await svc.access.sync();
    const url = `${toWs(svc.url)}/mainnet/v2/${app.key}`;
    const wrong = await new Promise<{ status: number; body: Json }>((res, rej) => {
      const s = new WebSocket(url, { headers: { origin: 'https://evil.example' } });
      s.on('error', () => undefined);
      s.once('open', () => rej(new Error('upgrade accepted')));
      s.once('unexpected-response', (_req, r) => {
        let body = '';
        r.on('data', (c: Buffer) => (body += c));
        r.on('end', () => res({ status: r.statusCode!, body: JSON.parse(body) }));
      });
    });
    expect([wrong.status, wrong.body.error.code, wrong.body.error.data.reason]).toEqual([403, -32041, 'origin']);
    const c = await new Promise<Raw>((res, rej) => {
      const s = new WebSocket(url, { headers: { origin: 'https://dapp.example' } });
      s.once('open', () => res(new Raw(s)));
      s.once('error', rej);
    });
    try {
      expect((await c.call('eth_chainId')).result).toBe('0x' + svc.networks.mainnet.chainId!.toString(16));
      const refused = await c.call('eth_blockNumber');
      expect([refused.error.code, refused.error.data.reason]).toEqual([-32601, 'method']);
      expect((await c.call('eth_subscribe', ['newHeads'])).result).toMatch(/^0x/);
    } finally {
      c.socket.close();
    }
  }, 30_000);

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

  it('keep-alive: a peer that does not answer pings is terminated', async () => {
    const before = svc.websockets.connections();
    const s = new WebSocket(ws.A, { autoPong: false });
    s.on('error', () => undefined);
    await new Promise((r) => s.once('open', r));
    expect(svc.websockets.connections()).toBe(before + 1);
    // pingIntervalMs 1000: pinged at the first tick, terminated at the next one.
    await until('the server to drop it', () => svc.websockets.connections() === before, 5000);
    const code = await new Promise<number>((r) => (s.readyState === WebSocket.CLOSED ? r(1006) : s.once('close', (c) => r(c))));
    expect(code).toBe(1006);
  }, 10_000);

  it('a message over maxPayloadBytes closes the connection with 1009', async () => {
    const c = await Raw.open(ws.A);
    c.socket.send(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_chainId', params: [], pad: 'x'.repeat(20_000) }));
    expect((await c.waitClosed()).code).toBe(1009);
  });

  it('quota exhausted mid-subscription: every notification counts; a final error notification, then close 4429', async () => {
    const key = await newBKey();
    const c = await Raw.open(`${toWs(svc.url)}/mainnet/${key}`);
    const sub = (await c.call('eth_subscribe', ['newHeads'])).result as string; // 1 of the quota
    const closed = await c.waitClosed(QUOTA * 1000 + 10_000);
    expect(closed).toEqual({ code: 4429, reason: 'quota exhausted' });
    const notes = c.notifications(sub);
    const results = notes.filter((m) => m.params.result !== undefined);
    expect(results).toHaveLength(QUOTA - 1);
    const last = notes[notes.length - 1];
    expect([last.params.error.code, last.params.error.data.reason]).toEqual([-32005, 'quota']);
    // Delivered notifications are metered as calls of method eth_subscription (Prometheus, usage rows).
    const metrics = await (await fetch(`${svc.url}/metrics`)).text();
    expect(metrics).toMatch(/rpcgate_[a-z_]+\{[^}]*method="eth_subscription"[^}]*\} [1-9]/);
    // And the key is out over HTTP too (the same counter).
    const r = await fetch(`${svc.url}/mainnet/${key}`, { method: 'POST', body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_chainId' }) });
    expect(r.status).toBe(429);
  }, 30_000);

  it('a slow consumer is closed (4008 sent, connection cut) instead of being buffered without bound', async () => {
    const before = svc.websockets.connections();
    const c = await Raw.open(ws.A);
    expect(svc.websockets.connections()).toBe(before + 1);
    // Stop reading, then ask for ~5 × 60 copies of the contract (rpc.discover, ~150 KB each).
    (c.socket as unknown as { _socket: { pause(): void } })._socket.pause();
    const batch = JSON.stringify(Array.from({ length: 60 }, (_, i) => ({ jsonrpc: '2.0', id: i, method: 'rpc.discover' })));
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
    const config = { port: 0, logLevel: 'silent', dataDir: d, devKey: false, keys: [key], networks: { mainnet: { upstreams: [anvilUrl], blockTime: 1 } } };
    const proc = spawn(process.execPath, ['--import', 'tsx', join(ROOT, 'test/helpers/limits-child.ts'), JSON.stringify(config)], { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] });
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
  const hash = (n: number, fork: string) => '0x' + (fork + n.toString(16)).padStart(64, '0');
  const add = (n: number, fork: string, withLog: boolean) => {
    const h = hash(n, fork);
    blocks[n] = { number: '0x' + n.toString(16), hash: h, parentHash: n === 0 ? hash(0, 'f') : blocks[n - 1].hash, transactions: [] };
    logs.set(h, withLog ? [{ address: '0x' + 'aa'.repeat(20), topics: ['0x' + '11'.repeat(32)], blockHash: h, blockNumber: blocks[n].number, removed: false }] : []);
  };
  const upstream = {
    calls: [] as string[],
    async call(method: string, params: readonly unknown[] = []): Promise<unknown> {
      upstream.calls.push(method);
      if (fail > 0) {
        fail--;
        throw new Error('upstream down');
      }
      if (method === 'eth_blockNumber') return '0x' + (blocks.length - 1).toString(16);
      if (method === 'eth_getBlockByNumber') return blocks[Number(params[0])] ?? null;
      if (method === 'eth_getLogs') return logs.get((params[0] as Json).blockHash) ?? [];
      throw new Error(`unexpected ${method}`);
    },
  };
  return { upstream, add, failNext: (n: number) => (fail = n) };
}

function collector(kind: FeedSubscriber['kind'], filter?: FeedSubscriber['filter']): FeedSubscriber & { got: Json[] } {
  const got: Json[] = [];
  return { kind, filter, got, deliver: (r) => void got.push(r) };
}

describe('the shared feed (scripted upstream)', () => {
  const logger = pino({ level: 'silent' });

  it('resumes after upstream failures without gaps or duplicates', async () => {
    const chain = scriptedChain();
    for (let n = 0; n <= 5; n++) chain.add(n, 'a', false);
    const feed = new NetworkFeed('x', chain.upstream, 1_000_000, logger);
    const heads = collector('newHeads');
    feed.add(heads);
    await feed.tick();
    expect(heads.got.map((h) => Number(h.number))).toEqual([5]);
    expect(heads.got[0].transactions).toBeUndefined();
    for (let n = 6; n <= 9; n++) chain.add(n, 'a', false);
    chain.failNext(1);
    await feed.tick(); // fails: nothing delivered
    expect(heads.got).toHaveLength(1);
    await feed.tick(); // fills 6..9 in order
    expect(heads.got.map((h) => Number(h.number))).toEqual([5, 6, 7, 8, 9]);
    await feed.tick(); // nothing new: nothing twice
    expect(heads.got).toHaveLength(5);
    feed.remove(heads);
    feed.stop();
  });

  it('a reorg: removed: true for the dropped blocks\' logs, then the new branch; the last subscriber stops the polling', async () => {
    const chain = scriptedChain();
    for (let n = 0; n <= 3; n++) chain.add(n, 'a', false);
    const feed = new NetworkFeed('x', chain.upstream, 1_000_000, logger);
    const logs = collector('logs', { address: ['0x' + 'aa'.repeat(20)] });
    const other = collector('logs', { address: ['0x' + 'bb'.repeat(20)] });
    const heads = collector('newHeads');
    feed.add(logs);
    feed.add(other);
    feed.add(heads);
    await feed.tick(); // at 3
    chain.add(4, 'a', true);
    chain.add(5, 'a', true);
    await feed.tick();
    expect(logs.got.map((l) => [Number(l.blockNumber), l.removed])).toEqual([[4, false], [5, false]]);
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
    expect(heads.got.map((h) => `${Number(h.number)}${h.hash.slice(-2, -1)}`)).toEqual(['3a', '4a', '5a', '4b', '5b', '6b']);
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
