// Sign-up invites in the store (src/gateway/store/invites.ts, migration 0013_invites) on SQLite and PostgreSQL: only
// the token's hash is stored; an invite is used by the sign-up that creates an account, once — also by concurrent
// sign-ups through two connection pools ("replicas") — and not when the email is taken or bound to another; revoked
// and expired invites are refused and listed so; deleting the account that used an invite erases the email it was
// bound to; the migration goes down (table gone) and up again.
import { createHash, randomBytes } from 'node:crypto';
import { Migrator } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as store from '../src/gateway/store/index.js';
import { migrationProvider } from '../src/gateway/store/migrations/index.js';
import { storeTargets } from './helpers/store-targets.js';

const targets = await storeTargets('store-invites');
const HOUR = 3_600_000;
const email = (tag: string) => `${tag}-${randomBytes(4).toString('hex')}@example.com`;
const input = (e: string) => ({ email: e, passwordHash: 'h', verified: true });

for (const target of targets) {
  describe.skipIf(target.skip)(`invites on ${target.dialect}`, () => {
    let s: store.Store;
    let s2: store.Store;
    beforeAll(async () => {
      await target.setup();
      s = await target.open();
      // PostgreSQL: a second pool, as another replica has. SQLite: one connection per process (better-sqlite3 is
      // synchronous, so a second one in this process would block the thread the first needs to commit); processes
      // sharing the file are serialized by BEGIN IMMEDIATE.
      s2 = target.dialect === 'postgres' ? await target.open() : s;
    }, 60_000);
    afterAll(async () => {
      if (s2 !== s) await s2?.close();
      await s?.close();
      await target.teardown();
    });

    it('stores only the hash; used once; a taken email leaves it unused; an email binding is kept', async () => {
      const inv = await store.createInvite(s.db, { ttlMs: HOUR });
      const row = await s.db.selectFrom('invites').selectAll().where('id', '=', inv.id).executeTakeFirstOrThrow();
      expect(row.token_hash).toBe(createHash('sha256').update(inv.token).digest('hex'));
      expect(JSON.stringify(row)).not.toContain(inv.token);

      const taken = email('taken');
      await store.createUser(s.db, { email: taken, passwordHash: 'h' });
      expect(await store.signUpWithInvite(s.db, inv.token, input(taken))).toEqual({ used: true, conflict: true });
      expect((await store.listInvites(s.db)).find((i) => i.id === inv.id)?.status).toBe('pending');

      const first = await store.signUpWithInvite(s.db, inv.token, input(email('first')));
      expect(first).toMatchObject({ used: true, inviteId: inv.id });
      expect(await store.signUpWithInvite(s.db, inv.token, input(email('second')))).toEqual({ used: false });
      expect(await store.inviteRefusal(s.db, inv.token, email('x'))).toBe('invalid');

      const bound = email('bound');
      const b = await store.createInvite(s.db, { ttlMs: HOUR, email: bound.toUpperCase() });
      expect(b.email).toBe(bound);
      expect(await store.inviteRefusal(s.db, b.token, email('other'))).toBe('email');
      expect(await store.signUpWithInvite(s.db, b.token, input(email('other')))).toEqual({ used: false });
      expect(await store.inviteRefusal(s.db, b.token, bound)).toBeUndefined();
      expect(await store.signUpWithInvite(s.db, b.token, input(bound))).toMatchObject({ used: true });
    });

    it('concurrent sign-ups with one invite (PostgreSQL: through two pools): exactly one account', async () => {
      for (let round = 0; round < 10; round++) {
        const inv = await store.createInvite(s.db, { ttlMs: HOUR });
        const pair = [email(`r${round}a`), email(`r${round}b`)];
        const results = await Promise.all([
          store.signUpWithInvite(s.db, inv.token, input(pair[0])),
          store.signUpWithInvite(s2.db, inv.token, input(pair[1])),
        ]);
        expect(results.filter((r) => r.used).length, JSON.stringify(results)).toBe(1);
        let accounts = 0;
        for (const e of pair) accounts += (await store.findUserByEmail(s.db, e)) === undefined ? 0 : 1;
        expect(accounts).toBe(1);
      }
    });

    it('revoked and expired: refused and listed so; deleting the account that used one erases its email', async () => {
      const r = await store.createInvite(s.db, { ttlMs: HOUR });
      expect(await store.revokeInvite(s.db, r.id)).toBe(true);
      expect(await store.revokeInvite(s.db, r.id)).toBe(false);
      expect(await store.revokeInvite(s.db, 'inv_7Hq2Lm9XcV4bN8kP3rT5wZ')).toBeUndefined();
      expect(await store.signUpWithInvite(s.db, r.token, input(email('rev')))).toEqual({ used: false });

      const old = Date.now() - 2 * HOUR;
      const x = await store.createInvite(s.db, { ttlMs: HOUR }, old);
      expect(await store.inviteRefusal(s.db, x.token, email('exp'))).toBe('invalid');
      expect(await store.signUpWithInvite(s.db, x.token, input(email('exp')))).toEqual({ used: false });
      const list = await store.listInvites(s.db);
      expect(list.find((i) => i.id === r.id)?.status).toBe('revoked');
      expect(list.find((i) => i.id === x.id)?.status).toBe('expired');

      const who = email('gone');
      const inv = await store.createInvite(s.db, { ttlMs: HOUR, email: who });
      const made = await store.signUpWithInvite(s.db, inv.token, input(who));
      if (!made.used || !('user' in made)) throw new Error('not created');
      expect(await store.deleteUser(s.db, made.user.id)).toBe(true);
      expect((await store.listInvites(s.db)).find((i) => i.id === inv.id)).toMatchObject({
        status: 'used',
        email: undefined,
        usedBy: undefined,
      });
    });

    it('migration 0013 goes down (table gone) and up again', async () => {
      const migrator = new Migrator({ db: s.db, provider: migrationProvider(s.dialect) });
      const names = (await migrator.getMigrations()).map((m) => m.name);
      const before = names[names.indexOf('0013_invites') - 1];
      expect((await migrator.migrateTo(before)).error).toBeUndefined();
      const tables = async () => (await s.db.introspection.getTables()).map((t) => t.name);
      expect(await tables()).not.toContain('invites');
      expect(await store.migrateToLatest(s.db, s.dialect)).toContain('0013_invites');
      expect(await tables()).toContain('invites');
      const inv = await store.createInvite(s.db, { ttlMs: HOUR });
      expect(await store.signUpWithInvite(s.db, inv.token, input(email('after')))).toMatchObject({ used: true });
    });
  });
}
