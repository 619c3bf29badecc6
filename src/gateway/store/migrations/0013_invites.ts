// Sign-up by invite (issue 27 item 2, config `accounts.signup: invite`): an admin issues a single-use invite link; the
// table keeps only the sha256 of its token (a copy of the database opens nothing), its expiry, the email it is bound
// to (null = anyone holding the link), who issued it and, once used, when and by which account. A revoked invite keeps
// its row (the admins' list shows it). Not account_tokens: an invite belongs to no account yet, has an id an admin
// revokes it by, and an optional email.
import type { Kysely, Migration } from 'kysely';
import type { Dialect } from '../dialect.js';

export function invites(dialect: Dialect): Migration {
  const big = dialect === 'postgres' ? 'bigint' : 'integer';
  return {
    async up(db: Kysely<any>): Promise<void> {
      await db.schema
        .createTable('invites')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('token_hash', 'text', (c) => c.notNull().unique())
        .addColumn('email', 'text')
        .addColumn('created_by', 'text', (c) => c.references('users.id').onDelete('set null'))
        .addColumn('created_at', big, (c) => c.notNull())
        .addColumn('expires_at', big, (c) => c.notNull())
        .addColumn('used_at', big)
        .addColumn('used_by', 'text', (c) => c.references('users.id').onDelete('set null'))
        .addColumn('revoked_at', big)
        .execute();
      await db.schema.createIndex('invites_created_at').on('invites').column('created_at').execute();
    },
    async down(db: Kysely<any>): Promise<void> {
      await db.schema.dropTable('invites').ifExists().execute();
    },
  };
}
