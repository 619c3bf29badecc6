// Migration 0005_jwt_lifetime on both dialects: apps made before it get the 24 h default (a token valid for years was
// accepted before), the access index loads the value, and the owner can change it or remove the maximum (null).
import { randomBytes } from 'node:crypto';
import { Migrator, NO_MIGRATIONS, sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import {
  createUser,
  getApp,
  loadAllActiveKeys,
  migrateToLatest,
  updateApp,
  DEFAULT_JWT_MAX_LIFETIME_SEC,
} from '../src/gateway/store/index.js';
import { encryptKey, hashKey, newApiKey, newId } from '../src/gateway/secrets/keys.js';
import { migrationProvider } from '../src/gateway/store/migrations/index.js';
import { storeTargets } from './helpers/store-targets.js';

const secret = randomBytes(32);

for (const target of await storeTargets('store-jwt-lifetime')) {
  describe.skipIf(target.skip)(`0005_jwt_lifetime on ${target.dialect}`, () => {
    it('gives apps made before it the 24 h maximum; the index loads it; null removes it', async () => {
      await target.setup();
      const store = await target.open();
      try {
        // The schema before this change (0003: the migrations before 0005), an app written with its columns.
        const migrator = new Migrator({ db: store.db, provider: migrationProvider(store.dialect) });
        expect((await migrator.migrateTo(NO_MIGRATIONS)).error).toBeUndefined();
        expect((await migrator.migrateTo('0003_any_network')).error).toBeUndefined();
        const user = await createUser(store.db, {
          email: `j-${randomBytes(4).toString('hex')}@example.com`,
          passwordHash: '$argon2id$test',
        });
        const key = newApiKey();
        const id = newId('app');
        const now = Date.now();
        await sql`insert into apps (id, user_id, name, description, use_case, chain, services, key_hash, key_enc, require_jwt, created_at, updated_at, key_rotated_at)
          values (${id}, ${user.id}, 'old app', '', 'Defi', 'ethereum', '["node-api"]', ${hashKey(secret, key)}, ${encryptKey(secret, key)}, 1, ${now}, ${now}, null)`.execute(
          store.db,
        );

        expect(await migrateToLatest(store.db, store.dialect)).toContain('0005_jwt_lifetime');
        expect((await getApp(store.db, secret, user.id, id))!.jwtMaxLifetimeSec).toBe(DEFAULT_JWT_MAX_LIFETIME_SEC);
        const entry = (await loadAllActiveKeys(store.db)).find((e) => e.accessPoint === 'A' && e.appId === id);
        expect(entry).toMatchObject({ requireJwt: true, jwtMaxLifetimeSec: 86_400 });

        expect((await updateApp(store.db, secret, user.id, id, { jwtMaxLifetimeSec: 600 }))!.jwtMaxLifetimeSec).toBe(
          600,
        );
        expect(
          (await updateApp(store.db, secret, user.id, id, { jwtMaxLifetimeSec: null }))!.jwtMaxLifetimeSec,
        ).toBeNull();
        expect((await loadAllActiveKeys(store.db)).find((e) => e.accessPoint === 'A' && e.appId === id)).toMatchObject({
          jwtMaxLifetimeSec: null,
        });
      } finally {
        await store.close();
        await target.teardown();
      }
    });
  });
}
