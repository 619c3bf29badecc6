// The meter (src/gateway/metering/meter.ts) against the real store on SQLite and PostgreSQL: known traffic → exact series;
// percentiles within the documented histogram error; replicas add up; a failing store loses nothing; stop() flushes
// the current minute. /metrics text parsed by parse-prometheus-text-format (plus a strict line parser for the labelled
// histograms, which that package flattens); log redaction with a real pino logger and real HTTP requests.
// PostgreSQL cases skip (with a message) when the server is unreachable and CI is unset; under CI they must run.
import { createServer } from 'node:http';
import { randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import pino from 'pino';
import { Gauge } from 'prom-client';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Store } from '../src/gateway/store/index.js';
import { storeTargets } from './helpers/store-targets.js';
import { histograms, parsePrometheusTextFormat, strictParse } from './helpers/prometheus.js';
import { upsertUsage, usageSeries, type UsageRow } from '../src/gateway/store/usage.js';
import { Meter, meterPrincipal, type MeterEvent, type MeterLogger } from '../src/gateway/metering/meter.js';
import { Metrics, upstreamLabel } from '../src/gateway/metering/prometheus.js';
import {
  PERCENTILE_RELATIVE_ERROR,
  PROM_BOUNDS_SECONDS,
  bucketIndex,
  bucketLowerMs,
  bucketUpperMs,
  percentileMs,
} from '../src/gateway/usage/histogram.js';
import { logRedaction, redactString, redactUrl } from '../src/gateway/metering/redact.js';
import { OUTCOMES, type MeterPrincipal } from '../src/gateway/usage/types.js';
import type { Principal } from '../src/gateway/access/keys.js';

const MIN = 60_000;
const METHODS = ['eth_blockNumber', 'eth_call', 'eth_getBalance', 'eth_chainId', 'eth_getLogs'];
const rnd = () => randomBytes(5).toString('hex');

/** A clock the test moves by hand. */
function clock(t: number) {
  const c = { t, now: () => c.t };
  return c;
}

/** A logger that remembers what the meter told it. */
function memoryLogger() {
  const lines: { level: 'warn' | 'error'; obj: object; msg: string }[] = [];
  const logger: MeterLogger = {
    warn: (obj, msg) => lines.push({ level: 'warn', obj, msg }),
    error: (obj, msg) => lines.push({ level: 'error', obj, msg }),
  };
  return { lines, logger };
}

// ---- known traffic -------------------------------------------------------------------------------------------------

describe('histogram', () => {
  it('buckets: bounds, index at the edges, percentile error bound', () => {
    expect(bucketIndex(0)).toBe(0);
    expect(bucketIndex(-5)).toBe(0);
    expect(bucketIndex(Number.NaN)).toBe(0);
    expect(bucketIndex(0.25)).toBe(0);
    expect(bucketIndex(1)).toBe(8);
    expect(bucketIndex(32768)).toBe(68);
    expect(bucketIndex(32769)).toBe(69);
    expect(bucketIndex(1e9)).toBe(69);
    for (let ms = 0.3; ms < 32000; ms *= 1.07) {
      const k = bucketIndex(ms);
      expect(ms).toBeGreaterThan(bucketLowerMs(k));
      expect(ms).toBeLessThanOrEqual(bucketUpperMs(k) * (1 + 1e-12));
      const reported = percentileMs(Object.assign(new Array(70).fill(0), { [k]: 1 }), 0.5)!;
      expect(Math.abs(reported - ms) / ms).toBeLessThanOrEqual(PERCENTILE_RELATIVE_ERROR + 1e-12);
    }
    expect(PERCENTILE_RELATIVE_ERROR).toBeCloseTo(0.0905, 4);
    expect(PROM_BOUNDS_SECONDS[0]).toBe(0.00025);
    expect(PROM_BOUNDS_SECONDS.at(-1)).toBe(32.768);
  });

  it('meterPrincipal: apps and network keys are attributed, static keys are not', () => {
    const app = { kind: 'app', id: 'x', appId: 'app_1', userId: 'usr_1' } as unknown as Principal;
    const key = {
      kind: 'network-key',
      id: 'y',
      keyId: 'key_1',
      userId: 'usr_2',
      network: 'mainnet',
    } as unknown as Principal;
    const st = { kind: 'static', id: 'dev', name: 'dev', key: 'k' } as Principal;
    expect(meterPrincipal(app)).toEqual({ kind: 'app', appId: 'app_1', userId: 'usr_1' });
    expect(meterPrincipal(app)).toBe(meterPrincipal(app)); // cached per principal object
    expect(meterPrincipal(key)).toEqual({ kind: 'key', keyId: 'key_1', userId: 'usr_2' });
    expect(meterPrincipal(st)).toBeUndefined();
    expect(meterPrincipal(undefined)).toBeUndefined();
  });
});

for (const target of await storeTargets('metering')) {
  describe.skipIf(target.skip)(`meter → usage store on ${target.dialect}`, () => {
    let store: Store;
    beforeAll(async () => {
      await target.setup();
      store = await target.open();
    });
    afterAll(async () => {
      await store?.close();
      await target.teardown();
    });

    it('known traffic over two minutes → exact counts, success rates, errors by code, methods; Prometheus counts all of it', async () => {
      const userId = `usr_${rnd()}`;
      const app: MeterPrincipal = { kind: 'app', appId: `app_${rnd()}`, userId };
      const key: MeterPrincipal = { kind: 'key', keyId: `key_${rnd()}`, userId };
      const T0 = Date.UTC(2033, 0, 1, 0, 0);
      const c = clock(T0 + 1_000);
      const metrics = new Metrics({ activeKeys: () => ({ app: 3, 'network-key': 2 }) });
      const meter = new Meter({
        db: store.db,
        methods: METHODS,
        networks: ['mainnet', 'testnet'],
        metrics,
        now: c.now,
      });

      const ev = (
        principal: MeterPrincipal | undefined,
        method: string,
        outcome: MeterEvent['outcome'],
        latencyMs: number,
        code?: number,
        network = 'mainnet',
      ): MeterEvent => ({ principal, network, method, outcome, latencyMs, code });
      const minute0: MeterEvent[] = [
        ...Array.from({ length: 10 }, () => ev(app, 'eth_blockNumber', 'ok', 5)),
        ...Array.from({ length: 3 }, () => ev(app, 'eth_call', 'node_error', 20, 3)),
        ...Array.from({ length: 2 }, () => ev(app, 'eth_getBalance', 'validation', 0.1, -32602)),
        ev(app, 'eth_call', 'limit', 0.2, -32005),
        ev(app, 'web3_unknownThing', 'validation', 0.1, -32601), // outside the contract → "other"
        { ...ev(key, 'eth_chainId', 'ok', 2), count: 4 },
        ...Array.from({ length: 5 }, () => ev(undefined, 'eth_blockNumber', 'ok', 1)), // static/dev key: Prometheus only
        ev(undefined, 'eth_blockNumber', 'auth', 0.05, -32600),
        ev(app, 'eth_getLogs', 'ok', 7, undefined, 'testnet'),
      ];
      const minute1: MeterEvent[] = [
        ...Array.from({ length: 6 }, () => ev(app, 'eth_blockNumber', 'ok', 50)),
        ev(app, 'eth_call', 'upstream_error', 30_000, -32603),
        ev(key, 'eth_chainId', 'ok', 3),
      ];
      for (const e of minute0) meter.record(e);
      c.t = T0 + MIN + 5;
      for (const e of minute1) meter.record(e);

      // minute 1 is still current: written too, as a partial row
      expect(await meter.flush()).toEqual({ rows: 10, minutes: 2 }); // minute 0: 6 app cells + 1 key cell; minute 1: 3
      c.t = T0 + 2 * MIN;
      expect(await meter.flush()).toEqual({ rows: 0, minutes: 0 });
      expect(meter.stats()).toEqual({ pendingCells: 0, dropped: 0, flushFailures: 0 });

      const s = await usageSeries(store.db, {
        userId,
        appId: app.appId,
        from: T0,
        to: T0 + 2 * MIN,
        granularity: 'minute',
      });
      expect(s.points).toHaveLength(2);
      expect(s.points[0]).toMatchObject({
        start: T0,
        total: 18,
        success: 11,
        successRate: 11 / 18,
        byOutcome: {
          ok: 11,
          node_error: 3,
          validation: 3,
          limit: 1,
          auth: 0,
          allowlist: 0,
          upstream_error: 0,
          backend_unavailable: 0,
        },
        errorsByCode: { '3': 3, '-32602': 2, '-32005': 1, '-32601': 1 },
        methods: { eth_blockNumber: 10, eth_call: 4, eth_getBalance: 2, eth_getLogs: 1, other: 1 },
      });
      expect(s.points[1]).toMatchObject({
        start: T0 + MIN,
        total: 7,
        success: 6,
        successRate: 6 / 7,
        errorsByCode: { '-32603': 1 },
        methods: { eth_blockNumber: 6, eth_call: 1 },
      });
      expect(s.points[1].latencyMs).toMatchObject({ mean: (6 * 50 + 30_000) / 7 });
      expect(s.summary).toMatchObject({ total: 25, success: 17 });
      const k = await usageSeries(store.db, {
        userId,
        keyId: key.keyId,
        from: T0,
        to: T0 + 2 * MIN,
        granularity: 'minute',
      });
      expect(k.points.map((p) => [p.total, p.success])).toEqual([
        [4, 4],
        [1, 1],
      ]);
      expect(
        (
          await usageSeries(store.db, {
            userId,
            appId: app.appId,
            network: 'testnet',
            from: T0,
            to: T0 + 2 * MIN,
            granularity: 'hour',
          })
        ).summary.total,
      ).toBe(1);

      // Prometheus: everything recorded, static/unauthenticated calls included
      metrics.observeUpstream('mainnet', 'https://user:s3cretpw@node.example:8545/v3/UPSTREAMKEY0123456789', 0.05);
      metrics.observeUpstream('mainnet', 'https://user:s3cretpw@node.example:8545/v3/UPSTREAMKEY0123456789', 0.2);
      metrics.observeUpstream('testnet', 0, 1.5);
      metrics.setUpstreamHealth('mainnet', 'https://user:s3cretpw@node.example:8545/v3/UPSTREAMKEY0123456789', true);
      metrics.setUpstreamHealth('testnet', 0, false);
      metrics.limitRefusal('mainnet', 'day');
      metrics.limitRefusal('mainnet', 'day');
      metrics.limitRefusal('testnet', 'second');
      const text = await metrics.metricsText();
      expect(text).not.toMatch(/s3cretpw|UPSTREAMKEY|\/v3/);

      const all = [...minute0, ...minute1];
      const expectCount = new Map<string, number>();
      const expectDur = new Map<string, { n: number; sum: number; le: number[] }>();
      for (const e of all) {
        const method = METHODS.includes(e.method) ? e.method : 'other';
        const n = e.count ?? 1;
        const ck = `${e.network}|${method}|${e.outcome}`;
        expectCount.set(ck, (expectCount.get(ck) ?? 0) + n);
        const dk = `${e.network}|${method}`;
        const d = expectDur.get(dk) ?? { n: 0, sum: 0, le: [] };
        d.n += n;
        d.sum += (e.latencyMs / 1000) * n;
        for (let i = 0; i < n; i++) d.le.push(e.latencyMs / 1000);
        expectDur.set(dk, d);
      }

      // 1) the package parser: every line valid, counters and gauges equal the traffic
      const families = new Map(parsePrometheusTextFormat(text).map((f) => [f.name, f]));
      const req = families.get('rpcgate_requests_total')!;
      expect(req.type).toBe('COUNTER');
      const got = new Map(
        req.metrics.map((m) => [`${m.labels!.network}|${m.labels!.method}|${m.labels!.outcome}`, Number(m.value)]),
      );
      expect(got).toEqual(expectCount);
      expect(OUTCOMES).toContain(req.metrics[0].labels!.outcome);
      expect(families.get('rpcgate_request_duration_seconds')!.type).toBe('HISTOGRAM');
      const limits = families.get('rpcgate_limit_refusals_total')!;
      expect(new Map(limits.metrics.map((m) => [`${m.labels!.network}|${m.labels!.period}`, Number(m.value)]))).toEqual(
        new Map([
          ['mainnet|day', 2],
          ['testnet|second', 1],
        ]),
      );
      const active = families.get('rpcgate_active_keys')!;
      expect(active.type).toBe('GAUGE');
      expect(new Map(active.metrics.map((m) => [m.labels!.kind, Number(m.value)]))).toEqual(
        new Map([
          ['app', 3],
          ['network-key', 2],
        ]),
      );
      const up = families.get('rpcgate_upstream_up')!;
      expect(new Map(up.metrics.map((m) => [`${m.labels!.network}|${m.labels!.upstream}`, Number(m.value)]))).toEqual(
        new Map([
          ['mainnet|node.example:8545', 1],
          ['testnet|0', 0],
        ]),
      );

      // 2) the strict parser: labelled histograms (the package flattens those) against the traffic
      const { types, samples } = strictParse(text);
      expect(types.get('rpcgate_request_duration_seconds')).toBe('histogram');
      const dur = histograms(samples, 'rpcgate_request_duration_seconds');
      expect(dur.size).toBe(expectDur.size);
      for (const h of dur.values()) {
        const want = expectDur.get(`${h.labels.network}|${h.labels.method}`)!;
        expect(h.count).toBe(want.n);
        expect(h.sum).toBeCloseTo(want.sum, 9);
        for (const [le, cum] of h.buckets) expect(cum, `le=${le}`).toBe(want.le.filter((v) => v <= le).length);
      }
      const ups = histograms(samples, 'rpcgate_upstream_duration_seconds');
      expect(
        new Map([...ups.values()].map((h) => [`${h.labels.network}|${h.labels.upstream}`, [h.count, h.sum]])),
      ).toEqual(
        new Map([
          ['mainnet|node.example:8545', [2, 0.25]],
          ['testnet|0', [1, 1.5]],
        ]),
      );
      expect(upstreamLabel('http://127.0.0.1/path?key=x')).toBe('127.0.0.1:80');
      expect(upstreamLabel('node-1.internal:8545')).toBe('node-1.internal:8545');
      expect(upstreamLabel('not a url/with/KEY')).toBe('invalid');
    });

    it('percentiles from summed histograms are within the documented error; the mean is exact', async () => {
      const userId = `usr_${rnd()}`;
      const app: MeterPrincipal = { kind: 'app', appId: `app_${rnd()}`, userId };
      const T0 = Date.UTC(2033, 1, 1, 0, 0);
      const c = clock(T0);
      const meter = new Meter({ db: store.db, methods: METHODS, now: c.now });
      // 1 000 calls, latencies 1 … 1000 ms, spread over three minutes (so percentiles come from summed minutes)
      const lat: number[] = [];
      for (let i = 1; i <= 1000; i++) {
        const ms = ((i * 7919) % 1000) + 1; // a permutation of 1…1000
        lat.push(ms);
        c.t = T0 + (i % 3) * MIN;
        meter.record({ principal: app, network: 'mainnet', method: 'eth_call', outcome: 'ok', latencyMs: ms });
      }
      await meter.stop();
      const s = await usageSeries(store.db, {
        userId,
        appId: app.appId,
        from: T0,
        to: T0 + 3 * MIN,
        granularity: 'hour',
      });
      expect(s.summary.total).toBe(1000);
      lat.sort((a, b) => a - b);
      const exact = (q: number) => lat[Math.ceil(q * lat.length) - 1];
      const l = s.summary.latencyMs!;
      expect(l.mean).toBeCloseTo(500.5, 9);
      for (const [q, est] of [
        [0.5, l.p50],
        [0.95, l.p95],
        [0.99, l.p99],
      ] as const) {
        expect(Math.abs(est - exact(q)) / exact(q), `p${q * 100}: ${est} vs ${exact(q)}`).toBeLessThanOrEqual(
          PERCENTILE_RELATIVE_ERROR,
        );
      }
    });

    it('two meters (replicas) flushing the same minute add up', async () => {
      const userId = `usr_${rnd()}`;
      const app: MeterPrincipal = { kind: 'app', appId: `app_${rnd()}`, userId };
      const T0 = Date.UTC(2033, 2, 1, 0, 0);
      const c = clock(T0 + 30_000);
      const other = await target.open();
      try {
        const a = new Meter({ db: store.db, methods: METHODS, now: c.now });
        const b = new Meter({ db: other.db, methods: METHODS, now: c.now });
        for (let i = 0; i < 3; i++)
          a.record({ principal: app, network: 'mainnet', method: 'eth_call', outcome: 'ok', latencyMs: 10 });
        for (let i = 0; i < 4; i++)
          b.record({ principal: app, network: 'mainnet', method: 'eth_call', outcome: 'ok', latencyMs: 100 });
        b.record({
          principal: app,
          network: 'mainnet',
          method: 'eth_call',
          outcome: 'limit',
          code: -32005,
          latencyMs: 1,
        });
        c.t = T0 + MIN;
        await a.flush();
        await b.flush();
        await a.stop(); // nothing left: a no-op
        const s = await usageSeries(store.db, {
          userId,
          appId: app.appId,
          from: T0,
          to: T0 + MIN,
          granularity: 'minute',
        });
        expect(s.points[0]).toMatchObject({ total: 8, success: 7, errorsByCode: { '-32005': 1 } });
        expect(s.points[0].latencyMs!.mean).toBeCloseTo((3 * 10 + 4 * 100 + 1) / 8, 9);
        const rows = await sql<{
          n: unknown;
        }>`select count(*) as n from usage_minute where principal_id = ${app.appId}`.execute(store.db);
        expect(Number(rows.rows[0].n)).toBe(2); // one row per (outcome, code): upserted, not duplicated
      } finally {
        await other.close();
      }
    });

    it('a flush batch is applied exactly once: a retry of a batch that did commit (writer, seq already marked) adds nothing', async () => {
      const userId = `usr_${rnd()}`;
      const appId = `app_${rnd()}`;
      const T0 = Date.UTC(2033, 2, 1, 0, 0);
      const row = (count: number): UsageRow => ({
        ts: T0,
        principalKind: 'app',
        principalId: appId,
        userId,
        network: 'mainnet',
        method: 'eth_call',
        outcome: 'ok',
        code: 0,
        count,
        latencySumMs: count,
        buckets: new Array(70).fill(0).map((_, i) => (i === 10 ? count : 0)),
      });
      const writer = `w_${rnd()}`;
      expect(await upsertUsage(store.db, [row(5)], { batch: { writer, seq: 1, at: T0 } })).toBe(1);
      expect(await upsertUsage(store.db, [row(5)], { batch: { writer, seq: 1, at: T0 } })).toBe(0); // the retry: skipped
      expect(await upsertUsage(store.db, [row(3)], { batch: { writer, seq: 2, at: T0 } })).toBe(1); // the next partial flush adds
      expect(await upsertUsage(store.db, [row(7)], { batch: { writer, seq: 1, at: T0 } })).toBe(0); // an older batch: skipped
      expect(await upsertUsage(store.db, [row(2)], { batch: { writer: `w_${rnd()}`, seq: 1, at: T0 } })).toBe(1); // another replica
      const s = await usageSeries(store.db, { userId, appId, from: T0, to: T0 + MIN, granularity: 'minute' });
      expect(s.summary.total).toBe(10);
      expect(s.summary.latencyMs?.mean).toBe(1);
    });

    it('a failing store keeps the data; the next flush writes it exactly once', async () => {
      const userId = `usr_${rnd()}`;
      const app: MeterPrincipal = { kind: 'app', appId: `app_${rnd()}`, userId };
      const T0 = Date.UTC(2033, 3, 1, 0, 0);
      const c = clock(T0);
      const { lines, logger } = memoryLogger();
      const metrics = new Metrics();
      const meter = new Meter({ db: store.db, methods: METHODS, metrics, logger, now: c.now });
      for (let i = 0; i < 5; i++)
        meter.record({ principal: app, network: 'mainnet', method: 'eth_call', outcome: 'ok', latencyMs: 4 });
      c.t = T0 + MIN;
      // the store really fails: the table is gone
      await sql`alter table usage_minute rename to usage_minute_away`.execute(store.db);
      try {
        await expect(meter.flush()).rejects.toThrow();
        // traffic goes on meanwhile, into the same minute key of a kept row and into a new minute
        meter.record({ principal: app, network: 'mainnet', method: 'eth_getBalance', outcome: 'ok', latencyMs: 4 });
        c.t = T0 + 2 * MIN;
        meter.record({ principal: app, network: 'mainnet', method: 'eth_call', outcome: 'ok', latencyMs: 4 });
        await expect(meter.flush()).rejects.toThrow();
        expect(meter.stats()).toMatchObject({ flushFailures: 2, dropped: 0 });
        expect(meter.stats().pendingCells).toBeGreaterThan(0);
      } finally {
        await sql`alter table usage_minute_away rename to usage_minute`.execute(store.db);
      }
      expect(lines.filter((l) => l.level === 'error')).toHaveLength(2);
      expect((await metrics.metricsText()).match(/^rpcgate_usage_flush_failures_total (\d+)$/m)?.[1]).toBe('2');
      c.t = T0 + 3 * MIN;
      expect(await meter.flush()).toMatchObject({ rows: 3, minutes: 3 });
      expect(meter.stats().pendingCells).toBe(0);
      const s = await usageSeries(store.db, {
        userId,
        appId: app.appId,
        from: T0,
        to: T0 + 3 * MIN,
        granularity: 'minute',
      });
      expect(s.points.map((p) => p.total)).toEqual([5, 1, 1]);
      expect(s.points[1].methods).toEqual({ eth_getBalance: 1 });
    });

    it('memory is bounded: cells beyond maxCells are dropped, counted and logged', async () => {
      const userId = `usr_${rnd()}`;
      const app: MeterPrincipal = { kind: 'app', appId: `app_${rnd()}`, userId };
      const T0 = Date.UTC(2033, 4, 1, 0, 0);
      const c = clock(T0);
      const { lines, logger } = memoryLogger();
      const metrics = new Metrics();
      const meter = new Meter({ db: store.db, methods: METHODS, metrics, logger, maxCells: 2, now: c.now });
      const rec = (method: string, count = 1) =>
        meter.record({ principal: app, network: 'mainnet', method, outcome: 'ok', latencyMs: 1, count });
      rec('eth_call', 2);
      rec('eth_getBalance');
      rec('eth_chainId', 3); // a third cell: dropped
      rec('eth_call'); // an existing cell still counts
      expect(meter.stats()).toMatchObject({ pendingCells: 2, dropped: 3 });
      await meter.stop();
      expect(lines.some((l) => l.level === 'warn' && (l.obj as { dropped: number }).dropped === 3)).toBe(true);
      const text = await metrics.metricsText();
      expect(text).toMatch(/^rpcgate_usage_dropped_total 3$/m);
      expect(text).toMatch(/^rpcgate_requests_total\{network="mainnet",method="eth_chainId",outcome="ok"\} 3$/m); // Prometheus still counts
      const s = await usageSeries(store.db, {
        userId,
        appId: app.appId,
        from: T0,
        to: T0 + MIN,
        granularity: 'minute',
      });
      expect(s.summary.methods).toEqual({ eth_call: 3, eth_getBalance: 1 });
    });

    it('the interval timer flushes everything, the current minute as a partial row that later flushes add to; stop() flushes the rest', async () => {
      const userId = `usr_${rnd()}`;
      const app: MeterPrincipal = { kind: 'app', appId: `app_${rnd()}`, userId };
      const T0 = Date.UTC(2033, 5, 1, 0, 0);
      const c = clock(T0 + 10);
      vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
      const series = async () =>
        (
          await usageSeries(store.db, { userId, appId: app.appId, from: T0, to: T0 + 2 * MIN, granularity: 'minute' })
        ).points.map((p) => p.total);
      try {
        const meter = new Meter({ db: store.db, methods: METHODS, now: c.now, flushIntervalMs: 5_000 }).start();
        meter.record({ principal: app, network: 'mainnet', method: 'eth_call', outcome: 'ok', latencyMs: 3 });
        c.t = T0 + MIN + 10;
        meter.record({ principal: app, network: 'mainnet', method: 'eth_call', outcome: 'ok', latencyMs: 3, count: 2 });
        vi.advanceTimersByTime(5_000); // the timer's flush takes minute 0 and the current minute 1 …
        expect(await meter.flush()).toEqual({ rows: 0, minutes: 0 }); // … so this one (queued behind it) finds nothing
        expect(await series()).toEqual([1, 2]);
        // more calls in the same (current) minute: the next flush adds to its partial row
        meter.record({ principal: app, network: 'mainnet', method: 'eth_call', outcome: 'ok', latencyMs: 3, count: 4 });
        vi.advanceTimersByTime(5_000);
        expect(await meter.flush()).toEqual({ rows: 0, minutes: 0 });
        expect(await series()).toEqual([1, 6]);
        // graceful stop while minute 1 is still current
        meter.record({ principal: app, network: 'mainnet', method: 'eth_call', outcome: 'ok', latencyMs: 3 });
        expect(await meter.stop()).toEqual({ rows: 1, minutes: 1 });
        expect(vi.getTimerCount()).toBe(0);
        expect(await series()).toEqual([1, 7]);
        // a call recorded after stop (an in-flight request finishing) lands in the same minute and adds up
        meter.record({ principal: app, network: 'mainnet', method: 'eth_call', outcome: 'ok', latencyMs: 3 });
        await meter.stop();
        expect(await series()).toEqual([1, 8]);
      } finally {
        vi.useRealTimers();
      }
    });
  });
}

// ---- logs ----------------------------------------------------------------------------------------------------------

describe('Prometheus text', () => {
  it('a gauge without samples (NaN) is written as NaN, so the scrape stays parsable', async () => {
    const m = new Metrics();
    new Gauge({ name: 'rpcgate_test_nan', help: 'no samples yet', registers: [m.registry] }).set(NaN);
    const text = await m.metricsText();
    expect(text).toMatch(/^rpcgate_test_nan NaN$/m);
    expect(() => strictParse(text)).not.toThrow();
  });
});

describe('log redaction', () => {
  it('redactUrl: both access points, host-mapped paths, user info, secret query values', () => {
    const k = 'Fq3xNq7aYhV9mG2cT4wL8pR1sB6dK5jZ';
    expect(redactUrl(`/mainnet/v2/${k}`)).toBe('/mainnet/v2/[redacted]');
    expect(redactUrl(`/testnet/${k}`)).toBe('/testnet/[redacted]');
    expect(redactUrl('/mainnet/dev')).toBe('/mainnet/[redacted]'); // short static keys too
    expect(redactUrl(`/v2/${k}`)).toBe('/v2/[redacted]');
    expect(redactUrl(`/${k}`)).toBe('/[redacted]');
    expect(redactUrl('/docs/api/index.html')).toBe('/docs/api/index.html');
    expect(redactUrl('/metrics')).toBe('/metrics');
    expect(redactUrl('/api/apps/app_3vQB7dLWmhMpV8X1dHhY6s')).toBe('/api/apps/app_3vQB7dLWmhMpV8X1dHhY6s');
    expect(redactUrl(`https://u:pw@eth.example:8443/v3/${k}?x=1&apiKey=abc`)).toBe(
      'https://[redacted]@eth.example:8443/v3/[redacted]?x=1&apiKey=[redacted]',
    );
    expect(
      redactString(
        `upstream https://eth.example/rpc/${k} said 0x${'ab'.repeat(32)} for eth_getTransactionByBlockHashAndIndex`,
      ),
    ).toBe(
      `upstream https://eth.example/rpc/[redacted] said 0x${'ab'.repeat(32)} for eth_getTransactionByBlockHashAndIndex`,
    );
    // A token that happens to start with 0x is not chain data unless all of it is hex.
    expect(
      redactString('token 0xnNcLK9mkyYnTeeuseTeM8a_FaclCosuizdUHigJLs and 0x5FbDB2315678afecb367f032d93F642f64180aa3'),
    ).toBe('token [redacted] and 0x5FbDB2315678afecb367f032d93F642f64180aa3');
  });

  it('a real pino logger and real HTTP requests: no key, JWT, cookie or upstream credential reaches a log line', async () => {
    const appKey = 'Fq3xNq7aYhV9mG2cT4wL8pR1sB6dK5jZ';
    const devKey = randomBytes(16).toString('hex');
    const staticKey = 'team-key';
    const jwt = `eyJhbGciOiJFUzI1NiIsImtpZCI6ImsxIn0.eyJzdWIiOiJ4IiwiZXhwIjo5OTk5OTk5OTk5fQ.${randomBytes(32).toString('base64url')}`;
    const session = randomBytes(32).toString('base64url');
    const session2 = randomBytes(32).toString('base64url');
    const upstream = `https://admin:Sup3rS3cret@eth-node.example/v3/${randomBytes(16).toString('hex')}`;
    const secrets = [appKey, devKey, staticKey, jwt, session, session2, 'Sup3rS3cret', upstream.split('/').at(-1)!];

    let out = '';
    const sink = new Writable({
      write(chunk, _enc, cb) {
        out += chunk.toString();
        cb();
      },
    });
    const log = pino({ ...logRedaction({ networks: ['mainnet', 'testnet'] }), level: 'debug' }, sink);

    const server = createServer((req, res) => {
      res.setHeader('Set-Cookie', `rpcgate_session=${session2}; HttpOnly`);
      res.statusCode = 200;
      res.end('{}');
      log.info({ req, res }, `request ${req.method} ${req.url}`);
      log.debug({ url: req.url, headers: req.headers }, 'headers');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const { port } = server.address() as { port: number };
    try {
      const base = `http://127.0.0.1:${port}`;
      await (
        await fetch(`${base}/mainnet/v2/${appKey}`, {
          method: 'POST',
          headers: { authorization: `Bearer ${jwt}`, cookie: `rpcgate_session=${session}` },
          body: '{}',
        })
      ).text();
      await (await fetch(`${base}/testnet/${devKey}`, { method: 'POST', body: '{}' })).text();
      await (
        await fetch(`${base}/mainnet/${staticKey}?token=${session}`, {
          method: 'POST',
          body: '{}',
          headers: { referer: `${base}/v2/${appKey}` },
        })
      ).text();
    } finally {
      await new Promise<void>((r) => server.close(() => r()));
    }
    const err = new Error(`request to ${upstream} failed, reason: connect ECONNREFUSED`);
    log.error({ err, upstream }, 'upstream failed');
    log.warn(`JWT ${jwt} rejected for key ${appKey} via /mainnet/v2/${appKey}; cookie rpcgate_session=${session}`);
    log.info(
      { nested: { headers: { authorization: `Bearer ${jwt}`, cookie: `rpcgate_session=${session}` } } },
      'nested',
    );
    await new Promise((r) => setImmediate(r));

    const lines = out
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, any>);
    expect(lines.length).toBe(3 * 2 + 3);
    for (const s of secrets) expect(out, `secret leaked: ${s.slice(0, 6)}…`).not.toContain(s);
    // what is left is still useful
    const first = lines[0];
    expect(first.req).toMatchObject({
      method: 'POST',
      url: '/mainnet/v2/[redacted]',
      headers: { authorization: '[redacted]', cookie: '[redacted]' },
    });
    expect(first.res).toMatchObject({ statusCode: 200, headers: { 'set-cookie': '[redacted]' } });
    expect(first.msg).toBe('request POST /mainnet/v2/[redacted]');
    expect(lines.find((l) => l.msg === 'upstream failed')).toMatchObject({
      upstream: 'https://[redacted]@eth-node.example/v3/[redacted]',
    });
    expect(lines.find((l) => l.msg === 'upstream failed')!.err.message).toContain('ECONNREFUSED');
    expect(lines.find((l) => l.msg === 'nested')!.nested.headers).toEqual({
      authorization: '[redacted]',
      cookie: '[redacted]',
    });
  });
});
