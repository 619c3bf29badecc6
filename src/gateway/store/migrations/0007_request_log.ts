// Request log (issue 25): one row per node API call of an app or network key, written in batches by the RequestLog
// (src/gateway/metering/request-log.ts), read newest first by the account API (apps_logs, keys_logs), pruned by age
// (`requestLog.retentionDays`) and by count (`requestLog.maxRows`, cut by id: ids only grow, so the newest rows stay).
import type { Kysely, Migration } from 'kysely';
import type { Dialect } from '../dialect.js';

export function requestLog(dialect: Dialect): Migration {
  const pg = dialect === 'postgres';
  const big = pg ? 'bigint' : 'integer';
  return {
    async up(db: Kysely<any>): Promise<void> {
      await db.schema
        .createTable('request_log')
        // SQLite: INTEGER PRIMARY KEY AUTOINCREMENT never reuses an id, so "keep the last maxRows ids" is exact.
        .addColumn('id', pg ? 'bigserial' : 'integer', (c) => (pg ? c.primaryKey() : c.primaryKey().autoIncrement()))
        .addColumn('ts', big, (c) => c.notNull()) // epoch ms the call was answered
        .addColumn('principal_kind', 'text', (c) => c.notNull()) // 'app' | 'key'
        .addColumn('principal_id', 'text', (c) => c.notNull())
        // Owner: every read filters by it too (no account sees another's rows). No foreign key: a batch must never
        // fail because an app was deleted meanwhile (same reason as usage rows).
        .addColumn('user_id', 'text', (c) => c.notNull())
        .addColumn('network', 'text', (c) => c.notNull())
        .addColumn('method', 'text', (c) => c.notNull())
        .addColumn('http_status', 'integer', (c) => c.notNull())
        .addColumn('code', 'integer') // JSON-RPC error code; null = success
        .addColumn('latency_ms', pg ? 'double precision' : 'real', (c) => c.notNull())
        .addColumn('cache_hit', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('upstream', 'text') // host:port (or index) of the node that answered; null = none (cache, refusal)
        .addColumn('request_id', 'text')
        .addColumn('ip_hash', 'text') // HMAC-SHA256 of the client IP keyed by the server secret (truncated)
        .addColumn('transport', 'text', (c) => c.notNull().defaultTo('http')) // 'http' | 'ws'
        .addColumn('params', 'text') // captured (per app, off by default), redacted, size-capped JSON
        .addColumn('result', 'text')
        .execute();
      // Reads: one principal newest first (cursor = ts, id).
      await db.schema
        .createIndex('request_log_principal_ts')
        .on('request_log')
        .columns(['principal_kind', 'principal_id', 'ts', 'id'])
        .execute();
      // Age pruning.
      await db.schema.createIndex('request_log_ts').on('request_log').column('ts').execute();
      // Per-app capture switch (off by default).
      await db.schema
        .alterTable('apps')
        .addColumn('log_bodies', 'integer', (c) => c.notNull().defaultTo(0))
        .execute();
    },
    async down(db: Kysely<any>): Promise<void> {
      await db.schema.dropTable('request_log').ifExists().execute();
      await db.schema.alterTable('apps').dropColumn('log_bodies').execute();
    },
  };
}
