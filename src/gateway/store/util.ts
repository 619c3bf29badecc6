import { PostgresAdapter, type Kysely } from 'kysely';

/** Row locks (`FOR UPDATE`) exist on PostgreSQL only; on SQLite the IMMEDIATE transaction already holds the write lock. */
export function isPostgres(db: Kysely<any>): boolean {
  return db.getExecutor().adapter instanceof PostgresAdapter;
}
