// Exactly-once usage flushes (issue 14.5): the Meter now also flushes the current minute every few seconds (a partial
// row, so a SIGKILL loses seconds, not a minute), and retries a flush whose outcome it could not see (e.g. the database
// went away during COMMIT). Each flush carries (writer, seq) — a random id per Meter instance and a number that grows
// by one per batch — and records it here in the same transaction as its usage rows; a retried batch whose seq is
// already recorded is skipped, so nothing is counted twice. One row per writer (process run); old rows are pruned by
// the retention job (src/gateway/store/usage.ts `downsample`).
import type { Kysely, Migration } from 'kysely';
import type { Dialect } from '../dialect.js';

export function usageFlushMarks(dialect: Dialect): Migration {
  const big = dialect === 'postgres' ? 'bigint' : 'integer';
  return {
    async up(db: Kysely<any>): Promise<void> {
      await db.schema
        .createTable('usage_flush_marks')
        .addColumn('writer', 'text', (c) => c.primaryKey())
        .addColumn('seq', big, (c) => c.notNull()) // the writer's last applied batch
        .addColumn('at', big, (c) => c.notNull()) // epoch ms of that batch's commit (for pruning)
        .execute();
      await db.schema.createIndex('usage_flush_marks_at').on('usage_flush_marks').column('at').execute();
    },
    async down(db: Kysely<any>): Promise<void> {
      await db.schema.dropTable('usage_flush_marks').ifExists().execute();
    },
  };
}
