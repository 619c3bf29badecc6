// Request log rows (migration 0007_request_log): written in batches by the RequestLog of every replica
// (src/gateway/metering/request-log.ts), read newest first per app or network key with filters and a cursor, pruned by
// age and by count.
//
// Bound by count: ids only grow (bigserial / AUTOINCREMENT), so "keep the newest `maxRows`" is `delete where id <=
// max(id) - maxRows`, one range delete on the primary key — run in the same transaction as each insert, so no reader
// ever sees more than `maxRows` rows (ids skipped by a failed PG transaction only make the table smaller).
// Bound by age: `pruneRequestLog` deletes rows older than the retention in batches of `batch` rows (each its own
// statement: a long retention catch-up never holds one huge lock).
import { sql, type Insertable, type Kysely, type Selectable } from 'kysely';
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

/** Rows per INSERT statement (16 columns: well under SQLite's and PostgreSQL's bind-parameter limits). */
const ROWS_PER_STATEMENT = 500;

/** Appends rows and, with `maxRows`, drops the oldest beyond it — one transaction. Returns rows deleted by the bound. */
export async function insertRequestLog(
  db: Kysely<Database>,
  rows: readonly RequestLogRow[],
  opts: { maxRows?: number } = {},
): Promise<number> {
  if (rows.length === 0) return 0;
  return db.transaction().execute(async (trx) => {
    for (let i = 0; i < rows.length; i += ROWS_PER_STATEMENT)
      await trx
        .insertInto('request_log')
        .values(rows.slice(i, i + ROWS_PER_STATEMENT).map(toValues))
        .execute();
    const max = opts.maxRows;
    if (max === undefined) return 0;
    const del = await sql`delete from request_log where id <= (select max(id) from request_log) - ${max}`.execute(trx);
    return Number(del.numAffectedRows ?? 0n);
  });
}

function toValues(r: RequestLogRow): Insertable<RequestLogTable> {
  return {
    ts: r.ts,
    principal_kind: r.principalKind,
    principal_id: r.principalId,
    user_id: r.userId,
    network: r.network,
    method: r.method,
    http_status: r.httpStatus,
    code: r.code ?? null,
    latency_ms: r.latencyMs,
    cache_hit: r.cacheHit ? 1 : 0,
    upstream: r.upstream ?? null,
    request_id: r.requestId ?? null,
    ip_hash: r.ipHash ?? null,
    transport: r.transport,
    params: r.params ?? null,
    result: r.result ?? null,
  };
}

/** Deletes rows older than `before` (epoch ms) in batches; returns how many. */
export async function pruneRequestLog(db: Kysely<Database>, before: number, batch = 5_000): Promise<number> {
  let total = 0;
  for (;;) {
    const r = await sql`delete from request_log where id in (
      select id from request_log where ts < ${before} order by ts limit ${batch})`.execute(db);
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
  let s = db
    .selectFrom('request_log')
    .selectAll()
    .where('user_id', '=', q.userId)
    .where('principal_kind', '=', q.principalKind)
    .where('principal_id', '=', q.principalId);
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
  const entries = rows.slice(0, q.limit).map(fromRow);
  const last = entries.at(-1);
  return more && last !== undefined ? { entries, next: { ts: last.ts, id: last.id } } : { entries };
}

function fromRow(r: Selectable<RequestLogTable>): StoredRequestLogEntry {
  const e: StoredRequestLogEntry = {
    id: Number(r.id),
    ts: Number(r.ts),
    principalKind: r.principal_kind,
    principalId: r.principal_id,
    userId: r.user_id,
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
