// Usage metrics through the account API (apps_metrics, keys_metrics, and today's count per key in keys_list /
// keys_get), on SQLite and on PostgreSQL. The service runs for real (temp data dir, its own store); usage is fed by a
// real Meter bound to the service's store, with known calls at known minutes (its injectable clock), then flushed —
// exactly what the node API's request path does once it is wired to the meter. Counts, rates, errors by code and
// calls per method must be exact; percentiles within the histogram's documented bound (src/gateway/metering/README.md:
// relative error ≤ 2^(1/8) − 1 ≈ 9.05 %) of the true nearest-rank percentile of the latencies recorded.
// PostgreSQL cases skip (with a message) when the server is unreachable and CI is unset; under CI they must run.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { validators } from '../generated/account/validators.js';
import { methods as nodeMethods } from '../generated/node/methods.js';
import { MAX_METRICS_POINTS } from '../src/gateway/accounts/handlers/index.js';
import { PERCENTILE_RELATIVE_ERROR } from '../src/gateway/usage/histogram.js';
import { Meter, type MeterPrincipal, type Outcome } from '../src/gateway/metering/meter.js';
import { newId } from '../src/gateway/secrets/index.js';
import { startService, type RunningService } from '../src/gateway/server/index.js';
import { pgReachable, scratchDatabase, skipUnless } from './helpers/services.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

const pgSkip = skipUnless(await pgReachable(), 'account-metrics.test', 'PostgreSQL');

const MIN = 60_000;
const HOUR = 3_600_000;
const DAY = 86_400_000;
/** A fixed past minute: 2025-03-01 09:00 UTC. */
const T0 = Date.UTC(2025, 2, 1, 9, 0);
const isoOf = (ms: number) => new Date(ms).toISOString();

/** One batch of identical calls to feed the meter: at minute offset `min` from T0 (or at absolute `at`). */
interface Calls {
  who: 'appA' | 'keyA' | 'appB';
  min?: number;
  at?: number;
  network: 'mainnet' | 'testnet';
  method: string;
  outcome: Outcome;
  code?: number;
  /** One latency per call (ms). */
  latencies: number[];
}
const n = (count: number, ms: number) => new Array<number>(count).fill(ms);

// The known traffic. App A: minutes 0 and 1 (09:00, 09:01), minute 61 (10:01), and a day later; key A at 09:00;
// user B's app at 09:00 too (never visible to A).
const TRAFFIC: Calls[] = [
  {
    who: 'appA',
    min: 0,
    network: 'mainnet',
    method: 'eth_blockNumber',
    outcome: 'ok',
    latencies: [3, 4, 5, 5, 6, 6, 7, 8, 9, 12],
  },
  {
    who: 'appA',
    min: 0,
    network: 'mainnet',
    method: 'eth_call',
    outcome: 'node_error',
    code: 3,
    latencies: [40, 45, 50],
  },
  { who: 'appA', min: 1, network: 'testnet', method: 'eth_call', outcome: 'ok', latencies: [18, 20, 22, 25, 30, 35] },
  {
    who: 'appA',
    min: 1,
    network: 'mainnet',
    method: 'eth_getBalance',
    outcome: 'limit',
    code: -32005,
    latencies: n(2, 0.5),
  },
  {
    who: 'appA',
    min: 1,
    network: 'mainnet',
    method: 'eth_getLogs',
    outcome: 'validation',
    code: -32602,
    latencies: [1.2],
  },
  {
    who: 'appA',
    min: 61,
    network: 'mainnet',
    method: 'eth_blockNumber',
    outcome: 'ok',
    latencies: [90, 100, 110, 400],
  },
  {
    who: 'appA',
    min: 61,
    network: 'mainnet',
    method: 'eth_notInTheContract',
    outcome: 'auth',
    code: -32016,
    latencies: [0.3],
  },
  { who: 'appA', min: 24 * 60, network: 'testnet', method: 'eth_chainId', outcome: 'ok', latencies: n(5, 2) },
  { who: 'keyA', min: 0, network: 'testnet', method: 'eth_blockNumber', outcome: 'ok', latencies: n(7, 15) },
  {
    who: 'keyA',
    min: 0,
    network: 'testnet',
    method: 'eth_getBlockByNumber',
    outcome: 'upstream_error',
    code: -32603,
    latencies: [5000],
  },
  { who: 'appB', min: 0, network: 'mainnet', method: 'eth_blockNumber', outcome: 'ok', latencies: n(50, 1) },
];

/** What the series must say about a set of calls (computed from TRAFFIC, independently of the store). */
function expected(calls: Calls[]) {
  const lat = calls.flatMap((c) => c.latencies).sort((a, b) => a - b);
  const total = lat.length;
  const success = calls.filter((c) => c.outcome === 'ok').reduce((s, c) => s + c.latencies.length, 0);
  const errorsByCode: Record<string, number> = {};
  const methods: Record<string, number> = {};
  const byOutcome: Record<string, number> = {
    ok: 0,
    node_error: 0,
    auth: 0,
    allowlist: 0,
    limit: 0,
    validation: 0,
    upstream_error: 0,
    backend_unavailable: 0,
  };
  for (const c of calls) {
    const m = Object.hasOwn(nodeMethods, c.method) ? c.method : 'other';
    methods[m] = (methods[m] ?? 0) + c.latencies.length;
    byOutcome[c.outcome] += c.latencies.length;
    if (c.outcome !== 'ok')
      errorsByCode[String(c.code ?? 0)] = (errorsByCode[String(c.code ?? 0)] ?? 0) + c.latencies.length;
  }
  const rank = (q: number) => lat[Math.max(1, Math.ceil(q * total)) - 1];
  return {
    total,
    success,
    successRate: total ? success / total : null,
    byOutcome,
    errorsByCode,
    methods,
    mean: total ? lat.reduce((s, x) => s + x, 0) / total : null,
    p50: total ? rank(0.5) : null,
    p95: total ? rank(0.95) : null,
    p99: total ? rank(0.99) : null,
  };
}

/** A point of the API against the expectation: counts exact, mean exact (to float rounding), percentiles in bound. */
function expectPoint(p: Json, calls: Calls[], label: string): void {
  const e = expected(calls);
  expect(p.total, label).toBe(e.total);
  expect(p.success, label).toBe(e.success);
  if (e.successRate === null) expect(p.successRate, label).toBeNull();
  else expect(p.successRate, label).toBeCloseTo(e.successRate, 12);
  expect(p.byOutcome, label).toEqual(e.byOutcome);
  expect(p.errorsByCode, label).toEqual(e.errorsByCode);
  expect(p.methods, label).toEqual(e.methods);
  if (e.total === 0) {
    expect(p.latencyMs, label).toBeNull();
    return;
  }
  expect(p.latencyMs.mean, label).toBeCloseTo(e.mean!, 9);
  for (const q of ['p50', 'p95', 'p99'] as const) {
    const truth = e[q]!;
    const got = p.latencyMs[q];
    if (truth <= 0.25) expect(got, `${label} ${q}`).toBe(0.125);
    else
      expect(Math.abs(got - truth) / truth, `${label} ${q}: ${got} vs ${truth}`).toBeLessThanOrEqual(
        PERCENTILE_RELATIVE_ERROR + 1e-12,
      );
  }
}

/** Keeps the session cookie. */
class Jar {
  cookie = '';
  take(res: Response): void {
    for (const sc of res.headers.getSetCookie()) {
      const pair = sc.split(';')[0];
      if (pair.startsWith('rpcgate_session=')) this.cookie = pair.endsWith('=') ? '' : pair;
    }
  }
}

interface Target {
  name: 'sqlite' | 'postgres';
  skip: boolean;
  setup(): Promise<{ databaseUrl?: string }>;
  teardown(): Promise<void>;
}

const targets: Target[] = [
  { name: 'sqlite', skip: false, setup: async () => ({}), teardown: async () => {} },
  (() => {
    const db = scratchDatabase();
    return {
      name: 'postgres' as const,
      skip: pgSkip,
      setup: async () => {
        await db.create();
        return { databaseUrl: db.url };
      },
      teardown: () => db.drop(),
    };
  })(),
];

for (const target of targets) {
  describe.skipIf(target.skip)(`account metrics on ${target.name}`, () => {
    let svc: RunningService;
    let dataDir: string;
    const A = new Jar();
    const B = new Jar();
    let userA: Json;
    let userB: Json;
    let appA: Json;
    let appB: Json;
    let keyA: Json;
    let todayStart: number;

    async function rpc(jar: Jar, method: string, params: unknown): Promise<{ status: number; body: Json }> {
      const res = await fetch(`${svc.url}/api`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(jar.cookie ? { cookie: jar.cookie } : {}) },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
      });
      jar.take(res);
      return { status: res.status, body: await res.json() };
    }
    async function ok(jar: Jar, method: string, params: unknown = []): Promise<Json> {
      const r = await rpc(jar, method, params);
      expect(r.body.error, `${method}: ${JSON.stringify(r.body.error)}`).toBeUndefined();
      // The answer fits the contract (the service also runs with strictResults).
      expect(
        validators[method].result(r.body.result),
        `${method}: ${JSON.stringify(validators[method].result.errors)}`,
      ).toBe(true);
      return r.body.result;
    }
    const q = (from: number, to: number, granularity: string, network?: string) => ({
      from: isoOf(from),
      to: isoOf(to),
      granularity,
      ...(network ? { network } : {}),
    });
    const sel = (who: Calls['who'], pred: (c: Calls) => boolean = () => true) =>
      TRAFFIC.filter((c) => c.who === who && pred(c));

    beforeAll(async () => {
      const extra = await target.setup();
      dataDir = mkdtempSync(join(tmpdir(), `rpcgate-account-metrics-${target.name}-`));
      // A stand-in upstream on a closed port: no node call is made here (the meter is fed directly).
      const closed = { upstreams: ['http://127.0.0.1:9'] };
      svc = await startService({
        port: 0,
        dataDir,
        logLevel: 'silent',
        devKey: false,
        strictResults: true,
        secret: randomBytes(32).toString('hex'),
        networks: { mainnet: closed, testnet: { ...closed, chainId: 31338 } },
        ...extra,
      });
      const email = (who: string) => `${who}-${randomBytes(4).toString('hex')}@example.com`;
      const credA = { email: email('alice'), password: 'correct horse battery' };
      const credB = { email: email('bob'), password: 'correct horse battery' };
      await ok(A, 'account_signUp', [credA]);
      await ok(B, 'account_signUp', [credB]);
      userA = (await ok(A, 'account_logIn', [credA])).user;
      userB = (await ok(B, 'account_logIn', [credB])).user;
      appA = await ok(A, 'apps_create', [
        { name: 'alice app', useCase: 'Defi', chain: 'ethereum', services: ['node-api'] },
      ]);
      appB = await ok(B, 'apps_create', [
        { name: 'bob app', useCase: 'Defi', chain: 'ethereum', services: ['node-api'] },
      ]);
      keyA = await ok(A, 'keys_create', [{ name: 'alice key', network: 'Testnet' }]);

      // Feed the known traffic through a real Meter bound to the service's store, then flush it all.
      let clock = T0;
      const meter = new Meter({
        db: svc.store.db,
        methods: Object.keys(nodeMethods),
        networks: ['mainnet', 'testnet'],
        now: () => clock,
      });
      const principal: Record<Calls['who'], MeterPrincipal> = {
        appA: { kind: 'app', appId: appA.id, userId: userA.id },
        keyA: { kind: 'key', keyId: keyA.id, userId: userA.id },
        appB: { kind: 'app', appId: appB.id, userId: userB.id },
      };
      // Today's usage on key A (for keys_list / keys_get): at 00:00:30 UTC today, never in the future.
      todayStart = Math.floor(Date.now() / DAY) * DAY;
      const today: Calls[] = [
        {
          who: 'keyA',
          at: todayStart + 30_000,
          network: 'testnet',
          method: 'eth_blockNumber',
          outcome: 'ok',
          latencies: n(3, 10),
        },
        {
          who: 'keyA',
          at: todayStart + 30_000,
          network: 'testnet',
          method: 'eth_blockNumber',
          outcome: 'limit',
          code: -32005,
          latencies: [0.2],
        },
      ];
      // In time order: like a real clock (a meter never counts into a minute before its current one).
      const at = (c: Calls) => c.at ?? T0 + c.min! * MIN + 17_000; // inside the minute
      for (const c of [...TRAFFIC, ...today].sort((x, y) => at(x) - at(y))) {
        clock = at(c);
        for (const ms of c.latencies)
          meter.record({
            principal: principal[c.who],
            network: c.network,
            method: c.method,
            outcome: c.outcome,
            code: c.code,
            latencyMs: ms,
          });
      }
      const flushed = await meter.stop();
      expect(flushed.rows).toBeGreaterThan(0);
      expect(meter.stats().pendingCells).toBe(0);
    }, 120_000);

    afterAll(async () => {
      await svc?.stop();
      if (dataDir) rmSync(dataDir, { recursive: true, force: true });
      await target.teardown();
    });

    it('minute granularity: exact counts, rates, errors by code, methods; percentiles within the bound', async () => {
      const s = await ok(A, 'apps_metrics', [appA.id, q(T0, T0 + 2 * HOUR, 'minute')]);
      expect(s.granularity).toBe('minute');
      expect(s.from).toBe(isoOf(T0));
      expect(s.to).toBe(isoOf(T0 + 2 * HOUR));
      expect(s.points).toHaveLength(120);
      s.points.forEach((p: Json, i: number) => {
        expect(p.start).toBe(isoOf(T0 + i * MIN));
        expectPoint(
          p,
          sel('appA', (c) => c.min === i),
          `minute ${i}`,
        );
      });
      expectPoint(
        s.summary,
        sel('appA', (c) => c.min! < 120),
        'summary',
      );
      expect(s.summary.start).toBe(isoOf(T0));
      // Spot checks in plain numbers (the expectation above is computed; these are by hand).
      expect(s.points[0]).toMatchObject({
        total: 13,
        success: 10,
        errorsByCode: { '3': 3 },
        methods: { eth_blockNumber: 10, eth_call: 3 },
      });
      expect(s.points[0].successRate).toBeCloseTo(10 / 13, 12);
      expect(s.points[1]).toMatchObject({ total: 9, success: 6, errorsByCode: { '-32005': 2, '-32602': 1 } });
      expect(s.points[61].methods).toEqual({ eth_blockNumber: 4, other: 1 });
      expect(s.points[2]).toMatchObject({
        total: 0,
        success: 0,
        successRate: null,
        latencyMs: null,
        errorsByCode: {},
        methods: {},
      });
      expect(s.summary).toMatchObject({ total: 27, success: 20 });
    });

    it('hour and day granularity add the minutes up exactly', async () => {
      const h = await ok(A, 'apps_metrics', [appA.id, q(T0, T0 + DAY, 'hour')]);
      expect(h.points).toHaveLength(24);
      expectPoint(
        h.points[0],
        sel('appA', (c) => c.min! < 60),
        'hour 0',
      );
      expectPoint(
        h.points[1],
        sel('appA', (c) => c.min! >= 60 && c.min! < 120),
        'hour 1',
      );
      for (let i = 2; i < 24; i++) expect(h.points[i].total).toBe(0);
      expectPoint(
        h.summary,
        sel('appA', (c) => c.min! < 24 * 60),
        'hours summary',
      );

      // Days are UTC days; `from` is aligned down to 00:00.
      const day0 = Math.floor(T0 / DAY) * DAY;
      const d = await ok(A, 'apps_metrics', [appA.id, q(T0, day0 + 3 * DAY, 'day')]);
      expect(d.from).toBe(isoOf(day0));
      expect(d.points.map((p: Json) => p.start)).toEqual([0, 1, 2].map((i) => isoOf(day0 + i * DAY)));
      expectPoint(
        d.points[0],
        sel('appA', (c) => c.min! < 15 * 60),
        'day 0',
      );
      expectPoint(
        d.points[1],
        sel('appA', (c) => c.min === 24 * 60),
        'day 1',
      );
      expect(d.points[2].total).toBe(0);
      expectPoint(d.summary, sel('appA'), 'days summary');
      expect(d.summary.total).toBe(32);
    });

    it('filters by network; takes ISO times with an offset and aligns `from` down', async () => {
      const t = await ok(A, 'apps_metrics', [appA.id, q(T0, T0 + 2 * DAY, 'day', 'testnet')]);
      expectPoint(
        t.summary,
        sel('appA', (c) => c.network === 'testnet'),
        'testnet',
      );
      expect(t.summary.total).toBe(11);
      // 10:00:30+01:00 is 09:00:30Z: aligned down to 09:00.
      const s = await ok(A, 'apps_metrics', [
        appA.id,
        { from: '2025-03-01T10:00:30+01:00', to: '2025-03-01T09:02:00Z', granularity: 'minute' },
      ]);
      expect(s.from).toBe(isoOf(T0));
      expect(s.points).toHaveLength(2);
      expect(s.points.map((p: Json) => p.total)).toEqual([13, 9]);
    });

    it('keys_metrics: only the key, never the app or other users', async () => {
      const s = await ok(A, 'keys_metrics', [keyA.id, q(T0, T0 + HOUR, 'minute')]);
      expectPoint(
        s.points[0],
        sel('keyA', (c) => c.min === 0),
        'key minute 0',
      );
      expectPoint(
        s.summary,
        sel('keyA', (c) => c.min !== undefined),
        'key summary',
      );
      expect(s.summary).toMatchObject({
        total: 8,
        success: 7,
        errorsByCode: { '-32603': 1 },
        byOutcome: { upstream_error: 1 },
      });
      // The 5 s call: its percentile bucket holds it within the bound too.
      expect(s.summary.latencyMs.p99).toBeGreaterThan(5000 / (1 + PERCENTILE_RELATIVE_ERROR));
      // The app's series at the same minute does not include the key's calls, nor user B's app.
      const a = await ok(A, 'apps_metrics', [appA.id, q(T0, T0 + MIN, 'minute')]);
      expect(a.summary.total).toBe(13);
      const b = await ok(B, 'apps_metrics', [appB.id, q(T0, T0 + MIN, 'minute')]);
      expectPoint(b.summary, sel('appB'), 'user B');
    });

    it("keys_list and keys_get: today's calls per key from the store; the daily limit stays the limiter's", async () => {
      const list = await ok(A, 'keys_list');
      const k = list.keys.find((x: Json) => x.id === keyA.id);
      expect(k.today).toEqual({ day: isoOf(todayStart), total: 4, success: 3 });
      // No call went through the limiter here: the per-user limit shows nothing used.
      expect(list.usage).toMatchObject({ used: 0, limit: 25_000, remaining: 25_000, period: 'day' });
      const detail = await ok(A, 'keys_get', [keyA.id]);
      expect(detail.today).toEqual({ day: isoOf(todayStart), total: 4, success: 3 });
      // B's list has no key, and sees none of A's.
      expect((await ok(B, 'keys_list')).keys).toEqual([]);
    });

    it("another user's app or key is not found (-32010), exactly like a missing one — also with a bad query", async () => {
      const good = q(T0, T0 + HOUR, 'minute');
      const bad = q(T0 + HOUR, T0, 'minute');
      for (const [method, id, ghost] of [
        ['apps_metrics', appA.id, newId('app')],
        ['keys_metrics', keyA.id, newId('key')],
      ] as const) {
        for (const query of [good, bad]) {
          const r = await rpc(B, method, [id, query]);
          expect(r.status, method).toBe(404);
          expect(r.body.error.code, method).toBe(-32010);
          const missing = await rpc(B, method, [ghost, query]);
          expect(missing.body.error.code).toBe(-32010);
          expect(missing.body.error.message).toBe(r.body.error.message);
          expect(r.body.error.data).toEqual({ what: r.body.error.data.what, id });
        }
      }
      // And without a session: -32016.
      expect((await rpc(new Jar(), 'apps_metrics', [appA.id, good])).body.error.code).toBe(-32016);
    });

    it('bad queries: -32602 naming the path and why', async () => {
      const base = { from: isoOf(T0), to: isoOf(T0 + HOUR), granularity: 'minute' };
      const rows: [unknown, string][] = [
        [{ ...base, to: isoOf(T0) }, '/1/to'],
        [{ ...base, to: isoOf(T0 - MIN) }, '/1/to'],
        [{ ...base, to: isoOf(T0 + (MAX_METRICS_POINTS + 1) * MIN) }, '/1'],
        [{ ...base, granularity: 'hour', to: isoOf(T0 + 63 * DAY) }, '/1'],
        [{ ...base, granularity: 'week' }, '/1/granularity'],
        [{ ...base, from: T0 }, '/1/from'],
        [{ ...base, from: '2025-02-30T00:00:00Z' }, '/1/from'],
        [{ ...base, from: '2025-03-01T24:00:00Z' }, '/1/from'],
        [{ ...base, from: '2025-03-01T09:00:00' }, '/1/from'],
        [{ ...base, to: 'yesterday' }, '/1/to'],
        [{ ...base, network: 'devnet' }, '/1/network'],
        [{ ...base, extra: 1 }, '/1'],
        [{ from: base.from, granularity: 'minute' }, '/1'],
      ];
      for (const [query, path] of rows) {
        for (const [method, id] of [
          ['apps_metrics', appA.id],
          ['keys_metrics', keyA.id],
        ]) {
          const r = await rpc(A, method, [id, query]);
          const what = `${method} ${JSON.stringify(query)}`;
          expect(r.body.error?.code, `${what} → ${JSON.stringify(r.body)}`).toBe(-32602);
          expect(r.status, what).toBe(200);
          expect(r.body.error.data.path, `${what}: ${JSON.stringify(r.body.error.data)}`).toBe(path);
          expect(r.body.error.data.reason.length, what).toBeGreaterThan(0);
        }
      }
      // Too many points says how many, and the most allowed.
      const long = await rpc(A, 'apps_metrics', [appA.id, { ...base, to: isoOf(T0 + 2 * DAY) }]);
      expect(long.body.error.data).toMatchObject({ maxPoints: MAX_METRICS_POINTS, points: 2 * 24 * 60 });
      // Exactly the most allowed is fine.
      const max = await ok(A, 'apps_metrics', [appA.id, { ...base, to: isoOf(T0 + MAX_METRICS_POINTS * MIN) }]);
      expect(max.points).toHaveLength(MAX_METRICS_POINTS);
      expect(max.summary.total).toBe(27 + 5 + 0); // minutes 0, 1, 61 and the next day's 09:00 (minute 1440 < 1500)
    });
  });
}
