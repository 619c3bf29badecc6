// The request log's writer: one entry per node API call of an app or network key, queued in memory by the call
// observer and written to the store in batches by a timer — so a call never waits on the store.
//
// The timer, one-batch-at-a-time writing and the drop warnings are the meter's too (./flush-loop.ts).
// Per call (`record`): one small object pushed onto an array; nothing is serialised, hashed or redacted there. The
// client IP's HMAC, the captured params/results (apps with capture on), their redaction and size cap all happen at
// flush time, off the request path.
// Bounded: the queue holds at most `maxQueued` entries; beyond that entries are dropped and counted
// (rpcgate_request_log_dropped_total) — a store slower than the traffic costs log entries, never latency. A failed
// batch is dropped too (logged, counted): the log is an observability aid, and retrying would grow memory without bound
// while the store is down. The table stays within `maxRows` (each batch trims the oldest in its transaction) and
// `retentionDays` (pruned every minute in batches).
import { createHmac } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Database } from '../store/schema.js';
import type { MeterPrincipal } from '../usage/types.js';
import { insertRequestLog, pruneRequestLog, type RequestLogRow } from '../store/requestLog.js';
import { DropLog, FlushLoop } from './flush-loop.js';
import type { Metrics } from './prometheus.js';
import { redactString, type RedactOptions } from './redact.js';
import type { MeterLogger } from './meter.js';

const DAY = 86_400_000;
const PRUNE_EVERY_MS = 60_000;

/** What the call observer hands over per call (kept as given; turned into a row at flush time). */
export interface RequestLogEvent {
  /** Set by `record` (the log's clock). A caller that passes a placeholder (0) saves V8 a shape change per call. */
  ts?: number;
  principal: MeterPrincipal;
  network: string;
  method: string;
  httpStatus: number;
  code: number | undefined;
  latencyMs: number;
  cacheHit: boolean;
  upstream: string | undefined;
  requestId: string | undefined;
  ip: string | undefined;
  transport: 'http' | 'ws';
  /** Only for principals with capture on: the call's params and result (or error), serialised at flush. */
  params?: unknown;
  result?: unknown;
}

export interface RequestLogOptions {
  db: Kysely<Database>;
  /** Keys the client-IP hash (the server secret): the same IP hashes alike across replicas, not across deployments. */
  secret: Uint8Array;
  metrics?: Metrics;
  logger?: MeterLogger;
  flushIntervalMs?: number;
  maxQueued?: number;
  maxRows?: number;
  /** Entries older than this are deleted; undefined = never by age. */
  retentionMs?: number;
  /** Cap per captured params / result, bytes of JSON (default 4096). */
  maxBodyBytes?: number;
  redact?: RedactOptions;
  now?: () => number;
}

export interface RequestLogStats {
  queued: number;
  dropped: number;
  written: number;
  flushFailures: number;
  trimmed: number;
  pruned: number;
}

type Queued = RequestLogEvent & { ts: number };

const noop = () => {};

export class RequestLog {
  private readonly db: Kysely<Database>;
  private readonly secret: Uint8Array;
  private readonly metrics: Metrics | undefined;
  private readonly logger: MeterLogger | undefined;
  private readonly flushIntervalMs: number;
  private readonly maxQueued: number;
  private readonly maxRows: number | undefined;
  private readonly retentionMs: number | undefined;
  private readonly maxBodyBytes: number;
  private readonly redact: RedactOptions | undefined;
  private readonly now: () => number;
  private queue: Queued[] = [];
  private readonly loop: FlushLoop<number>;
  private pruneTimer: NodeJS.Timeout | undefined;
  /** IP → hash, bounded: most traffic comes from a few IPs; cleared when full. Used at flush time only. */
  private readonly ipHashes = new Map<string, string>();
  private readonly s: RequestLogStats = { queued: 0, dropped: 0, written: 0, flushFailures: 0, trimmed: 0, pruned: 0 };
  private readonly drops: DropLog;

  constructor(o: RequestLogOptions) {
    this.db = o.db;
    this.secret = o.secret;
    this.metrics = o.metrics;
    this.logger = o.logger;
    this.flushIntervalMs = o.flushIntervalMs ?? 1000;
    this.maxQueued = o.maxQueued ?? 20_000;
    this.maxRows = o.maxRows;
    this.retentionMs = o.retentionMs;
    this.maxBodyBytes = o.maxBodyBytes ?? 4096;
    this.redact = o.redact;
    this.now = o.now ?? Date.now;
    this.drops = new DropLog(this.logger);
    this.loop = new FlushLoop(() => this.flushOnce(), this.flushIntervalMs);
  }

  start(): this {
    this.loop.start();
    if (this.retentionMs !== undefined && this.pruneTimer === undefined) {
      const prune = () => void this.prune().catch(noop);
      prune();
      this.pruneTimer = setInterval(prune, PRUNE_EVERY_MS);
      this.pruneTimer.unref();
    }
    return this;
  }

  /** Queues one entry (O(1), no I/O, never throws for well-typed input); drops it when the queue is full. */
  record(e: RequestLogEvent): void {
    if (this.queue.length >= this.maxQueued) {
      this.s.dropped++;
      this.metrics?.requestLogDroppedInc(1);
      return;
    }
    (e as Queued).ts = this.now();
    this.queue.push(e as Queued);
  }

  /** Writes what is queued now (one batch). Resolves with the entries written; a failed batch is dropped and rejects. */
  flush(): Promise<number> {
    return this.loop.flush();
  }

  /** Deletes entries older than the retention (in batches); returns how many. */
  async prune(): Promise<number> {
    if (this.retentionMs === undefined) return 0;
    try {
      const n = await pruneRequestLog(this.db, this.now() - this.retentionMs);
      this.s.pruned += n;
      return n;
    } catch (err) {
      this.logger?.warn({ err }, 'request log pruning failed; retried in a minute');
      throw err;
    }
  }

  async stop(): Promise<void> {
    this.loop.stopTimer();
    clearInterval(this.pruneTimer);
    this.pruneTimer = undefined;
    await this.flush().catch(noop);
  }

  stats(): RequestLogStats {
    return { ...this.s, queued: this.queue.length };
  }

  private async flushOnce(): Promise<number> {
    this.logDrops();
    const batch = this.queue;
    if (batch.length === 0) return 0;
    this.queue = [];
    const rows = batch.map((e) => this.row(e));
    try {
      this.s.trimmed += await insertRequestLog(this.db, rows, { maxRows: this.maxRows });
    } catch (err) {
      this.s.flushFailures++;
      this.s.dropped += rows.length;
      this.metrics?.requestLogFlushFailed();
      this.metrics?.requestLogDroppedInc(rows.length);
      this.logger?.error({ err, entries: rows.length }, 'request log write failed; entries dropped');
      throw err;
    }
    this.s.written += rows.length;
    this.metrics?.requestLogWrittenInc(rows.length);
    return rows.length;
  }

  private row(e: Queued): RequestLogRow {
    const p = e.principal;
    const r: RequestLogRow = {
      ts: e.ts,
      principalKind: p.kind,
      principalId: p.kind === 'app' ? p.appId : p.keyId,
      userId: p.userId,
      network: e.network,
      // As sent (the usage metrics fold methods outside the contract into `other`; the log shows what the client asked).
      method: e.method.length > 128 ? e.method.slice(0, 128) : e.method,
      httpStatus: e.httpStatus,
      code: e.code,
      latencyMs: Math.round(Math.max(e.latencyMs, 0) * 1000) / 1000,
      cacheHit: e.cacheHit,
      upstream: e.upstream,
      requestId: e.requestId,
      ipHash: e.ip === undefined ? undefined : this.ipHash(e.ip),
      transport: e.transport,
    };
    if (e.params !== undefined) r.params = this.body(e.params);
    if (e.result !== undefined) r.result = this.body(e.result);
    return r;
  }

  private ipHash(ip: string): string {
    let h = this.ipHashes.get(ip);
    if (h === undefined) {
      if (this.ipHashes.size >= 10_000) this.ipHashes.clear();
      h = createHmac('sha256', this.secret).update('request-log-ip\u0000').update(ip).digest('hex').slice(0, 32);
      this.ipHashes.set(ip, h);
    }
    return h;
  }

  /** JSON of a captured value: redacted (keys, JWTs, cookies, credentials in URLs), cut at maxBodyBytes. */
  private body(v: unknown): string | undefined {
    let json: string;
    try {
      json =
        typeof v === 'object' && v !== null && 'json' in v && typeof v.json === 'string' ? v.json : JSON.stringify(v);
    } catch {
      return undefined;
    }
    if (json === undefined) return undefined;
    const cap = this.maxBodyBytes;
    // Cut first (bounded work for a huge result), then redact what is kept.
    let cut = false;
    if (json.length > cap || Buffer.byteLength(json) > cap) {
      json = json.slice(0, cap);
      while (Buffer.byteLength(json) > cap) json = json.slice(0, json.length - (Buffer.byteLength(json) - cap));
      cut = true;
    }
    const red = redactString(json, this.redact);
    return cut ? `${red}…[truncated]` : red;
  }

  private logDrops(): void {
    this.drops.report(this.s.dropped, 'request log: entries dropped (queue full or write failed)', {
      maxQueued: this.maxQueued,
    });
  }
}

/** `requestLog.retentionDays`, or the dialect's default (10 days on PostgreSQL, 2 on SQLite), in ms. */
export function requestLogRetentionMs(retentionDays: number | undefined, postgres: boolean): number {
  return (retentionDays ?? (postgres ? 10 : 2)) * DAY;
}
