// Bounded memory per socket (issue 26, finding 5): notifications held back by a key's per-second rate limit used to
// queue without bound (198 newHeads subscriptions on 2 sockets, 300 blocks → 59,400 queued, RSS 101 → 256 MB).
// Here, against a real rpcgate process in front of a real anvil: an app key limited to 250 calls per second opens 2
// sockets with 100 newHeads subscriptions each, then anvil mines 300 blocks at once (60,000 notifications). The child's
// RSS (/proc/<pid>/status VmRSS) is sampled throughout and must stay within 40 MB of its baseline; each socket ends
// with a last notification per subscription carrying -32005 (reason `notification-queue`, `data.setting` naming the
// websocket.* bound) and the documented close code 4008, and the process keeps serving.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Limiter } from '../src/gateway/limits/index.js';
import { createClient } from '../generated/account/client.js';
import { rpc, startAnvil, type Anvil } from '../src/gateway/chain/index.js';
import { cookieFetch, signUpAndLogIn } from './helpers/account.js';
import { startRpcgateChild, type RpcgateChild } from './helpers/rpcgate-child.js';
import { Raw, until } from './helpers/ws-client.js';
import { fakeConnection, subscriptionsOn } from './helpers/fake-socket.js';

type Json = any; // eslint-disable-line @typescript-eslint/no-explicit-any

const SUBS_PER_SOCKET = 100;
const BLOCKS = 300;
const MB = 1024 * 1024;

let anvil: Anvil;
let child: RpcgateChild;
let dir: string;

const rssOf = (pid: number): number =>
  Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) * 1024;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

beforeAll(async () => {
  // Blocks only when the test mines them.
  anvil = await startAnvil({ chainId: 31_377, blockTime: 3600 });
  dir = mkdtempSync(join(tmpdir(), 'rpcgate-wsq-'));
  child = await startRpcgateChild({
    port: 0,
    logLevel: 'warn',
    dataDir: dir,
    networks: { mainnet: { upstreams: [anvil.url], chainId: 31_377, blockTime: 1 }, testnet: null },
    limits: { a: { perSecond: 250, daily: null, monthly: null } },
    // Queue bounds at their defaults (10,000 notifications, 8 MiB): the defaults must hold this.
    websocket: { pollIntervalMs: 100 },
  });
}, 120_000);

afterAll(async () => {
  await child?.stop();
  await anvil?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** Opens a socket and subscribes `n` times to newHeads in one batch; the subscription ids. */
async function subscribed(url: string, n: number): Promise<{ c: Raw; ids: string[] }> {
  const c = await Raw.open(url);
  c.socket.send(
    JSON.stringify(
      Array.from({ length: n }, (_, i) => ({
        jsonrpc: '2.0',
        id: i + 1,
        method: 'eth_subscribe',
        params: ['newHeads'],
      })),
    ),
  );
  const answer = await until(
    'the batch of subscriptions',
    () => c.messages.find((m) => Array.isArray(m)) as Json[] | undefined,
  );
  const ids = answer.map((a: Json) => a.result as string);
  expect(
    ids.every((id) => typeof id === 'string'),
    JSON.stringify(answer.find((a: Json) => a.error)),
  ).toBe(true);
  return { c, ids };
}

it('200 newHeads subscriptions, 300 blocks under a per-second limit: RSS stays flat, each socket ends with the error and 4008', async () => {
  const api = createClient({ url: `${child.url}/api`, fetch: cookieFetch() });
  await signUpAndLogIn(api, { email: `wsq-${Date.now()}@example.com`, password: 'correct horse battery staple' });
  const app = await api.request('apps_create', [
    { name: 'flood', useCase: 'Analytics', chain: 'ethereum', services: ['node-api'] },
  ]);
  const url = `${child.url.replace(/^http/, 'ws')}/mainnet/v2/${app.key}`;
  const sockets = [await subscribed(url, SUBS_PER_SOCKET)];
  await sleep(1100); // the next second: 100 more subscriptions fit the 250/s limit
  sockets.push(await subscribed(url, SUBS_PER_SOCKET));

  const pid = child.proc.pid!;
  await sleep(1500);
  const baseline = rssOf(pid);
  // In steps of 100: a jump the head sees at once beyond MAX_WALK (256) is not connected block by block (the head
  // restarts from the new block, one notification per subscription), and one poll seeing all 300 made this flaky.
  for (let mined = 0; mined < BLOCKS; mined += 100) {
    await rpc(anvil.url, 'anvil_mine', ['0x64']);
    await sleep(400); // rpcgate polls every 100 ms: it sees each step before the next
  }

  let peak = baseline;
  const end = Date.now() + 30_000;
  // Sample until both sockets closed and 2 s more (or 30 s): a queue growing without bound shows in the peak.
  let closedAt: number | undefined;
  while (Date.now() < end && (closedAt === undefined || Date.now() - closedAt < 2000)) {
    peak = Math.max(peak, rssOf(pid));
    if (closedAt === undefined && sockets.every((s) => s.c.closed !== undefined)) closedAt = Date.now();
    await sleep(100);
  }
  const growth = peak - baseline;
  console.log(
    `child RSS baseline ${(baseline / MB).toFixed(1)} MB, peak ${(peak / MB).toFixed(1)} MB (+${(growth / MB).toFixed(1)} MB)`,
  );
  expect(growth).toBeLessThan(40 * MB);

  for (const { c, ids } of sockets) {
    expect(c.closed).toEqual({ code: 4008, reason: 'slow consumer: notification queue full' });
    for (const id of ids) {
      const notes = c.notifications(id);
      const last = notes[notes.length - 1];
      expect(last?.params.error, `subscription ${id}`).toBeDefined();
      expect(last.params.error.code).toBe(-32005);
      expect(last.params.error.data).toMatchObject({ source: 'rpcgate', reason: 'notification-queue' });
      expect(['websocket.maxQueuedNotifications', 'websocket.maxQueuedBytes']).toContain(
        last.params.error.data.setting,
      );
      expect(last.params.error.data.limit).toBe(
        last.params.error.data.setting === 'websocket.maxQueuedBytes' ? 8_388_608 : 10_000,
      );
      expect(last.params.error.message).toContain(last.params.error.data.setting);
      // Only what the limit let through came before it: far fewer than the 300 blocks.
      expect(notes.length).toBeLessThan(BLOCKS);
    }
  }
  // The process is unharmed: it still answers, and a new socket subscribes.
  const r = await fetch(`${child.url}/mainnet/v2/${app.key}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_blockNumber', params: [] }),
  });
  expect((await r.json()).result).toMatch(/^0x/);
  const again = await subscribed(url, 1);
  again.c.socket.close();
}, 120_000);

describe('the queue bounds, each on its own (in process)', () => {
  /** A connection that records frames and its close; a limiter that holds everything back (per-second refusal). */
  function harness(maxQueued: number, maxQueuedBytes: number) {
    const c = fakeConnection('mainnet', {
      principal: { kind: 'app', id: 'app-1', limitSubject: { kind: 'app', id: 'app-1' } },
    });
    const limiter = {
      consume: async () => ({ allowed: false, limit: 1, remaining: 0, resetAt: Date.now() + 1000, period: 'second' }),
    } as unknown as Limiter;
    // The feed's upstream never answers: notifications are delivered by hand.
    const { subs } = subscriptionsOn('mainnet', { maxQueued, maxQueuedBytes, limiter });
    // The head never reads here, so the answers wait for it (up to their bound); the ids are the connection's now.
    for (let i = 0; i < 2; i++) void subs.subscribe(['newHeads'], c.ctx);
    const ids = [...(c.conn.state as { subs: Map<string, unknown> }).subs.keys()];
    return {
      subs,
      ids,
      deliver: c.deliver,
      closed: c.closed,
      /** The frames written so far, parsed. */
      get frames(): Json[] {
        return c.frames.map((f) => JSON.parse(f));
      },
    };
  }

  it('count: one notification past websocket.maxQueuedNotifications ends every subscription with the error, then 4008', () => {
    const h = harness(5, 1_000_000);
    for (let i = 0; i < 2; i++) h.deliver({ number: `0x${i}` }); // 2 subscriptions × 2 = 4 queued
    expect(h.closed()).toBeUndefined();
    h.deliver({ number: '0x2' }); // the 5th fits, the 6th does not
    expect(h.closed()).toEqual([4008, 'slow consumer: notification queue full']);
    expect(h.frames.map((f) => [f.params.subscription, f.params.error?.data])).toEqual(
      h.ids.map((id) => [
        id,
        { source: 'rpcgate', reason: 'notification-queue', limit: 5, setting: 'websocket.maxQueuedNotifications' },
      ]),
    );
    expect(h.subs.size).toBe(0);
    h.deliver({ number: '0x3' }); // after the end: nothing more is queued or sent
    expect(h.frames).toHaveLength(2);
    h.subs.stop();
  });

  it('bytes: a notification that would pass websocket.maxQueuedBytes ends the connection the same way', () => {
    const h = harness(1_000_000, 2048);
    h.deliver({ extraData: `0x${'ab'.repeat(400)}` }); // 2 × ~900 characters
    expect(h.closed()).toBeUndefined();
    h.deliver({ extraData: `0x${'ab'.repeat(400)}` });
    expect(h.closed()?.[0]).toBe(4008);
    expect(
      h.frames.every(
        (f) => f.params.error.data.setting === 'websocket.maxQueuedBytes' && f.params.error.data.limit === 2048,
      ),
    ).toBe(true);
    expect(h.frames).toHaveLength(2);
    h.subs.stop();
  });
});
