// Quota alerts (issue 25): one row per (user, subject, window, period, threshold) crossed — the primary key makes
// "each threshold once per period" hold across replicas (INSERT … ON CONFLICT DO NOTHING: only the inserting replica
// sends the webhook) — and one optional webhook per account.
import type { Kysely, Migration } from 'kysely';
import type { Dialect } from '../dialect.js';

export function quotaAlerts(dialect: Dialect): Migration {
  const big = dialect === 'postgres' ? 'bigint' : 'integer';
  return {
    async up(db: Kysely<any>): Promise<void> {
      await db.schema
        .createTable('quota_alerts')
        .addColumn('user_id', 'text', (c) => c.notNull())
        .addColumn('subject', 'text', (c) => c.notNull()) // 'apps' (access point A quotas) | 'keys' (B, per user)
        .addColumn('window', 'text', (c) => c.notNull()) // 'day' | 'month'
        .addColumn('period_start', big, (c) => c.notNull()) // UTC day / month start, epoch ms
        .addColumn('threshold', 'integer', (c) => c.notNull()) // 75 | 90 | 100
        .addColumn('app_id', 'text') // the app whose calls crossed it (A); null for B
        .addColumn('used', big, (c) => c.notNull())
        .addColumn('limit_value', big, (c) => c.notNull())
        .addColumn('reset_at', big, (c) => c.notNull())
        .addColumn('created_at', big, (c) => c.notNull())
        .addPrimaryKeyConstraint('quota_alerts_pk', ['user_id', 'subject', 'window', 'period_start', 'threshold'])
        .execute();
      await db.schema
        .createTable('alert_webhooks')
        .addColumn('user_id', 'text', (c) => c.primaryKey())
        .addColumn('url', 'text', (c) => c.notNull())
        .addColumn('secret', 'text', (c) => c.notNull()) // HMAC key, shown once when set
        .addColumn('updated_at', big, (c) => c.notNull())
        .execute();
    },
    async down(db: Kysely<any>): Promise<void> {
      await db.schema.dropTable('alert_webhooks').ifExists().execute();
      await db.schema.dropTable('quota_alerts').ifExists().execute();
    },
  };
}
