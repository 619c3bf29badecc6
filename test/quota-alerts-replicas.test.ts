// Issue 25 item 3, "each threshold sent once per period even with several replicas", with real processes: two rpcgate
// replicas (separate processes, started and stopped by PID) share PostgreSQL and Redis; an account's app and network
// key are called through both until 75, 90 and 100 % of the app's daily quota (A) and the user's daily key quota (B),
// then refused calls go through both so that each replica's meter flushes and each watcher checks the thresholds
// after all were crossed. The webhook receiver here verifies every signature and must get each of the 6 thresholds
// exactly once; the store holds the 6 rows. (Seen failing with a claim that always wins: 28 deliveries, as every
// check of every replica sends again.)
// Needs PostgreSQL and Redis (skipped with a message when unreachable, unless CI is set).
import { createHmac, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SIGNATURE_HEADER, TIMESTAMP_HEADER } from '../src/gateway/alerts/quota-alerts.js';
import { type RpcgateChild, startRpcgateChild } from './helpers/rpcgate-child.js';
import {
  deleteRedisKeys,
  pgReachable,
  REDIS_URL,
  redisReachable,
  scratchDatabase,
  scratchPrefix,
  skipUnless,
} from './helpers/services.js';
import { type StubNode, startStubNode } from './helpers/stub-node.js';

type Json = any;

const skip = skipUnless(
  (await pgReachable()) && (await redisReachable()),
  'quota-alerts-replicas',
  'PostgreSQL or Redis',
);

const APP_DAILY = 20;
const KEY_DAILY = 20;
const FLUSH_MS = 200;

interface Delivery {
  subject: string;
  window: string;
  threshold: number;
  used: number;
}

describe.skipIf(skip)('quota alerts: two replicas (processes) on PostgreSQL + Redis', () => {
  const db = scratchDatabase();
  const prefix = scratchPrefix();
  const dirs: string[] = [];
  const replicas: RpcgateChild[] = [];
  let upstream: StubNode;
  let hookServer: Server;
  let hookUrl: string;
  let hookSecret = '';
  const deliveries: Delivery[] = [];
  let badSignatures = 0;

  beforeAll(async () => {
    await db.create();
    upstream = await startStubNode();
    hookServer = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const body = Buffer.concat(chunks).toString('utf8');
        const ts = String(req.headers[TIMESTAMP_HEADER] ?? '');
        const want = `sha256=${createHmac('sha256', hookSecret).update(`${ts}.${body}`).digest('hex')}`;
        if (req.headers[SIGNATURE_HEADER] !== want) {
          badSignatures++;
          res.writeHead(400).end();
          return;
        }
        deliveries.push(JSON.parse(body));
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((ok) => hookServer.listen(0, '127.0.0.1', ok));
    hookUrl = `http://127.0.0.1:${(hookServer.address() as AddressInfo).port}/hook`;
    const secret = randomBytes(32).toString('hex');
    const config = (dataDir: string) => ({
      port: 0,
      logLevel: 'silent',
      dataDir,
      devKey: false,
      databaseUrl: db.url,
      redisUrl: REDIS_URL,
      redisPrefix: prefix,
      secret,
      redis: { commandTimeoutMs: 5000 },
      limits: { a: { perSecond: null, daily: APP_DAILY, monthly: 100_000 }, b: { dailyPerUser: KEY_DAILY } },
      durability: { usageFlushIntervalMs: FLUSH_MS },
      alerts: { allowPrivateWebhooks: true }, // the receiver listens on 127.0.0.1
      cache: { enabled: false },
      networks: { mainnet: { upstreams: [upstream.url] } },
    });
    const dir = () => {
      const d = mkdtempSync(join(tmpdir(), 'rpcgate-alert-replicas-'));
      dirs.push(d);
      return d;
    };
    // One after the other: both run the migrations on start.
    replicas.push(await startRpcgateChild(config(dir())));
    replicas.push(await startRpcgateChild(config(dir())));
  }, 120_000);

  afterAll(async () => {
    await Promise.all(replicas.map((r) => r.stop()));
    await upstream?.close();
    await new Promise((ok) => hookServer?.close(ok));
    await deleteRedisKeys(prefix);
    await db.drop();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  }, 60_000);

  async function api(replica: number, cookie: string, method: string, params: unknown[]): Promise<Json> {
    const res = await fetch(`${replicas[replica].url}/api`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', cookie },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
    });
    const body = (await res.json()) as Json;
    expect(body.error, `${method}: ${JSON.stringify(body.error)}`).toBeUndefined();
    return { result: body.result, res };
  }

  async function call(url: string, id: number): Promise<number> {
    const res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id, method: 'eth_blockNumber', params: [] }),
    });
    await res.arrayBuffer();
    return res.status;
  }

  /** Until `path` (a key's URL path) is known to replica `i`: a malformed body is refused after the key is admitted
   *  (400, -32700) and before any quota is counted; an unknown key gets 401. */
  async function known(i: number, path: string): Promise<void> {
    const until = Date.now() + 10_000;
    for (;;) {
      const res = await fetch(`${replicas[i].url}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{',
      });
      await res.arrayBuffer();
      if (res.status !== 401) return;
      if (Date.now() > until) throw new Error(`replica ${i} never learned ${path}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  async function waitFor(what: string, cond: () => boolean, ms: number): Promise<void> {
    const until = Date.now() + ms;
    while (!cond()) {
      if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  it('each threshold of the app and of the key quota reaches the webhook once, crossed through both replicas', async () => {
    const cred = { email: `alerts-${randomBytes(6).toString('hex')}@example.com`, password: 'two replicas, one alert' };
    await api(0, '', 'account_signUp', [cred]);
    const login = await api(1, '', 'account_logIn', [cred]);
    const cookie = (login.res as Response).headers
      .getSetCookie()
      .map((c) => c.split(';')[0])
      .find((c) => c.startsWith('rpcgate_session='))!;
    const hook = await api(0, cookie, 'account_setAlertWebhook', [hookUrl]);
    hookSecret = hook.result.secret;
    const app = (
      await api(1, cookie, 'apps_create', [
        { name: 'replicated', useCase: 'Defi', chain: 'ethereum', services: ['node-api'] },
      ])
    ).result;
    const key = (await api(0, cookie, 'keys_create', [{ name: 'replicated', network: 'mainnet' }])).result;
    const appPath = `/mainnet/v2/${app.key}`;
    const keyPath = `/mainnet/${key.key}`;
    for (const i of [0, 1]) {
      await known(i, appPath);
      await known(i, keyPath);
    }

    // Up to each quota, alternating replicas, in rounds of 4 calls per replica — each replica flushes between rounds.
    let id = 0;
    for (let used = 0; used < APP_DAILY; used += 8) {
      const round: Promise<number>[] = [];
      for (let j = 0; j < 8 && used + j < APP_DAILY; j++) {
        const base = replicas[j % 2].url;
        round.push(call(`${base}${appPath}`, id++), call(`${base}${keyPath}`, id++));
      }
      expect(new Set(await Promise.all(round))).toEqual(new Set([200]));
      await new Promise((r) => setTimeout(r, FLUSH_MS * 2));
    }
    // Over the quota, through both replicas at once: refused (402, quota), metered — both watchers check after every
    // threshold was crossed.
    const over = await Promise.all(
      [0, 1, 0, 1].flatMap((i) => [
        call(`${replicas[i].url}${appPath}`, id++),
        call(`${replicas[i].url}${keyPath}`, id++),
      ]),
    );
    expect(new Set(over)).toEqual(new Set([402]));

    await waitFor('6 deliveries', () => deliveries.length >= 6, 15_000);
    // Several more flush-and-check rounds of both replicas: nothing more may arrive.
    await Promise.all([0, 1].map((i) => call(`${replicas[i].url}${keyPath}`, id++)));
    await new Promise((r) => setTimeout(r, FLUSH_MS * 8));

    expect(badSignatures).toBe(0);
    const got = deliveries.map((d) => `${d.subject}:${d.window}:${d.threshold}`).sort();
    expect(got).toEqual(['apps:day:100', 'apps:day:75', 'apps:day:90', 'keys:day:100', 'keys:day:75', 'keys:day:90']);

    const c = new pg.Client({ connectionString: db.url });
    await c.connect();
    try {
      const rows = await c.query('SELECT subject, "window", threshold FROM quota_alerts ORDER BY 1, 2, 3');
      expect(rows.rows.map((r) => `${r.subject}:${r.window}:${r.threshold}`)).toEqual([
        'apps:day:75',
        'apps:day:90',
        'apps:day:100',
        'keys:day:75',
        'keys:day:90',
        'keys:day:100',
      ]);
    } finally {
      await c.end();
    }
  }, 90_000);
});
