// The WebSocket layer in /metrics and in usage metering, against a running rpcgate on its embedded (moving) chain:
//   - rpcgate_websocket_connections{network} and rpcgate_subscriptions_active{network,kind} follow a real socket and
//     real eth_subscribe calls (1 while open/active), and go back to 0 after unsubscribe and close; every configured
//     network and kind is exported, at 0 when idle;
//   - rpcgate_websocket_notifications_total{network} equals the eth_subscription messages the client received;
//   - usage: a key's calls over the socket and its delivered notifications are stored by method (the notifications as
//     `eth_subscription`), read back through the account API's keys_metrics after a flush;
//   - the dashboard's generated WebSocket examples (ethers, viem) run as programs against the key's ws:// URL.
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startService, type RunningService } from '../src/gateway/server/index.js';
import { account, signUpAndLogIn } from './helpers/account.js';
import { byLabels, strictParse } from './helpers/prometheus.js';
import { wsExamples, WS_URL_PLACEHOLDER } from '../generated/node/examples.js';
import { toWsUrl } from '../src/gateway/web/examples.js';

type Json = any; // eslint-disable-line @typescript-eslint/no-explicit-any

const dirs: string[] = [];
let svc: RunningService;
let offset = 0;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
async function until<T>(
  what: string,
  fn: () => Promise<T | undefined | false> | T | undefined | false,
  ms = 15_000,
): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v !== undefined && v !== false) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

async function scrape(): Promise<Record<string, Record<string, number>>> {
  const res = await fetch(`${svc.url}/metrics`);
  expect(res.status).toBe(200);
  const { samples } = strictParse(await res.text());
  return {
    connections: byLabels(samples, 'rpcgate_websocket_connections'),
    subscriptions: byLabels(samples, 'rpcgate_subscriptions_active'),
    notifications: byLabels(samples, 'rpcgate_websocket_notifications_total'),
  };
}

const idleSubs = (network: string) => ({
  [`kind=logs,network=${network}`]: 0,
  [`kind=newHeads,network=${network}`]: 0,
  [`kind=newPendingTransactions,network=${network}`]: 0,
});

beforeAll(async () => {
  const d = mkdtempSync(join(tmpdir(), 'rpcgate-wsmetrics-'));
  dirs.push(d);
  svc = await startService(
    {
      port: 0,
      logLevel: 'silent',
      dataDir: d,
      devKey: false,
      // testnet's upstream is never reached: it is there to show idle networks exported at 0.
      networks: { mainnet: { blockTime: 1 }, testnet: { upstreams: ['http://127.0.0.1:9'] } },
      websocket: { pollIntervalMs: 0 },
    },
    // Only explicit flushes, and a clock the test moves past the traffic's minute.
    { meter: { now: () => Date.now() + offset, flushIntervalMs: 3_600_000 } },
  );
}, 120_000);

afterAll(async () => {
  await svc?.stop();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe('WebSocket layer in /metrics and usage', () => {
  it('gauges follow a real socket and its subscriptions back to 0; notifications counted and metered as eth_subscription', async () => {
    const from = Date.now() - 60_000;
    const api = account(svc);
    await signUpAndLogIn(api, { email: `${randomUUID()}@example.com`, password: 'ws metrics password' });
    const key = await api.request('keys_create', [{ name: 'ws', network: 'mainnet' }]);
    await svc.access.sync();

    // Before any socket: every network at 0, every kind at 0.
    const idle = await scrape();
    expect(idle.connections).toEqual({ 'network=mainnet': 0, 'network=testnet': 0 });
    expect(idle.subscriptions).toEqual({ ...idleSubs('mainnet'), ...idleSubs('testnet') });
    expect(idle.notifications).toEqual({ 'network=mainnet': 0, 'network=testnet': 0 });

    const url = key.url.replace(/^http/, 'ws');
    expect(url).toMatch(/^ws:\/\/127\.0\.0\.1:\d+\/mainnet\//);
    const messages: Json[] = [];
    let closed = false;
    const s = await new Promise<WebSocket>((res, rej) => {
      const w = new WebSocket(url);
      w.once('open', () => res(w));
      w.once('error', rej);
    });
    s.on('message', (m) => messages.push(JSON.parse(m.toString())));
    s.on('close', () => (closed = true));
    let nextId = 1;
    const call = async (method: string, params: unknown[] = []) => {
      const id = nextId++;
      s.send(JSON.stringify({ jsonrpc: '2.0', id, method, params }));
      const m = await until(`answer to ${method}`, () => messages.find((x) => x.id === id));
      expect(m.error, JSON.stringify(m)).toBeUndefined();
      return m.result;
    };

    expect((await scrape()).connections).toEqual({ 'network=mainnet': 1, 'network=testnet': 0 });
    expect(await call('eth_chainId')).toMatch(/^0x/);
    const heads = await call('eth_subscribe', ['newHeads']);
    const logs = await call('eth_subscribe', ['logs', {}]);
    expect((await scrape()).subscriptions).toEqual({
      ...idleSubs('mainnet'),
      ...idleSubs('testnet'),
      'kind=newHeads,network=mainnet': 1,
      'kind=logs,network=mainnet': 1,
    });

    // The embedded chain moves: wait for a few new heads.
    const notes = () => messages.filter((m) => m.method === 'eth_subscription');
    await until('3 newHeads notifications', () => notes().filter((m) => m.params.subscription === heads).length >= 3);
    expect(await call('eth_unsubscribe', [heads])).toBe(true);
    expect(await call('eth_unsubscribe', [logs])).toBe(true);
    expect((await scrape()).subscriptions).toEqual({ ...idleSubs('mainnet'), ...idleSubs('testnet') });
    await sleep(500); // anything still queued at unsubscribe is sent (and counted) by now
    const delivered = notes().length;
    expect(delivered).toBeGreaterThanOrEqual(3);
    expect((await scrape()).notifications).toEqual({ 'network=mainnet': delivered, 'network=testnet': 0 });

    s.close();
    await until('close', () => closed);
    await until('connection gauge back to 0', async () => (await scrape()).connections['network=mainnet'] === 0);
    expect(svc.websockets.connections()).toBe(0);
    expect(svc.websockets.subscriptions()).toBe(0);

    // Usage: the socket's calls by method, the delivered notifications as eth_subscription.
    offset = 120_000;
    expect((await svc.meter!.flush()).rows).toBeGreaterThan(0);
    const m = await api.request('keys_metrics', [
      key.id,
      { from: new Date(from).toISOString(), to: new Date(Date.now() + 180_000).toISOString(), granularity: 'minute' },
    ]);
    expect(m.summary.methods).toEqual({
      eth_subscription: delivered,
      eth_subscribe: 2,
      eth_unsubscribe: 2,
      eth_chainId: 1,
    });
    expect(m.summary.total).toBe(delivered + 5);
  }, 60_000);

  it("the dashboard's WebSocket examples run: ethers and viem, a call and eth_subscribe (3 new blocks), on the key's ws:// URL", async () => {
    const api = account(svc);
    await signUpAndLogIn(api, { email: `${randomUUID()}@example.com`, password: 'ws examples password' });
    const key = await api.request('keys_create', [{ name: 'examples', network: 'mainnet' }]);
    await svc.access.sync();
    const wsUrl = toWsUrl(key.url);
    expect(wsUrl).toBe(key.url.replace(/^http:/, 'ws:'));
    // Inside the repo (git-ignored) so that the examples' imports resolve from the checkout's node_modules.
    const dir = resolve(import.meta.dirname, '..', 'test-output', `ws-examples-${process.pid}`);
    dirs.push(dir);
    mkdirSync(dir, { recursive: true });
    const run = async (method: 'eth_chainId' | 'eth_subscribe', id: 'ethers' | 'viem') => {
      const set = wsExamples[method]!.find((x) => x.id === id)!;
      const file = join(dir, `${method}-${id}.${set.language === 'typescript' ? 'ts' : 'mjs'}`);
      writeFileSync(file, set.code.split(WS_URL_PLACEHOLDER).join(wsUrl));
      const args = set.language === 'typescript' ? ['--import', 'tsx', file] : [file];
      return (await promisify(execFile)(process.execPath, args, { cwd: dir, timeout: 30_000 })).stdout;
    };
    const [ethersChain, viemChain, ethersHeads, viemHeads] = await Promise.all([
      run('eth_chainId', 'ethers'),
      run('eth_chainId', 'viem'),
      run('eth_subscribe', 'ethers'),
      run('eth_subscribe', 'viem'),
    ]);
    const chainId = `"0x${svc.networks.mainnet.chainId!.toString(16)}"`;
    expect([ethersChain.trim(), viemChain.trim()]).toEqual([chainId, chainId]);
    for (const out of [ethersHeads, viemHeads]) {
      const blocks = [...out.matchAll(/^new block (\d+)n?$/gm)].map((m) => Number(m[1]));
      expect(blocks, out).toHaveLength(3);
      expect(blocks[1]).toBe(blocks[0] + 1);
      expect(blocks[2]).toBe(blocks[1] + 1);
    }
  }, 60_000);
});
