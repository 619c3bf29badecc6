// Migration 0006_usage_cache_hits on both dialects: usage rows written before it read as 0 hits; hits are added up like
// the call count by the flush upsert, a retried flush (same writer and seq: its COMMIT succeeded unseen) adds nothing
// twice, the Meter's partial flushes of one minute add up, and roll-ups into hours and days keep them; down drops it.
import { randomBytes } from 'node:crypto';
import { Migrator, NO_MIGRATIONS, sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { Meter, type MeterPrincipal } from '../src/gateway/metering/meter.js';
import { downsample, upsertUsage, usageSeries, type Store, type UsageRow } from '../src/gateway/store/index.js';
import { migrationProvider } from '../src/gateway/store/migrations/index.js';
import { HISTOGRAM_BUCKETS } from '../src/gateway/usage/histogram.js';
import { storeTargets } from './helpers/store-targets.js';

const MIN = 60_000;
const DAY = 86_400_000;
/** A fixed past minute: 2025-03-01 09:00 UTC. */
const T0 = Date.UTC(2025, 2, 1, 9, 0);

const columns = async (store: Store, table: string) =>
  (await store.db.introspection.getTables()).find((t) => t.name === table)?.columns.map((c) => c.name) ?? [];

for (const target of await storeTargets('store-usage-cache-hits')) {
  describe.skipIf(target.skip)(`0006_usage_cache_hits on ${target.dialect}`, () => {
    it('old rows read 0; hits add up exactly once per flush, across partial flushes and roll-ups; down drops the column', async () => {
      await target.setup();
      const store = await target.open();
      try {
        const db = store.db;
        const userId = `usr_${randomBytes(6).toString('hex')}`;
        const appId = `app_${randomBytes(6).toString('hex')}`;
        // The schema before this change (0005), a usage row written with its columns.
        const migrator = new Migrator({ db, provider: migrationProvider(store.dialect) });
        expect((await migrator.migrateTo(NO_MIGRATIONS)).error).toBeUndefined();
        expect((await migrator.migrateTo('0005_jwt_lifetime')).error).toBeUndefined();
        expect(await columns(store, 'usage_minute')).not.toContain('cache_hits');
        await sql`insert into usage_minute (ts, principal_kind, principal_id, user_id, network, method, outcome, code, "count", latency_sum_ms, b8)
          values (${T0}, 'app', ${appId}, ${userId}, 'mainnet', 'eth_chainId', 'ok', 0, 7, 7, 7)`.execute(db);

        // Up to this change only: later migrations are not this test's concern.
        const up = await migrator.migrateTo('0006_usage_cache_hits');
        expect(up.error).toBeUndefined();
        expect(up.results?.map((r) => r.migrationName)).toEqual(['0006_usage_cache_hits']);
        for (const t of ['usage_minute', 'usage_hour', 'usage_day'])
          expect(await columns(store, t), t).toContain('cache_hits');
        // The reads below are today's (they read later columns too, such as 0010's units): the rest of the way up.
        expect((await migrator.migrateToLatest()).error).toBeUndefined();
        const summary = async (from = T0, to = T0 + 2 * DAY) =>
          (await usageSeries(db, { userId, appId, from, to, granularity: 'day', fill: false })).summary;
        expect(await summary()).toMatchObject({ total: 7, success: 7, cacheHits: 0 });

        // The flush upsert adds hits to the same row; a retried batch (same writer, same seq) is skipped.
        const buckets = new Array<number>(HISTOGRAM_BUCKETS).fill(0);
        buckets[8] = 4;
        const row: UsageRow = {
          ts: T0,
          principalKind: 'app',
          principalId: appId,
          userId,
          network: 'mainnet',
          method: 'eth_chainId',
          outcome: 'ok',
          code: 0,
          count: 4,
          cacheHits: 3,
          latencySumMs: 4,
          buckets,
        };
        const writer = `w-${randomBytes(4).toString('hex')}`;
        expect(await upsertUsage(db, [row], { batch: { writer, seq: 1, at: T0 } })).toBe(1);
        expect(await upsertUsage(db, [row], { batch: { writer, seq: 1, at: T0 } })).toBe(0);
        expect(await summary()).toMatchObject({ total: 11, cacheHits: 3 });
        expect(await upsertUsage(db, [{ ...row, cacheHits: 2 }], { batch: { writer, seq: 2, at: T0 } })).toBe(1);
        expect(await summary()).toMatchObject({ total: 15, cacheHits: 5 });

        // The Meter: two partial flushes of one minute, hits and misses of one cell, add up.
        let clock = T0 + MIN + 1_000;
        const meter = new Meter({
          db,
          methods: ['eth_chainId', 'eth_getBlockByNumber'],
          now: () => clock,
          flushIntervalMs: 3_600_000,
        });
        const p: MeterPrincipal = { kind: 'app', appId, userId };
        const call = (cacheHit: boolean, method = 'eth_getBlockByNumber') =>
          meter.record({ principal: p, network: 'mainnet', method, outcome: 'ok', latencyMs: 1, cacheHit });
        call(false);
        call(true);
        call(true);
        expect((await meter.flush()).rows).toBe(1);
        clock += 10_000;
        call(true);
        call(false, 'eth_chainId');
        meter.record({
          principal: p,
          network: 'mainnet',
          method: 'eth_chainId',
          outcome: 'ok',
          latencyMs: 1,
          count: 5,
          cacheHit: true,
        });
        expect((await meter.flush()).rows).toBe(2);
        await meter.stop();
        const minute = (
          await usageSeries(db, { userId, appId, from: T0 + MIN, to: T0 + 2 * MIN, granularity: 'minute' })
        ).summary;
        expect(minute).toMatchObject({ total: 10, cacheHits: 8, methods: { eth_getBlockByNumber: 4, eth_chainId: 6 } });
        expect(await summary()).toMatchObject({ total: 25, cacheHits: 13 });

        // Roll-ups (minutes → hours → days) keep the hits.
        const r = await downsample(db, { now: T0 + 400 * DAY });
        expect(r.minuteRowsRolledUp).toBeGreaterThan(0);
        expect(r.hourRowsRolledUp).toBeGreaterThan(0);
        const left = await sql<{
          n: unknown;
        }>`select count(*) as n from usage_minute where user_id = ${userId}`.execute(db);
        expect(Number(left.rows[0].n)).toBe(0);
        expect(await summary()).toMatchObject({ total: 25, cacheHits: 13 });

        // Down: the column goes, the rows stay.
        expect((await migrator.migrateTo('0005_jwt_lifetime')).error).toBeUndefined();
        for (const t of ['usage_minute', 'usage_hour', 'usage_day'])
          expect(await columns(store, t), t).not.toContain('cache_hits');
        const days = await sql<{
          n: unknown;
        }>`select sum("count") as n from usage_day where user_id = ${userId}`.execute(db);
        expect(Number(days.rows[0].n)).toBe(25);
      } finally {
        await store.close();
        await target.teardown();
      }
    });
  });
}
