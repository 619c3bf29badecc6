// Migration 0008_account_tokens on both dialects: accounts from before it count as verified; a sign-up under
// verification is not until its link is used; mailed tokens are single-use, expire, and are swept; down drops both.
import { randomBytes } from 'node:crypto';
import { Migrator, NO_MIGRATIONS, sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import {
  consumeAccountToken,
  createAccountToken,
  createUser,
  findAccountToken,
  getUser,
  markEmailVerified,
  sweepExpiredAccountTokens,
} from '../src/gateway/store/index.js';
import { migrationProvider } from '../src/gateway/store/migrations/index.js';
import { storeTargets } from './helpers/store-targets.js';

const email = () => `t-${randomBytes(4).toString('hex')}@example.com`;

for (const target of await storeTargets('store-account-tokens')) {
  describe.skipIf(target.skip)(`0008_account_tokens on ${target.dialect}`, () => {
    it('old accounts are verified; tokens are single-use, typed, expiring and swept; down drops the table and column', async () => {
      await target.setup();
      const store = await target.open();
      try {
        const db = store.db;
        const migrator = new Migrator({ db, provider: migrationProvider(store.dialect) });
        expect((await migrator.migrateTo(NO_MIGRATIONS)).error).toBeUndefined();
        expect((await migrator.migrateTo('0007_request_log')).error).toBeUndefined();
        // An account as 0007 stored it (raw: the store's functions write the columns of the latest schema).
        const old = { id: `usr_${randomBytes(8).toString('hex')}` };
        await sql`insert into users (id, email, password_hash, created_at) values (${old.id}, ${email()}, 'x', ${Date.now()})`.execute(
          db,
        );
        const up = await migrator.migrateTo('0008_account_tokens');
        expect(up.error).toBeUndefined();
        expect(up.results?.map((r) => r.migrationName)).toEqual(['0008_account_tokens']);
        const verifiedAt = await sql<{
          v: unknown;
        }>`select email_verified_at as v from users where id = ${old.id}`.execute(db);
        expect(Number(verifiedAt.rows[0].v)).toBe(0);
        // The rest through the store's functions, on the latest schema; then all the way down to 0007 again.
        expect((await migrator.migrateToLatest()).error).toBeUndefined();
        expect((await getUser(db, old.id))?.emailVerifiedAt).toBe(0);

        const pending = await createUser(db, { email: email(), passwordHash: 'x', verified: false });
        expect(pending.emailVerifiedAt).toBeUndefined();
        expect((await getUser(db, pending.id))?.emailVerifiedAt).toBeUndefined();
        await markEmailVerified(db, pending.id, 1234);
        await markEmailVerified(db, pending.id, 9999); // the first time counts
        expect((await getUser(db, pending.id))?.emailVerifiedAt).toBe(1234);

        const now = Date.now();
        const t = await createAccountToken(db, old.id, 'reset', 60_000, now);
        expect(await findAccountToken(db, t.token, 'verify', now)).toBeUndefined();
        expect(await findAccountToken(db, t.token, 'reset', now)).toBe(old.id);
        expect(await findAccountToken(db, t.token, 'reset', now + 60_000)).toBeUndefined(); // expired
        expect(await consumeAccountToken(db, t.token, 'reset', now)).toBe(old.id);
        expect(await consumeAccountToken(db, t.token, 'reset', now)).toBeUndefined(); // used
        const stale = await createAccountToken(db, old.id, 'verify', 1_000, now - 10_000);
        const live = await createAccountToken(db, old.id, 'verify', 60_000, now);
        expect(await sweepExpiredAccountTokens(db, now)).toBe(1);
        expect(await findAccountToken(db, stale.token, 'verify', now - 9_999)).toBeUndefined();
        expect(await findAccountToken(db, live.token, 'verify', now)).toBe(old.id);

        expect((await migrator.migrateTo('0007_request_log')).error).toBeUndefined();
        const cols = await db.introspection.getTables();
        expect(cols.map((c) => c.name)).not.toContain('account_tokens');
        expect(cols.find((c) => c.name === 'users')?.columns.map((c) => c.name)).not.toContain('email_verified_at');
        expect(Number((await sql<{ n: unknown }>`select count(*) as n from users`.execute(db)).rows[0].n)).toBe(2);
      } finally {
        await store.close();
        await target.teardown();
      }
    });
  });
}
