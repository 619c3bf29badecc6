// Compute units in usage: the x-gateway.units of the calls of a usage row (each call its method's weight, as the
// limits count them), summed by the Meter next to `count` and by the flush's upsert-add and the roll-ups into hours and
// days, like cache_hits (migration 0006). Stored rather than derived from count × weight: a contract's weights may
// change, and a row keeps what was counted when it was written. Rows written before this migration have 0.
import type { Kysely, Migration } from 'kysely';
import type { Dialect } from '../dialect.js';

const TABLES = ['usage_minute', 'usage_hour', 'usage_day'] as const;

export function usageUnits(dialect: Dialect): Migration {
  const big = dialect === 'postgres' ? 'bigint' : 'integer';
  return {
    async up(db: Kysely<any>): Promise<void> {
      for (const t of TABLES)
        await db.schema
          .alterTable(t)
          .addColumn('units', big, (c) => c.notNull().defaultTo(0))
          .execute();
    },
    async down(db: Kysely<any>): Promise<void> {
      for (const t of TABLES) await db.schema.alterTable(t).dropColumn('units').execute();
    },
  };
}
