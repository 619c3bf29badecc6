// Migration 0010_usage_units on both dialects: usage rows written before it read as 0 units; the Meter counts each
// call's compute units (x-gateway.units of its method, a batch item each its own, a method without a weight the
// default), the flush upsert adds them up exactly once, roll-ups into hours and days keep them, and the account API's
// usage series returns them beside the call count; down drops the column and keeps the rows.
import { randomBytes } from 'node:crypto';
import { Migrator, NO_MIGRATIONS, sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { methods as nodeMethods } from '../generated/node/methods.js';
import { DEFAULT_UNITS, unitsTable } from '../src/gateway/method-meaning.js';
import { Meter, type MeterPrincipal } from '../src/gateway/metering/meter.js';
import { Metrics } from '../src/gateway/metering/prometheus.js';
import { downsample, usageSeries, type Store } from '../src/gateway/store/index.js';
import { migrationProvider } from '../src/gateway/store/migrations/index.js';
import { storeTargets } from './helpers/store-targets.js';

const MIN = 60_000;
const DAY = 86_400_000;
/** A fixed past minute: 2025-03-01 09:00 UTC. */
const T0 = Date.UTC(2025, 2, 1, 9, 0);

const columns = async (store: Store, table: string) =>
  (await store.db.introspection.getTables()).find((t) => t.name === table)?.columns.map((c) => c.name) ?? [];

for (const target of await storeTargets('store-usage-units')) {
  describe.skipIf(target.skip)(`0010_usage_units on ${target.dialect}`, () => {
    it('old rows read 0 units; calls count their methods’ units through the Meter, flush and roll-ups; down drops the column', async () => {
      await target.setup();
      const store = await target.open();
      try {
        const db = store.db;
        const userId = `usr_${randomBytes(6).toString('hex')}`;
        const appId = `app_${randomBytes(6).toString('hex')}`;
        const migrator = new Migrator({ db, provider: migrationProvider(store.dialect) });
        expect((await migrator.migrateTo(NO_MIGRATIONS)).error).toBeUndefined();
        expect((await migrator.migrateTo('0009_audit_events')).error).toBeUndefined();
        expect(await columns(store, 'usage_minute')).not.toContain('units');
        await sql`insert into usage_minute (ts, principal_kind, principal_id, user_id, network, method, outcome, code, "count", latency_sum_ms, b8)
          values (${T0}, 'app', ${appId}, ${userId}, 'mainnet', 'eth_chainId', 'ok', 0, 7, 7, 7)`.execute(db);

        const up = await migrator.migrateTo('0010_usage_units');
        expect(up.error).toBeUndefined();
        expect(up.results?.map((r) => r.migrationName)).toEqual(['0010_usage_units']);
        for (const t of ['usage_minute', 'usage_hour', 'usage_day'])
          expect(await columns(store, t), t).toContain('units');
        const summary = async () =>
          (await usageSeries(db, { userId, appId, from: T0, to: T0 + 2 * DAY, granularity: 'day', fill: false }))
            .summary;
        expect(await summary()).toMatchObject({ total: 7, units: 0 });

        // The Meter weighs each call by the contract: eth_getLogs 60, eth_call 26, eth_blockNumber 10, a batch of
        // three eth_call (count 3) 78, a method outside the contract the default.
        const units = unitsTable(nodeMethods);
        const metrics = new Metrics();
        let clock = T0 + MIN + 1_000;
        const meter = new Meter({
          db,
          methods: Object.keys(nodeMethods),
          units,
          metrics,
          now: () => clock,
          flushIntervalMs: 3_600_000,
        });
        const p: MeterPrincipal = { kind: 'app', appId, userId };
        const call = (method: string, count = 1) =>
          meter.record({ principal: p, network: 'mainnet', method, outcome: 'ok', latencyMs: 1, count });
        call('eth_getLogs');
        call('eth_call');
        expect((await meter.flush()).rows).toBe(2);
        clock += 10_000;
        call('eth_blockNumber');
        call('eth_call', 3);
        call('x_notInTheContract');
        expect((await meter.flush()).rows).toBe(3);
        await meter.stop();
        const expected = 60 + 26 + 10 + 3 * 26 + DEFAULT_UNITS;
        expect(units.get('eth_getLogs')).toBe(60);
        const minute = (
          await usageSeries(db, { userId, appId, from: T0 + MIN, to: T0 + 2 * MIN, granularity: 'minute' })
        ).summary;
        expect(minute).toMatchObject({ total: 7, units: expected });
        expect(await summary()).toMatchObject({ total: 14, units: expected });
        // Prometheus: rpcgate_units_total by network and method.
        const text = await metrics.registry.metrics();
        expect(text).toContain('rpcgate_units_total{network="mainnet",method="eth_call"} 104');
        expect(text).toContain('rpcgate_units_total{network="mainnet",method="eth_getLogs"} 60');

        // Roll-ups keep the units.
        const r = await downsample(db, { now: T0 + 400 * DAY });
        expect(r.minuteRowsRolledUp).toBeGreaterThan(0);
        expect(await summary()).toMatchObject({ total: 14, units: expected });

        // Down: the column goes, the rows stay.
        expect((await migrator.migrateTo('0009_audit_events')).error).toBeUndefined();
        for (const t of ['usage_minute', 'usage_hour', 'usage_day'])
          expect(await columns(store, t), t).not.toContain('units');
        const days = await sql<{
          n: unknown;
        }>`select sum("count") as n from usage_day where user_id = ${userId}`.execute(db);
        expect(Number(days.rows[0].n)).toBe(14);
      } finally {
        await store.close();
        await target.teardown();
      }
    });
  });
}
