// The store factory: Kysely over better-sqlite3 (default: `<dataDir>/rpcgate.db`) or PostgreSQL (`databaseUrl`),
// migrated to the latest schema before it is returned.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import pg from 'pg';
import {
  CompiledQuery,
  Kysely,
  Migrator,
  PostgresDialect,
  SqliteAdapter,
  SqliteDialect,
  SqliteDriver,
  type DatabaseConnection,
  type DialectAdapter,
  type Driver,
  type SqliteDatabase,
  type SqliteDialectConfig,
} from 'kysely';
import type { Database } from './schema.js';
import { migrationProvider } from './migrations/index.js';
import { PgWatch, type StoreWatch } from './watch.js';
import type { Dialect } from './dialect.js';

export type { Dialect };

export interface Store {
  db: Kysely<Database>;
  dialect: Dialect;
  /** Tells a stalled PostgreSQL from a slow query for the account API (./watch.ts); absent = none (SQLite). */
  watch?: StoreWatch;
  close(): Promise<void>;
}

export interface StoreOptions {
  /** Directory of the SQLite file (`rpcgate.db`); created if missing. Ignored with `databaseUrl`. */
  dataDir: string;
  /** PostgreSQL connection string (the config maps `DATABASE_URL` here). Absent = SQLite. */
  databaseUrl?: string;
  /** SQLite: ms a statement waits for another process's write lock before SQLITE_BUSY. */
  busyTimeoutMs?: number;
  /** PostgreSQL: pool size. */
  poolSize?: number;
  /** PostgreSQL: ms to open a connection before the query fails (default 1 000): a stopped or unreachable server
   *  gives a fast error, never a hanging request. Also how long the stall watch (./watch.ts) waits for a ping. */
  connectTimeoutMs?: number;
  /** PostgreSQL: longest a statement may run, ms (default 5 000): server-side statement_timeout, and the client's
   *  query_timeout for a server that stopped answering altogether. */
  statementTimeoutMs?: number;
  /** PostgreSQL: told when an idle pooled connection fails (the pool replaces it); for logs. */
  onError?: (err: Error) => void;
}

export const SQLITE_FILE = 'rpcgate.db';
export const DEFAULT_CONNECT_TIMEOUT_MS = 1_000;

// SQLite: every Kysely transaction starts with BEGIN IMMEDIATE, i.e. takes the database write lock up front.
// In-process, Kysely's SqliteDriver already runs one transaction at a time (one connection behind a mutex); across
// processes sharing the file, IMMEDIATE makes a read-then-write transaction (count, then insert) wait for the lock
// (busy_timeout) instead of failing with SQLITE_BUSY on lock upgrade or acting on a stale count.
class ImmediateSqliteDriver extends SqliteDriver {
  override async beginTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('begin immediate'));
  }
}

// SQLite does run DDL inside transactions; saying so makes Kysely's Migrator wrap the whole migration run in one
// (IMMEDIATE) transaction, so two processes starting on a fresh file cannot both apply a migration.
class TransactionalDdlSqliteAdapter extends SqliteAdapter {
  override get supportsTransactionalDdl(): boolean {
    return true;
  }
}

class RpcgateSqliteDialect extends SqliteDialect {
  readonly #config: SqliteDialectConfig;
  constructor(config: SqliteDialectConfig) {
    super(config);
    this.#config = config;
  }
  override createDriver(): Driver {
    return new ImmediateSqliteDriver(this.#config);
  }
  override createAdapter(): DialectAdapter {
    return new TransactionalDdlSqliteAdapter();
  }
}

const INT8_OID = 20;

/** Prepared statements kept per SQLite connection; the cache is emptied when full (the set of texts is small). */
const SQLITE_STATEMENT_CACHE = 256;

/**
 * The connection as Kysely's SqliteDriver sees it, with its prepared statements kept by SQL text: the driver prepares
 * every query it runs, which re-parses the same texts again and again — for the request log's multi-row insert
 * (thousands of placeholders) that parse was a third of the log's CPU per call. Reusing a statement is safe here:
 * Kysely runs one query at a time on its single SQLite connection, and SQLite re-prepares a statement itself when the
 * schema changes under it.
 */
function withStatementCache(sqlite: BetterSqlite3.Database): SqliteDatabase {
  const cache = new Map<string, BetterSqlite3.Statement>();
  return {
    prepare(text: string) {
      let stmt = cache.get(text);
      if (stmt === undefined) {
        if (cache.size >= SQLITE_STATEMENT_CACHE) cache.clear();
        stmt = sqlite.prepare(text);
        cache.set(text, stmt);
      }
      return stmt;
    },
    close: () => void sqlite.close(),
  };
}

/** Opens (and migrates) the store. */
export async function openStore(opts: StoreOptions): Promise<Store> {
  let db: Kysely<Database>;
  let dialect: Dialect;
  let watch: StoreWatch | undefined;
  if (opts.databaseUrl) {
    watch = new PgWatch(opts.databaseUrl, opts.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS);
    dialect = 'postgres';
    const pool = new pg.Pool({
      connectionString: opts.databaseUrl,
      max: opts.poolSize ?? 10,
      connectionTimeoutMillis: opts.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS,
      statement_timeout: opts.statementTimeoutMs ?? 5_000,
      // The client-side bound: a server that accepted the query and then stopped answering (a little above the
      // server's own statement_timeout, which answers first when the server is alive).
      query_timeout: (opts.statementTimeoutMs ?? 5_000) + 1_000,
      // Unused connections are closed, so an outage leaves few dead sockets to discover.
      idleTimeoutMillis: 10_000,
      keepAlive: true,
      // Epoch-ms columns and count(*) are int8: return JS numbers (exact below 2^53) instead of strings.
      // Per pool, so other pg users in the process keep the global parsers.
      types: {
        getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
          oid === INT8_OID && format !== 'binary'
            ? (v: string) => Number(v)
            : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
      },
    });
    // An idle client whose connection the server ends (restart, failover, admin termination) emits 'error' on
    // the pool; unhandled, that would crash the process. The pool drops that client and the next query reconnects.
    pool.on('error', (err) => opts.onError?.(err));
    // A checked-out client between two queries (e.g. inside the usage flush's transaction) has no pool listener: its
    // connection dying then emits 'error' on the client itself, which would crash the process too. Its next query
    // fails and the pool drops it.
    pool.on('connect', (client) => client.on('error', (err) => opts.onError?.(err)));
    db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  } else {
    dialect = 'sqlite';
    mkdirSync(opts.dataDir, { recursive: true });
    const file = join(opts.dataDir, SQLITE_FILE);
    const busy = opts.busyTimeoutMs ?? 5000;
    db = new Kysely<Database>({
      dialect: new RpcgateSqliteDialect({
        database: () => {
          const sqlite = new BetterSqlite3(file, { timeout: busy });
          sqlite.pragma('journal_mode = WAL'); // readers never block the writer, other processes included
          sqlite.pragma('synchronous = NORMAL'); // durable across app crashes in WAL mode; fsync per checkpoint
          sqlite.pragma(`busy_timeout = ${busy}`);
          sqlite.pragma('foreign_keys = ON'); // cascades (user → apps → allowlists/jwt keys)
          return Promise.resolve(withStatementCache(sqlite));
        },
      }),
    });
  }
  try {
    await migrateToLatest(db, dialect);
  } catch (e) {
    await db.destroy();
    throw e;
  }
  return { db, dialect, watch, close: async () => void (await Promise.all([watch?.close(), db.destroy()])) };
}

/** Applies every pending migration; a no-op on an up-to-date database. */
export async function migrateToLatest(db: Kysely<Database>, dialect: Dialect): Promise<string[]> {
  const migrator = new Migrator({ db, provider: migrationProvider(dialect) });
  const { error, results } = await migrator.migrateToLatest();
  if (error !== undefined) {
    const failed = results?.find((r) => r.status === 'Error')?.migrationName;
    throw new Error(
      `store migration ${failed ?? ''} failed: ${error instanceof Error ? error.message : String(error)}`,
      { cause: error },
    );
  }
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}
