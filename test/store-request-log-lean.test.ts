// Migration 0014_request_log_lean on both dialects: rows written before it are all there after it, with their ids;
// the `ts` index is gone (pruning walks ids) and, on SQLite, ids no longer use AUTOINCREMENT (no sqlite_sequence row
// updated per insert) yet keep growing past the highest id ever kept (through 0015 too); the count bound and the age
// pruning work on the rebuilt table; down brings the index back and keeps the rows.
import { Migrator, NO_MIGRATIONS, sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { countRequestLog, insertRequestLog, pruneRequestLog, queryRequestLog } from '../src/gateway/store/index.js';
import { migrationProvider } from '../src/gateway/store/migrations/index.js';
import { insertPre0015, logRow } from './helpers/request-log-rows.js';
import { storeTargets } from './helpers/store-targets.js';

const DAY = 86_400_000;

const row = (ts: number, method: string) => logRow('key', 'key_lean', 'usr_lean', ts, method);

for (const target of await storeTargets('store-request-log-lean')) {
  describe.skipIf(target.skip)(`0014_request_log_lean on ${target.dialect}`, () => {
    it('keeps rows and ids, drops the ts index, ids keep growing; bounds and pruning work; down restores the index', async () => {
      await target.setup();
      const store = await target.open();
      try {
        const db = store.db;
        const sqlite = store.dialect === 'sqlite';
        const indexes = async () =>
          sqlite
            ? (
                await sql<{
                  name: string;
                }>`select name from sqlite_master where type = 'index' and tbl_name = 'request_log'`.execute(db)
              ).rows.map((r) => r.name)
            : (
                await sql<{
                  name: string;
                }>`select indexname as name from pg_indexes where tablename = 'request_log'`.execute(db)
              ).rows.map((r) => r.name);
        const migrator = new Migrator({ db, provider: migrationProvider(store.dialect) });
        expect((await migrator.migrateTo(NO_MIGRATIONS)).error).toBeUndefined();
        expect((await migrator.migrateTo('0013_invites')).error).toBeUndefined();
        expect(await indexes()).toContain('request_log_ts');

        const now = Date.now();
        await insertPre0015(db, [row(now - 5 * DAY, 'eth_old'), row(now - 5 * DAY, 'eth_old'), row(now, 'eth_a')]);
        const before = (
          await sql<{ id: unknown; method: string }>`select id, method from request_log order by id`.execute(db)
        ).rows.map((r) => [Number(r.id), r.method]);
        expect(before).toHaveLength(3);

        const up = await migrator.migrateTo('0014_request_log_lean');
        expect(up.error).toBeUndefined();
        const after = (
          await sql<{ id: unknown; method: string }>`select id, method from request_log order by id`.execute(db)
        ).rows.map((r) => [Number(r.id), r.method]);
        expect(after).toEqual(before);
        expect(await indexes()).not.toContain('request_log_ts');
        expect(await indexes()).toContain('request_log_principal_ts');
        if (sqlite) {
          const ddl = await sql<{ sql: string }>`select sql from sqlite_master where name = 'request_log'`.execute(db);
          expect(ddl.rows[0].sql.toLowerCase()).not.toContain('autoincrement');
        }
        // Today's writer and readers need the migrations after it; the rows and their ids come through them.
        expect((await migrator.migrateToLatest()).error).toBeUndefined();
        expect(
          (
            await sql<{ id: unknown; method: string }>`select id, method from request_log order by id`.execute(db)
          ).rows.map((r) => [Number(r.id), r.method]),
        ).toEqual(before);

        // New ids follow the highest one; the reader and its cursor see the migrated rows and the new ones alike.
        await insertRequestLog(db, [row(now + 1, 'eth_b'), row(now + 2, 'eth_c')]);
        const ids = (await sql<{ id: unknown }>`select id from request_log order by id`.execute(db)).rows.map((r) =>
          Number(r.id),
        );
        expect(ids.slice(3)).toEqual([ids[2] + 1, ids[2] + 2]);
        const page = await queryRequestLog(db, {
          userId: 'usr_lean',
          principalKind: 'key',
          principalId: 'key_lean',
          limit: 2,
        });
        expect(page.entries.map((e) => e.method)).toEqual(['eth_c', 'eth_b']);
        const rest = await queryRequestLog(db, {
          userId: 'usr_lean',
          principalKind: 'key',
          principalId: 'key_lean',
          limit: 5,
          after: page.next,
        });
        expect(rest.entries.map((e) => e.method)).toEqual(['eth_a', 'eth_old', 'eth_old']);

        // Age pruning walks ids: the two old rows go, the young ones stay.
        expect(await pruneRequestLog(db, now - 2 * DAY)).toBe(2);
        expect(await countRequestLog(db)).toBe(3);
        // Nothing left to prune: nothing deleted.
        expect(await pruneRequestLog(db, now - 2 * DAY)).toBe(0);
        // The count bound keeps the newest maxRows, and ids still grow after the oldest went.
        expect(await insertRequestLog(db, [row(now + 3, 'eth_d')], { maxRows: 2 })).toBe(2);
        const kept = await queryRequestLog(db, {
          userId: 'usr_lean',
          principalKind: 'key',
          principalId: 'key_lean',
          limit: 5,
        });
        expect(kept.entries.map((e) => e.method)).toEqual(['eth_d', 'eth_c']);
        // Everything older than the retention: the whole table goes, in batches.
        expect(await pruneRequestLog(db, now + DAY, 1)).toBe(2);
        expect(await countRequestLog(db)).toBe(0);

        // Down: the index comes back, the rows stay.
        await insertRequestLog(db, [row(now, 'eth_e')]);
        expect((await migrator.migrateTo('0013_invites')).error).toBeUndefined();
        expect(await indexes()).toContain('request_log_ts');
        expect(await countRequestLog(db)).toBe(1);
      } finally {
        await store.close();
        await target.teardown();
      }
    });
  });
}
