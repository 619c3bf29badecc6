// Audit trail (issue 27 item 5): the security events of an account — log-ins, throttled log-in bursts, password
// changes and resets, keys and apps created, rotated or deleted, email verified — with time, actor and client address.
// The user reads their own (account_activity); rows go with the account when it is deleted (personal data).
import type { Kysely, Migration } from 'kysely';
import type { Dialect } from '../dialect.js';

export function auditEvents(dialect: Dialect): Migration {
  const pg = dialect === 'postgres';
  return {
    async up(db: Kysely<any>): Promise<void> {
      await db.schema
        .createTable('audit_events')
        .addColumn('id', pg ? 'bigserial' : 'integer', (c) => (pg ? c.primaryKey() : c.primaryKey().autoIncrement()))
        .addColumn('at', pg ? 'bigint' : 'integer', (c) => c.notNull())
        // The account the event is about. No foreign key: an event is never lost to a concurrent delete.
        .addColumn('user_id', 'text', (c) => c.notNull())
        .addColumn('actor_id', 'text') // who did it when not the account itself (an operator); null = the account
        .addColumn('action', 'text', (c) => c.notNull())
        .addColumn('ip', 'text') // client address as the throttles see it (trustProxy honoured); null = none (CLI)
        .addColumn('detail', 'text') // small JSON: the key or app id and name, the throttle scope, …
        .execute();
      await db.schema.createIndex('audit_events_user').on('audit_events').columns(['user_id', 'id']).execute();
    },
    async down(db: Kysely<any>): Promise<void> {
      await db.schema.dropTable('audit_events').ifExists().execute();
    },
  };
}
