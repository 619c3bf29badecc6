// Metering end to end, over HTTP against real rpcgate instances in front of a stub node:
//   1. known traffic (ok calls, node errors, auth / allowlist / limit / validation refusals, upstream errors, batches
//      with a notification) with an app key (A), a JWT app and a network key (B) → after `meter.flush()` the store's
//      usageSeries / usageToday give EXACT counts, rates, codes and methods — on SQLite and on PostgreSQL (skipped
//      with a message when PostgreSQL is unreachable, unless CI is set). Nothing reaches the store before a flush.
//   2. SIGTERM in the middle of load: `rpcgate start` as a child process (temp SQLite data dir), concurrent clients
//      counting the calls served (HTTP 200 with a result); SIGTERM once load is running; after exit the store's
//      ok-count equals what the clients observed, exactly.
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadOrCreateServerSecret } from '../src/gateway/secrets/index.js';
import { startService, type RunningService } from '../src/gateway/server/index.js';
import {
  createNetworkKey,
  createUser,
  openStore,
  usageSeries,
  usageToday,
  type Store,
} from '../src/gateway/store/index.js';
import { methods as accountMethods } from '../generated/account/methods.js';
import { LIMITS, call, post, runTraffic, type ExpectedUsage, type Json } from './helpers/metering-traffic.js';
import { pgReachable, scratchDatabase, skipUnless } from './helpers/services.js';
import { deadUrl, startStubNode, type StubNode } from './helpers/stub-node.js';

const ROOT = resolve(import.meta.dirname, '..');
const pgSkip = skipUnless(await pgReachable(), 'metering-e2e.test', 'PostgreSQL');

let stub: StubNode;
let dead: string;
const dirs: string[] = [];
const tmp = (tag: string) => {
  const d = mkdtempSync(join(tmpdir(), `rpcgate-metering-e2e-${tag}-`));
  dirs.push(d);
  return d;
};

beforeAll(async () => {
  stub = await startStubNode();
  dead = await deadUrl();
});

afterAll(async () => {
  await stub?.close();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function expectUsage(
  got: {
    total: number;
    success: number;
    successRate: number | null;
    byOutcome: Record<string, number>;
    errorsByCode: Record<string, number>;
    methods: Record<string, number>;
  },
  want: ExpectedUsage,
  what: string,
) {
  expect(got.total, what).toBe(want.total);
  expect(got.byOutcome, what).toEqual(want.byOutcome);
  expect(got.success, what).toBe(want.byOutcome.ok);
  expect(got.successRate, what).toBe(want.byOutcome.ok / want.total);
  expect(got.errorsByCode, what).toEqual(want.errorsByCode);
  expect(got.methods, what).toEqual(want.methods);
}

describe.each([
  { dialect: 'sqlite', skip: false },
  { dialect: 'postgres', skip: pgSkip },
])('known traffic → exact usage in the store ($dialect)', ({ dialect, skip }) => {
  let svc: RunningService;
  let pg: ReturnType<typeof scratchDatabase> | undefined;
  let offset = 0;

  beforeAll(async () => {
    if (skip) return;
    if (dialect === 'postgres') {
      pg = scratchDatabase();
      await pg.create();
    }
    svc = await startService(
      {
        port: 0,
        logLevel: 'silent',
        dataDir: tmp(dialect),
        ...(pg ? { databaseUrl: pg.url } : {}),
        devKey: false,
        limits: LIMITS,
        networks: { mainnet: { upstreams: [stub.url] }, testnet: { upstreams: [dead] } },
      },
      // Only explicit flushes (no timer), and a clock the test can move past the current minute.
      { meter: { now: () => Date.now() + offset, flushIntervalMs: 3_600_000 } },
    );
  });

  afterAll(async () => {
    await svc?.stop();
    await pg?.drop();
  });

  it.skipIf(skip)(
    'app key, JWT app and network key: totals, success rates, outcomes, codes, methods and networks',
    async () => {
      const from = Date.now() - 60_000;
      // The user signs up through the account API (so the metrics can be read through it below, with its session).
      const cred = { email: `${randomUUID()}@example.com`, password: 'metering e2e password' };
      expect(
        (await post(`${svc.url}/api`, { jsonrpc: '2.0', id: 1, method: 'account_signUp', params: [cred] })).status,
      ).toBe(200);
      const signUp = await post(`${svc.url}/api`, { jsonrpc: '2.0', id: 1, method: 'account_logIn', params: [cred] });
      expect(signUp.status, signUp.text).toBe(200);
      const cookie = /^[^;]+/.exec(signUp.headers.get('set-cookie') ?? '')![0];
      const account = async (method: string, params: unknown[]) => {
        const r = await post(`${svc.url}/api`, { jsonrpc: '2.0', id: 1, method, params }, { cookie });
        expect(r.status, r.text).toBe(200);
        expect(r.body.error, r.text).toBeUndefined();
        return r.body.result;
      };
      const me = await account('account_me', []);
      const t = await runTraffic(svc, (c, w) => expect(c, w).toBe(true), me.id ?? me.user?.id);
      const db = svc.store.db;

      // Counted in memory only: nothing is in the store before a flush.
      expect((await usageToday(db, t.userId, { keyId: t.keyId })).total).toBe(0);
      const pending = svc.meter!.stats().pendingCells;
      expect(pending).toBeGreaterThan(0);

      // The minute(s) of the traffic are complete once the clock moves on: flush() writes them.
      offset = 120_000;
      const flushed = await svc.meter!.flush();
      expect(flushed.rows).toBe(pending);
      expect(svc.meter!.stats()).toEqual({ pendingCells: 0, dropped: 0, flushFailures: 0 });

      const to = Date.now() + 60_000;
      const series = (f: { appId?: string; keyId?: string; network?: string }) =>
        usageSeries(db, { userId: t.userId, ...f, from, to, granularity: 'minute' });
      for (const [what, target, want] of [
        ['network key', { keyId: t.keyId }, t.expected.key],
        ['app', { appId: t.appId }, t.expected.app],
        ['JWT app', { appId: t.jwtAppId }, t.expected.jwtApp],
      ] as const) {
        const s = await series(target);
        expectUsage(s.summary, want, what);
        // The points add up to the summary (the traffic spans one or two minutes).
        expect(s.points.reduce((n, p) => n + p.total, 0)).toBe(want.total);
        expect(s.summary.latencyMs!.mean).toBeGreaterThan(0);
        expect(s.summary.latencyMs!.p99).toBeGreaterThanOrEqual(s.summary.latencyMs!.p50);
        for (const [network, n] of Object.entries(want.byNetwork))
          expect((await series({ ...target, network })).summary.total, `${what} ${network}`).toBe(n);
        const today = await usageToday(db, t.userId, target);
        expect([today.total, today.success, today.byOutcome], what).toEqual([
          want.total,
          want.byOutcome.ok,
          want.byOutcome,
        ]);
      }
      // Hour and day granularity read the same minute rows.
      expect(
        (await usageSeries(db, { userId: t.userId, keyId: t.keyId, from, to, granularity: 'hour' })).summary.total,
      ).toBe(18);
      // All of the user's usage: the three principals together; another user sees none of it.
      expect((await series({})).summary.total).toBe(18 + 9 + 2);
      expect(
        (await usageSeries(db, { userId: 'usr_nobody', keyId: t.keyId, from, to, granularity: 'minute' })).summary
          .total,
      ).toBe(0);
      // What the clients were served equals the ok outcomes, less the notification (ok, forwarded, never answered).
      expect(t.served).toBe(9 + 4 + 1 - 1);

      // Through the account API (apps_metrics / keys_metrics), when this tree has them: the same exact figures.
      if ('apps_metrics' in accountMethods && 'keys_metrics' in accountMethods) {
        const query = { from: new Date(from).toISOString(), to: new Date(to).toISOString(), granularity: 'minute' };
        for (const [what, method, id, want] of [
          ['network key', 'keys_metrics', t.keyId, t.expected.key],
          ['app', 'apps_metrics', t.appId, t.expected.app],
          ['JWT app', 'apps_metrics', t.jwtAppId, t.expected.jwtApp],
        ] as const) {
          const res = await account(method, [id, query]);
          expectUsage(res.summary, want, `${what} (account API)`);
          for (const [network, n] of Object.entries(want.byNetwork))
            expect(
              (await account(method, [id, { ...query, network }])).summary.total,
              `${what} ${network} (account API)`,
            ).toBe(n);
        }
      }

      // A second flush writes nothing more; the final flush on stop adds nothing either (no double counting).
      expect((await svc.meter!.flush()).rows).toBe(0);
    },
  );
});

describe('SIGTERM in the middle of load', () => {
  it('rpcgate start (child process): the flushed ok-count equals the successes the clients observed', async () => {
    const slow = await startStubNode({ delayMs: 3 }); // calls stay in flight for a moment
    const dataDir = tmp('sigterm');
    // A user and a network key, made in the store before the service starts (as the account API would).
    let store: Store = await openStore({ dataDir });
    const secret = loadOrCreateServerSecret(dataDir);
    const userId = (await createUser(store.db, { email: `${randomUUID()}@example.com`, passwordHash: 'x' })).id;
    const key = await createNetworkKey(store.db, secret, userId, { name: 'load', network: 'mainnet' });
    await store.close();
    const cfg = join(dataDir, 'config.json');
    writeFileSync(
      cfg,
      JSON.stringify({
        port: 0,
        host: '127.0.0.1',
        dataDir,
        devKey: false,
        logLevel: 'warn',
        limits: { b: { dailyPerUser: 1_000_000_000 } },
        networks: { mainnet: { upstreams: [slow.url] }, testnet: null },
      }),
    );
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', join(ROOT, 'src/cli/main.ts'), 'start', '--config', cfg],
      {
        cwd: ROOT,
        stdio: ['ignore', 'pipe', 'pipe'],
        env: { ...process.env, RPCGATE_CONFIG: '', DATABASE_URL: '', REDIS_URL: '' },
      },
    ); // the CLI reads these (CI exports them); the key lives in this SQLite store
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
    try {
      const base = await new Promise<string>((ok, fail) => {
        const onData = () => {
          const m = /rpcgate listening on (\S+)/.exec(out);
          if (m) ok(m[1]);
        };
        child.stdout.on('data', onData);
        void exited.then((code) => fail(new Error(`rpcgate exited early (${code}):\n${out}`)));
      });
      const url = `${base}/mainnet/${key.key}`;

      // Clients: single calls and batches of 3, until the server stops answering. Served = items with a result.
      let served = 0;
      let stopping = false;
      let resolveEnough!: () => void;
      const enough = new Promise<void>((r) => (resolveEnough = r));
      const client = async (n: number) => {
        for (let i = 0; ; i++) {
          const batch = (i + n) % 3 === 0;
          const body = batch
            ? [call('eth_blockNumber', [], 1), call('eth_chainId', [], 2), call('eth_blockNumber', [], 3)]
            : call('eth_blockNumber', [], i);
          let status: number;
          let json: Json;
          try {
            const res = await fetch(url, {
              method: 'POST',
              headers: { 'content-type': 'application/json' },
              body: JSON.stringify(body),
            });
            status = res.status;
            json = await res.json();
          } catch {
            if (stopping) return; // connection refused / closed: the server is gone
            throw new Error('request failed before SIGTERM');
          }
          expect(status).toBe(200);
          for (const x of Array.isArray(json) ? json : [json]) if ('result' in x) served++;
          if (served >= 400) resolveEnough();
        }
      };
      const clients = Array.from({ length: 16 }, (_, n) => client(n));
      await enough;
      stopping = true;
      child.kill('SIGTERM');
      const [code] = await Promise.all([exited, Promise.all(clients)]);
      expect(code, out).toBe(0);
      expect(served).toBeGreaterThanOrEqual(400);

      store = await openStore({ dataDir });
      try {
        const today = await usageToday(store.db, userId, { keyId: key.id });
        expect(today.byOutcome.ok, `clients were served ${served}`).toBe(served);
        expect(today.total).toBe(served); // nothing else happened: no refusals, no upstream errors during the stop
      } finally {
        await store.close();
      }
    } finally {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await slow.close();
    }
  }, 60_000);
});
