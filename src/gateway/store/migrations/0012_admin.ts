// Operators (issue 27 item 1): an account's role ('user' | 'admin': granted by `rpcgate admin grant`, beside the emails
// of config `accounts.admins`), its suspension (when and why; nothing else of the account changes, so unsuspending
// restores it), and its plan (a name of config `plans`, or null = `accounts.defaultPlan`) with an optional per-account
// override (JSON of PlanLimits). The access index reads these with each key (store/access.ts), so the request path
// never asks the store.
import type { Kysely, Migration } from 'kysely';
import type { Dialect } from '../dialect.js';

const COLUMNS = ['role', 'suspended_at', 'suspended_reason', 'plan', 'plan_override'] as const;

export function admin(dialect: Dialect): Migration {
  const big = dialect === 'postgres' ? 'bigint' : 'integer';
  return {
    async up(db: Kysely<any>): Promise<void> {
      // One column per statement: SQLite's ALTER TABLE adds one at a time.
      await db.schema
        .alterTable('users')
        .addColumn('role', 'text', (c) => c.notNull().defaultTo('user'))
        .execute();
      await db.schema.alterTable('users').addColumn('suspended_at', big).execute();
      await db.schema.alterTable('users').addColumn('suspended_reason', 'text').execute();
      await db.schema.alterTable('users').addColumn('plan', 'text').execute();
      await db.schema.alterTable('users').addColumn('plan_override', 'text').execute();
      // The audit trail read across accounts, newest first (admin_activity), and by action.
      await db.schema.createIndex('audit_events_action').on('audit_events').columns(['action', 'id']).execute();
    },
    async down(db: Kysely<any>): Promise<void> {
      await db.schema.dropIndex('audit_events_action').ifExists().execute();
      for (const c of [...COLUMNS].reverse()) await db.schema.alterTable('users').dropColumn(c).execute();
    },
  };
}
