// Migration 0003_any_network on both dialects: a store made by 0001/0002 refuses a network key outside mainnet/testnet
// (the old CHECK); after 0003 its keys are intact and a key on any configured network name is kept.
import { randomBytes } from 'node:crypto';
import { Migrator, NO_MIGRATIONS } from 'kysely';
import { describe, expect, it } from 'vitest';
import { createNetworkKey, createUser, listNetworkKeys, migrateToLatest } from '../src/gateway/store/index.js';
import { migrationProvider } from '../src/gateway/store/migrations/index.js';
import { storeTargets } from './helpers/store-targets.js';

const secret = randomBytes(32);

for (const target of await storeTargets('store-networks')) {
  describe.skipIf(target.skip)(`0003_any_network on ${target.dialect}`, () => {
    it('keeps the keys made before it and lifts the mainnet/testnet constraint', async () => {
      await target.setup();
      const store = await target.open();
      try {
        // Back to the schema of 0002 (down to nothing, up to 0002): the state of a deployment before this change.
        const migrator = new Migrator({ db: store.db, provider: migrationProvider(store.dialect) });
        expect((await migrator.migrateTo(NO_MIGRATIONS)).error).toBeUndefined();
        expect((await migrator.migrateTo('0002_usage')).error).toBeUndefined();
        const user = await createUser(store.db, {
          email: `n-${randomBytes(4).toString('hex')}@example.com`,
          passwordHash: '$argon2id$test',
        });
        const old = await createNetworkKey(store.db, secret, user.id, { name: 'old', network: 'testnet' });
        await expect(createNetworkKey(store.db, secret, user.id, { name: 'new', network: 'holesky' })).rejects.toThrow(
          /check/i,
        );

        expect(await migrateToLatest(store.db, store.dialect)).toContain('0003_any_network'); // and the later ones
        const added = await createNetworkKey(store.db, secret, user.id, { name: 'new', network: 'holesky' });
        const keys = await listNetworkKeys(store.db, secret, user.id);
        expect(keys.map((k) => [k.id, k.name, k.network, k.key]).sort()).toEqual(
          [
            [old.id, 'old', 'testnet', old.key],
            [added.id, 'new', 'holesky', added.key],
          ].sort(),
        );
        expect(await migrateToLatest(store.db, store.dialect)).toEqual([]);
        // The rebuilt table (SQLite) still belongs to its user: deleting the user deletes the keys.
        await store.db.deleteFrom('users').where('id', '=', user.id).execute();
        expect(await store.db.selectFrom('network_keys').select('id').where('user_id', '=', user.id).execute()).toEqual(
          [],
        );
      } finally {
        await store.close();
        await target.teardown();
      }
    });
  });
}
