// Usage metering (issue 5): per-minute aggregates flushed by every replica's Meter, rolled up into hours and days.
// Three tables of one shape (minute / hour / day resolution); see src/gateway/store/usage.ts for the queries.
// Append-only like every migration: the histogram layout (70 buckets b0…b69, src/gateway/usage/histogram.ts) is pinned here.
import type { Kysely, Migration } from 'kysely';
import type { Dialect } from '../dialect.js';

const TABLES = ['usage_minute', 'usage_hour', 'usage_day'] as const;
const BUCKETS = 70;

export function usage(dialect: Dialect): Migration {
  // Counts and epoch ms need 64 bits in PG (a day row can exceed 2^31 calls); SQLite's integer is 64-bit already.
  const big = dialect === 'postgres' ? 'bigint' : 'integer';
  const float = dialect === 'postgres' ? 'double precision' : 'real';
  return {
    async up(db: Kysely<any>): Promise<void> {
      for (const t of TABLES) {
        let b = db.schema
          .createTable(t)
          // Start of the bucket (minute / hour / UTC day), epoch ms.
          .addColumn('ts', big, (c) => c.notNull())
          .addColumn('principal_kind', 'text', (c) => c.notNull()) // 'app' (access point A) | 'key' (access point B)
          .addColumn('principal_id', 'text', (c) => c.notNull()) // app id / network key id
          // Owner, for the ownership filter; no foreign key: usage outlives deleted apps/keys and a flush must never
          // fail (and be retried forever) because its user was deleted meanwhile.
          .addColumn('user_id', 'text', (c) => c.notNull())
          .addColumn('network', 'text', (c) => c.notNull())
          .addColumn('method', 'text', (c) => c.notNull()) // contract method or 'other'
          .addColumn('outcome', 'text', (c) => c.notNull())
          .addColumn('code', 'integer', (c) => c.notNull().defaultTo(0)) // JSON-RPC code; 0 = none (ok)
          .addColumn('count', big, (c) => c.notNull().defaultTo(0))
          .addColumn('latency_sum_ms', float, (c) => c.notNull().defaultTo(0));
        for (let i = 0; i < BUCKETS; i++) b = b.addColumn(`b${i}`, big, (c) => c.notNull().defaultTo(0));
        // The upsert key: two flushes / replicas writing the same bucket add up (ON CONFLICT … DO UPDATE).
        await b
          .addPrimaryKeyConstraint(`${t}_pk`, [
            'ts',
            'principal_kind',
            'principal_id',
            'network',
            'method',
            'outcome',
            'code',
          ])
          .execute();
        await db.schema.createIndex(`${t}_user_ts`).on(t).columns(['user_id', 'ts']).execute();
      }
    },
    async down(db: Kysely<any>): Promise<void> {
      for (const t of TABLES) await db.schema.dropTable(t).ifExists().execute();
    },
  };
}
