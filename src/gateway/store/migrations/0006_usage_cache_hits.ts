// Cache hits in usage: the calls of a usage row answered from the response cache (src/gateway/cache), counted by the
// Meter next to `count` and summed like it — by the flush's upsert-add (same statement, same transaction as the
// usage_flush_marks entry of migration 0004, so a retried flush stays exactly-once) and by the roll-ups into hours and
// days. Rows written before this migration have 0 (no hits were recorded then).
import type { Kysely, Migration } from 'kysely';
import type { Dialect } from '../dialect.js';

const TABLES = ['usage_minute', 'usage_hour', 'usage_day'] as const;

export function usageCacheHits(dialect: Dialect): Migration {
  const big = dialect === 'postgres' ? 'bigint' : 'integer';
  return {
    async up(db: Kysely<any>): Promise<void> {
      for (const t of TABLES)
        await db.schema
          .alterTable(t)
          .addColumn('cache_hits', big, (c) => c.notNull().defaultTo(0))
          .execute();
    },
    async down(db: Kysely<any>): Promise<void> {
      for (const t of TABLES) await db.schema.alterTable(t).dropColumn('cache_hits').execute();
    },
  };
}
