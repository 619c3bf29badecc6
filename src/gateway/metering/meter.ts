// The meter: every node API call's outcome, counted in memory per UTC minute and flushed to the store in batches, so
// no request waits on the store.
//
// Per call (`record`): no I/O, a handful of Map lookups and array increments; allocation only for the first call of
// a (minute, principal, network, method, outcome, code) cell. Aggregates per cell: count, cache hits (those of its
// calls answered from the response cache), latency sum, and the fixed log-spaced latency histogram of
// src/gateway/usage/histogram.ts (percentiles after aggregation/downsampling within ≤ 9.05 %).
//
// Flushing (the loop of ./flush-loop.ts, shared with the request log): every `flushIntervalMs` (unref'd timer)
// everything recorded so far is written — completed minutes and the current one as a partial row — with upsertUsage:
// multi-row INSERT … ON CONFLICT DO UPDATE SET col = col + excluded.col in one transaction, so partial flushes of a
// minute, and flushes of several replicas, add up. Each flush detaches
// what it writes (a cell is in exactly one batch) and carries (writer, seq): the transaction records it, so a retry of
// a batch whose COMMIT succeeded unseen is skipped — nothing counted twice. A SIGKILL loses at most the calls recorded
// since the last committed flush: ≤ flushIntervalMs plus one flush's duration. If the store fails, the batch is kept
// and retried (same seq) before anything newer; calls meanwhile aggregate in memory, bounded by `maxCells` (cells
// beyond it are dropped, counted in `stats().dropped`, in rpcgate_usage_dropped_total, and logged). `stop()` flushes
// what is left.
//
// Attribution: only apps (access point A) and network keys (B) have a user to attribute usage to. Calls without such a
// principal — static/dev keys, refusals before authentication — are counted in Prometheus only, never in the store
// (a usage row always has an owner; the ownership filter of the account API needs one).
import { DEFAULT_UNITS } from '../method-meaning.js';
import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Principal } from '../access/keys.js';
import { upsertUsage, type UsageRow } from '../store/usage.js';
import type { Database } from '../store/schema.js';
import { HISTOGRAM_BUCKETS, bucketIndex } from '../usage/histogram.js';
import { DropLog, FlushLoop } from './flush-loop.js';
import type { Metrics } from './prometheus.js';
import { OTHER, OUTCOMES, OUTCOME_INDEX, type MeterPrincipal, type Outcome } from '../usage/types.js';

export type { MeterPrincipal, Outcome } from '../usage/types.js';
export { OUTCOMES } from '../usage/types.js';

const MINUTE = 60_000;

export interface MeterEvent {
  /** Whom to attribute the call to; undefined (static/dev keys, unauthenticated refusals) → Prometheus only. */
  principal: MeterPrincipal | undefined;
  network: string;
  /** The JSON-RPC method (methods outside the contract are counted as `other`). */
  method: string;
  outcome: Outcome;
  /** JSON-RPC error code of a non-ok outcome (a 32-bit integer; anything else is stored as 0 = none). */
  code?: number;
  latencyMs: number;
  /** Identical calls counted at once (default 1). */
  count?: number;
  /** Answered from the response cache (src/gateway/cache): also counted in the cell's cacheHits. */
  cacheHit?: boolean;
}

/** What the meter needs of a logger (pino's Logger fits). */
export interface MeterLogger {
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

export interface MeterOptions {
  /** The store's Kysely instance (SQLite or PostgreSQL, migrated). */
  db: Kysely<Database>;
  /** The contract's method names (e.g. `Object.keys(methods)` of generated/node/methods.ts). */
  methods: Iterable<string>;
  /** Compute units per method (method-meaning.ts `unitsTable`); a method not in it weighs DEFAULT_UNITS. */
  units?: ReadonlyMap<string, number>;
  /** The configured networks; others are counted as `other`. Undefined = take the network as given. */
  networks?: Iterable<string>;
  /** Prometheus metrics to update on every call. */
  metrics?: Metrics;
  /** Default 5 000 ms. */
  flushIntervalMs?: number;
  /** Cells (unflushed aggregates) kept in memory at most; default 100 000 (≈ 40 MB). */
  maxCells?: number;
  logger?: MeterLogger;
  /** Clock (epoch ms); tests inject one. */
  now?: () => number;
  /** Called after each committed batch with its rows (quota alerts check the users metered; must not throw). */
  onFlushed?: (rows: readonly UsageRow[]) => void;
}

export interface FlushResult {
  /** Rows upserted. */
  rows: number;
  /** Distinct minutes among them. */
  minutes: number;
}

export interface MeterStats {
  /** Unflushed cells (including rows kept after a failed flush). */
  pendingCells: number;
  /** Calls not stored because the buffer was full. */
  dropped: number;
  flushFailures: number;
}

class Cell {
  count = 0;
  cacheHits = 0;
  units = 0;
  latencySumMs = 0;
  readonly buckets = new Uint32Array(HISTOGRAM_BUCKETS);
  constructor(
    readonly principal: MeterPrincipal,
    readonly network: string,
    readonly method: string,
    readonly outcome: Outcome,
    readonly code: number,
  ) {}
}

type ByCode = Map<number, Cell>;
type ByMethod = Map<string, ByCode>;
type ByNetwork = Map<string, ByMethod>;

class MinuteAgg {
  readonly apps = new Map<string, ByNetwork>();
  readonly keys = new Map<string, ByNetwork>();
  readonly cells: Cell[] = [];
  constructor(readonly minute: number) {}
}

type PendingRow = UsageRow & { buckets: Float64Array };

const principalCache = new WeakMap<Principal, MeterPrincipal>();

/** The store attribution of an access principal (cached per principal object): apps and network keys; else undefined. */
export function meterPrincipal(p: Principal | undefined): MeterPrincipal | undefined {
  if (p === undefined || p.kind === 'static') return undefined;
  let m = principalCache.get(p);
  if (m === undefined) {
    m =
      p.kind === 'app'
        ? { kind: 'app', appId: p.appId, userId: p.userId }
        : { kind: 'key', keyId: p.keyId, userId: p.userId };
    principalCache.set(p, m);
  }
  return m;
}

export class Meter {
  private readonly db: Kysely<Database>;
  private readonly units: ReadonlyMap<string, number>;
  private readonly methods: ReadonlySet<string>;
  private readonly networks: ReadonlySet<string> | undefined;
  private readonly metrics: Metrics | undefined;
  private readonly flushIntervalMs: number;
  private readonly maxCells: number;
  private readonly logger: MeterLogger | undefined;
  private readonly now: () => number;
  private readonly onFlushed: ((rows: readonly UsageRow[]) => void) | undefined;

  private readonly minutes = new Map<number, MinuteAgg>();
  private cur: MinuteAgg | undefined;
  /** A batch whose write failed: retried, with its seq, before anything newer. */
  private pending: { rows: PendingRow[]; seq: number } | undefined;
  /** This meter's identity in usage_flush_marks (a process run) and its last batch number. */
  private readonly writer = randomUUID();
  private seq = 0;
  private cellCount = 0;
  private dropped = 0;
  private readonly drops: DropLog;
  private flushFailures = 0;
  private readonly loop: FlushLoop<FlushResult>;

  constructor(opts: MeterOptions) {
    this.db = opts.db;
    this.methods = new Set(opts.methods);
    this.units = opts.units ?? new Map();
    this.networks = opts.networks === undefined ? undefined : new Set(opts.networks);
    this.metrics = opts.metrics;
    this.flushIntervalMs = opts.flushIntervalMs ?? 5_000;
    this.maxCells = opts.maxCells ?? 100_000;
    this.logger = opts.logger;
    this.now = opts.now ?? Date.now;
    this.onFlushed = opts.onFlushed;
    this.drops = new DropLog(this.logger);
    this.loop = new FlushLoop(() => this.flushOnce(), this.flushIntervalMs);
  }

  /** Starts periodic flushing (the timer does not keep the process alive; failures are logged and retried by the next
   *  tick). */
  start(): this {
    this.loop.start();
    return this;
  }

  /** Meters one call (or `count` identical calls). Never throws for well-typed input, never does I/O. */
  record(e: MeterEvent): void {
    const n = e.count ?? 1;
    const oi = OUTCOME_INDEX[e.outcome];
    if (!(n > 0) || oi === undefined) return;
    const method = this.methods.has(e.method) ? e.method : OTHER;
    const network = this.networks === undefined || this.networks.has(e.network) ? e.network : OTHER;
    const latency = Math.max(e.latencyMs, 0);
    const k = bucketIndex(latency);

    const units = (this.units.get(e.method) ?? DEFAULT_UNITS) * n;
    const metrics = this.metrics;
    if (metrics !== undefined) metrics.observeRequest(metrics.requestSeries(network, method), oi, k, latency, n, units);

    const p = e.principal;
    if (p === undefined) return;
    const now = this.now();
    let agg = this.cur;
    if (agg === undefined || now >= agg.minute + MINUTE) agg = this.roll(now);

    const byPrincipal = p.kind === 'app' ? agg.apps : agg.keys;
    const pid = p.kind === 'app' ? p.appId : p.keyId;
    let byNetwork = byPrincipal.get(pid);
    if (byNetwork === undefined) byPrincipal.set(pid, (byNetwork = new Map()));
    let byMethod = byNetwork.get(network);
    if (byMethod === undefined) byNetwork.set(network, (byMethod = new Map()));
    let byCode = byMethod.get(method);
    if (byCode === undefined) byMethod.set(method, (byCode = new Map()));
    const c = e.code;
    const code = c !== undefined && (c | 0) === c ? c : 0;
    const key = code * 8 + oi; // unique per (code, outcome) for 32-bit codes, and a number: no string built
    let cell = byCode.get(key);
    if (cell === undefined) {
      if (this.cellCount >= this.maxCells) {
        this.dropped += n;
        metrics?.usageDroppedInc(n);
        return;
      }
      cell = new Cell(p, network, method, OUTCOMES[oi], code);
      byCode.set(key, cell);
      agg.cells.push(cell);
      this.cellCount++;
    }
    cell.count += n;
    if (e.cacheHit === true) cell.cacheHits += n;
    cell.units += units;
    cell.latencySumMs += latency * n;
    cell.buckets[k] += n;
  }

  private roll(now: number): MinuteAgg {
    // A clock stepping back keeps counting into the current minute (never into one that may be flushed already).
    const cur = this.cur;
    if (cur !== undefined && now < cur.minute) return cur;
    const minute = now - (now % MINUTE);
    let agg = this.minutes.get(minute);
    if (agg === undefined) this.minutes.set(minute, (agg = new MinuteAgg(minute)));
    this.cur = agg;
    return agg;
  }

  /**
   * Writes everything recorded so far (the current minute as a partial row) and a batch kept from a failed flush.
   * Rejects if the store fails (the rows are kept).
   */
  flush(): Promise<FlushResult> {
    return this.loop.flush();
  }

  /**
   * Graceful stop: stops the timer and flushes everything (calls finishing meanwhile are flushed by a further
   * round). Rejects if the store fails; the rows then stay in memory.
   */
  async stop(): Promise<FlushResult> {
    this.loop.stopTimer();
    const total: FlushResult = { rows: 0, minutes: 0 };
    for (let round = 0; round < 3; round++) {
      const r = await this.loop.flush();
      total.rows += r.rows;
      total.minutes += r.minutes;
      if (this.cellCount === 0) break;
    }
    return total;
  }

  stats(): MeterStats {
    return { pendingCells: this.cellCount, dropped: this.dropped, flushFailures: this.flushFailures };
  }

  // One batch (the loop runs it one at a time, in call order).
  private async flushOnce(): Promise<FlushResult> {
    const done: FlushResult = { rows: 0, minutes: 0 };
    const kept = this.pending;
    if (kept !== undefined) {
      await this.write(kept.rows, kept.seq); // throws: keep it, write nothing newer
      this.pending = undefined;
      add(done, kept.rows);
    }
    // Detach what is written now; calls recorded meanwhile go to fresh aggregates.
    const merged = new Map<string, PendingRow>();
    let taken = 0;
    for (const [minute, agg] of this.minutes) {
      this.minutes.delete(minute);
      if (agg === this.cur) this.cur = undefined;
      taken += agg.cells.length;
      for (const c of agg.cells) mergeRow(merged, cellRow(minute, c));
    }
    this.cellCount -= taken;
    this.logDrops();
    if (merged.size === 0) return done;
    const rows = [...merged.values()];
    const seq = ++this.seq;
    this.cellCount += rows.length;
    this.pending = { rows, seq };
    await this.write(rows, seq);
    this.pending = undefined;
    add(done, rows);
    return done;
  }

  /** One batch in one transaction; on failure it stays pending (counted in cellCount) and the error is logged. */
  private async write(rows: PendingRow[], seq: number): Promise<void> {
    try {
      await upsertUsage(this.db, rows, { batch: { writer: this.writer, seq, at: this.now() } });
    } catch (err) {
      this.flushFailures++;
      this.metrics?.usageFlushFailed();
      this.logger?.error({ err, rows: rows.length }, 'usage flush failed; rows kept for the next flush');
      throw err;
    }
    this.cellCount -= rows.length;
    this.onFlushed?.(rows);
  }

  private logDrops(): void {
    this.drops.report(
      this.dropped,
      'usage buffer full: metered calls dropped from the store (Prometheus still counts them)',
      { maxCells: this.maxCells },
    );
  }
}

function add(r: FlushResult, rows: readonly PendingRow[]): void {
  r.rows += rows.length;
  r.minutes += new Set(rows.map((x) => x.ts)).size;
}

function cellRow(minute: number, c: Cell): PendingRow {
  const p = c.principal;
  return {
    ts: minute,
    principalKind: p.kind,
    principalId: p.kind === 'app' ? p.appId : p.keyId,
    userId: p.userId,
    network: c.network,
    method: c.method,
    outcome: c.outcome,
    code: c.code,
    count: c.count,
    cacheHits: c.cacheHits,
    units: c.units,
    latencySumMs: c.latencySumMs,
    buckets: Float64Array.from(c.buckets),
  };
}

/** Rows of one statement must not repeat a key (PostgreSQL refuses to update a row twice): add duplicates up. */
function mergeRow(into: Map<string, PendingRow>, r: PendingRow): void {
  const key = `${r.ts}\u0000${r.principalKind}\u0000${r.principalId}\u0000${r.network}\u0000${r.method}\u0000${r.outcome}\u0000${r.code}`;
  const have = into.get(key);
  if (have === undefined) {
    into.set(key, r);
    return;
  }
  have.count += r.count;
  have.cacheHits = (have.cacheHits ?? 0) + (r.cacheHits ?? 0);
  have.units = (have.units ?? 0) + (r.units ?? 0);
  have.latencySumMs += r.latencySumMs;
  for (let i = 0; i < HISTOGRAM_BUCKETS; i++) have.buckets[i] += r.buckets[i];
}
