// Usage metering in the store: per-minute aggregates written by every replica's Meter (upsert-add, so flushes and
// replicas writing the same minute add up), rolled up into hours and days by `downsample`, read per app / per key
// for the account API's metrics.
//
// Tables (migration 0002_usage): usage_minute, usage_hour, usage_day — one shape:
//   ts (bucket start, epoch ms, UTC) · principal_kind 'app'|'key' · principal_id · user_id · network · method · outcome ·
//   code (JSON-RPC code, 0 = none) · count · latency_sum_ms · b0…b69 (latency histogram, src/gateway/usage/histogram.ts) ·
//   cache_hits (migration 0006: calls among `count` answered from the response cache; summed like count) ·
//   units (migration 0008: the calls' compute units, x-gateway.units; summed like count)
//   primary key (ts, principal_kind, principal_id, network, method, outcome, code); index (user_id, ts).
//
// Ownership: every read takes the user id and filters by it; an app/key id of another user reads as no usage.
// Retention (defaults; `downsample` is meant to run every few minutes on any replica, concurrent runs are safe):
//   minute rows older than 2 days → hour rows; hour rows older than 90 days → day rows; day rows kept forever
//   (or `dayRetentionMs`). Cutoffs are aligned down to whole hours / UTC days so a bucket is never split.
import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { Database } from './schema.js';
import { BUCKET_COLUMNS, HISTOGRAM_BUCKETS, percentileMs } from '../usage/histogram.js';
import { OUTCOMES, OUTCOME_INDEX, type Outcome } from '../usage/types.js';
import { isPostgres } from './util.js';

export type Granularity = 'minute' | 'hour' | 'day';

const MINUTE = 60_000;
const HOUR = 3_600_000;
const DAY = 86_400_000;

export const GRANULARITY_MS: Readonly<Record<Granularity, number>> = Object.freeze({
  minute: MINUTE,
  hour: HOUR,
  day: DAY,
});
/** The usage tables' rows as Kysely sees them: the key columns, then 70-odd counters (one per histogram bucket). */
type UsageCells = { [column: string]: string | number };
/** The tables of migrations 0002, 0004 and 0006, added to the store's schema where usage is read or written. */
type UsageTables = {
  usage_minute: UsageCells;
  usage_hour: UsageCells;
  usage_day: UsageCells;
  usage_flush_marks: { writer: string; seq: number; at: number };
};
type UsageTable = Exclude<keyof UsageTables, 'usage_flush_marks'>;

export const USAGE_TABLES: Readonly<Record<Granularity, UsageTable>> = Object.freeze({
  minute: 'usage_minute',
  hour: 'usage_hour',
  day: 'usage_day',
});

export const DEFAULT_RETENTION = Object.freeze({
  /** Minute rows older than this are rolled up into hour rows. */
  minuteRetentionMs: 2 * DAY,
  /** Hour rows older than this are rolled up into day rows. */
  hourRetentionMs: 90 * DAY,
  /** Day rows older than this are deleted; undefined = kept forever. */
  dayRetentionMs: undefined as number | undefined,
});

/** One aggregate: a (bucket, principal, network, method, outcome, code) cell. */
export interface UsageRow {
  /** Bucket start, epoch ms (a whole minute for usage_minute). */
  ts: number;
  principalKind: 'app' | 'key';
  /** App id (kind app) or network key id (kind key). */
  principalId: string;
  userId: string;
  network: string;
  method: string;
  outcome: Outcome;
  /** JSON-RPC error code; 0 = none. A 32-bit integer. */
  code: number;
  count: number;
  /** Calls among `count` answered from the response cache (default 0). */
  cacheHits?: number;
  /** Compute units of the row's calls (default 0). */
  units?: number;
  latencySumMs: number;
  /** HISTOGRAM_BUCKETS bucket counts. */
  buckets: ArrayLike<number>;
}

const KEY_COLUMNS = ['ts', 'principal_kind', 'principal_id', 'network', 'method', 'outcome', 'code'] as const;
const SUM_COLUMNS: readonly string[] = ['count', 'latency_sum_ms', ...BUCKET_COLUMNS, 'cache_hits', 'units'];
const ALL_COLUMNS: readonly string[] = [...KEY_COLUMNS, 'user_id', ...SUM_COLUMNS];
// Bound parameters per statement: SQLite allows 32 766, PostgreSQL 65 535; 81 columns × 300 rows = 24 300.
const ROWS_PER_STATEMENT = 300;

const q = (c: string) => `"${c}"`; // identifiers are ours (no input); quoted because `count` is a function name
const SUM_SELECT = sql.raw(SUM_COLUMNS.map((c) => `sum(${q(c)}) as ${q(c)}`).join(', '));

function upsertSet(table: string): Record<string, RawBuilder<number>> {
  const set: Record<string, RawBuilder<number>> = {};
  for (const c of SUM_COLUMNS) set[c] = sql<number>`${sql.ref(`${table}.${c}`)} + ${sql.ref(`excluded.${c}`)}`;
  return set;
}
const UPSERT_SET = Object.fromEntries(Object.values(USAGE_TABLES).map((t) => [t, upsertSet(t)]));

/** A flush's identity: `writer` (one per Meter instance) and `seq` (grows by one per batch of that writer). */
export interface UsageBatch {
  writer: string;
  seq: number;
  /** Epoch ms, kept for pruning. */
  at: number;
}

/** How long a writer's last batch mark is kept (a retry older than this would be applied again). */
export const FLUSH_MARK_RETENTION_MS = 7 * DAY;

/**
 * Adds rows to a usage table (default: minutes): multi-row INSERT … ON CONFLICT DO UPDATE SET col = col + excluded.col,
 * all statements in one transaction (a failed write changes nothing). With `batch`, the transaction first records
 * (writer, seq) in usage_flush_marks; a batch whose seq the writer already recorded is skipped (returns 0), so a retry
 * of a flush whose COMMIT succeeded unseen (connection lost) counts nothing twice. Rows must not repeat a key (merge
 * them first). Returns the number of rows written.
 */
export async function upsertUsage(
  db: Kysely<Database>,
  rows: readonly UsageRow[],
  opts: { resolution?: Granularity; batch?: UsageBatch } = {},
): Promise<number> {
  if (rows.length === 0) return 0;
  const table = USAGE_TABLES[opts.resolution ?? 'minute'];
  const values = rows.map(toValues);
  const batch = opts.batch;
  return db
    .withTables<UsageTables>()
    .transaction()
    .execute(async (trx) => {
      if (batch !== undefined) {
        const marked = await trx
          .insertInto('usage_flush_marks')
          .values({ writer: batch.writer, seq: batch.seq, at: batch.at })
          .onConflict((oc) =>
            oc
              .column('writer')
              .doUpdateSet({ seq: sql`excluded.seq`, at: sql`excluded.at` })
              .where(sql.ref('usage_flush_marks.seq'), '<', sql.ref('excluded.seq')),
          )
          .returning('writer')
          .executeTakeFirst();
        if (marked === undefined) return 0; // applied before
      }
      for (let i = 0; i < values.length; i += ROWS_PER_STATEMENT) {
        await trx
          .insertInto(table)
          .values(values.slice(i, i + ROWS_PER_STATEMENT))
          .onConflict((oc) => oc.columns([...KEY_COLUMNS]).doUpdateSet(UPSERT_SET[table]))
          .execute();
      }
      return rows.length;
    });
}

function toValues(r: UsageRow): Record<string, string | number> {
  if (r.buckets.length !== HISTOGRAM_BUCKETS)
    throw new RangeError(`usage row needs ${HISTOGRAM_BUCKETS} buckets, got ${r.buckets.length}`);
  const v: Record<string, string | number> = {
    ts: r.ts,
    principal_kind: r.principalKind,
    principal_id: r.principalId,
    user_id: r.userId,
    network: r.network,
    method: r.method,
    outcome: r.outcome,
    code: r.code,
    count: r.count,
    latency_sum_ms: r.latencySumMs,
    cache_hits: r.cacheHits ?? 0,
    units: r.units ?? 0,
  };
  for (let i = 0; i < HISTOGRAM_BUCKETS; i++) v[BUCKET_COLUMNS[i]] = r.buckets[i];
  return v;
}

// ---- reads --------------------------------------------------------------------------------------------------------

/** Whose usage: always a user; optionally one of their apps or network keys (neither = all of the user's usage). */
export interface UsageFilter {
  userId: string;
  appId?: string;
  keyId?: string;
  network?: string;
}

export interface UsageSeriesQuery extends UsageFilter {
  /** Epoch ms; aligned down to the granularity. */
  from: number;
  /** Epoch ms, exclusive. */
  to: number;
  granularity: Granularity;
  /** Emit empty buckets too (default true), so charts get a dense axis. */
  fill?: boolean;
  /** Refuse ranges with more buckets than this (default 10 000). */
  maxPoints?: number;
}

export interface LatencyStats {
  /** Exact (latency sum / count). */
  mean: number;
  /** From the summed histogram; see src/gateway/usage/histogram.ts for the error bound (≤ 9.05 % relative). */
  p50: number;
  p95: number;
  p99: number;
}

export interface UsagePoint {
  /** Bucket start, epoch ms (UTC minute / hour / day). */
  start: number;
  total: number;
  /** Calls with outcome `ok`. */
  success: number;
  /** Calls answered from the response cache (a part of `success`). */
  cacheHits: number;
  /** Compute units of all the calls (x-gateway.units). */
  units: number;
  /** success / total; null when total = 0. */
  successRate: number | null;
  byOutcome: Record<Outcome, number>;
  /** Non-ok calls by JSON-RPC code (as a string key, e.g. "-32005"). */
  errorsByCode: Record<string, number>;
  /** Calls per method (methods outside the contract are counted as "other"). */
  methods: Record<string, number>;
  /** Over every metered call of the bucket; null when total = 0. */
  latencyMs: LatencyStats | null;
}

export interface UsageSeries {
  granularity: Granularity;
  from: number;
  to: number;
  points: UsagePoint[];
  /** The whole range as one bucket (start = from). */
  summary: UsagePoint;
}

class Acc {
  total = 0;
  cacheHits = 0;
  units = 0;
  readonly byOutcome = new Array<number>(OUTCOMES.length).fill(0);
  readonly errors = new Map<number, number>();
  readonly methods = new Map<string, number>();
  latencySum = 0;
  readonly buckets = new Float64Array(HISTOGRAM_BUCKETS);

  add(
    method: string,
    outcome: Outcome,
    code: number,
    count: number,
    cacheHits: number,
    latencySum: number,
    buckets: ArrayLike<number>,
    units = 0,
  ): void {
    this.total += count;
    this.cacheHits += cacheHits;
    this.units += units;
    this.byOutcome[OUTCOME_INDEX[outcome] ?? OUTCOME_INDEX.node_error] += count;
    if (outcome !== 'ok') this.errors.set(code, (this.errors.get(code) ?? 0) + count);
    this.methods.set(method, (this.methods.get(method) ?? 0) + count);
    this.latencySum += latencySum;
    for (let i = 0; i < HISTOGRAM_BUCKETS; i++) this.buckets[i] += buckets[i];
  }

  merge(o: Acc): void {
    this.total += o.total;
    this.cacheHits += o.cacheHits;
    this.units += o.units;
    for (let i = 0; i < OUTCOMES.length; i++) this.byOutcome[i] += o.byOutcome[i];
    for (const [c, n] of o.errors) this.errors.set(c, (this.errors.get(c) ?? 0) + n);
    for (const [m, n] of o.methods) this.methods.set(m, (this.methods.get(m) ?? 0) + n);
    this.latencySum += o.latencySum;
    for (let i = 0; i < HISTOGRAM_BUCKETS; i++) this.buckets[i] += o.buckets[i];
  }

  point(start: number): UsagePoint {
    const success = this.byOutcome[OUTCOME_INDEX.ok];
    const byOutcome = Object.fromEntries(OUTCOMES.map((o, i) => [o, this.byOutcome[i]])) as Record<Outcome, number>;
    return {
      start,
      total: this.total,
      success,
      cacheHits: this.cacheHits,
      units: this.units,
      successRate: this.total > 0 ? success / this.total : null,
      byOutcome,
      errorsByCode: Object.fromEntries([...this.errors].sort((a, b) => b[1] - a[1]).map(([c, n]) => [String(c), n])),
      methods: Object.fromEntries([...this.methods].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))),
      latencyMs:
        this.total > 0
          ? {
              mean: this.latencySum / this.total,
              p50: percentileMs(this.buckets, 0.5)!,
              p95: percentileMs(this.buckets, 0.95)!,
              p99: percentileMs(this.buckets, 0.99)!,
            }
          : null,
    };
  }
}

function ownerWhere(f: UsageFilter, from: number, to: number): RawBuilder<unknown> {
  if (f.appId !== undefined && f.keyId !== undefined)
    throw new TypeError('usage filter: give appId or keyId, not both');
  const parts: RawBuilder<unknown>[] = [sql`user_id = ${f.userId}`];
  if (f.appId !== undefined) parts.push(sql`principal_kind = 'app' and principal_id = ${f.appId}`);
  if (f.keyId !== undefined) parts.push(sql`principal_kind = 'key' and principal_id = ${f.keyId}`);
  if (f.network !== undefined) parts.push(sql`network = ${f.network}`);
  parts.push(sql`ts >= ${from} and ts < ${to}`);
  return sql.join(parts, sql` and `);
}

/** The three resolutions as one relation (a single statement: one snapshot, even while `downsample` moves rows). */
function allResolutions(columns: string, where: RawBuilder<unknown>): RawBuilder<unknown> {
  const cols = sql.raw(columns);
  return sql.join(
    Object.values(USAGE_TABLES).map((t) => sql`select ${cols} from ${sql.table(t)} where ${where}`),
    sql` union all `,
  );
}

/**
 * Usage of a user (or one of their apps / keys) per time bucket. Rows count in the bucket their own start falls in:
 * asking for a granularity finer than what retention kept (e.g. minutes of last month) shows each hour/day row at
 * its start.
 */
export async function usageSeries(db: Kysely<Database>, query: UsageSeriesQuery): Promise<UsageSeries> {
  const G = GRANULARITY_MS[query.granularity];
  if (G === undefined) throw new TypeError(`unknown granularity ${String(query.granularity)}`);
  const from = Math.floor(query.from / G) * G;
  const to = query.to;
  const fill = query.fill ?? true;
  const maxPoints = query.maxPoints ?? 10_000;
  if (!(to > from)) throw new RangeError('usage range: `to` must be after `from`');
  if (fill && Math.ceil((to - from) / G) > maxPoints)
    throw new RangeError(`usage range: more than ${maxPoints} buckets`);

  const bucket = sql.raw(`(ts - (ts % ${G}))`);
  const { rows } = await sql<Record<string, unknown>>`
    select ${bucket} as bucket, method, outcome, code, ${SUM_SELECT}
    from (${allResolutions(['ts', 'method', 'outcome', 'code', ...SUM_COLUMNS].map(q).join(', '), ownerWhere(query, from, to))}) u
    group by ${bucket}, method, outcome, code`.execute(db);

  const byBucket = new Map<number, Acc>();
  const hist = new Float64Array(HISTOGRAM_BUCKETS);
  for (const r of rows) {
    const start = Number(r.bucket);
    let acc = byBucket.get(start);
    if (acc === undefined) byBucket.set(start, (acc = new Acc()));
    for (let i = 0; i < HISTOGRAM_BUCKETS; i++) hist[i] = Number(r[BUCKET_COLUMNS[i]]);
    acc.add(
      String(r.method),
      r.outcome as Outcome,
      Number(r.code),
      Number(r.count),
      Number(r.cache_hits),
      Number(r.latency_sum_ms),
      hist,
      Number(r.units),
    );
  }

  const summary = new Acc();
  const points: UsagePoint[] = [];
  if (fill) {
    for (let t = from; t < to; t += G) {
      const acc = byBucket.get(t) ?? new Acc();
      summary.merge(acc);
      points.push(acc.point(t));
    }
  } else {
    for (const t of [...byBucket.keys()].sort((a, b) => a - b)) {
      const acc = byBucket.get(t)!;
      summary.merge(acc);
      points.push(acc.point(t));
    }
  }
  return { granularity: query.granularity, from, to, points, summary: summary.point(from) };
}

export interface UsageCounts {
  /** Start of the UTC day counted. */
  day: number;
  total: number;
  success: number;
  byOutcome: Record<Outcome, number>;
}

/**
 * Today's (UTC) flushed counts of one app or network key of the user — quick, no histograms. Lags live traffic by
 * the meter's flush interval (the current minute is written as a partial row every few seconds).
 */
export async function usageToday(
  db: Kysely<Database>,
  userId: string,
  target: { appId: string } | { keyId: string },
  now: number = Date.now(),
): Promise<UsageCounts> {
  const day = Math.floor(now / DAY) * DAY;
  const f: UsageFilter = 'appId' in target ? { userId, appId: target.appId } : { userId, keyId: target.keyId };
  const { rows } = await sql<{ outcome: string; n: unknown }>`
    select outcome, sum("count") as n from (${allResolutions('outcome, "count"', ownerWhere(f, day, day + DAY))}) u
    group by outcome`.execute(db);
  const byOutcome = Object.fromEntries(OUTCOMES.map((o) => [o, 0])) as Record<Outcome, number>;
  let total = 0;
  for (const r of rows) {
    const n = Number(r.n);
    total += n;
    if (r.outcome in byOutcome) byOutcome[r.outcome as Outcome] += n;
  }
  return { day, total, success: byOutcome.ok, byOutcome };
}

// ---- retention ----------------------------------------------------------------------------------------------------

export interface DownsampleOptions {
  now?: number;
  minuteRetentionMs?: number;
  hourRetentionMs?: number;
  /** undefined = keep day rows forever. */
  dayRetentionMs?: number;
}

export interface DownsampleResult {
  /** Minute rows before this (a whole hour) were rolled up. */
  minuteCutoff: number;
  /** Hour rows before this (a whole UTC day) were rolled up. */
  hourCutoff: number;
  minuteRowsRolledUp: number;
  hourRowsRolledUp: number;
  dayRowsDeleted: number;
}

const INSERT_COLUMNS = sql.raw(ALL_COLUMNS.map(q).join(', '));

function rollUpSelect(G: number, source: RawBuilder<unknown>): RawBuilder<unknown> {
  // Grouped by the destination's key only (user_id follows the principal), so one INSERT never hits a key twice.
  const bucket = sql.raw(`(ts - (ts % ${G}))`);
  const keyRest = sql.raw(KEY_COLUMNS.slice(1).map(q).join(', '));
  return sql`select ${bucket}, ${keyRest}, max(user_id), ${SUM_SELECT} from ${source} group by ${bucket}, ${keyRest}`;
}

function onConflictAdd(dest: string): RawBuilder<unknown> {
  const set = SUM_COLUMNS.map((c) => `${q(c)} = ${q(dest)}.${q(c)} + excluded.${q(c)}`).join(', ');
  return sql.raw(`on conflict (${KEY_COLUMNS.map(q).join(', ')}) do update set ${set}`);
}

async function rollUp(
  db: Kysely<Database>,
  pg: boolean,
  src: string,
  dest: string,
  G: number,
  cutoff: number,
): Promise<number> {
  if (pg) {
    // One statement: exactly the rows this statement deleted are added to dest, even with concurrent flushes
    // committing new minute rows (READ COMMITTED would let a separate DELETE see rows the INSERT … SELECT did not).
    const { rows } = await sql<{ moved: unknown }>`
      with moved as (delete from ${sql.table(src)} where ts < ${cutoff} returning *),
      ins as (insert into ${sql.table(dest)} (${INSERT_COLUMNS}) ${rollUpSelect(G, sql`moved`)} ${onConflictAdd(dest)} returning 1)
      select (select count(*) from moved) as moved, (select count(*) from ins) as upserted`.execute(db);
    return Number(rows[0]?.moved ?? 0);
  }
  // SQLite: the transaction is BEGIN IMMEDIATE (the write lock is held from the start), so nothing slips in between.
  // (The SELECT of an INSERT … ON CONFLICT needs its WHERE clause in SQLite, else `ON` parses as a join constraint.)
  const source = sql`${sql.table(src)} where ts < ${cutoff}`;
  await sql`insert into ${sql.table(dest)} (${INSERT_COLUMNS}) ${rollUpSelect(G, source)} ${onConflictAdd(dest)}`.execute(
    db,
  );
  const del = await sql`delete from ${sql.table(src)} where ts < ${cutoff}`.execute(db);
  return Number(del.numAffectedRows ?? 0n);
}

/**
 * Retention: minute rows older than `minuteRetentionMs` become hour rows, hour rows older than `hourRetentionMs`
 * become day rows (summed counts, latency sums and histograms: totals and percentiles are preserved at the coarser
 * resolution), day rows older than `dayRetentionMs` are deleted. One transaction.
 */
export async function downsample(db: Kysely<Database>, opts: DownsampleOptions = {}): Promise<DownsampleResult> {
  const now = opts.now ?? Date.now();
  const minuteRetentionMs = opts.minuteRetentionMs ?? DEFAULT_RETENTION.minuteRetentionMs;
  const hourRetentionMs = opts.hourRetentionMs ?? DEFAULT_RETENTION.hourRetentionMs;
  const dayRetentionMs = opts.dayRetentionMs ?? DEFAULT_RETENTION.dayRetentionMs;
  if (!(minuteRetentionMs >= 0 && hourRetentionMs >= 0) || (dayRetentionMs !== undefined && !(dayRetentionMs >= 0)))
    throw new RangeError('retention must be ≥ 0');
  const minuteCutoff = Math.floor((now - minuteRetentionMs) / HOUR) * HOUR;
  const hourCutoff = Math.floor((now - hourRetentionMs) / DAY) * DAY;
  const dayCutoff = dayRetentionMs === undefined ? undefined : Math.floor((now - dayRetentionMs) / DAY) * DAY;
  const pg = isPostgres(db);
  return db.transaction().execute(async (trx) => {
    const minuteRowsRolledUp = await rollUp(trx, pg, USAGE_TABLES.minute, USAGE_TABLES.hour, HOUR, minuteCutoff);
    const hourRowsRolledUp = await rollUp(trx, pg, USAGE_TABLES.hour, USAGE_TABLES.day, DAY, hourCutoff);
    let dayRowsDeleted = 0;
    if (dayCutoff !== undefined) {
      const del = await sql`delete from ${sql.table(USAGE_TABLES.day)} where ts < ${dayCutoff}`.execute(trx);
      dayRowsDeleted = Number(del.numAffectedRows ?? 0n);
    }
    await sql`delete from usage_flush_marks where at < ${now - FLUSH_MARK_RETENTION_MS}`.execute(trx);
    return { minuteCutoff, hourCutoff, minuteRowsRolledUp, hourRowsRolledUp, dayRowsDeleted };
  });
}

// ---- operators' totals (admin_listAccounts, admin_usage) --------------------------------------------------------

/** Each user's metered calls (every outcome) in the UTC day and the UTC month of `now`. */
export async function usageTotalsByUser(
  db: Kysely<Database>,
  userIds: readonly string[],
  now: number = Date.now(),
): Promise<Map<string, { today: number; month: number }>> {
  const out = new Map(userIds.map((id) => [id, { today: 0, month: 0 }]));
  if (userIds.length === 0) return out;
  const day = Math.floor(now / DAY) * DAY;
  const d = new Date(now);
  const month = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1);
  const where = sql`user_id in (${sql.join(userIds)}) and ts >= ${month}`;
  const { rows } = await sql<{ user_id: string; today: unknown; month: unknown }>`
    select user_id, sum(case when ts >= ${day} then "count" else 0 end) as today, sum("count") as month
    from (${allResolutions('user_id, ts, "count"', where)}) u group by user_id`.execute(db);
  for (const r of rows) out.set(r.user_id, { today: Number(r.today), month: Number(r.month) });
  return out;
}

export interface UsageDayTotals {
  /** Start of the UTC day. */
  day: number;
  requests: number;
  success: number;
  units: number;
  /** Distinct owners with calls that day (a deleted account's anonymised rows count as one). */
  accounts: number;
}

/** Metered calls per UTC day over [from, to) (whole days), of every account or of `userId`'s; every day of the range,
 *  oldest first. */
export async function usageByDay(
  db: Kysely<Database>,
  q: { from: number; to: number; userId?: string },
): Promise<UsageDayTotals[]> {
  const from = Math.floor(q.from / DAY) * DAY;
  const where =
    q.userId === undefined
      ? sql`ts >= ${from} and ts < ${q.to}`
      : sql`user_id = ${q.userId} and ts >= ${from} and ts < ${q.to}`;
  const bucket = sql.raw(`(ts - (ts % ${DAY}))`);
  const { rows } = await sql<{ day: unknown; requests: unknown; success: unknown; units: unknown; accounts: unknown }>`
    select ${bucket} as day, sum("count") as requests,
      sum(case when outcome = 'ok' then "count" else 0 end) as success, sum(units) as units,
      count(distinct user_id) as accounts
    from (${allResolutions('user_id, ts, outcome, "count", units', where)}) u group by ${bucket}`.execute(db);
  const byDay = new Map(rows.map((r) => [Number(r.day), r]));
  const out: UsageDayTotals[] = [];
  for (let t = from; t < q.to; t += DAY) {
    const r = byDay.get(t);
    out.push({
      day: t,
      requests: Number(r?.requests ?? 0),
      success: Number(r?.success ?? 0),
      units: Number(r?.units ?? 0),
      accounts: Number(r?.accounts ?? 0),
    });
  }
  return out;
}
