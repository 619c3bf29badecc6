// Batching: calls arriving together are sent to the node as ONE JSON-RPC batch, and identical concurrent calls of
// idempotent methods (same method + params) share one upstream call. A call is batched only with calls of its own
// cost class (x-gateway.cost: `light` lookups vs `heavy` eth_getLogs/eth_call…), each class with its own batch size,
// linger and deadline, so a slow heavy call never delays a light one; only calls that may be resent share a batch
// (a batch may be split and resent: eth_sendRawTransaction always travels alone). This file holds the calls, the
// class queues, the request body, the learned batch size per upstream (a node that refuses a batch as too large gets
// smaller ones, and larger ones again now and then: batchRecovery) and the mapping of the node's answer back to the
// calls by id. What happens to a call once sent (deadline, hedge, split, retry) is the pool's.
import type { Context } from '@opentelemetry/api';
import { RawResult } from '@rpcgate/toolkit/engine';
import { ErrorCode, type RpcError } from '@rpcgate/toolkit/errors';
import type { UpstreamConfig } from '../config/config.js';
import type { CostClass } from '../method-meaning.js';
import type { Need } from './capabilities.js';
import { nodeError, upstreamBadResponse } from './errors.js';
import { splitResponse } from './split.js';

export interface ClassState {
  readonly name: CostClass;
  readonly maxBatch: number;
  readonly lingerMs: number;
  readonly timeoutMs: number;
  readonly splitAfterMs: number;
  queue: Call[];
  scheduled: boolean;
  flush: () => void;
}

/** The part of an upstream request a call keeps track of. */
export interface LiveAttempt {
  pending: number;
}

export interface Call {
  method: string;
  /** `"method"` already quoted for the body. */
  m: string;
  /** params already serialised (`[...]`). */
  p: string;
  resolve: (v: unknown) => void;
  reject: (e: unknown) => void;
  /** dedupe key while in flight (idempotent methods only). */
  key: string | undefined;
  idempotent: boolean;
  retryable: boolean;
  cls: ClassState;
  /** performance.now() after which the call fails with a timeout. */
  deadline: number;
  /** Upstream requests that carried this call. */
  attempts: number;
  /** Upstreams that were sent this call. */
  tried: unknown[];
  /** Attempts in flight that carry it. */
  live: LiveAttempt[];
  done: boolean;
  /** The last failure, answered when nothing else is left to try. */
  lastErr: RpcError | undefined;
  /** The caller's trace context while tracing is on (src/gateway/telemetry): parent of the upstream spans. */
  trace: Context | undefined;
  /** What it needs of an upstream (a fleet's routing: ./capabilities.ts); undefined: anything goes. */
  need?: Need;
}

const quoted = new Map<string, string>();
/** A method name as a JSON string, memoised (methods come from a contract: a bounded set). */
export function quote(method: string): string {
  let q = quoted.get(method);
  if (q === undefined) {
    q = JSON.stringify(method);
    if (quoted.size < 1000) quoted.set(method, q);
  }
  return q;
}

/** The cost classes of a pool: per class its batch size, linger, deadline and queue; `dispatch` sends a flushed queue. */
export function costClasses(cfg: UpstreamConfig, dispatch: (calls: Call[]) => void): Record<CostClass, ClassState> {
  const cls = (name: CostClass): ClassState => {
    const c = cfg.classes[name];
    const s: ClassState = {
      name,
      maxBatch: Math.max(1, Math.min(c.maxBatch, cfg.maxBatch)),
      lingerMs: c.lingerMs,
      timeoutMs: c.timeoutMs > 0 ? c.timeoutMs : cfg.requestTimeoutMs,
      splitAfterMs: c.splitAfterMs,
      queue: [],
      scheduled: false,
      flush: () => {
        s.scheduled = false;
        const q = s.queue;
        if (q.length === 0) return;
        s.queue = [];
        dispatch(q);
      },
    };
    return s;
  };
  return { light: cls('light'), heavy: cls('heavy') };
}

/** Queues a call that may share a batch: flushed when the class's batch is full, else after its linger (or at once
 *  on the next turn of the event loop). */
export function enqueue(c: Call): void {
  const cls = c.cls;
  cls.queue.push(c);
  if (cls.queue.length >= cls.maxBatch) cls.flush();
  else if (!cls.scheduled) {
    cls.scheduled = true;
    if (cls.lingerMs > 0) setTimeout(cls.flush, cls.lingerMs);
    else setImmediate(cls.flush);
  }
}

/** The request body by concatenation of already-serialised parts (ids are the call's index in the batch). */
export function buildBody(calls: readonly Call[]): string {
  if (calls.length === 1) {
    const c = calls[0];
    return `{"jsonrpc":"2.0","id":0,"method":${c.m},"params":${c.p}}`;
  }
  let s = '[';
  for (let i = 0; i < calls.length; i++) {
    const c = calls[i];
    s += `${i === 0 ? '{"jsonrpc":"2.0","id":' : ',{"jsonrpc":"2.0","id":'}${i},"method":${c.m},"params":${c.p}}`;
  }
  return `${s}]`;
}

// ---- learned batch size ----------------------------------------------------------------------------------------
// A node that refuses a batch as too large gets half that size from then on; after batchRecovery.afterBatches full
// batches answered at the current size and batchRecovery.intervalMs since it last changed, it is doubled again
// (multiplicative both ways: the size finds the node's limit in a few steps, and a node whose limit was raised gets
// its full batches back). A refusal of the doubled size returns to the size that was answered and resends that
// batch in batches of it, so a node that keeps refusing costs one extra request per interval, never a storm of
// single calls.

export class BatchSize {
  /** Largest batch sent to this node: halved when it refuses one, doubled again by batchRecovery. */
  cap = Number.POSITIVE_INFINITY;
  /** A size the node answered `afterBatches` times before cap was doubled (0: none known): a larger batch it refuses
   *  goes back to it and is resent in batches of it. */
  private good = 0;
  /** Full batches (of cap) answered since cap last changed, and when it changed (performance.now()). */
  private ok = 0;
  private at = 0;

  constructor(
    private readonly cfg: UpstreamConfig['batchRecovery'],
    /** Largest batch any class sends: a cap doubled to it or past it is no cap any more. */
    private readonly maxBatch: number,
  ) {}

  /** A batch of `n` calls was answered as a batch. */
  answered(n: number): void {
    if (n < this.cap) return; // only full batches say the node takes this size (Infinity: nothing to grow)
    const r = this.cfg;
    if (r.afterBatches === 0 || ++this.ok < r.afterBatches) return;
    const now = performance.now();
    if (now - this.at < r.intervalMs) return;
    this.good = this.cap;
    this.cap = this.cap * 2 >= this.maxBatch ? Number.POSITIVE_INFINITY : this.cap * 2;
    this.ok = 0;
    this.at = now;
  }

  /** A batch of `n` calls was refused as a whole: the size to resend it in (a size known to work), or 0 when nothing
   *  larger than one is known to work (cap halved; the calls go one by one). */
  refused(n: number): number {
    this.ok = 0;
    this.at = performance.now();
    const good = this.good;
    if (good > 1 && n > good) {
      this.cap = Math.min(this.cap, good);
      return good;
    }
    this.good = 0;
    this.cap = Math.min(this.cap, Math.max(1, Math.floor(n / 2)));
    return 0;
  }
}

// ---- the node's answer back to the calls ----------------------------------------------------------------------------

/** What the pool does with each call's part of an answer. */
export interface AnswerHandlers {
  result(c: Call, value: unknown): void;
  /** The node's own error for this call. */
  nodeError(c: Call, err: RpcError): void;
  /** An answer that cannot be mapped to this call (fail it). */
  bad(c: Call, err: RpcError): void;
  /** The whole answer is unusable (invalid JSON, a non-batch for a batch): the call may be resent. */
  retry(c: Call, err: RpcError): void;
  /** The node answered (the breaker's success) / did not (its failure). */
  success(): void;
  failure(reason: string): void;
  /** A batch of n calls was answered as a batch. */
  batchAnswered(n: number): void;
  /** A batch was refused as a whole with one error object. */
  batchRefused(): void;
}

/** Maps the node's answer text to the calls: raw (results as the node's bytes) when `raw` and the text splits
 *  cleanly, else parsed; by id for batches (nodes may reorder), whole-batch errors to all. */
export function deliver(calls: readonly Call[], text: string, raw: boolean, network: string, h: AnswerHandlers): void {
  if (raw && deliverRaw(calls, text, network, h)) {
    h.success();
    if (calls.length > 1) h.batchAnswered(calls.length);
  } else deliverParsed(calls, text, network, h);
}

function deliverParsed(calls: readonly Call[], text: string, network: string, h: AnswerHandlers): void {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    h.failure('invalid JSON');
    const err = upstreamBadResponse(network, 'upstream answered with invalid JSON');
    for (const c of calls) h.retry(c, err);
    return;
  }
  h.success();
  if (calls.length === 1 && !Array.isArray(parsed)) {
    settleFrom(calls[0], parsed, network, h);
    return;
  }
  if (Array.isArray(parsed)) {
    if (calls.length > 1) h.batchAnswered(calls.length);
    const done = new Uint8Array(calls.length);
    for (let i = 0; i < parsed.length; i++) {
      const item = parsed[i] as { id?: unknown } | null;
      const id = item !== null && typeof item === 'object' ? item.id : undefined;
      if (typeof id === 'number' && id >= 0 && id < calls.length && done[id] === 0) {
        done[id] = 1;
        settleFrom(calls[id], item, network, h);
      } else if (calls.length === 1 && parsed.length === 1 && done[0] === 0) {
        done[0] = 1;
        settleFrom(calls[0], item, network, h);
      }
    }
    for (let i = 0; i < calls.length; i++) {
      if (done[i] === 0) h.bad(calls[i], upstreamBadResponse(network, 'upstream returned no response for this call'));
    }
    return;
  }
  // A single object for a batch: the node refused the batch as a whole (batches unsupported or too large): the
  // node is fine, the batch goes again in smaller pieces.
  if (parsed !== null && typeof parsed === 'object' && 'error' in parsed) {
    h.batchRefused();
    return;
  }
  const err = upstreamBadResponse(network, 'upstream answered a batch with a non-batch response');
  for (const c of calls) h.retry(c, err);
}

/** The fast path: split the text and hand results out as the node's bytes. false = parse instead. */
function deliverRaw(calls: readonly Call[], text: string, network: string, h: AnswerHandlers): boolean {
  const items = splitResponse(text);
  if (items === undefined) return false;
  const n = calls.length;
  // The answer must be what was asked: a batch for a batch, ids in range and unique.
  if (n !== 1 && text.trimStart().charCodeAt(0) !== 91 /* [ */) return false;
  const done = new Uint8Array(n);
  for (let i = 0; i < items.length; i++) {
    const id = items[i].id;
    if (id >= n || done[id] === 1) return false;
    done[id] = 1;
  }
  for (let i = 0; i < items.length; i++) {
    const it = items[i];
    const c = calls[it.id];
    if (it.resultStart !== -1) h.result(c, new RawResult(text.slice(it.resultStart, it.resultEnd)));
    else {
      let error: unknown;
      try {
        error = JSON.parse(text.slice(it.errorStart, it.errorEnd));
      } catch {
        error = 'node error';
      }
      h.nodeError(c, toNodeError(error));
    }
  }
  for (let i = 0; i < n; i++) {
    if (done[i] === 0) h.bad(calls[i], upstreamBadResponse(network, 'upstream returned no response for this call'));
  }
  return true;
}

function settleFrom(c: Call, item: unknown, network: string, h: AnswerHandlers): void {
  if (item === null || typeof item !== 'object') {
    h.bad(c, upstreamBadResponse(network, 'upstream returned a malformed response'));
    return;
  }
  const o = item as { result?: unknown; error?: unknown };
  if (o.error !== undefined) h.nodeError(c, toNodeError(o.error));
  else if ('result' in o) h.result(c, o.result);
  else h.bad(c, upstreamBadResponse(network, 'upstream response has neither result nor error'));
}

export function toNodeError(error: unknown): RpcError {
  if (error !== null && typeof error === 'object') {
    const e = error as { code?: unknown; message?: unknown; data?: unknown };
    return nodeError(
      typeof e.code === 'number' ? e.code : ErrorCode.InternalError,
      typeof e.message === 'string' ? e.message : 'node error',
      e.data,
    );
  }
  return nodeError(ErrorCode.InternalError, typeof error === 'string' ? error : 'node error', undefined);
}
