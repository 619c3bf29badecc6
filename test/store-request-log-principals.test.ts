// Migration 0015_request_log_principals and the writer and readers on it, on both dialects:
// - rows written before it keep their ids and read back per owner; an app and a key with the same id text stay apart;
// - the index is (principal, ts, id);
// - a new app or key gets one principals row however many rows and however many replicas write at once;
// - no account reads another's rows, whoever asks for which id;
// - deleting a user deletes their rows and principals, and a writer still caching the deleted principal's id writes
//   rows no later principal can read (ids are never reused);
// - down brings the three columns back, with their values.
import { Migrator, sql, type Kysely } from 'kysely';
import { describe, expect, it } from 'vitest';
import {
  deleteUserRequestLog,
  insertRequestLog,
  queryRequestLog,
  type RequestLogRow,
} from '../src/gateway/store/index.js';
import { migrationProvider } from '../src/gateway/store/migrations/index.js';
import { insertPre0015, logRow } from './helpers/request-log-rows.js';
import { storeTargets } from './helpers/store-targets.js';

const row = logRow;
const insertOld = async (db: Kysely<any>, r: RequestLogRow) => insertPre0015(db, [r]);

const methods = async (db: Kysely<any>, kind: 'app' | 'key', principalId: string, userId: string) =>
  (await queryRequestLog(db, { userId, principalKind: kind, principalId, limit: 50 })).entries.map((e) => e.method);

for (const target of await storeTargets('store-request-log-principals')) {
  describe.skipIf(target.skip)(`0015_request_log_principals on ${target.dialect}`, () => {
    it('migrates rows by principal, keeps owners apart, makes one principal row per app or key, deletes with the user, and goes down', async () => {
      await target.setup();
      const store = await target.open();
      const replica = await target.open();
      try {
        const db = store.db;
        const sqlite = store.dialect === 'sqlite';
        const migrator = new Migrator({ db, provider: migrationProvider(store.dialect) });
        expect((await migrator.migrateTo('0014_request_log_lean')).error).toBeUndefined();
        const t = Date.now();
        // The same id text as an app of alice and as a key of bob: two principals.
        await insertOld(db, row('app', 'same', 'usr_alice', t, 'eth_aliceApp1'));
        await insertOld(db, row('key', 'same', 'usr_bob', t + 1, 'eth_bobKey1'));
        await insertOld(db, row('app', 'same', 'usr_alice', t + 2, 'eth_aliceApp2'));
        const ids = async () =>
          (await sql<{ id: unknown }>`select id from request_log order by id`.execute(db)).rows.map((r) =>
            Number(r.id),
          );
        const before = await ids();

        expect((await migrator.migrateTo('0015_request_log_principals')).error).toBeUndefined();
        expect(await ids()).toEqual(before);
        const principals = await db
          .selectFrom('request_log_principals')
          .select(['id', 'kind', 'principal_id', 'user_id'])
          .orderBy('id')
          .execute();
        expect(principals.map((p) => [p.kind, p.principal_id, p.user_id])).toEqual([
          ['app', 'same', 'usr_alice'],
          ['key', 'same', 'usr_bob'],
        ]);
        expect(await methods(db, 'app', 'same', 'usr_alice')).toEqual(['eth_aliceApp2', 'eth_aliceApp1']);
        expect(await methods(db, 'key', 'same', 'usr_bob')).toEqual(['eth_bobKey1']);
        // Another account asking for either: nothing, whichever id and kind it names.
        expect(await methods(db, 'app', 'same', 'usr_bob')).toEqual([]);
        expect(await methods(db, 'key', 'same', 'usr_alice')).toEqual([]);
        expect(await methods(db, 'app', 'nobody', 'usr_alice')).toEqual([]);

        const indexColumns = sqlite
          ? (
              await sql<{
                name: string;
              }>`select name from pragma_index_info('request_log_principal_ts') order by seqno`.execute(db)
            ).rows.map((r) => r.name)
          : /\(([^)]*)\)/
              .exec(
                (
                  await sql<{
                    def: string;
                  }>`select indexdef as def from pg_indexes where indexname = 'request_log_principal_ts'`.execute(db)
                ).rows[0].def,
              )![1]
              .split(', ');
        expect(indexColumns).toEqual(['principal', 'ts', 'id']);

        // A new key written by two replicas, 300 rows each (on PostgreSQL at once; SQLite's one writer blocks the
        // thread, so there one after the other, the second without a cached id): one principals row, every row read.
        const batch = (from: number) =>
          Array.from({ length: 300 }, (_, i) => row('key', 'key_new', 'usr_carol', t + 10 + from + i, 'eth_new'));
        if (sqlite) {
          await insertRequestLog(db, batch(0));
          await insertRequestLog(replica.db, batch(300));
        } else await Promise.all([insertRequestLog(db, batch(0)), insertRequestLog(replica.db, batch(300))]);
        const carol = await db
          .selectFrom('request_log_principals')
          .select('id')
          .where('principal_id', '=', 'key_new')
          .execute();
        expect(carol).toHaveLength(1);
        const page = await queryRequestLog(db, {
          userId: 'usr_carol',
          principalKind: 'key',
          principalId: 'key_new',
          limit: 1000,
        });
        expect(page.entries).toHaveLength(600);
        expect(page.entries[0]).toMatchObject({ principalKind: 'key', principalId: 'key_new', userId: 'usr_carol' });
        expect(await methods(db, 'key', 'key_new', 'usr_alice')).toEqual([]);

        // Carol goes (the newest principal: SQLite's AUTOINCREMENT must not hand her id out again).
        await db.transaction().execute((trx) => deleteUserRequestLog(trx, 'usr_carol'));
        const rowsOf = async (principal: number) =>
          Number(
            (
              await sql<{ n: unknown }>`select count(*) as n from request_log where principal = ${principal}`.execute(
                db,
              )
            ).rows[0].n,
          );
        expect(await rowsOf(carol[0].id)).toBe(0);
        expect(await methods(db, 'app', 'same', 'usr_alice')).toEqual(['eth_aliceApp2', 'eth_aliceApp1']);
        // A call of hers still queued on a replica that cached her principal id; then a new app of dave's.
        await insertRequestLog(db, [row('key', 'key_new', 'usr_carol', t + 700, 'eth_late')]);
        await insertRequestLog(db, [row('app', 'app_dave', 'usr_dave', t + 701, 'eth_dave')]);
        const dave = await db
          .selectFrom('request_log_principals')
          .select('id')
          .where('principal_id', '=', 'app_dave')
          .executeTakeFirstOrThrow();
        expect(dave.id).toBeGreaterThan(carol[0].id);
        expect(await methods(db, 'app', 'app_dave', 'usr_dave')).toEqual(['eth_dave']);

        // Down: the principal columns come back with their values; the orphaned late row goes.
        expect((await migrator.migrateTo('0014_request_log_lean')).error).toBeUndefined();
        const back = await sql<{
          principal_kind: string;
          principal_id: string;
          user_id: string;
          method: string;
        }>`select principal_kind, principal_id, user_id, method from request_log order by id`.execute(db);
        expect(back.rows.map((r) => [r.principal_kind, r.principal_id, r.user_id, r.method])).toEqual([
          ['app', 'same', 'usr_alice', 'eth_aliceApp1'],
          ['key', 'same', 'usr_bob', 'eth_bobKey1'],
          ['app', 'same', 'usr_alice', 'eth_aliceApp2'],
          ['app', 'app_dave', 'usr_dave', 'eth_dave'],
        ]);
        expect((await migrator.migrateToLatest()).error).toBeUndefined();
        expect(await methods(db, 'app', 'app_dave', 'usr_dave')).toEqual(['eth_dave']);
      } finally {
        await replica.close();
        await store.close();
        await target.teardown();
      }
    });
  });
}
