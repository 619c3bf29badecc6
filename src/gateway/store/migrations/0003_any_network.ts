// Network keys on any configured network (issue 10): 0001_initial pinned network_keys.network to mainnet/testnet with
// a CHECK, but networks come from the config (contracts/config.schema.json `networks`), so the store keeps any name the
// account API validated against the configured ones. PostgreSQL drops the constraint; SQLite cannot drop a CHECK, so
// the table is rebuilt (nothing references network_keys, so the drop cascades nowhere).
import { sql, type Kysely, type Migration } from 'kysely';
import type { Dialect } from '../dialect.js';

export function anyNetwork(dialect: Dialect): Migration {
  return {
    async up(db: Kysely<any>): Promise<void> {
      if (dialect === 'postgres') {
        // PostgreSQL's name for the column CHECK of 0001 (<table>_<column>_check).
        await sql`alter table network_keys drop constraint if exists network_keys_network_check`.execute(db);
        return;
      }
      await db.schema
        .createTable('network_keys_new')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('network', 'text', (c) => c.notNull())
        .addColumn('description', 'text', (c) => c.notNull().defaultTo(''))
        .addColumn('key_hash', 'text', (c) => c.notNull().unique())
        .addColumn('key_enc', 'text', (c) => c.notNull())
        .addColumn('created_at', 'integer', (c) => c.notNull())
        .execute();
      await sql`insert into network_keys_new (id, user_id, name, network, description, key_hash, key_enc, created_at)
        select id, user_id, name, network, description, key_hash, key_enc, created_at from network_keys`.execute(db);
      await db.schema.dropTable('network_keys').execute();
      await db.schema.alterTable('network_keys_new').renameTo('network_keys').execute();
      await db.schema.createIndex('network_keys_user_id').on('network_keys').column('user_id').execute();
    },
    async down(): Promise<void> {
      // Not reversible: keys on other networks may exist by then; 0001's down drops the table anyway.
    },
  };
}
