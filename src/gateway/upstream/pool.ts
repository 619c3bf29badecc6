// The upstream pool of one network: several node URLs over undici keep-alive pools, and — the reason this is more
// than a pipe — coalescing: calls arriving together are sent to the node as ONE JSON-RPC batch, and identical
// concurrent calls of idempotent methods (same method + params) share one upstream call. One HTTP round trip to the
// node then serves many client requests.
//
// Isolation (no head-of-line blocking): a call is batched only with calls of its own cost class (x-gateway.cost:
// `light` lookups vs `heavy` eth_getLogs/eth_call…), each class has its own batch size, linger, deadline and its own
// connections to every node, so a slow heavy call never delays a light one. Every call has its own deadline and is
// answered as soon as its own answer is in; a batch still unanswered after the class's splitAfterMs, refused as a
// batch (one error object, HTTP 4xx) or over the response size cap is split and its calls resent one by one (only
// calls that may be resent ever share a batch: eth_sendRawTransaction always travels alone).
//
// Resilience: idempotent calls are hedged to a second upstream after their method's latency quantile (first answer
// wins, the other request is aborted); retryable calls are retried after transport errors or listed node errors, on
// another upstream when there is one; a circuit breaker per upstream opens after consecutive failures or on an error
// rate over its last requests (timeouts count, but one call's timeout only fails that call), half-opens after
// probeIntervalMs and one probe closes it. A node that refuses a batch as too large gets smaller batches, and larger
// ones again now and then (batchRecovery).
import { markAnswered } from './answered.js';
import { Pool, type Dispatcher } from 'undici';
import type { UpstreamConfig } from '../config/config.js';
import type { CostClass } from '../method-meaning.js';
import { RawResult } from '@rpcgate/toolkit/engine';
import type { RpcError } from '@rpcgate/toolkit/errors';
import { splitResponse } from './split.js';
import { LatencyQuantile } from './latency.js';
import { upstreamTimeout, upstreamUnavailable, upstreamBadResponse, nodeError, responseTooLarge } from './errors.js';

/** What the pool must know of a method (src/gateway/method-meaning.ts's GatewayMeaning fits): whether identical
 * concurrent calls may share one upstream call and be hedged, whether the call may be resent once the request may
 * have reached a node, and its cost class. A method the pool is not told about is none of these, and heavy. */
export interface UpstreamMethodPolicy {
  readonly idempotent: boolean;
  readonly retryable: boolean;
  readonly cost?: CostClass;
}

/** Circuit states, as exported by rpcgate_upstream_circuit_state. */
export const CIRCUIT = { closed: 0, halfOpen: 1, open: 2 } as const;
export type CircuitState = keyof typeof CIRCUIT;
/** What opened a circuit: failures in a row, the error rate over the window, or a refused connection. */
export type BreakerRule = 'consecutive' | 'rate' | 'refused';

interface ClassState {
  readonly name: CostClass;
  readonly maxBatch: number;
  readonly lingerMs: number;
  readonly timeoutMs: number;
  readonly splitAfterMs: number;
  queue: Call[];
  scheduled: boolean;
  flush: () => void;
}

interface Call {
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
  tried: Upstream[];
  /** Attempts in flight that carry it. */
  live: Attempt[];
  done: boolean;
  /** The last failure, answered when nothing else is left to try. */
  lastErr: RpcError | undefined;
}

/** Why an HTTP request to one upstream failed; decides breaker accounting and resending. */
class AttemptError extends Error {
  constructor(
    readonly kind: 'connect' | 'timeout' | 'http' | 'body' | 'size' | 'refused' | 'aborted',
    message: string,
    /** true when the request cannot have reached the node (safe to resend anything). */
    readonly notSent: boolean,
  ) {
    super(message);
  }
}

export interface UpstreamStatus {
  url: string;
  healthy: boolean;
  circuit: CircuitState;
  lastError?: string;
  downSince?: number;
}

class Upstream {
  circuit: CircuitState = 'closed';
  /** Failed requests in a row (the consecutive rule). */
  failures = 0;
  /** The rate rule's window: outcomes of the last requests while closed (1 = failed), a ring; `windowFailed` of the
   *  `windowCount` held failed. Empty when the rate rule is off. */
  readonly window: Uint8Array;
  windowPos = 0;
  windowCount = 0;
  windowFailed = 0;
  /** Label for metrics: host:port (or the index when host:port repeats in the pool); never credentials or path. */
  label: string | number = 0;
  lastError: string | undefined;
  downSince: number | undefined;
  timer: NodeJS.Timeout | undefined;
  /** Largest batch sent to this node: halved when it refuses one, doubled again by batchRecovery. */
  batchCap = Infinity;
  /** A size the node answered `batchRecovery.afterBatches` times before batchCap was doubled (0: none known): a larger
   *  batch it refuses goes back to it and is resent in batches of it. */
  batchGood = 0;
  /** Full batches (of batchCap) answered since batchCap last changed, and when it changed (performance.now()). */
  batchesOk = 0;
  batchCapAt = 0;
  /** One connection pool per cost class: heavy calls can never take the connections light calls need. */
  readonly pools: Record<CostClass, Pool>;
  readonly path: string;
  readonly headers: Record<string, string>;

  constructor(
    readonly url: string,
    cfg: UpstreamConfig,
    safetyTimeoutMs: number,
  ) {
    const u = new URL(url);
    this.path = (u.pathname || '/') + u.search;
    this.headers = { 'content-type': 'application/json', accept: 'application/json' };
    if (u.username || u.password) {
      this.headers.authorization =
        'Basic ' +
        Buffer.from(`${decodeURIComponent(u.username)}:${decodeURIComponent(u.password)}`).toString('base64');
    }
    const pool = () =>
      new Pool(u.origin, {
        connections: cfg.connections,
        pipelining: cfg.pipelining,
        keepAliveTimeout: 30_000,
        keepAliveMaxTimeout: 600_000,
        // Each call's own deadline (an AbortSignal) ends requests; these are only a backstop.
        headersTimeout: safetyTimeoutMs,
        bodyTimeout: safetyTimeoutMs,
        connect: { timeout: cfg.connectTimeoutMs },
      });
    this.pools = { light: pool(), heavy: pool() };
    this.window = new Uint8Array(cfg.circuitBreaker.errorRate > 0 ? cfg.circuitBreaker.windowSize : 0);
  }
}

/** One HTTP request to one upstream, carrying one or more calls. */
class Attempt {
  readonly ac = new AbortController();
  readonly t0 = performance.now();
  pending: number;
  deadlineTimer: NodeJS.Timeout | undefined;
  resendTimer: NodeJS.Timeout | undefined;
  ended = false;
  constructor(
    readonly up: Upstream,
    readonly calls: Call[],
  ) {
    this.pending = calls.length;
  }
}

export interface UpstreamPoolOptions {
  network: string;
  urls: string[];
  config: UpstreamConfig;
  /** Resolve results as RawResult (the node's bytes, not parsed; default true) or as parsed values. */
  raw?: boolean;
  /** Per method name: may it be deduped / hedged / resent, and its cost class (built once from the contract; absent
   *  or a method not in it = none of these, heavy). */
  methods?: ReadonlyMap<string, UpstreamMethodPolicy>;
  /** Called when an upstream's circuit opens (healthy false, with the reason and the rule that opened it) or closes
   *  again (for logs). */
  onHealth?: (url: string, healthy: boolean, reason?: string, rule?: BreakerRule) => void;
  /** Prometheus metrics (src/gateway/metering Metrics fits): upstream latency per HTTP request, health, circuit. */
  metrics?: UpstreamMetrics;
}

/** What the pool reports to /metrics. `upstream` is host:port or an index, never a URL (keys live in paths). */
export interface UpstreamMetrics {
  observeUpstream(network: string, upstream: string | number, seconds: number): void;
  setUpstreamHealth(network: string, upstream: string | number, up: boolean): void;
  /** 0 closed, 1 half-open, 2 open. */
  setUpstreamCircuit?(network: string, upstream: string | number, state: number): void;
  /** A call sent again: hedged to a second upstream, retried, or resent out of a split batch. */
  upstreamResend?(network: string, kind: 'hedge' | 'retry' | 'split'): void;
}

const quoted = new Map<string, string>();
function quote(method: string): string {
  let q = quoted.get(method);
  if (q === undefined) {
    q = JSON.stringify(method);
    if (quoted.size < 1000) quoted.set(method, q);
  }
  return q;
}

const PROBE_BODY = '{"jsonrpc":"2.0","id":1,"method":"eth_blockNumber","params":[]}';
const FAIL_CLOSED: UpstreamMethodPolicy = { idempotent: false, retryable: false, cost: 'heavy' };

export class UpstreamPool {
  readonly network: string;
  private readonly upstreams: Upstream[];
  private readonly cfg: UpstreamConfig;
  private readonly onHealth: UpstreamPoolOptions['onHealth'];
  private readonly metrics: UpstreamMetrics | undefined;
  private readonly raw: boolean;
  private readonly methods: ReadonlyMap<string, UpstreamMethodPolicy>;
  private readonly classes: Record<CostClass, ClassState>;
  private readonly inflight = new Map<string, Promise<unknown>>();
  private readonly latency = new Map<string, LatencyQuantile>();
  private readonly attempts = new Set<Attempt>();
  private readonly retryCodes: ReadonlySet<number>;
  private readonly retryMessages: readonly string[];
  /** Rate rule: outcomes the window needs before it applies (at most its size). */
  private readonly minCalls: number;
  /** Largest batch any class sends: a batchCap doubled to it or past it is no cap any more. */
  private readonly maxBatch: number;
  private rr = 0;
  private closed = false;
  /** Counters for tests and the bench: upstream HTTP requests sent, calls served, deduped, and resends by kind. */
  readonly stats = { requests: 0, calls: 0, deduped: 0, failovers: 0, hedges: 0, retries: 0, splits: 0 };

  constructor(opts: UpstreamPoolOptions) {
    if (opts.urls.length === 0) throw new Error(`network ${opts.network}: no upstream URL`);
    this.network = opts.network;
    const cfg = (this.cfg = opts.config);
    this.onHealth = opts.onHealth;
    this.raw = opts.raw ?? true;
    this.methods = opts.methods ?? new Map();
    this.metrics = opts.metrics;
    this.retryCodes = new Set(cfg.retry.nodeErrorCodes);
    this.retryMessages = cfg.retry.nodeErrorMessages.map((m) => m.toLowerCase());
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
        flush: () => this.flush(s),
      };
      return s;
    };
    this.classes = { light: cls('light'), heavy: cls('heavy') };
    this.maxBatch = Math.max(this.classes.light.maxBatch, this.classes.heavy.maxBatch);
    this.minCalls = Math.min(cfg.circuitBreaker.minCalls, cfg.circuitBreaker.windowSize);
    const safety = Math.max(this.classes.light.timeoutMs, this.classes.heavy.timeoutMs, cfg.requestTimeoutMs) + 1000;
    this.upstreams = opts.urls.map((u) => new Upstream(u, cfg, safety));
    const hostPorts = this.upstreams.map((u) => {
      const url = new URL(u.url);
      return `${url.hostname}:${url.port || (url.protocol === 'https:' ? '443' : '80')}`;
    });
    this.upstreams.forEach((u, i) => {
      u.label = hostPorts.indexOf(hostPorts[i]) === hostPorts.lastIndexOf(hostPorts[i]) ? hostPorts[i] : i;
      this.metrics?.setUpstreamHealth(this.network, u.label, true);
      this.metrics?.setUpstreamCircuit?.(this.network, u.label, CIRCUIT.closed);
    });
  }

  /** Forwards one call; resolves with the node's result (a RawResult unless `raw: false`), rejects with RpcError (node error passed through,
   * or upstream unavailable / timeout / response too large). */
  call(method: string, params?: readonly unknown[] | Record<string, unknown>): Promise<unknown> {
    return this.callSerialized(method, params === undefined ? '[]' : JSON.stringify(params));
  }

  /** As `call`, with params already serialised as JSON. */
  callSerialized(method: string, paramsJson: string): Promise<unknown> {
    if (this.closed) return Promise.reject(upstreamUnavailable(this.network, 'service is shutting down'));
    this.stats.calls++;
    const policy = this.methods.get(method) ?? FAIL_CLOSED;
    let key: string | undefined;
    if (policy.idempotent && this.cfg.coalesce) {
      key = method + paramsJson;
      const same = this.inflight.get(key);
      if (same !== undefined) {
        this.stats.deduped++;
        return same;
      }
    }
    const cls = this.classes[policy.cost ?? 'heavy'];
    let resolve!: (v: unknown) => void;
    let reject!: (e: unknown) => void;
    const promise = new Promise<unknown>((ok, fail) => {
      resolve = ok;
      reject = fail;
    });
    // Registered before sending: the call may settle synchronously (every circuit open), which must unregister it.
    if (key !== undefined) this.inflight.set(key, promise);
    const c: Call = {
      method,
      m: quote(method),
      p: paramsJson,
      resolve,
      reject,
      key,
      idempotent: policy.idempotent,
      retryable: policy.retryable,
      cls,
      deadline: performance.now() + cls.timeoutMs,
      attempts: 0,
      tried: [],
      live: [],
      done: false,
      lastErr: undefined,
    };
    // Only calls that may be resent share a batch (a batch may be split and resent).
    if (!this.cfg.coalesce || !c.retryable || cls.maxBatch === 1) this.dispatch([c]);
    else {
      cls.queue.push(c);
      if (cls.queue.length >= cls.maxBatch) this.flush(cls);
      else if (!cls.scheduled) {
        cls.scheduled = true;
        if (cls.lingerMs > 0) setTimeout(cls.flush, cls.lingerMs);
        else setImmediate(cls.flush);
      }
    }
    return promise;
  }

  private flush(cls: ClassState): void {
    cls.scheduled = false;
    const q = cls.queue;
    if (q.length === 0) return;
    cls.queue = [];
    this.dispatch(q);
  }

  /** Sends calls to one upstream whose circuit is closed (preferring one none of them tried), in batches it takes. */
  private dispatch(calls: Call[], allowTried = true): void {
    const up = this.pick(calls.length === 1 ? calls[0].tried : undefined, allowTried);
    if (up === undefined) {
      for (const c of calls)
        this.settle(
          c,
          undefined,
          c.lastErr ?? upstreamUnavailable(this.network, 'no healthy upstream (every circuit is open)', 503),
        );
      return;
    }
    const cap = Math.min(up.batchCap, calls.length);
    for (let i = 0; i < calls.length; i += cap) this.start(up, calls.slice(i, i + cap));
  }

  /** One HTTP request to `up` for `calls`, with its deadline and hedge / split timer. */
  private start(up: Upstream, calls: Call[]): void {
    if (this.closed) {
      for (const c of calls) this.settle(c, undefined, upstreamUnavailable(this.network, 'service is shutting down'));
      return;
    }
    const a = new Attempt(up, calls);
    this.attempts.add(a);
    let first = Infinity;
    for (const c of calls) {
      c.attempts++;
      c.tried.push(up);
      c.live.push(a);
      if (c.deadline < first) first = c.deadline;
    }
    a.deadlineTimer = setTimeout(() => this.expire(a), Math.max(0, first - a.t0));
    const hedging = this.cfg.hedge.enabled && this.upstreams.length > 1;
    if (calls.length > 1) {
      // A batch is split after splitAfterMs, or — hedging, all idempotent — after its slowest method's quantile, its
      // calls then going one by one to another upstream (which is the hedge of a batch).
      let delay = calls[0].cls.splitAfterMs;
      if (hedging && calls.every((c) => c.idempotent)) {
        let q = 0;
        for (const c of calls) q = Math.max(q, this.hedgeDelay(c.method));
        delay = Math.min(delay, q);
      }
      a.resendTimer = setTimeout(() => this.split(a, 'split'), delay);
    } else if (hedging && calls[0].idempotent) {
      a.resendTimer = setTimeout(() => this.hedge(a), this.hedgeDelay(calls[0].method));
    }
    const body = buildBody(calls);
    this.stats.requests++;
    this.post(up, body, calls[0].cls.name, a.ac.signal).then(
      (text) => this.answered(a, text),
      (e: unknown) => this.failed(a, e instanceof AttemptError ? e : classify(e)),
    );
  }

  /** Ends an attempt: timers off, its calls no longer count it live; `abort` cancels the HTTP request. */
  private end(a: Attempt, abort: boolean): void {
    if (a.ended) return;
    a.ended = true;
    this.attempts.delete(a);
    clearTimeout(a.deadlineTimer);
    clearTimeout(a.resendTimer);
    for (const c of a.calls) {
      const i = c.live.indexOf(a);
      if (i >= 0) c.live.splice(i, 1);
    }
    if (abort) a.ac.abort();
  }

  /** The deadline of some calls passed: they (and only they) fail with a timeout; the request goes on for the rest. */
  private expire(a: Attempt): void {
    if (a.ended) return;
    const now = performance.now();
    let next = Infinity;
    let expired = 0;
    for (const c of a.calls) {
      if (c.done) continue;
      if (c.deadline <= now + 1) {
        expired++;
        this.settle(
          c,
          undefined,
          upstreamTimeout(this.network, `no answer within ${c.cls.timeoutMs} ms`, c.cls.timeoutMs),
        );
      } else if (c.deadline < next) next = c.deadline;
    }
    if (expired > 0) this.failure(a.up, 'timeout', true);
    if (!a.ended && next !== Infinity) a.deadlineTimer = setTimeout(() => this.expire(a), Math.max(0, next - now));
  }

  /** A batch too slow (or refused, or too large) as a whole: its open calls go again one by one; the first answer wins. */
  private split(a: Attempt, why: 'split' | 'refused'): void {
    const open = a.calls.filter((c) => !c.done);
    if (why === 'refused') this.end(a, true);
    else if (open.length > 1 && this.cfg.hedge.enabled && open.every((c) => c.idempotent)) {
      // Hedging a slow batch: the open calls as one batch to an upstream none of them tried (one request, not one
      // per call); where there is none, they go one by one.
      const other = this.pick(open[0].tried, false);
      if (other !== undefined) {
        this.stats.hedges++;
        this.metrics?.upstreamResend?.(this.network, 'hedge');
        this.start(other, open);
        return;
      }
    }
    for (const c of open) {
      this.stats.splits++;
      this.metrics?.upstreamResend?.(this.network, 'split');
      // A split goes back to the same node when it is the only one: it is the batch, not the node, that is slow.
      const up = this.pick(c.tried, true);
      if (up === undefined)
        this.settle(
          c,
          undefined,
          c.lastErr ?? upstreamUnavailable(this.network, 'no healthy upstream (every circuit is open)', 503),
        );
      else this.start(up, [c]);
    }
  }

  // ---- learned batch size ----------------------------------------------------------------------------------------
  // A node that refuses a batch as too large gets half that size from then on; after batchRecovery.afterBatches full
  // batches answered at the current size and batchRecovery.intervalMs since it last changed, it is doubled again
  // (multiplicative both ways: the size finds the node's limit in a few steps, and a node whose limit was raised gets
  // its full batches back). A refusal of the doubled size returns to the size that was answered and resends that
  // batch in batches of it, so a node that keeps refusing costs one extra request per interval, never a storm of
  // single calls.

  /** A batch of `n` calls was answered as a batch. */
  private batchAnswered(up: Upstream, n: number): void {
    if (n < up.batchCap) return; // only full batches say the node takes this size (Infinity: nothing to grow)
    const r = this.cfg.batchRecovery;
    if (r.afterBatches === 0 || ++up.batchesOk < r.afterBatches) return;
    const now = performance.now();
    if (now - up.batchCapAt < r.intervalMs) return;
    up.batchGood = up.batchCap;
    up.batchCap = up.batchCap * 2 >= this.maxBatch ? Infinity : up.batchCap * 2;
    up.batchesOk = 0;
    up.batchCapAt = now;
  }

  /** The node refused attempt `a`'s batch as a whole (too large, or batches unsupported): smaller batches from now. */
  private batchRefused(a: Attempt): void {
    const up = a.up;
    const n = a.calls.length;
    up.batchesOk = 0;
    up.batchCapAt = performance.now();
    const good = up.batchGood;
    if (good > 1 && n > good) {
      // A larger size tried after `good` was answered many times: back to it, and this batch again in batches of it
      // (one by one elsewhere if the circuit opened meanwhile).
      up.batchCap = Math.min(up.batchCap, good);
      if (up.circuit !== 'closed') {
        this.split(a, 'refused');
        return;
      }
      this.end(a, true);
      const open = a.calls.filter((c) => !c.done);
      this.stats.splits += open.length;
      for (let i = 0; i < open.length; i += good) {
        this.metrics?.upstreamResend?.(this.network, 'split');
        this.start(up, open.slice(i, i + good));
      }
      return;
    }
    // Nothing known to work (or even the size it took is refused now): halve, and the calls go one by one.
    up.batchGood = 0;
    up.batchCap = Math.min(up.batchCap, Math.max(1, Math.floor(n / 2)));
    this.split(a, 'refused');
  }

  /** A single idempotent call slower than its method's quantile: the same call to another upstream too. */
  private hedge(a: Attempt): void {
    const c = a.calls[0];
    if (c.done || a.ended) return;
    const up = this.pick(c.tried, false);
    if (up === undefined) return;
    this.stats.hedges++;
    this.metrics?.upstreamResend?.(this.network, 'hedge');
    this.start(up, [c]);
  }

  private hedgeDelay(method: string): number {
    const h = this.cfg.hedge;
    const t = this.latency.get(method);
    if (t === undefined || t.samples < h.minSamples) return h.maxDelayMs;
    return Math.min(h.maxDelayMs, Math.max(h.minDelayMs, t.value()));
  }

  private observe(method: string, ms: number): void {
    let t = this.latency.get(method);
    if (t === undefined) {
      if (this.latency.size >= 1000) return;
      this.latency.set(method, (t = new LatencyQuantile(this.cfg.hedge.quantile)));
    }
    t.observe(ms);
  }

  private answered(a: Attempt, text: string): void {
    if (a.ended) return;
    this.end(a, false);
    if (this.raw && this.deliverRaw(a, text)) {
      this.success(a.up);
      if (a.calls.length > 1) this.batchAnswered(a.up, a.calls.length);
    } else this.deliverParsed(a, text);
  }

  private failed(a: Attempt, e: AttemptError): void {
    if (a.ended) return; // aborted by us: a hedge won, or every call timed out
    this.end(a, false);
    a.up.lastError = e.message;
    if (e.kind === 'refused' && a.calls.length > 1) {
      // The node is fine; it takes no batch this large.
      this.batchRefused(a);
      return;
    }
    if (e.kind === 'size') {
      if (a.calls.length > 1) this.split(a, 'refused');
      else this.settle(a.calls[0], undefined, responseTooLarge(this.network, this.cfg.maxResponseBytes));
      return;
    }
    if (e.kind === 'refused') {
      // A single call answered with HTTP 4xx and no JSON-RPC body.
      this.settle(a.calls[0], undefined, upstreamBadResponse(this.network, e.message));
      return;
    }
    // A refused connection means nothing listens there: no point in more tries before the probe says otherwise.
    if (e.kind === 'connect' && e.notSent) this.open(a.up, e.message, 'refused');
    else this.failure(a.up, e.message);
    this.stats.failovers++;
    const err =
      e.kind === 'timeout'
        ? upstreamTimeout(this.network, e.message)
        : upstreamUnavailable(this.network, e.message, 502);
    for (const c of a.calls) this.retryOrFail(c, err, e.notSent);
  }

  /** After a transport failure or a retryable node error: again (another upstream first) if allowed, else fail. */
  private retryOrFail(c: Call, err: RpcError, notSent: boolean): void {
    if (c.done) return;
    c.lastErr = err;
    if (c.live.length > 0) return; // a hedge or split of it is still running: let it answer
    const now = performance.now();
    const may = (c.retryable || notSent) && c.attempts < this.cfg.retry.maxAttempts && now < c.deadline;
    if (!may) {
      this.settle(c, undefined, err);
      return;
    }
    this.stats.retries++;
    this.metrics?.upstreamResend?.(this.network, 'retry');
    const fresh = this.pick(c.tried, false);
    if (fresh !== undefined) {
      this.start(fresh, [c]);
      return;
    }
    const delay = Math.min(this.cfg.retry.delayMs, Math.max(0, c.deadline - now - 1));
    setTimeout(() => {
      if (c.done) return;
      if (this.closed) this.settle(c, undefined, err);
      else this.dispatch([c]);
    }, delay).unref();
  }

  /** One POST to one upstream; resolves with the body text of a usable (2xx or JSON-RPC error) answer. */
  private async post(up: Upstream, body: string, cls: CostClass, signal?: AbortSignal, probe = false): Promise<string> {
    const t0 = performance.now();
    let res: Dispatcher.ResponseData;
    try {
      res = await up.pools[cls].request({ path: up.path, method: 'POST', headers: up.headers, body, signal });
    } catch (e) {
      throw classify(e);
    }
    const cap = this.cfg.maxResponseBytes;
    const declared = Number(res.headers['content-length']);
    if (cap > 0 && declared > cap) {
      // undici's body, destroyed unread, emits an AbortError: without a listener that is an uncaught exception.
      res.body.on('error', noop);
      res.body.destroy();
      throw new AttemptError('size', `upstream response of ${declared} bytes is over the cap`, false);
    }
    const chunks: Buffer[] = [];
    let size = 0;
    try {
      for await (const chunk of res.body as AsyncIterable<Buffer>) {
        size += chunk.length;
        if (cap > 0 && size > cap) {
          res.body.destroy();
          throw new AttemptError('size', `upstream response over ${cap} bytes`, false);
        }
        chunks.push(chunk);
      }
    } catch (e) {
      throw e instanceof AttemptError ? e : classify(e);
    }
    const text = chunks.length === 1 ? chunks[0].toString('utf8') : Buffer.concat(chunks, size).toString('utf8');
    // One observation per upstream HTTP request (a coalesced batch is one), answered at all; probes excluded.
    if (!probe) this.metrics?.observeUpstream(this.network, up.label, (performance.now() - t0) / 1000);
    const status = res.statusCode;
    if (status >= 500 || status === 429 || status === 408) {
      // A node behind a proxy may still answer a JSON-RPC error with 5xx; the upstream is failing anyway.
      throw new AttemptError('http', `upstream answered HTTP ${status}`, false);
    }
    // Other 4xx (413, 400…): a JSON-RPC error body is the node's answer; anything else refuses the request as such.
    if (status >= 400 && splitResponse(text) === undefined && !looksLikeRpcError(text)) {
      throw new AttemptError('refused', `upstream answered HTTP ${status}`, false);
    }
    return text;
  }

  /** A node's error for one call: resent when the method may be and the error is listed as retryable. */
  private nodeFailed(c: Call, err: RpcError): void {
    if (c.done) return;
    if (
      c.retryable &&
      (this.retryCodes.has(err.code) || this.retryMessages.some((m) => err.message.toLowerCase().includes(m)))
    )
      this.retryOrFail(c, err, false);
    else this.settle(c, undefined, err);
  }

  private succeeded(a: Attempt, c: Call, result: unknown): void {
    if (c.done) return;
    this.observe(c.method, performance.now() - a.t0);
    markAnswered(result, a.up.label); // for the request log (./answered.ts)
    this.settle(c, result, undefined);
  }

  /** Maps the node's answer back to the calls: by id for batches (nodes may reorder), whole-batch errors to all. */
  private deliverParsed(a: Attempt, text: string): void {
    const calls = a.calls;
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      this.failure(a.up, 'invalid JSON');
      const err = upstreamBadResponse(this.network, 'upstream answered with invalid JSON');
      for (const c of calls) this.retryOrFail(c, err, false);
      return;
    }
    this.success(a.up);
    if (calls.length === 1 && !Array.isArray(parsed)) {
      this.settleFrom(a, calls[0], parsed);
      return;
    }
    if (Array.isArray(parsed)) {
      if (calls.length > 1) this.batchAnswered(a.up, calls.length);
      const done = new Uint8Array(calls.length);
      for (let i = 0; i < parsed.length; i++) {
        const item = parsed[i] as { id?: unknown } | null;
        const id = item !== null && typeof item === 'object' ? item.id : undefined;
        if (typeof id === 'number' && id >= 0 && id < calls.length && done[id] === 0) {
          done[id] = 1;
          this.settleFrom(a, calls[id], item);
        } else if (calls.length === 1 && parsed.length === 1 && done[0] === 0) {
          done[0] = 1;
          this.settleFrom(a, calls[0], item);
        }
      }
      for (let i = 0; i < calls.length; i++) {
        if (done[i] === 0)
          this.settle(
            calls[i],
            undefined,
            upstreamBadResponse(this.network, 'upstream returned no response for this call'),
          );
      }
      return;
    }
    // A single object for a batch: the node refused the batch as a whole (batches unsupported or too large): the
    // node is fine, the batch goes again in smaller pieces.
    if (parsed !== null && typeof parsed === 'object' && 'error' in parsed) {
      this.batchRefused(a);
      return;
    }
    const err = upstreamBadResponse(this.network, 'upstream answered a batch with a non-batch response');
    for (const c of calls) this.retryOrFail(c, err, false);
  }

  /** The fast path: split the text and hand results out as the node's bytes. false = parse instead. */
  private deliverRaw(a: Attempt, text: string): boolean {
    const calls = a.calls;
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
      if (it.resultStart !== -1) this.succeeded(a, c, new RawResult(text.slice(it.resultStart, it.resultEnd)));
      else {
        let error: unknown;
        try {
          error = JSON.parse(text.slice(it.errorStart, it.errorEnd));
        } catch {
          error = 'node error';
        }
        const err = toNodeError(error);
        markAnswered(err, a.up.label); // for the request log (./answered.ts)
        this.nodeFailed(c, err);
      }
    }
    for (let i = 0; i < n; i++) {
      if (done[i] === 0)
        this.settle(
          calls[i],
          undefined,
          upstreamBadResponse(this.network, 'upstream returned no response for this call'),
        );
    }
    return true;
  }

  private settleFrom(a: Attempt, c: Call, item: unknown): void {
    if (item === null || typeof item !== 'object') {
      this.settle(c, undefined, upstreamBadResponse(this.network, 'upstream returned a malformed response'));
      return;
    }
    const o = item as { result?: unknown; error?: unknown };
    if (o.error !== undefined) {
      const err = toNodeError(o.error);
      markAnswered(err, a.up.label); // for the request log (./answered.ts)
      this.nodeFailed(c, err);
    } else if ('result' in o) this.succeeded(a, c, o.result);
    else this.settle(c, undefined, upstreamBadResponse(this.network, 'upstream response has neither result nor error'));
  }

  /** Answers a call once; attempts left without an open call are aborted (the hedge's loser, a split batch). */
  private settle(c: Call, result: unknown, err: RpcError | undefined): void {
    if (c.done) return;
    c.done = true;
    if (c.key !== undefined) this.inflight.delete(c.key);
    for (const a of c.live.slice()) if (--a.pending === 0) this.end(a, true);
    if (err !== undefined) c.reject(err);
    else c.resolve(result);
  }

  /** Round-robin over upstreams whose circuit is closed, those not in `tried` first; `allowTried` falls back to them. */
  private pick(tried: readonly Upstream[] | undefined, allowTried: boolean): Upstream | undefined {
    const n = this.upstreams.length;
    let fallback: Upstream | undefined;
    for (let i = 0; i < n; i++) {
      const u = this.upstreams[(this.rr + i) % n];
      if (u.circuit !== 'closed') continue;
      if (tried?.includes(u)) {
        fallback ??= u;
        continue;
      }
      this.rr = (this.rr + i + 1) % n;
      return u;
    }
    return allowTried ? fallback : undefined;
  }

  // ---- circuit breaker ------------------------------------------------------------------------------------------

  // Two rules, either opens the circuit: `failureThreshold` failed requests in a row, and a failed share of at least
  // `errorRate` among the last `windowSize` requests once `minCalls` are in. The window counts requests, not seconds:
  // a time window would judge a quiet node on two calls and a busy one on thousands, a count judges both on the
  // same evidence, and a ring of bytes costs no timer and no allocation per request. Timeouts are failures in both
  // (a node that times out on most calls is failing), but a single timeout never opens the circuit — it may be the
  // call (one huge eth_getLogs), not the node: the in-a-row rule then needs at least 2, the rate rule always needs at
  // least 2 failures. Outcomes count only while closed; a circuit that closes again starts with an empty window.

  private success(up: Upstream): void {
    up.failures = 0;
    if (up.window.length > 0 && up.circuit === 'closed') this.record(up, 0);
  }

  /** A failed request. A timeout counts, but one alone never opens the circuit (it may be the call, not the node). */
  private failure(up: Upstream, reason: string, timeout = false): void {
    up.lastError = reason;
    if (up.circuit !== 'closed') return;
    const cb = this.cfg.circuitBreaker;
    const threshold = cb.failureThreshold;
    if (++up.failures >= (timeout ? Math.max(2, threshold) : threshold)) {
      this.open(up, `${reason} (${up.failures} failed requests in a row)`, 'consecutive');
      return;
    }
    if (up.window.length === 0) return;
    this.record(up, 1);
    const n = up.windowCount;
    if (n >= this.minCalls && up.windowFailed >= 2 && up.windowFailed >= cb.errorRate * n) {
      this.open(
        up,
        `${reason} (${up.windowFailed} of the last ${n} requests failed, errorRate ${cb.errorRate})`,
        'rate',
      );
    }
  }

  /** One outcome into the rate rule's ring (1 = failed), the oldest dropped once it is full. */
  private record(up: Upstream, failed: 0 | 1): void {
    const w = up.window;
    const i = up.windowPos;
    if (up.windowCount === w.length) up.windowFailed -= w[i];
    else up.windowCount++;
    w[i] = failed;
    up.windowFailed += failed;
    up.windowPos = i + 1 === w.length ? 0 : i + 1;
  }

  private setCircuit(up: Upstream, state: CircuitState): void {
    up.circuit = state;
    this.metrics?.setUpstreamCircuit?.(this.network, up.label, CIRCUIT[state]);
  }

  /** Opens the circuit; `rule` (what opened a closed one) goes to the log. */
  private open(up: Upstream, reason: string, rule?: BreakerRule): void {
    up.lastError = reason;
    if (up.circuit === 'open') return;
    const wasClosed = up.circuit === 'closed';
    this.setCircuit(up, 'open');
    if (wasClosed) {
      up.downSince = Date.now();
      up.failures = 0;
      up.window.fill(0);
      up.windowPos = up.windowCount = up.windowFailed = 0;
      this.metrics?.setUpstreamHealth(this.network, up.label, false);
      this.onHealth?.(up.url, false, `circuit open: ${reason}`, rule);
    }
    if (this.closed) return;
    clearTimeout(up.timer);
    up.timer = setTimeout(() => void this.probe(up), this.cfg.probeIntervalMs);
    up.timer.unref();
  }

  /** Half-open: one eth_blockNumber decides. */
  private async probe(up: Upstream): Promise<void> {
    if (this.closed) return;
    this.setCircuit(up, 'halfOpen');
    try {
      const text = await this.post(up, PROBE_BODY, 'light', AbortSignal.timeout(this.classes.light.timeoutMs), true);
      const parsed = JSON.parse(text) as { result?: unknown };
      if (parsed === null || typeof parsed !== 'object' || !('result' in parsed)) throw new Error('probe: no result');
      up.failures = 0;
      up.downSince = undefined;
      this.setCircuit(up, 'closed');
      this.metrics?.setUpstreamHealth(this.network, up.label, true);
      this.onHealth?.(up.url, true);
    } catch (e) {
      up.lastError = (e as Error).message;
      this.open(up, up.lastError);
    }
  }

  status(): UpstreamStatus[] {
    return this.upstreams.map((u) => ({
      url: u.url,
      healthy: u.circuit === 'closed',
      circuit: u.circuit,
      lastError: u.lastError,
      downSince: u.downSince,
    }));
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const u of this.upstreams) clearTimeout(u.timer);
    // Calls still queued or in flight fail cleanly.
    const err = upstreamUnavailable(this.network, 'service is shutting down');
    for (const cls of Object.values(this.classes)) {
      const q = cls.queue;
      cls.queue = [];
      for (const c of q) this.settle(c, undefined, err);
    }
    for (const a of [...this.attempts]) for (const c of a.calls) this.settle(c, undefined, err);
    await Promise.all(
      this.upstreams.flatMap((u) => Object.values(u.pools).map((p) => p.destroy().catch(() => undefined))),
    );
  }
}

/** The request body by concatenation of already-serialised parts (ids are the call's index in the batch). */
function buildBody(calls: Call[]): string {
  if (calls.length === 1) {
    const c = calls[0];
    return `{"jsonrpc":"2.0","id":0,"method":${c.m},"params":${c.p}}`;
  }
  let s = '[';
  for (let i = 0; i < calls.length; i++) {
    const c = calls[i];
    s +=
      (i === 0 ? '{"jsonrpc":"2.0","id":' : ',{"jsonrpc":"2.0","id":') +
      i +
      ',"method":' +
      c.m +
      ',"params":' +
      c.p +
      '}';
  }
  return `${s}]`;
}

/** A 4xx body that is one JSON-RPC error object (e.g. a batch refused with HTTP 400 and an error). */
function looksLikeRpcError(text: string): boolean {
  try {
    const o = JSON.parse(text) as unknown;
    return o !== null && typeof o === 'object' && !Array.isArray(o) && 'error' in o;
  } catch {
    return false;
  }
}

function classify(e: unknown): AttemptError {
  const code = (e as { code?: string })?.code;
  const msg = (e as Error)?.message ?? String(e);
  switch (code) {
    case 'UND_ERR_CONNECT_TIMEOUT':
      return new AttemptError('timeout', `connect timeout: ${msg}`, true);
    case 'UND_ERR_HEADERS_TIMEOUT':
    case 'UND_ERR_BODY_TIMEOUT':
      return new AttemptError('timeout', 'upstream did not answer in time', false);
    case 'UND_ERR_ABORTED':
    case 'ABORT_ERR':
      return new AttemptError('aborted', 'request aborted', false);
    case 'ECONNREFUSED':
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
      return new AttemptError('connect', `cannot connect to upstream (${code})`, true);
    default:
      return new AttemptError('connect', `upstream connection failed (${code ?? msg})`, false);
  }
}

function toNodeError(error: unknown): RpcError {
  if (error !== null && typeof error === 'object') {
    const e = error as { code?: unknown; message?: unknown; data?: unknown };
    return nodeError(
      typeof e.code === 'number' ? e.code : -32603,
      typeof e.message === 'string' ? e.message : 'node error',
      e.data,
    );
  }
  return nodeError(-32603, typeof error === 'string' ? error : 'node error', undefined);
}

function noop(): void {}
