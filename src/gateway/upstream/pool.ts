// The upstream pool of one network: several nodes, each reached through an UpstreamTransport (./transport.ts: HTTP
// or a WebSocket, ./transports/), composed with the failsafe parts that make it more than a pipe:
//   ./batching.ts         coalescing into JSON-RPC batches per cost class, dedupe of identical idempotent calls, the
//                         learned batch size, the answer mapped back to the calls;
//   ./failsafe/breaker.ts a circuit breaker per upstream (consecutive / rate / refused rules, probes);
//   ./failsafe/hedge.ts   hedging idempotent calls after their method's latency quantile;
//   ./failsafe/retry.ts   which failures a call may be resent after;
//   ./capabilities.ts     what each upstream can answer (head, state depth, getLogs limit, methods), learned from it;
//   ./consensus.ts        the fleet's consensus head, rotation by lag, the floor eth_blockNumber never goes below;
//   ./logs-split.ts       eth_getLogs over an upstream's limit split into chunks and merged;
//   ./failsafe/budget.ts  each upstream's own plan (requests and compute units per second) and its 429 backoff: an
//                         upstream without room is passed over like an open circuit; when none has room a call waits
//                         (bounded), and an HTTP 429 backs that upstream alone off and fails its calls over.
// This file is the lifecycle of one upstream request (an Attempt) and of the calls it carries: every call has its own
// deadline and is answered as soon as its own answer is in (no head-of-line blocking); a batch still unanswered after
// the class's splitAfterMs, refused as a batch or over the response size cap is split and its calls resent one by
// one; a call whose request failed goes to another upstream when the retry policy allows it.
import type { RpcError } from '@rpcgate/toolkit/errors';
import type { UpstreamConfig } from '../config/config.js';
import { answeredBy, markAnswered } from './answered.js';
import { Capabilities, type Need, STATE_METHODS, blockRef, refusalOf } from './capabilities.js';
import { Consensus, FLEET_DEFAULTS, type FleetMember } from './consensus.js';
import { getLogsSplit } from './logs-split.js';
import { RawResult } from '@rpcgate/toolkit/engine';
import { DEFAULT_UNITS, FAIL_CLOSED, type CostClass } from '../method-meaning.js';
import { BatchSize, type Call, type ClassState, buildBody, costClasses, deliver, enqueue, quote } from './batching.js';
import { responseTooLarge, upstreamBadResponse, upstreamTimeout, upstreamUnavailable } from './errors.js';
import { CIRCUIT, type BreakerRule, type CircuitState, CircuitBreaker } from './failsafe/breaker.js';
import {
  type BudgetSettings,
  type ConfiguredUpstream,
  UpstreamBudget,
  budgetSettings,
  splitUpstream,
} from './failsafe/budget.js';
import { HedgePolicy } from './failsafe/hedge.js';
import { RetryPolicy } from './failsafe/retry.js';
import { redactIn, redactUrl } from './redact.js';
import { TransportError, type PushTransport, type UpstreamTransport } from './transport.js';
import { createTransport, specUrls, specLabel } from './transports/index.js';
import {
  type Span,
  callTrace,
  failSpan,
  liveTrace,
  startUpstreamSpan,
  traceparentOf,
  tracing,
} from '../telemetry/index.js';

export { CIRCUIT, type BreakerRule, type CircuitState } from './failsafe/breaker.js';
/** An upstream as configured: a URL, a pair, or either with its own plan (`rateLimit`). */
export type UpstreamSpec = ConfiguredUpstream;

/** What the pool must know of a method (src/gateway/method-meaning.ts's GatewayMeaning fits): whether identical
 * concurrent calls may share one upstream call and be hedged, whether the call may be resent once the request may
 * have reached a node, and its cost class. A method the pool is not told about gets the contract's fail-closed meaning
 * (method-meaning.ts FAIL_CLOSED): none of these, and heavy (no cost class). */
export interface UpstreamMethodPolicy {
  readonly idempotent: boolean;
  readonly retryable: boolean;
  readonly cost?: CostClass;
  /** The param naming the block the call reads (the contract's x-gateway blockParam): routes it to upstreams that
   *  have that block (and its state). */
  readonly blockParam?: number;
  /** The contract's cache class: `head` = answered relative to the head (eth_blockNumber, gas price…). */
  readonly cache?: string;
  /** Looked up by hash, its block known from the answer (a transaction, a receipt): may be in the newest blocks. */
  readonly blockFromResult?: true;
  /** Compute units a call weighs against an upstream's `unitsPerSecond` (x-gateway.units); absent = DEFAULT_UNITS. */
  readonly units?: number;
}

export interface UpstreamStatus {
  /** scheme://host:port (a pair: both, `http… + ws…`): never credentials, path or query. */
  url: string;
  kind: 'http' | 'ws';
  healthy: boolean;
  circuit: CircuitState;
  lastError?: string;
  downSince?: number;
  /** Its last known head, and how many blocks it is behind the fleet's best (fleets of two or more). */
  head?: number;
  lag?: number;
}

/** One node of the pool: how it is reached, its breaker, the batch size it takes, what it can answer. */
interface Upstream extends FleetMember {
  readonly transport: UpstreamTransport;
  readonly breaker: CircuitBreaker;
  readonly batch: BatchSize;
  /** Its own plan (requests and units per second) and its 429 backoff. */
  readonly budget: UpstreamBudget;
  /** Redacted URL for status and logs. */
  readonly url: string;
  /** Label for metrics: host:port (or the index when host:port repeats in the pool); never credentials or path. */
  label: string | number;
}

/** One request to one upstream, carrying one or more calls. */
class Attempt {
  readonly ac = new AbortController();
  readonly t0 = performance.now();
  pending: number;
  deadlineTimer: NodeJS.Timeout | undefined;
  resendTimer: NodeJS.Timeout | undefined;
  ended = false;
  /** Its trace span (tracing on and a traced call aboard). */
  span: Span | undefined;
  constructor(
    readonly up: Upstream,
    readonly calls: Call[],
  ) {
    this.pending = calls.length;
  }
}

export interface UpstreamPoolOptions {
  network: string;
  /** The nodes: an http(s):// or ws(s):// URL, or a pair { http, ws } (calls over HTTP, subscriptions over the socket),
   *  or { url } — the object forms with the upstream's own plan (`rateLimit`). */
  urls: readonly UpstreamSpec[];
  config: UpstreamConfig;
  /** Resolve results as RawResult (the node's bytes, not parsed; default true) or as parsed values. */
  raw?: boolean;
  /** Per method name: may it be deduped / hedged / resent, and its cost class (built once from the contract; absent
   *  or a method not in it = none of these, heavy). */
  methods?: ReadonlyMap<string, UpstreamMethodPolicy>;
  /** Called when an upstream's circuit opens (healthy false, with the reason and the rule that opened it) or closes
   *  again (for logs). `url` is redacted (scheme://host:port). */
  onHealth?: (url: string, healthy: boolean, reason?: string, rule?: BreakerRule) => void;
  /** Prometheus metrics (src/gateway/metering Metrics fits): upstream latency per request, health, circuit. */
  metrics?: UpstreamMetrics;
}

/** What the pool reports to /metrics. `upstream` is host:port or an index, never a URL (keys live in paths). */
export interface UpstreamMetrics {
  observeUpstream(network: string, upstream: string | number, seconds: number): void;
  setUpstreamHealth(network: string, upstream: string | number, up: boolean): void;
  /** 0 closed, 1 half-open, 2 open. */
  setUpstreamCircuit?(network: string, upstream: string | number, state: number): void;
  /** Blocks the upstream is behind the fleet's best head. */
  setUpstreamLag?(network: string, upstream: string | number, lag: number): void;
  /** A call sent again: hedged to a second upstream, retried, or resent out of a split batch. */
  upstreamResend?(network: string, kind: 'hedge' | 'retry' | 'split'): void;
}

const PROBE_BODY = '{"jsonrpc":"2.0","id":1,"method":"eth_blockNumber","params":[]}';

export class UpstreamPool {
  readonly network: string;
  private readonly upstreams: Upstream[];
  private readonly cfg: UpstreamConfig;
  private readonly metrics: UpstreamMetrics | undefined;
  private readonly raw: boolean;
  private readonly methods: ReadonlyMap<string, UpstreamMethodPolicy>;
  private readonly classes: Record<CostClass, ClassState>;
  private readonly inflight = new Map<string, Promise<unknown>>();
  private readonly hedging: HedgePolicy;
  private readonly retry: RetryPolicy;
  private readonly budgets: BudgetSettings;
  /** Whether any upstream has a plan (else the budget checks are skipped altogether). */
  private budgeted = false;
  /** When a call first waited for budget (its waits together stay within budget.maxWaitMs). */
  private readonly waitingSince = new WeakMap<Call, number>();
  private readonly attempts = new Set<Attempt>();
  /** Every raw URL configured, to scrub from error messages. */
  private readonly secrets: string[];
  private readonly unlisten: (() => void)[] = [];
  private rr = 0;
  private closed = false;
  /** Counters for tests and the bench: upstream requests sent, calls served, deduped, and resends by kind. */
  readonly stats = {
    requests: 0,
    calls: 0,
    deduped: 0,
    failovers: 0,
    hedges: 0,
    retries: 0,
    splits: 0,
    /** Calls held back because no upstream had room in its budget (or all were backing off after a 429). */
    budgetWaits: 0,
    /** HTTP 429 answers (each backs its upstream off). */
    limited: 0,
  };
  /** Fleet counters: calls resent after a "not here" answer; eth_getLogs split (queries, chunks). */
  readonly fleetStats = { notHere: 0, logsSplits: 0, logsChunks: 0 };
  private readonly consensus: Consensus;
  private readonly byLabel = new Map<string | number, Upstream>();

  constructor(opts: UpstreamPoolOptions) {
    if (opts.urls.length === 0) throw new Error(`network ${opts.network}: no upstream URL`);
    this.network = opts.network;
    const cfg = (this.cfg = opts.config);
    this.raw = opts.raw ?? true;
    this.methods = opts.methods ?? new Map();
    this.metrics = opts.metrics;
    this.hedging = new HedgePolicy(cfg.hedge);
    this.retry = new RetryPolicy(cfg.retry);
    this.budgets = budgetSettings(cfg);
    this.classes = costClasses(cfg, (calls) => this.dispatch(calls));
    const maxBatch = Math.max(this.classes.light.maxBatch, this.classes.heavy.maxBatch);
    const safetyTimeoutMs =
      Math.max(this.classes.light.timeoutMs, this.classes.heavy.timeoutMs, cfg.requestTimeoutMs) + 1000;
    const configured = opts.urls.map(splitUpstream);
    const specs = configured.map((u) => u.spec);
    this.secrets = specs.flatMap(specUrls);
    const labels = specs.map(specLabel);
    this.upstreams = specs.map((spec, i) => {
      const rateLimit = configured[i].rateLimit;
      if (rateLimit !== undefined) this.budgeted = true;
      const transport = createTransport(spec, cfg, { safetyTimeoutMs, maxResponseBytes: cfg.maxResponseBytes });
      const label = labels.indexOf(labels[i]) === labels.lastIndexOf(labels[i]) ? labels[i] : i;
      const url = specUrls(spec)
        .map((u) => redactUrl(u))
        .join(' + ');
      const up: Upstream = {
        transport,
        url,
        label,
        caps: new Capabilities(),
        healthy: () => up.breaker.closed,
        send: (body, method) => {
          // The fleet's own polls count against the upstream's plan too (a provider counts every request).
          if (this.budgetsOn && !up.budget.take(1, this.methods.get(method)?.units ?? DEFAULT_UNITS))
            return Promise.reject(new Error('no room in the upstream budget: poll skipped'));
          const timeoutMs = this.classes.light.timeoutMs;
          return transport
            .send(body, {
              cls: 'light',
              signal: AbortSignal.timeout(timeoutMs),
              deadlineMs: performance.now() + timeoutMs,
            })
            .catch((e: unknown) => {
              // A poll that meets the node's 429 backs it off like a call would (calls then pass it over).
              if (e instanceof TransportError && e.kind === 'limited') {
                this.stats.limited++;
                up.budget.backOff(e.retryAfterMs);
              }
              throw e;
            });
        },
        batch: new BatchSize(cfg.batchRecovery, maxBatch),
        budget: new UpstreamBudget(rateLimit, this.budgets),
        breaker: new CircuitBreaker(cfg.circuitBreaker, cfg.probeIntervalMs, {
          probe: () => this.probe(up),
          onState: (s) => this.metrics?.setUpstreamCircuit?.(this.network, label, CIRCUIT[s]),
          onHealth: (healthy, reason, rule) => {
            this.metrics?.setUpstreamHealth(this.network, label, healthy);
            opts.onHealth?.(url, healthy, reason, rule);
          },
        }),
      };
      // A socket that carries the calls and drops takes its upstream out at once (nothing to send them on; /readyz and
      // the log say so); one that comes back need not wait for the probe interval.
      const push = transport.push;
      if (push)
        this.unlisten.push(
          push.onState((isUp) => {
            if (isUp) up.breaker.probeSoon();
            else if (transport.kind === 'ws') up.breaker.open('upstream socket closed', 'refused');
          }),
        );
      this.metrics?.setUpstreamHealth(this.network, label, true);
      this.metrics?.setUpstreamCircuit?.(this.network, label, CIRCUIT.closed);
      this.byLabel.set(label, up);
      return up;
    });
    this.consensus = new Consensus(
      this.upstreams,
      { ...FLEET_DEFAULTS, ...cfg.fleet },
      this.metrics?.setUpstreamLag && ((l, lag) => this.metrics?.setUpstreamLag?.(this.network, l, lag)),
    );
  }

  /** Forwards one call; resolves with the node's result (a RawResult unless `raw: false`), rejects with RpcError
   * (node error passed through, or upstream unavailable / timeout / response too large). */
  call(method: string, params?: readonly unknown[] | Record<string, unknown>): Promise<unknown> {
    return this.callSerialized(method, params === undefined ? '[]' : JSON.stringify(params));
  }

  /** As `call`, with params already serialised as JSON. */
  callSerialized(method: string, paramsJson: string): Promise<unknown> {
    if (this.closed) return Promise.reject(upstreamUnavailable(this.network, 'service is shutting down'));
    const fleet = this.consensus.active;
    if (fleet) this.consensus.touch();
    if (method === 'eth_getLogs') return this.getLogs(paramsJson);
    const policy = this.methods.get(method) ?? FAIL_CLOSED;
    if (!fleet) return this.forward(method, paramsJson, policy, undefined);
    const need = this.needOf(method, paramsJson, policy);
    const answer = this.forward(method, paramsJson, policy, need);
    return method === 'eth_blockNumber' ? answer.then((r) => this.notBelowFloor(r)) : answer;
  }

  /** What a call needs of an upstream in a fleet: its block (from the contract's blockParam; `head` for head-relative
   *  methods) and whether it reads state there. */
  private needOf(method: string, paramsJson: string, policy: UpstreamMethodPolicy): Need | undefined {
    const state = STATE_METHODS.has(method);
    if (policy.blockParam !== undefined) {
      let ref: unknown;
      try {
        ref = (JSON.parse(paramsJson) as unknown[])[policy.blockParam];
      } catch {
        return undefined;
      }
      return { block: blockRef(ref), state };
    }
    // Head-relative, or a lookup by hash that may hit the newest blocks (a lagging node would answer null).
    if (policy.cache === 'head' || policy.blockFromResult || method === 'eth_blockNumber')
      return { block: 'head', state };
    return undefined;
  }

  /** An eth_blockNumber answer of a fleet: teaches its upstream's head; never below the highest answered before. */
  private notBelowFloor(r: unknown): unknown {
    const raw = r instanceof RawResult;
    const v = raw ? (JSON.parse(r.json) as unknown) : r;
    if (typeof v !== 'string') return r;
    const by = answeredBy(r);
    const up = by === undefined ? undefined : (this.byLabel.get(by) ?? this.byLabel.get(Number(by)));
    const n = Number(v);
    const floor = up === undefined ? Math.max(n, this.consensus.floor) : this.consensus.answered(up, n);
    if (floor <= n) return r;
    const hex = `0x${floor.toString(16)}`;
    const out = raw ? new RawResult(JSON.stringify(hex)) : hex;
    if (by !== undefined) markAnswered(out, by);
    return out;
  }

  /** eth_getLogs, split where a range is over what the fit upstreams take (./logs-split.ts). */
  private getLogs(paramsJson: string): Promise<unknown> {
    const policy = this.methods.get('eth_getLogs') ?? FAIL_CLOSED;
    const stats = this.fleetStats;
    return getLogsSplit(paramsJson, {
      network: this.network,
      concurrency: this.consensus.cfg.getLogsSplitConcurrency,
      send: (p, range) =>
        this.forward(
          'eth_getLogs',
          p,
          policy,
          range === undefined
            ? { block: 'head', state: false }
            : { block: range.to, state: false, logsRange: range.to - range.from + 1 },
        ),
      maxRange: (to) => {
        let max = 0;
        const fleet = this.consensus.active;
        for (const u of this.upstreams)
          if (
            u.breaker.closed &&
            (!fleet || to === undefined || u.caps.can('eth_getLogs', { block: to, state: false }, true))
          )
            max = Math.max(max, u.caps.logsMaxRange);
        return max === 0 ? Number.POSITIVE_INFINITY : max;
      },
      head: async () => {
        const known = Math.max(this.consensus.floor, this.consensus.best());
        if (known > 0) return known;
        const r = await this.callSerialized('eth_blockNumber', '[]');
        return Number(r instanceof RawResult ? (JSON.parse(r.json) as unknown) : r);
      },
      stats: {
        get splits() {
          return stats.logsSplits;
        },
        set splits(n) {
          stats.logsSplits = n;
        },
        get chunks() {
          return stats.logsChunks;
        },
        set chunks(n) {
          stats.logsChunks = n;
        },
      },
    });
  }

  private forward(
    method: string,
    paramsJson: string,
    policy: UpstreamMethodPolicy,
    need: Need | undefined,
  ): Promise<unknown> {
    if (this.closed) return Promise.reject(upstreamUnavailable(this.network, 'service is shutting down'));
    this.stats.calls++;
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
      trace: tracing.tracer === undefined ? undefined : callTrace(),
      need,
    };
    // Only calls that may be resent share a batch (a batch may be split and resent).
    if (!this.cfg.coalesce || !c.retryable || cls.maxBatch === 1) this.dispatch([c]);
    else enqueue(c);
    return promise;
  }

  /** The push side of the network's upstreams that have one (WebSocket), for the subscription feeds. */
  pushTransports(): { label: string | number; url: string; push: PushTransport }[] {
    const out: { label: string | number; url: string; push: PushTransport }[] = [];
    for (const u of this.upstreams)
      if (u.transport.push) out.push({ label: u.label, url: u.url, push: u.transport.push });
    return out;
  }

  /** Sends calls to one upstream whose circuit is closed (preferring one none of them tried), in batches it takes. */
  private dispatch(calls: Call[], allowTried = true): void {
    const budgets = this.budgetsOn;
    // With budgets, a batch goes to an upstream with room for its first call, as far as that room goes; the rest is
    // dispatched again (another upstream, or a wait).
    const up = this.pickFor(
      calls,
      calls.length === 1 ? calls[0].tried : undefined,
      allowTried,
      budgets && calls.length > 1 ? calls.slice(0, 1) : calls,
    );
    if (up === null) {
      // No upstream fits them all: each call finds its own.
      for (const c of calls) this.dispatch([c], allowTried);
      return;
    }
    if (up === undefined) {
      this.waitForBudget(calls);
      return;
    }
    const n = budgets && calls.length > 1 ? this.fitting(up, calls) : calls.length;
    const cap = Math.min(up.batch.cap, n);
    for (let i = 0; i < n; i += cap) this.start(up, calls.slice(i, Math.min(i + cap, n)));
    if (n < calls.length) this.dispatch(calls.slice(n), allowTried);
  }

  /** Whether budgets are watched: some upstream has a plan, or one answered HTTP 429 (a backoff). */
  private get budgetsOn(): boolean {
    return this.budgeted || this.stats.limited > 0;
  }

  /** How many of `calls`, from the first, fit `up`'s budget now (at least one: it was picked with room for it). */
  private fitting(up: Upstream, calls: readonly Call[]): number {
    const room = up.budget.room();
    let units = 0;
    let k = 0;
    for (; k < calls.length && k + 1 <= room.calls; k++) {
      units += this.methods.get(calls[k].method)?.units ?? DEFAULT_UNITS;
      if (units > room.units) break;
    }
    return Math.max(1, k);
  }

  private noneHealthy(): RpcError {
    return upstreamUnavailable(this.network, 'no healthy upstream (every circuit is open)', 503);
  }

  /** Requests and compute units of `calls` (what an upstream's budget counts). */
  private need(calls: readonly Call[]): number {
    let u = 0;
    for (const c of calls) u += this.methods.get(c.method)?.units ?? DEFAULT_UNITS;
    return u;
  }

  /**
   * No upstream with a closed circuit has room for `calls` now: they wait until one has (its window slid on, its
   * 429 backoff ended), at most budget.maxWaitMs and never past their deadline; else they fail (503, or the error
   * their last try got). Without budgets this is "every circuit is open".
   */
  private waitForBudget(calls: Call[]): void {
    const now = performance.now();
    let wait = Number.POSITIVE_INFINITY;
    if (this.budgetsOn) {
      const units = this.need(calls);
      for (const up of this.upstreams)
        if (up.breaker.closed) wait = Math.min(wait, up.budget.waitMs(calls.length, units, now));
    }
    // The earliest of the calls' deadlines and of their wait bounds (from when each first waited).
    let until = Number.POSITIVE_INFINITY;
    for (const c of calls) {
      let since = this.waitingSince.get(c);
      if (since === undefined) this.waitingSince.set(c, (since = now));
      until = Math.min(until, c.deadline, since + this.budgets.maxWaitMs);
    }
    if (wait > 0 && now + wait <= until && !this.closed) {
      this.stats.budgetWaits += calls.length;
      setTimeout(() => {
        const open = calls.filter((c) => !c.done);
        if (open.length > 0) this.dispatch(open);
      }, Math.ceil(wait)).unref();
      return;
    }
    const err =
      wait === Number.POSITIVE_INFINITY
        ? this.noneHealthy()
        : upstreamUnavailable(this.network, 'every upstream is over its budget or backing off after HTTP 429', 503);
    for (const c of calls) this.settle(c, undefined, c.lastErr ?? err);
  }

  /** One request to `up` for `calls`, with its deadline and hedge / split timer. */
  private start(up: Upstream, calls: Call[]): void {
    if (this.closed) {
      for (const c of calls) this.settle(c, undefined, upstreamUnavailable(this.network, 'service is shutting down'));
      return;
    }
    // Every path here picked an upstream with room, except a batch resent to the node that refused it as too large.
    if (this.budgetsOn && !up.budget.take(calls.length, this.need(calls))) {
      this.waitForBudget(calls);
      return;
    }
    const a = new Attempt(up, calls);
    this.attempts.add(a);
    let first = Number.POSITIVE_INFINITY;
    let last = 0;
    for (const c of calls) {
      c.attempts++;
      c.tried.push(up);
      c.live.push(a);
      if (c.deadline < first) first = c.deadline;
      if (c.deadline > last) last = c.deadline;
    }
    a.deadlineTimer = setTimeout(() => this.expire(a), Math.max(0, first - a.t0));
    const hedging = this.hedging.enabled && this.upstreams.length > 1;
    if (calls.length > 1) {
      // A batch is split after splitAfterMs, or — hedging, all idempotent — after its slowest method's quantile, its
      // calls then going one by one to another upstream (which is the hedge of a batch).
      let delay = calls[0].cls.splitAfterMs;
      if (hedging && calls.every((c) => c.idempotent)) {
        let q = 0;
        for (const c of calls) q = Math.max(q, this.hedging.delay(c.method));
        delay = Math.min(delay, q);
      }
      a.resendTimer = setTimeout(() => this.split(a, 'split'), delay);
    } else if (hedging && calls[0].idempotent) {
      a.resendTimer = setTimeout(() => this.hedge(a), this.hedging.delay(calls[0].method));
    }
    this.stats.requests++;
    const traceparent = tracing.tracer === undefined ? undefined : this.traceAttempt(tracing.tracer, a);
    const opts = { cls: calls[0].cls.name, signal: a.ac.signal, deadlineMs: last, traceparent };
    up.transport.send(buildBody(calls), opts).then(
      (text) => {
        this.observeLatency(a);
        this.answered(a, text);
      },
      (e: unknown) => {
        const err = e instanceof TransportError ? e : new TransportError('connect', String(e), false);
        // An answer that was read but refused (HTTP status) is an answer in time too.
        if (err.kind === 'http' || err.kind === 'refused') this.observeLatency(a);
        this.failed(a, err);
      },
    );
  }

  /** The span of an attempt whose calls are traced (background polls are not), and the traceparent for the node. */
  private traceAttempt(tracer: NonNullable<typeof tracing.tracer>, a: Attempt): string | undefined {
    const calls = a.calls;
    let traced = false;
    const contexts = calls.map((c) => {
      const live = liveTrace(c.trace);
      if (live !== undefined) traced = true;
      return live;
    });
    if (!traced) return undefined;
    const methods = [...new Set(calls.map((c) => c.method))].join(',');
    a.span = startUpstreamSpan(tracer, contexts, {
      'rpcgate.network': this.network,
      'rpcgate.upstream': String(a.up.label),
      'rpcgate.upstream.url': a.up.url,
      'rpcgate.upstream.kind': a.up.transport.kind,
      'rpcgate.upstream.attempt': Math.max(...calls.map((c) => c.attempts)),
      'rpcgate.upstream.calls': calls.length,
      'rpc.method': methods,
    });
    // A WebSocket message carries no headers: the span is still there, the node just cannot join the trace.
    return a.up.transport.kind === 'http' ? traceparentOf(a.span) : undefined;
  }

  /** One observation per upstream request (a coalesced batch is one), answered at all. */
  private observeLatency(a: Attempt): void {
    this.metrics?.observeUpstream(this.network, a.up.label, (performance.now() - a.t0) / 1000);
  }

  /** Ends an attempt: timers off, its calls no longer count it live; `abort` cancels the request. */
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
    if (a.span !== undefined) {
      // Aborted: every call it carried was answered elsewhere (a hedge or split won) or timed out.
      if (abort) a.span.setAttribute('rpcgate.upstream.aborted', true);
      a.span.end();
    }
  }

  /** The deadline of some calls passed: they (and only they) fail with a timeout; the request goes on for the rest. */
  private expire(a: Attempt): void {
    if (a.ended) return;
    const now = performance.now();
    let next = Number.POSITIVE_INFINITY;
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
    if (expired > 0) {
      a.up.breaker.failure('timeout', true);
      if (a.span !== undefined) failSpan(a.span, new Error(`${expired} call(s) timed out`));
    }
    if (!a.ended && next !== Number.POSITIVE_INFINITY)
      a.deadlineTimer = setTimeout(() => this.expire(a), Math.max(0, next - now));
  }

  /** A batch too slow (or refused, or too large) as a whole: its open calls go again one by one; the first answer wins. */
  private split(a: Attempt, why: 'split' | 'refused'): void {
    const open = a.calls.filter((c) => !c.done);
    if (why === 'refused') this.end(a, true);
    else if (open.length > 1 && this.hedging.enabled && open.every((c) => c.idempotent)) {
      // Hedging a slow batch: the open calls as one batch to an upstream none of them tried (one request, not one
      // per call); where there is none, they go one by one.
      const other = this.pickFor(open, open[0].tried, false);
      if (other) {
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
      const up = this.pickFor([c], c.tried, true);
      if (!up) this.waitForBudget([c]);
      else this.start(up, [c]);
    }
  }

  /** The node refused attempt `a`'s batch as a whole (too large, or batches unsupported): smaller batches from now. */
  private batchRefused(a: Attempt): void {
    const up = a.up;
    const good = up.batch.refused(a.calls.length);
    if (good === 0 || !up.breaker.closed) {
      // Nothing larger known to work (or the circuit opened meanwhile): the calls go one by one.
      this.split(a, 'refused');
      return;
    }
    // A larger size tried after `good` was answered many times: this batch again in batches of it.
    this.end(a, true);
    const open = a.calls.filter((c) => !c.done);
    this.stats.splits += open.length;
    for (let i = 0; i < open.length; i += good) {
      this.metrics?.upstreamResend?.(this.network, 'split');
      this.start(up, open.slice(i, i + good));
    }
  }

  /** A single idempotent call slower than its method's quantile: the same call to another upstream too. */
  private hedge(a: Attempt): void {
    const c = a.calls[0];
    if (c.done || a.ended) return;
    const up = this.pickFor([c], c.tried, false);
    if (!up) return;
    this.stats.hedges++;
    this.metrics?.upstreamResend?.(this.network, 'hedge');
    this.start(up, [c]);
  }

  private answered(a: Attempt, text: string): void {
    if (a.ended) return;
    this.end(a, false);
    const up = a.up;
    deliver(a.calls, text, this.raw, this.network, {
      result: (c, value) => {
        if (c.done) return;
        this.hedging.observe(c.method, performance.now() - a.t0);
        markAnswered(value, up.label); // which node answered, for the request log (./answered.ts)
        this.settle(c, value, undefined);
      },
      nodeError: (c, err) => {
        markAnswered(err, up.label);
        this.nodeFailed(c, err, up);
      },
      bad: (c, err) => this.settle(c, undefined, err),
      retry: (c, err) => this.retryOrFail(c, err, false),
      success: () => up.breaker.success(),
      failure: (reason) => up.breaker.failure(reason),
      batchAnswered: (n) => up.batch.answered(n),
      batchRefused: () => this.batchRefused(a),
    });
  }

  /** A node's error for one call: resent when the method may be and the error is listed as retryable. */
  private nodeFailed(c: Call, err: RpcError, up: Upstream): void {
    if (c.done) return;
    const r = refusalOf(c.method, err);
    if (r !== undefined) {
      // "Not here": learnt about this upstream, and the call goes to another that may answer it; the refusal is the
      // answer only when none is left (a result-count refusal is the query's: the splitter bisects it).
      up.caps.learn(c.method, r, c.need);
      if (r.kind !== 'logs-results' && this.upstreams.length > 1) {
        if (c.live.length > 0) {
          c.lastErr = err; // a hedge of it still runs
          return;
        }
        const other = performance.now() < c.deadline ? this.pickFor([c], c.tried, false) : undefined;
        if (other) {
          this.fleetStats.notHere++;
          this.metrics?.upstreamResend?.(this.network, 'retry');
          this.start(other, [c]);
          return;
        }
      }
      // A block it lacks may come in a moment: the retry policy decides, as for a lone upstream.
      if (r.kind !== 'block') {
        this.settle(c, undefined, err);
        return;
      }
    }
    if (c.retryable && this.retry.retryableNodeError(err)) this.retryOrFail(c, err, false);
    else this.settle(c, undefined, err);
  }

  private failed(a: Attempt, e: TransportError): void {
    if (a.ended) return; // aborted by us: a hedge won, or every call timed out
    const up = a.up;
    const message = redactIn(e.message, this.secrets);
    if (a.span !== undefined) {
      a.span.setAttribute('rpcgate.upstream.error', e.kind);
      failSpan(a.span, new Error(message));
    }
    this.end(a, false);
    up.breaker.lastError = message;
    if (e.kind === 'limited') {
      // Over the node's own rate limit: it is well, only busy. Backed off alone (Retry-After), not counted against its
      // circuit; the calls were not processed, so every one of them may go to another upstream.
      this.stats.limited++;
      up.budget.backOff(e.retryAfterMs);
      this.stats.failovers++;
      const err = upstreamUnavailable(this.network, message, 503);
      for (const c of a.calls) this.retryOrFail(c, err, true);
      return;
    }
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
      this.settle(a.calls[0], undefined, upstreamBadResponse(this.network, message));
      return;
    }
    // A refused connection means nothing listens there: no point in more tries before the probe says otherwise.
    if (e.kind === 'connect' && e.notSent) up.breaker.open(message, 'refused');
    else up.breaker.failure(message);
    this.stats.failovers++;
    const err =
      e.kind === 'timeout' ? upstreamTimeout(this.network, message) : upstreamUnavailable(this.network, message, 502);
    for (const c of a.calls) this.retryOrFail(c, err, e.notSent);
  }

  /** After a transport failure or a retryable node error: again (another upstream first) if allowed, else fail. */
  private retryOrFail(c: Call, err: RpcError, notSent: boolean): void {
    if (c.done) return;
    c.lastErr = err;
    if (c.live.length > 0) return; // a hedge or split of it is still running: let it answer
    const now = performance.now();
    if (!this.retry.may(c.retryable, notSent, c.attempts, c.deadline, now)) {
      this.settle(c, undefined, err);
      return;
    }
    this.stats.retries++;
    this.metrics?.upstreamResend?.(this.network, 'retry');
    const fresh = this.pickFor([c], c.tried, false);
    if (fresh) {
      this.start(fresh, [c]);
      return;
    }
    const delay = Math.min(this.retry.delayMs, Math.max(0, c.deadline - now - 1));
    setTimeout(() => {
      if (c.done) return;
      if (this.closed) this.settle(c, undefined, err);
      else this.dispatch([c]);
    }, delay).unref();
  }

  /** Answers a call once; attempts left without an open call are aborted (the hedge's loser, a split batch). */
  private settle(c: Call, result: unknown, err: RpcError | undefined): void {
    if (c.done) return;
    c.done = true;
    if (c.key !== undefined) this.inflight.delete(c.key);
    for (const a of c.live.slice()) if (--a.pending === 0) this.end(a as Attempt, true);
    if (err !== undefined) c.reject(err);
    else c.resolve(result);
  }

  /** An upstream for `calls` (pick's order), in a fleet the best fit: one known able to answer them all — for
   *  head-relative calls, in rotation and at the floor first, then in rotation — else any (the node decides). null:
   *  several calls no upstream fits together (dispatch them one by one). With budgets, only upstreams with room for
   *  `budgetCalls` (default: all of `calls`). */
  private pickFor(
    calls: readonly Call[],
    tried: readonly unknown[] | undefined,
    allowTried: boolean,
    budgetCalls: readonly Call[] = calls,
  ): Upstream | undefined | null {
    if (!this.consensus.active) return this.pick(tried, allowTried, undefined, budgetCalls);
    const floor = this.consensus.floor;
    const strict = (u: Upstream) =>
      calls.every((c) =>
        u.caps.can(c.method, c.need, this.consensus.inRotation(u) && (u.caps.head === 0 || u.caps.head >= floor)),
      );
    const loose = (u: Upstream) => calls.every((c) => u.caps.can(c.method, c.need, this.consensus.inRotation(u)));
    const up = this.pick(tried, allowTried, strict, budgetCalls) ?? this.pick(tried, allowTried, loose, budgetCalls);
    if (up !== undefined) return up;
    if (calls.length > 1) return null;
    // Nobody known to fit: anyone that does not lack the method, else anyone.
    return (
      this.pick(tried, allowTried, (u) => !u.caps.lacks.has(calls[0].method), budgetCalls) ??
      this.pick(tried, allowTried, undefined, budgetCalls)
    );
  }

  /** Round-robin over upstreams whose circuit is closed, that `fits`, and whose budget has room for `calls`, those not
   *  in `tried` first; `allowTried` falls back to them. */
  private pick(
    tried: readonly unknown[] | undefined,
    allowTried: boolean,
    fits?: (u: Upstream) => boolean,
    calls?: readonly Call[],
  ): Upstream | undefined {
    const n = this.upstreams.length;
    let fallback: Upstream | undefined;
    const checkBudget = calls !== undefined && this.budgetsOn;
    const units = checkBudget ? this.need(calls) : 0;
    const now = checkBudget ? performance.now() : 0;
    for (let i = 0; i < n; i++) {
      const u = this.upstreams[(this.rr + i) % n];
      if (!u.breaker.closed || (fits !== undefined && !fits(u))) continue;
      if (checkBudget && u.budget.waitMs(calls.length, units, now) > 0) continue;
      if (tried?.includes(u)) {
        fallback ??= u;
        continue;
      }
      this.rr = (this.rr + i + 1) % n;
      return u;
    }
    return allowTried ? fallback : undefined;
  }

  /** The breaker's half-open probe: one eth_blockNumber must answer with a result. */
  private async probe(up: Upstream): Promise<void> {
    if (this.closed) throw new Error('service is shutting down');
    const timeoutMs = this.classes.light.timeoutMs;
    let text: string;
    try {
      text = await up.transport.send(PROBE_BODY, {
        cls: 'light',
        signal: AbortSignal.timeout(timeoutMs),
        deadlineMs: performance.now() + timeoutMs,
      });
    } catch (e) {
      throw new Error(redactIn((e as Error).message, this.secrets));
    }
    const parsed = JSON.parse(text) as { result?: unknown };
    if (parsed === null || typeof parsed !== 'object' || !('result' in parsed)) throw new Error('probe: no result');
  }

  status(): UpstreamStatus[] {
    return this.upstreams.map((u) => ({
      url: u.url,
      kind: u.transport.kind,
      healthy: u.breaker.closed,
      circuit: u.breaker.state,
      lastError: u.breaker.lastError,
      downSince: u.breaker.downSince,
      ...(this.consensus.active && u.caps.head > 0 ? { head: u.caps.head, lag: this.consensus.lagOf(u) } : {}),
    }));
  }

  async close(): Promise<void> {
    this.closed = true;
    this.consensus.stop();
    for (const u of this.upstreams) u.breaker.stop();
    for (const f of this.unlisten) f();
    // Calls still queued or in flight fail cleanly.
    const err = upstreamUnavailable(this.network, 'service is shutting down');
    for (const cls of Object.values(this.classes)) {
      const q = cls.queue;
      cls.queue = [];
      for (const c of q) this.settle(c, undefined, err);
    }
    for (const a of [...this.attempts]) for (const c of a.calls) this.settle(c, undefined, err);
    await Promise.all(this.upstreams.map((u) => u.transport.close().catch(() => undefined)));
  }
}
