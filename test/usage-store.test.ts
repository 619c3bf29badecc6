// The usage tables (src/gateway/store/usage.ts, migration 0002_usage) on SQLite and PostgreSQL: upsert-add, ownership,
// series arithmetic, downsampling (totals and histograms preserved), retention, concurrent roll-ups.
// PostgreSQL cases skip (with a message) when the server is unreachable and CI is unset; under CI they must run.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Store } from '../src/gateway/store/index.js';
import { storeTargets } from './helpers/store-targets.js';
import {
  GRANULARITY_MS,
  downsample,
  upsertUsage,
  usageSeries,
  usageToday,
  type UsageRow,
} from '../src/gateway/store/usage.js';
import { HISTOGRAM_BUCKETS, bucketIndex } from '../src/gateway/usage/histogram.js';
import type { Outcome } from '../src/gateway/usage/types.js';

const MIN = GRANULARITY_MS.minute;
const HOUR = GRANULARITY_MS.hour;
const DAY = GRANULARITY_MS.day;
const rnd = () => randomBytes(5).toString('hex');

/** A row of `count` calls all with latency `ms`. */
function row(
  p: Partial<UsageRow> & { ts: number; userId: string; principalId: string },
  count: number,
  ms: number,
): UsageRow {
  const buckets = new Array<number>(HISTOGRAM_BUCKETS).fill(0);
  buckets[bucketIndex(ms)] = count;
  return {
    principalKind: 'app',
    network: 'mainnet',
    method: 'eth_blockNumber',
    outcome: 'ok',
    code: 0,
    count,
    latencySumMs: ms * count,
    buckets,
    ...p,
  };
}

/** Latency sums are floats: summed in another order after a roll-up, the mean may differ in its last bits. */
function norm<T>(v: T): T {
  return JSON.parse(JSON.stringify(v), (k, x) =>
    k === 'mean' && typeof x === 'number' ? Number(x.toPrecision(10)) : x,
  ) as T;
}

async function tableCount(s: Store, table: string, userId: string): Promise<number> {
  const r = await s.db
    .selectFrom(table as 'users')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('user_id' as 'id', '=', userId)
    .executeTakeFirstOrThrow();
  return Number(r.n);
}

for (const target of await storeTargets('usage-store')) {
  describe.skipIf(target.skip)(`usage store on ${target.dialect}`, () => {
    let store: Store;
    beforeAll(async () => {
      await target.setup();
      store = await target.open();
    });
    afterAll(async () => {
      await store?.close();
      await target.teardown();
    });

    it('migration 0002_usage creates the three resolutions with 70 bucket columns', async () => {
      const tables = await store.db.introspection.getTables();
      for (const t of ['usage_minute', 'usage_hour', 'usage_day']) {
        const meta = tables.find((x) => x.name === t);
        expect(meta, t).toBeDefined();
        const cols = meta!.columns.map((c) => c.name);
        expect(cols).toEqual(
          expect.arrayContaining([
            'ts',
            'principal_kind',
            'principal_id',
            'user_id',
            'network',
            'method',
            'outcome',
            'code',
            'count',
            'latency_sum_ms',
            'b0',
            'b69',
          ]),
        );
        expect(cols.filter((c) => /^b\d+$/.test(c))).toHaveLength(HISTOGRAM_BUCKETS);
      }
    });

    it('upserts add up per key (two writers, same minute), across statement chunks', async () => {
      const userId = `usr_${rnd()}`;
      const appId = `app_${rnd()}`;
      const t0 = Date.UTC(2030, 0, 1, 10, 0);
      // 700 distinct minutes → three INSERT statements in one transaction.
      const many = Array.from({ length: 700 }, (_, i) => row({ ts: t0 + i * MIN, userId, principalId: appId }, 1, 10));
      expect(await upsertUsage(store.db, many)).toBe(700);
      // a second writer (another pool) adds to the first minute and a third minute
      const other = await target.open();
      try {
        await upsertUsage(other.db, [
          row({ ts: t0, userId, principalId: appId }, 4, 10),
          row({ ts: t0 + 2 * MIN, userId, principalId: appId }, 2, 100),
        ]);
      } finally {
        await other.close();
      }
      const r = await store.db
        .selectFrom('usage_minute' as 'users')
        .selectAll()
        .where('principal_id' as 'id', '=', appId)
        .where('ts' as 'id', 'in', [t0, t0 + 2 * MIN] as unknown as string[])
        .orderBy('ts' as 'id')
        .execute();
      const rows = r as unknown as Record<string, unknown>[];
      expect(rows.map((x) => Number(x.count))).toEqual([5, 3]);
      expect(Number(rows[0].latency_sum_ms)).toBe(50);
      expect(Number(rows[0][`b${bucketIndex(10)}`])).toBe(5);
      expect(Number(rows[1][`b${bucketIndex(10)}`])).toBe(1);
      expect(Number(rows[1][`b${bucketIndex(100)}`])).toBe(2);
      expect(rows[0].user_id).toBe(userId);

      const s = await usageSeries(store.db, { userId, appId, from: t0, to: t0 + 700 * MIN, granularity: 'hour' });
      expect(s.summary.total).toBe(700 + 6);
      expect(s.points).toHaveLength(Math.ceil(700 / 60));
      expect(s.points[0]).toMatchObject({ start: t0, total: 66 });
    });

    it('series: exact totals, success rate, errors by code, methods; ownership by user id', async () => {
      const alice = `usr_${rnd()}`;
      const mallory = `usr_${rnd()}`;
      const app = `app_${rnd()}`;
      const key = `key_${rnd()}`;
      const t0 = Date.UTC(2030, 1, 1, 0, 0);
      const rows: UsageRow[] = [
        row({ ts: t0, userId: alice, principalId: app, method: 'eth_call' }, 7, 20),
        row({ ts: t0, userId: alice, principalId: app, method: 'eth_call', outcome: 'node_error', code: 3 }, 2, 30),
        row({ ts: t0, userId: alice, principalId: app, method: 'eth_getLogs', outcome: 'limit', code: -32005 }, 1, 0.1),
        row(
          { ts: t0 + MIN, userId: alice, principalId: app, method: 'eth_getLogs', outcome: 'validation', code: -32602 },
          3,
          0.2,
        ),
        row({ ts: t0 + MIN, userId: alice, principalId: app, network: 'testnet' }, 5, 2),
        row({ ts: t0 + MIN, userId: alice, principalId: key, principalKind: 'key' }, 11, 4),
        // mallory's own key, which happens to carry alice's app id as principal id of kind "key": never mixed in
        row({ ts: t0, userId: mallory, principalId: app, principalKind: 'key' }, 100, 1),
      ];
      await upsertUsage(store.db, rows);

      const a = await usageSeries(store.db, {
        userId: alice,
        appId: app,
        from: t0,
        to: t0 + 3 * MIN,
        granularity: 'minute',
      });
      expect(a.points.map((p) => p.total)).toEqual([10, 8, 0]);
      expect(a.points[0]).toMatchObject({
        start: t0,
        success: 7,
        successRate: 0.7,
        byOutcome: { ok: 7, node_error: 2, limit: 1, validation: 0 },
        errorsByCode: { '3': 2, '-32005': 1 },
        methods: { eth_call: 9, eth_getLogs: 1 },
      });
      expect(a.points[1]).toMatchObject({
        success: 5,
        successRate: 5 / 8,
        errorsByCode: { '-32602': 3 },
        methods: { eth_blockNumber: 5, eth_getLogs: 3 },
      });
      expect(a.points[2]).toMatchObject({ total: 0, successRate: null, latencyMs: null, methods: {} });
      expect(a.summary).toMatchObject({ total: 18, success: 12, errorsByCode: { '3': 2, '-32005': 1, '-32602': 3 } });
      expect(a.summary.latencyMs!.mean).toBeCloseTo((7 * 20 + 2 * 30 + 0.1 + 3 * 0.2 + 5 * 2) / 18, 9);

      // network filter, key filter, whole user
      expect(
        (
          await usageSeries(store.db, {
            userId: alice,
            appId: app,
            network: 'testnet',
            from: t0,
            to: t0 + 2 * MIN,
            granularity: 'hour',
          })
        ).summary.total,
      ).toBe(5);
      expect(
        (await usageSeries(store.db, { userId: alice, keyId: key, from: t0, to: t0 + 2 * MIN, granularity: 'hour' }))
          .summary.total,
      ).toBe(11);
      expect(
        (await usageSeries(store.db, { userId: alice, from: t0, to: t0 + 2 * MIN, granularity: 'day' })).summary.total,
      ).toBe(29);

      // ownership: another user's ids read as no usage, in both directions
      expect(
        (await usageSeries(store.db, { userId: mallory, appId: app, from: t0, to: t0 + DAY, granularity: 'day' }))
          .summary.total,
      ).toBe(0);
      expect(
        (await usageSeries(store.db, { userId: mallory, keyId: key, from: t0, to: t0 + DAY, granularity: 'day' }))
          .summary.total,
      ).toBe(0);
      expect(
        (await usageSeries(store.db, { userId: alice, keyId: app, from: t0, to: t0 + DAY, granularity: 'day' })).summary
          .total,
      ).toBe(0);
      expect(
        (await usageSeries(store.db, { userId: mallory, from: t0, to: t0 + DAY, granularity: 'day' })).summary.total,
      ).toBe(100);

      // today's quick counts (UTC day of `now`)
      expect(await usageToday(store.db, alice, { appId: app }, t0 + 5 * HOUR)).toMatchObject({
        day: t0,
        total: 18,
        success: 12,
      });
      expect((await usageToday(store.db, alice, { keyId: key }, t0 + 5 * HOUR)).total).toBe(11);
      expect((await usageToday(store.db, mallory, { appId: app }, t0)).total).toBe(0);
      expect((await usageToday(store.db, alice, { appId: app }, t0 + DAY)).total).toBe(0);

      await expect(
        usageSeries(store.db, { userId: alice, appId: app, keyId: key, from: t0, to: t0 + MIN, granularity: 'minute' }),
      ).rejects.toThrow(TypeError);
      await expect(
        usageSeries(store.db, { userId: alice, from: t0, to: t0 + 30 * DAY, granularity: 'minute' }),
      ).rejects.toThrow(RangeError);
    });

    it('downsampling rolls minutes into hours and hours into days: totals, errors, methods and percentiles unchanged', async () => {
      const userId = `usr_${rnd()}`;
      const app = `app_${rnd()}`;
      const key = `key_${rnd()}`;
      const now = Date.UTC(2031, 5, 20, 12, 34, 56);
      const start = Date.UTC(2031, 5, 14, 0, 0); // 6.5 days of traffic before `now`
      const outcomes: [Outcome, number][] = [
        ['ok', 0],
        ['node_error', 3],
        ['limit', -32005],
        ['upstream_error', -32603],
      ];
      const methods = ['eth_call', 'eth_getBalance', 'eth_blockNumber'];
      const rows: UsageRow[] = [];
      let i = 0;
      for (let ts = start; ts < now - 5 * MIN; ts += 17 * MIN) {
        const [outcome, code] = outcomes[i % outcomes.length];
        rows.push(
          row(
            {
              ts,
              userId,
              principalId: i % 3 === 0 ? key : app,
              principalKind: i % 3 === 0 ? 'key' : 'app',
              method: methods[i % 3],
              outcome,
              code,
              network: i % 2 ? 'mainnet' : 'testnet',
            },
            1 + (i % 5),
            0.5 + (i % 13) * 7.3,
          ),
        );
        i++;
      }
      await upsertUsage(store.db, rows);
      const q = { userId, from: start, to: now + MIN, granularity: 'day' as const };
      const before = await usageSeries(store.db, q);
      const beforeApp = await usageSeries(store.db, { ...q, appId: app, granularity: 'hour' });
      const minuteRows = await tableCount(store, 'usage_minute', userId);
      expect(minuteRows).toBe(rows.length);

      const r1 = await downsample(store.db, { now, minuteRetentionMs: 2 * DAY, hourRetentionMs: 4 * DAY });
      expect(r1.minuteCutoff).toBe(Date.UTC(2031, 5, 18, 12, 0));
      expect(r1.hourCutoff).toBe(Date.UTC(2031, 5, 16, 0, 0));
      // (the tables also hold other cases' rows: count this user's)
      expect(r1.minuteRowsRolledUp).toBeGreaterThanOrEqual(rows.filter((x) => x.ts < r1.minuteCutoff).length);
      expect(r1.hourRowsRolledUp).toBeGreaterThan(0);
      expect(await tableCount(store, 'usage_minute', userId)).toBe(
        minuteRows - rows.filter((x) => x.ts < r1.minuteCutoff).length,
      );

      const after = await usageSeries(store.db, q);
      expect(norm(after)).toEqual(norm(before)); // day buckets: identical, latency percentiles included
      expect(after.summary.total).toBe(rows.reduce((n, x) => n + x.count, 0));
      const afterApp = await usageSeries(store.db, { ...q, appId: app, granularity: 'hour' });
      // hours newer than the hour cutoff are identical; older ones moved into their day's first hour
      const cut = (s: typeof beforeApp) => s.points.filter((p) => p.start >= r1.hourCutoff);
      expect(norm(cut(afterApp))).toEqual(norm(cut(beforeApp)));
      expect(norm(afterApp.summary)).toEqual(norm(beforeApp.summary));

      // rows left where they belong
      const minTs = async (t: string) =>
        Number(
          (
            (await store.db
              .selectFrom(t as 'users')
              .select((eb) => eb.fn.min<number>('ts' as 'id').as('m'))
              .where('user_id' as 'id', '=', userId)
              .executeTakeFirstOrThrow()) as { m: number }
          ).m,
        );
      expect(await minTs('usage_minute')).toBeGreaterThanOrEqual(r1.minuteCutoff);
      expect(await minTs('usage_hour')).toBeGreaterThanOrEqual(r1.hourCutoff);
      expect(await minTs('usage_day')).toBe(start);

      // idempotent when nothing is old enough any more
      const r2 = await downsample(store.db, { now, minuteRetentionMs: 2 * DAY, hourRetentionMs: 4 * DAY });
      expect([r2.minuteRowsRolledUp, r2.hourRowsRolledUp]).toEqual([0, 0]);
      expect(norm(await usageSeries(store.db, q))).toEqual(norm(before));

      // a late flush for an already rolled-up minute lands in usage_minute and adds up at the next roll-up
      await upsertUsage(store.db, [row({ ts: start + 5 * MIN, userId, principalId: app }, 9, 1)]);
      await downsample(store.db, { now, minuteRetentionMs: 2 * DAY, hourRetentionMs: 4 * DAY });
      expect((await usageSeries(store.db, q)).summary.total).toBe(before.summary.total + 9);

      // retention of day rows
      const r3 = await downsample(store.db, {
        now,
        minuteRetentionMs: 2 * DAY,
        hourRetentionMs: 4 * DAY,
        dayRetentionMs: 5 * DAY,
      });
      expect(r3.dayRowsDeleted).toBeGreaterThan(0);
      const kept = await usageSeries(store.db, q);
      expect(kept.points.filter((p) => p.start < Date.UTC(2031, 5, 15)).every((p) => p.total === 0)).toBe(true);
      expect(norm(kept.points.filter((p) => p.start >= Date.UTC(2031, 5, 15)))).toEqual(
        norm(before.points.filter((p) => p.start >= Date.UTC(2031, 5, 15))),
      );
    });

    it('concurrent roll-ups (two replicas on PostgreSQL) with a flush in between, neither lose nor double count', async () => {
      const userId = `usr_${rnd()}`;
      const app = `app_${rnd()}`;
      const now = Date.UTC(2032, 2, 10, 8, 0);
      const rows = Array.from({ length: 400 }, (_, i) =>
        row(
          { ts: now - 3 * DAY + i * 7 * MIN, userId, principalId: app, method: i % 2 ? 'eth_call' : 'eth_chainId' },
          1 + (i % 4),
          3 + i,
        ),
      );
      await upsertUsage(store.db, rows);
      const expected = rows.reduce((n, x) => n + x.count, 0);
      // PostgreSQL: a second pool (another replica). SQLite: the same store — two connections in one process would
      // deadlock (better-sqlite3 waits for the file lock synchronously, blocking the holder's event loop); across
      // processes the IMMEDIATE transactions serialize the same way the single connection does here.
      const other = target.dialect === 'postgres' ? await target.open() : store;
      try {
        const late = row({ ts: now - 3 * DAY + 1 * MIN, userId, principalId: app }, 5, 1);
        await Promise.all([
          downsample(store.db, { now, minuteRetentionMs: HOUR, hourRetentionMs: DAY }),
          downsample(other.db, { now, minuteRetentionMs: HOUR, hourRetentionMs: DAY }),
          upsertUsage(other.db, [late]),
        ]);
        const s = await usageSeries(store.db, { userId, from: now - 4 * DAY, to: now, granularity: 'day' });
        expect(s.summary.total).toBe(expected + 5);
        expect(s.summary.methods).toEqual({
          eth_call: rows.filter((x) => x.method === 'eth_call').reduce((n, x) => n + x.count, 0),
          eth_chainId: rows.filter((x) => x.method === 'eth_chainId').reduce((n, x) => n + x.count, 0),
          eth_blockNumber: 5,
        });
      } finally {
        if (other !== store) await other.close();
      }
    });
  });
}
