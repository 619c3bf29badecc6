// Request log rows (migrations 0007_request_log, 0014_request_log_lean, 0015_request_log_principals): written in batches
// by the RequestLog of every replica (src/gateway/metering/request-log.ts), read newest first per app or network key
// with filters and a cursor, pruned by age and by count.
//
// A row names its app or key by `principal`, the id of its (kind, principal_id, user_id) in request_log_principals:
// resolved once per principal and process (`principalRefs`), so a call's row binds an integer, not three strings.
//
// Bound by count: ids only grow while rows remain (bigserial / SQLite's max(id) + 1; the bounds delete the oldest), so
// "keep the newest `maxRows`" is `delete where id <= max(id) - maxRows`, one range delete on the primary key — run in
// the same transaction as each insert, so no reader ever sees more than `maxRows` rows (ids skipped by a failed PG
// transaction only make the table smaller).
// Bound by age: `pruneRequestLog` deletes rows older than the retention in batches of `batch` rows (each its own
// statement: a long retention catch-up never holds one huge lock), walking ids (no index on ts to pay for per call).
import { CompiledQuery, sql, type Kysely, type Selectable } from 'kysely';
import type { Database, RequestLogTable } from './schema.js';
import { isPostgres } from './util.js';

export interface RequestLogRow {
  ts: number;
  principalKind: 'app' | 'key';
  principalId: string;
  userId: string;
  network: string;
  method: string;
  httpStatus: number;
  /** JSON-RPC error code; undefined = success. */
  code?: number;
  latencyMs: number;
  cacheHit: boolean;
  upstream?: string;
  requestId?: string;
  ipHash?: string;
  transport: 'http' | 'ws';
  params?: string;
  result?: string;
}

export interface StoredRequestLogEntry extends RequestLogRow {
  id: number;
}

/** Most rows per INSERT statement (14 columns: well under SQLite's and PostgreSQL's bind-parameter limits). */
const ROWS_PER_STATEMENT = 256;

/** Appends rows and, with `maxRows`, drops the oldest beyond it — one transaction. Returns rows deleted by the bound. */
export async function insertRequestLog(
  db: Kysely<Database>,
  rows: readonly RequestLogRow[],
  opts: { maxRows?: number } = {},
): Promise<number> {
  if (rows.length === 0) return 0;
  const pg = isPostgres(db);
  // Before the transaction: a principal's row, once made, stays made whatever becomes of this batch.
  const refs = await principalRefs(db, rows);
  return db.transaction().execute(async (trx) => {
    for (let i = 0; i < rows.length; ) {
      const n = chunkSize(rows.length - i);
      await trx.executeQuery(CompiledQuery.raw(insertText(pg, n), insertParams(rows, refs, i, n)));
      i += n;
    }
    const max = opts.maxRows;
    if (max === undefined) return 0;
    const del = await sql`delete from request_log where id <= (select max(id) from request_log) - ${max}`.execute(trx);
    return Number(del.numAffectedRows ?? 0n);
  });
}

// The insert is written as SQL text once per (dialect, rows per statement) and run with its parameters as they are:
// Kysely's query builder would build and compile a node tree per row and value for every batch — at thousands of calls
// a second that was most of the log's CPU cost on the serving thread (issue 25's bench: log/base 1.16× before).
// Statements hold a power of two of rows (a batch of 300 is 256 + 32 + 8 + 4), so a handful of texts serve every batch
// and SQLite's prepared statements for them are reused (the store's statement cache, ./db.ts) instead of parsed anew.
const INSERT_COLUMNS = [
  'ts',
  'principal',
  'network',
  'method',
  'http_status',
  'code',
  'latency_ms',
  'cache_hit',
  'upstream',
  'request_id',
  'ip_hash',
  'transport',
  'params',
  'result',
] as const satisfies readonly (keyof RequestLogTable)[];

const insertTexts = new Map<string, string>();

/** The largest power of two ≤ min(left, ROWS_PER_STATEMENT). */
function chunkSize(left: number): number {
  if (left >= ROWS_PER_STATEMENT) return ROWS_PER_STATEMENT;
  return 2 ** Math.floor(Math.log2(left));
}

/** `insert into request_log (…) values (…), …` for `n` rows (a power of two), with the dialect's placeholders. */
function insertText(pg: boolean, n: number): string {
  const key = `${pg ? 'pg' : 'sqlite'}:${n}`;
  let text = insertTexts.get(key);
  if (text === undefined) {
    const w = INSERT_COLUMNS.length;
    const tuple = (row: number) => `(${INSERT_COLUMNS.map((_, c) => (pg ? `$${row * w + c + 1}` : '?')).join(', ')})`;
    const tuples = Array.from({ length: n }, (_, row) => tuple(row)).join(', ');
    text = `insert into request_log (${INSERT_COLUMNS.join(', ')}) values ${tuples}`;
    insertTexts.set(key, text); // at most 9 sizes per dialect
  }
  return text;
}

/** The parameters of rows[from, from + n), row after row in INSERT_COLUMNS' order, in one preallocated array. */
function insertParams(rows: readonly RequestLogRow[], refs: readonly number[], from: number, n: number): unknown[] {
  const out = new Array<unknown>(n * INSERT_COLUMNS.length);
  let j = 0;
  for (let i = from; i < from + n; i++) {
    const r = rows[i];
    out[j++] = r.ts;
    out[j++] = refs[i];
    out[j++] = r.network;
    out[j++] = r.method;
    out[j++] = r.httpStatus;
    out[j++] = r.code ?? null;
    out[j++] = r.latencyMs;
    out[j++] = r.cacheHit ? 1 : 0;
    out[j++] = r.upstream ?? null;
    out[j++] = r.requestId ?? null;
    out[j++] = r.ipHash ?? null;
    out[j++] = r.transport;
    out[j++] = r.params ?? null;
    out[j++] = r.result ?? null;
  }
  return out;
}

/** Per store: principal id → its request_log_principals id, per kind. Bounded: cleared when full (refilled per batch). */
const refCaches = new WeakMap<Kysely<Database>, { app: Map<string, number>; key: Map<string, number> }>();
const MAX_CACHED_REFS = 100_000;

/** The request_log_principals id of each row's principal, made where missing (insert or keep, then read). */
async function principalRefs(db: Kysely<Database>, rows: readonly RequestLogRow[]): Promise<number[]> {
  let cache = refCaches.get(db);
  if (cache === undefined) {
    cache = { app: new Map(), key: new Map() };
    refCaches.set(db, cache);
  }
  const refs = new Array<number>(rows.length);
  let missing: RequestLogRow[] | undefined;
  for (let i = 0; i < rows.length; i++) {
    const r = rows[i];
    const ref = cache[r.principalKind].get(r.principalId);
    if (ref === undefined) (missing ??= []).push(r);
    else refs[i] = ref;
  }
  if (missing === undefined) return refs;
  if (cache.app.size + cache.key.size + missing.length > MAX_CACHED_REFS) {
    cache.app.clear();
    cache.key.clear();
  }
  for (const r of missing) {
    const kinds = cache[r.principalKind];
    if (!kinds.has(r.principalId)) kinds.set(r.principalId, await principalRef(db, r));
  }
  for (let i = 0; i < rows.length; i++) refs[i] ??= cache[rows[i].principalKind].get(rows[i].principalId)!;
  return refs;
}

async function principalRef(db: Kysely<Database>, r: RequestLogRow): Promise<number> {
  await db
    .insertInto('request_log_principals')
    .values({ kind: r.principalKind, principal_id: r.principalId, user_id: r.userId })
    .onConflict((oc) => oc.columns(['kind', 'principal_id']).doNothing())
    .execute();
  const row = await findPrincipal(db, r.principalKind, r.principalId).executeTakeFirstOrThrow();
  return Number(row.id);
}

function findPrincipal(db: Kysely<Database>, kind: 'app' | 'key', principalId: string) {
  return db
    .selectFrom('request_log_principals')
    .select(['id', 'user_id'])
    .where('kind', '=', kind)
    .where('principal_id', '=', principalId);
}

/** Deletes every request log row of a user's apps and keys, and their principals (one transaction: the caller's). */
export async function deleteUserRequestLog(trx: Kysely<Database>, userId: string): Promise<void> {
  const theirs = trx.selectFrom('request_log_principals').select('id').where('user_id', '=', userId);
  await trx.deleteFrom('request_log').where('principal', 'in', theirs).execute();
  await trx.deleteFrom('request_log_principals').where('user_id', '=', userId).execute();
}

/**
 * Deletes rows older than `before` (epoch ms) in batches; returns how many. Walks the primary key, not an index on ts
 * (each index costs every call's insert, 0014_request_log_lean): ids grow with time, so the rows to delete are those
 * before the first row young enough to stay. Rows of several replicas are written up to a flush interval apart, so a
 * row may outlive the retention by about that much.
 */
export async function pruneRequestLog(db: Kysely<Database>, before: number, batch = 5_000): Promise<number> {
  const { rows } = await sql<{ stay: unknown; end: unknown }>`select
      (select id from request_log where ts >= ${before} order by id limit 1) as stay,
      (select max(id) from request_log) as end`.execute(db);
  const first = rows[0];
  if (first === undefined || first.end === null) return 0;
  // Everything below `stay`; with no young row, everything there is now (rows written meanwhile are young).
  const stop = first.stay === null ? Number(first.end) + 1 : Number(first.stay);
  let total = 0;
  for (;;) {
    const r = await sql`delete from request_log where id in (
      select id from request_log where id < ${stop} order by id limit ${batch})`.execute(db);
    const n = Number(r.numAffectedRows ?? 0n);
    total += n;
    if (n < batch) return total;
  }
}

export async function countRequestLog(db: Kysely<Database>): Promise<number> {
  const { rows } = await sql<{ n: unknown }>`select count(*) as n from request_log`.execute(db);
  return Number(rows[0]?.n ?? 0);
}

export interface RequestLogQuery {
  /** Owner: always part of the condition. */
  userId: string;
  principalKind: 'app' | 'key';
  principalId: string;
  network?: string;
  method?: string;
  code?: number;
  /** Only successful calls (code null) or only failed ones. */
  failed?: boolean;
  httpStatus?: number;
  minLatencyMs?: number;
  /** Epoch ms, inclusive. */
  since?: number;
  /** Epoch ms, exclusive. */
  until?: number;
  requestId?: string;
  /** Continue after this (ts, id): the `next` of the previous page. */
  after?: { ts: number; id: number };
  limit: number;
}

/** Newest first; `next` is set when more rows may follow. */
export async function queryRequestLog(
  db: Kysely<Database>,
  q: RequestLogQuery,
): Promise<{ entries: StoredRequestLogEntry[]; next?: { ts: number; id: number } }> {
  // The principal first, owner included: another account's app or key has no rows here, whatever its id.
  const p = await findPrincipal(db, q.principalKind, q.principalId).executeTakeFirst();
  if (p === undefined || p.user_id !== q.userId) return { entries: [] };
  let s = db.selectFrom('request_log').selectAll().where('principal', '=', p.id);
  if (q.network !== undefined) s = s.where('network', '=', q.network);
  if (q.method !== undefined) s = s.where('method', '=', q.method);
  if (q.code !== undefined) s = s.where('code', '=', q.code);
  if (q.failed === true) s = s.where('code', 'is not', null);
  if (q.failed === false) s = s.where('code', 'is', null);
  if (q.httpStatus !== undefined) s = s.where('http_status', '=', q.httpStatus);
  if (q.minLatencyMs !== undefined) s = s.where('latency_ms', '>=', q.minLatencyMs);
  if (q.since !== undefined) s = s.where('ts', '>=', q.since);
  if (q.until !== undefined) s = s.where('ts', '<', q.until);
  if (q.requestId !== undefined) s = s.where('request_id', '=', q.requestId);
  const after = q.after;
  if (after !== undefined)
    s = s.where((eb) => eb.or([eb('ts', '<', after.ts), eb.and([eb('ts', '=', after.ts), eb('id', '<', after.id)])]));
  const rows = await s
    .orderBy('ts', 'desc')
    .orderBy('id', 'desc')
    .limit(q.limit + 1)
    .execute();
  const more = rows.length > q.limit;
  const entries = rows.slice(0, q.limit).map((r) => fromRow(r, q));
  const last = entries.at(-1);
  return more && last !== undefined ? { entries, next: { ts: last.ts, id: last.id } } : { entries };
}

function fromRow(r: Selectable<RequestLogTable>, q: RequestLogQuery): StoredRequestLogEntry {
  const e: StoredRequestLogEntry = {
    id: Number(r.id),
    ts: Number(r.ts),
    principalKind: q.principalKind,
    principalId: q.principalId,
    userId: q.userId,
    network: r.network,
    method: r.method,
    httpStatus: Number(r.http_status),
    latencyMs: Number(r.latency_ms),
    cacheHit: Number(r.cache_hit) === 1,
    transport: r.transport === 'ws' ? 'ws' : 'http',
  };
  if (r.code !== null) e.code = Number(r.code);
  if (r.upstream !== null) e.upstream = r.upstream;
  if (r.request_id !== null) e.requestId = r.request_id;
  if (r.ip_hash !== null) e.ipHash = r.ip_hash;
  if (r.params !== null) e.params = r.params;
  if (r.result !== null) e.result = r.result;
  return e;
}

/** Whether the store is PostgreSQL (the retention default differs: 10 days there, 2 on SQLite). */
export const requestLogOnPostgres = isPostgres;
