// Initial schema. Migrations are append-only: later issues (metering/usage) add 0002_… beside this file
// and list it in ./index.ts; never edit a migration that has shipped.
import { sql, type Kysely, type Migration } from 'kysely';
import type { Dialect } from '../dialect.js';

export function initial(dialect: Dialect): Migration {
  // Epoch-ms timestamps need 64 bits in PG; SQLite's integer is already 64-bit.
  const ts = dialect === 'postgres' ? 'bigint' : 'integer';
  return {
    async up(db: Kysely<any>): Promise<void> {
      await db.schema
        .createTable('users')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('email', 'text', (c) => c.notNull().unique())
        .addColumn('password_hash', 'text', (c) => c.notNull())
        .addColumn('created_at', ts, (c) => c.notNull())
        .execute();

      await db.schema
        .createTable('sessions')
        .addColumn('token_hash', 'text', (c) => c.primaryKey())
        .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
        .addColumn('created_at', ts, (c) => c.notNull())
        .addColumn('expires_at', ts, (c) => c.notNull())
        .execute();
      await db.schema.createIndex('sessions_user_id').on('sessions').column('user_id').execute();
      await db.schema.createIndex('sessions_expires_at').on('sessions').column('expires_at').execute();

      await db.schema
        .createTable('apps')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('description', 'text', (c) => c.notNull().defaultTo(''))
        .addColumn('use_case', 'text', (c) => c.notNull())
        .addColumn('chain', 'text', (c) => c.notNull())
        .addColumn('services', 'text', (c) => c.notNull().defaultTo('[]'))
        .addColumn('key_hash', 'text', (c) => c.notNull().unique())
        .addColumn('key_enc', 'text', (c) => c.notNull())
        .addColumn('require_jwt', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('created_at', ts, (c) => c.notNull())
        .addColumn('updated_at', ts, (c) => c.notNull())
        .addColumn('key_rotated_at', ts)
        .execute();
      await db.schema.createIndex('apps_user_id').on('apps').column('user_id').execute();

      await db.schema
        .createTable('app_allowlists')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('app_id', 'text', (c) => c.notNull().references('apps.id').onDelete('cascade'))
        .addColumn('kind', 'text', (c) => c.notNull().check(sql`kind in ('origin', 'ip', 'address', 'method')`))
        .addColumn('value', 'text', (c) => c.notNull())
        .addColumn('created_at', ts, (c) => c.notNull())
        .addUniqueConstraint('app_allowlists_app_kind_value', ['app_id', 'kind', 'value'])
        .execute();

      await db.schema
        .createTable('app_jwt_keys')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('app_id', 'text', (c) => c.notNull().references('apps.id').onDelete('cascade'))
        .addColumn('alg', 'text', (c) => c.notNull())
        .addColumn('public_key_pem', 'text', (c) => c.notNull())
        .addColumn('created_at', ts, (c) => c.notNull())
        .execute();
      await db.schema.createIndex('app_jwt_keys_app_id').on('app_jwt_keys').column('app_id').execute();

      await db.schema
        .createTable('network_keys')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('network', 'text', (c) => c.notNull().check(sql`network in ('mainnet', 'testnet')`))
        .addColumn('description', 'text', (c) => c.notNull().defaultTo(''))
        .addColumn('key_hash', 'text', (c) => c.notNull().unique())
        .addColumn('key_enc', 'text', (c) => c.notNull())
        .addColumn('created_at', ts, (c) => c.notNull())
        .execute();
      await db.schema.createIndex('network_keys_user_id').on('network_keys').column('user_id').execute();

      await db.schema
        .createTable('key_events')
        .$call((t) =>
          dialect === 'postgres'
            ? t.addColumn('id', 'bigserial', (c) => c.primaryKey())
            : // AUTOINCREMENT: ids never reused, even after the newest rows are deleted.
              t.addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement()),
        )
        .addColumn('key_hash', 'text', (c) => c.notNull())
        .addColumn('kind', 'text', (c) => c.notNull().check(sql`kind in ('upsert', 'revoke')`))
        .addColumn('at', ts, (c) => c.notNull())
        .execute();
      await db.schema.createIndex('key_events_at').on('key_events').column('at').execute();
    },
    async down(db: Kysely<any>): Promise<void> {
      for (const t of ['key_events', 'network_keys', 'app_jwt_keys', 'app_allowlists', 'apps', 'sessions', 'users']) {
        await db.schema.dropTable(t).ifExists().execute();
      }
    },
  };
}
