// Account self-service by mail (issue 27): single-use, time-limited tokens for a password reset or an email
// verification, stored hashed (sha256 of the random token in the link: a leaked table opens nothing), and the time an
// account's email was verified. Existing accounts count as verified (they signed up before verification existed: their
// keys keep working when an operator turns `accounts.verifyEmail` on).
import type { Kysely, Migration } from 'kysely';
import type { Dialect } from '../dialect.js';

export function accountTokens(dialect: Dialect): Migration {
  const big = dialect === 'postgres' ? 'bigint' : 'integer';
  return {
    async up(db: Kysely<any>): Promise<void> {
      await db.schema
        .createTable('account_tokens')
        .addColumn('token_hash', 'text', (c) => c.primaryKey())
        .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
        .addColumn('purpose', 'text', (c) => c.notNull()) // 'reset' | 'verify'
        .addColumn('created_at', big, (c) => c.notNull())
        .addColumn('expires_at', big, (c) => c.notNull())
        .execute();
      await db.schema.createIndex('account_tokens_user').on('account_tokens').columns(['user_id', 'purpose']).execute();
      await db.schema.createIndex('account_tokens_expires_at').on('account_tokens').column('expires_at').execute();
      // 0 = verified at no known time: accounts from before, and every account while verification is off. A sign-up
      // under `accounts.verifyEmail` writes null until its link is followed.
      await db.schema
        .alterTable('users')
        .addColumn('email_verified_at', big, (c) => c.defaultTo(0))
        .execute();
    },
    async down(db: Kysely<any>): Promise<void> {
      await db.schema.dropTable('account_tokens').ifExists().execute();
      await db.schema.alterTable('users').dropColumn('email_verified_at').execute();
    },
  };
}
