import { PostgresAdapter, type Kysely } from 'kysely';
import type { Database } from './schema.js';

/** Row locks (`FOR UPDATE`) exist on PostgreSQL only; on SQLite the IMMEDIATE transaction already holds the write lock. */
export function isPostgres(db: Kysely<Database>): boolean {
  return db.getExecutor().adapter instanceof PostgresAdapter;
}
