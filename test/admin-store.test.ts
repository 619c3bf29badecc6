// The operators' store functions (src/gateway/store/admin.ts) and migration 0012_admin, on SQLite and PostgreSQL:
// suspension ends sessions and re-announces every key of the account in the change feed (the access index re-reads
// them) without deleting anything; plans and overrides round-trip; the listing searches, filters and pages; the
// migration goes down (columns gone) and up again.
import { randomBytes } from 'node:crypto';
import { Migrator } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as store from '../src/gateway/store/index.js';
import { migrationProvider } from '../src/gateway/store/migrations/index.js';
import { storeTargets } from './helpers/store-targets.js';

const SECRET = randomBytes(32);
const targets = await storeTargets('admin-store');

for (const target of targets) {
  describe.skipIf(target.skip)(`admin store on ${target.dialect}`, () => {
    let s: store.Store;
    beforeAll(async () => {
      await target.setup();
      s = await target.open();
    }, 60_000);
    afterAll(async () => {
      await s?.close();
      await target.teardown();
    });

    const newUser = (tag: string) =>
      store.createUser(s.db, { email: `${tag}-${randomBytes(4).toString('hex')}@Example.com`, passwordHash: 'h' });

    it('suspend: sessions ended, an upsert event for every key, nothing deleted; the index entry says suspended', async () => {
      const u = await newUser('susp');
      const app = await store.createApp(s.db, SECRET, u.id, {
        name: 'a',
        description: '',
        useCase: 'Defi',
        chain: 'ethereum',
        services: ['node-api'],
      });
      await store.createNetworkKey(s.db, SECRET, u.id, { name: 'k', network: 'mainnet' });
      await store.createSession(s.db, u.id);
      const feed = new store.KeyEventFeed(s.db);
      await feed.start();

      const done = await store.suspendUser(s.db, u.id, 'abuse');
      expect(done?.suspended).toMatchObject({ reason: 'abuse' });
      const events = await feed.poll();
      expect(events.map((e) => e.kind)).toEqual(['upsert', 'upsert']);
      const entries = await Promise.all(events.map((e) => store.loadAccessEntry(s.db, e.keyHash)));
      expect(entries.map((e) => [e?.accessPoint, e?.account.suspended]).sort()).toEqual([
        ['A', true],
        ['B', true],
      ]);
      expect(await s.db.selectFrom('sessions').select('token_hash').where('user_id', '=', u.id).execute()).toEqual([]);
      expect(await store.countKeysOf(s.db, [u.id])).toEqual(new Map([[u.id, { apps: 1, keys: 1 }]]));
      expect((await store.listKeysOf(s.db, u.id)).apps.map((a) => a.id)).toEqual([app.id]);

      // A second suspension keeps the first time and takes the new reason; unsuspend clears both.
      const again = await store.suspendUser(s.db, u.id, 'still abusing');
      expect(again?.suspended).toEqual({ at: done!.suspended!.at, reason: 'still abusing' });
      const back = await store.unsuspendUser(s.db, u.id);
      expect(back?.suspended).toBeUndefined();
      expect((await feed.poll()).length).toBe(4);
      expect((await store.loadAllActiveKeys(s.db)).filter((e) => e.userId === u.id).map((e) => e.account)).toEqual([
        { suspended: false, plan: null, planOverride: null },
        { suspended: false, plan: null, planOverride: null },
      ]);
      expect(await store.suspendUser(s.db, 'usr_nobody', 'x')).toBeUndefined();
    });

    it('plans and overrides round-trip into the index entries; the role by email', async () => {
      const u = await newUser('plan');
      await store.createNetworkKey(s.db, SECRET, u.id, { name: 'k', network: 'mainnet' });
      const p = await store.setUserPlan(s.db, u.id, 'gold', { daily: 5, maxKeys: null });
      expect([p?.plan, p?.planOverride]).toEqual(['gold', { daily: 5, maxKeys: null }]);
      // Override left out: unchanged.
      expect((await store.setUserPlan(s.db, u.id, 'tiny', undefined))?.planOverride).toEqual({
        daily: 5,
        maxKeys: null,
      });
      const [entry] = (await store.loadAllActiveKeys(s.db)).filter((e) => e.userId === u.id);
      expect(entry.account).toEqual({ suspended: false, plan: 'tiny', planOverride: { daily: 5, maxKeys: null } });
      const cleared = await store.setUserPlan(s.db, u.id, null, null);
      expect([cleared?.plan, cleared?.planOverride]).toEqual([undefined, undefined]);

      expect((await store.setUserRole(s.db, u.email.toUpperCase(), 'admin'))?.role).toBe('admin');
      expect((await store.getUser(s.db, u.id))?.role).toBe('admin');
      expect(await store.setUserRole(s.db, 'nobody@example.com', 'admin')).toBeUndefined();
    });

    it('lists newest first, searches part of the email (case-insensitive) or the id, filters by status, pages', async () => {
      const tag = `list${randomBytes(3).toString('hex')}`;
      const users: store.User[] = [];
      for (let i = 0; i < 5; i++) users.push(await newUser(tag));
      await store.suspendUser(s.db, users[1].id, 'x');
      const all = await store.listUsers(s.db, { search: tag.toUpperCase(), limit: 50 });
      expect(all.users.map((u) => u.id)).toEqual(
        [...users].sort((a, b) => b.createdAt - a.createdAt || (b.id < a.id ? -1 : 1)).map((u) => u.id),
      );
      expect(all.next).toBeUndefined();
      const seen: string[] = [];
      let cursor: string | undefined;
      do {
        const page = await store.listUsers(s.db, { search: tag, limit: 2, cursor });
        seen.push(...page.users.map((u) => u.id));
        cursor = page.next;
      } while (cursor !== undefined);
      expect(seen).toEqual(all.users.map((u) => u.id));
      expect(
        (await store.listUsers(s.db, { search: tag, status: 'suspended', limit: 50 })).users.map((u) => u.id),
      ).toEqual([users[1].id]);
      expect((await store.listUsers(s.db, { search: tag, status: 'active', limit: 50 })).users).toHaveLength(4);
      expect((await store.listUsers(s.db, { search: users[3].id, limit: 50 })).users.map((u) => u.id)).toEqual([
        users[3].id,
      ]);
      // LIKE wildcards are plain characters here.
      expect((await store.listUsers(s.db, { search: '%', limit: 50 })).users).toEqual([]);
    });

    it('migration 0012 goes down (columns gone) and up again (accounts keep their rows, role back to user)', async () => {
      const u = await newUser('mig');
      await store.setUserRole(s.db, u.email, 'admin');
      const migrator = new Migrator({ db: s.db, provider: migrationProvider(s.dialect) });
      const columns = async () =>
        (await s.db.introspection.getTables()).find((t) => t.name === 'users')!.columns.map((c) => c.name);
      const last = (await migrator.getMigrations()).map((m) => m.name).indexOf('0012_admin');
      const before = (await migrator.getMigrations())[last - 1].name;
      expect((await migrator.migrateTo(before)).error).toBeUndefined();
      expect(await columns()).not.toContain('role');
      expect(await columns()).not.toContain('suspended_at');
      expect(await store.migrateToLatest(s.db, s.dialect)).toContain('0012_admin');
      expect(await columns()).toEqual(expect.arrayContaining(['role', 'suspended_at', 'plan', 'plan_override']));
      expect((await store.getUser(s.db, u.id))?.role).toBe('user');
    });
  });
}
