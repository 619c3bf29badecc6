// Operator metrics for /metrics: a prom-client Registry of its own (not the global one).
//
// The per-request series (requests_total, request_duration_seconds, upstream_duration_seconds) are hot: prom-client's
// `inc`/`observe` hash their label object on every call (≈1 µs). They are therefore counted in plain numbers here
// (a Map lookup per label plus array increments) and only turned into samples when /metrics is scraped: the counter
// through a `collect` callback (public prom-client API), the histograms through a small metric object that answers
// `get()` like prom-client's own Histogram does (the interface the Registry formats).
//
// Labels never carry secrets: networks and methods are normalised by the Meter (contract methods, else `other`);
// upstreams are an index or host:port (upstreamLabel strips credentials, paths and queries).
import { Counter, Gauge, Registry, collectDefaultMetrics, type Metric } from 'prom-client';
import type { LimitPeriod } from '../limits/types.js';
import { FINE_TO_PROM, PROM_BOUNDS_SECONDS, bucketIndex } from '../usage/histogram.js';
import { OUTCOMES } from '../usage/types.js';

export interface MetricsOptions {
  /** Active keys by kind (e.g. `{ app: 12, 'network-key': 30, static: 1 }`), read at scrape time. */
  activeKeys?: () => Record<string, number> | Iterable<readonly [kind: string, count: number]>;
  /** Networks served: their WebSocket gauges are exported at 0 too (a series that exists before the first socket). */
  networks?: readonly string[];
  /** Open node API WebSocket connections by network, read at scrape time. */
  websocketConnections?: () => Record<string, number>;
  /** Active eth_subscribe subscriptions by network and kind, read at scrape time. */
  subscriptionsActive?: () => Record<string, Record<string, number>>;
  /** Bytes the response cache holds in memory, by network, read at scrape time. */
  cacheBytes?: () => Record<string, number>;
  /** Log-in / sign-up calls the account throttles refused (429), by scope, read at scrape time. */
  accountThrottled?: () => Record<string, number>;
  /** Whether each backend answers, read at scrape time: `store` (PostgreSQL's stall watch; SQLite is in-process) and
   *  `redis-<role>` per Redis client (limits, filters, accounts, cache) — the operators' "quota backend down" alert. */
  backendsUp?: () => Record<string, boolean>;
  /** Also collect prom-client's default process metrics (CPU, memory, event loop lag) into this registry. */
  processMetrics?: boolean;
}

/** Cumulative histogram series: per-bucket counts (non-cumulative; made cumulative at scrape), sum, count. */
class HistSeries {
  readonly counts: Float64Array;
  sum = 0;
  count = 0;
  constructor(
    readonly labels: Readonly<Record<string, string>>,
    buckets: number,
  ) {
    this.counts = new Float64Array(buckets + 1);
  }
}

/** A histogram whose observations are pre-bucketed by the caller; formatted by the Registry like prom-client's. */
class PrebucketedHistogram {
  readonly type = 'histogram';
  readonly aggregator = 'sum';
  private readonly series = new Map<string, HistSeries>();

  constructor(
    readonly name: string,
    readonly help: string,
    readonly bounds: readonly number[],
  ) {}

  /** The series of these labels (callers cache it: this builds a key). */
  child(labels: Record<string, string>): HistSeries {
    const key = Object.values(labels).join('\u0000');
    let s = this.series.get(key);
    if (s === undefined) this.series.set(key, (s = new HistSeries(labels, this.bounds.length)));
    return s;
  }

  async get() {
    const values: { labels: Record<string, string | number>; value: number; metricName: string }[] = [];
    for (const s of this.series.values()) {
      let cum = 0;
      for (let i = 0; i < this.bounds.length; i++) {
        cum += s.counts[i];
        values.push({ labels: { ...s.labels, le: this.bounds[i] }, value: cum, metricName: `${this.name}_bucket` });
      }
      values.push({ labels: { ...s.labels, le: '+Inf' }, value: s.count, metricName: `${this.name}_bucket` });
      values.push({ labels: s.labels, value: s.sum, metricName: `${this.name}_sum` });
      values.push({ labels: s.labels, value: s.count, metricName: `${this.name}_count` });
    }
    return { name: this.name, help: this.help, type: this.type, values, aggregator: this.aggregator };
  }

  reset(): void {
    for (const s of this.series.values()) {
      s.counts.fill(0);
      s.sum = 0;
      s.count = 0;
    }
  }
}

/** Request counters of one (network, method): per outcome, plus its duration series. */
export class RequestSeries {
  readonly outcomes = new Float64Array(OUTCOMES.length);
  /** Compute units of the calls (x-gateway.units). */
  units = 0;
  constructor(
    readonly network: string,
    readonly method: string,
    readonly duration: HistSeries,
  ) {}
}

/**
 * A Prometheus label for an upstream: an index as is, a URL as host:port only (no user info, path or query — where
 * providers put API keys). Prefer indexes when host names themselves could be secret.
 */
export function upstreamLabel(upstream: string | number): string {
  if (typeof upstream === 'number') return String(upstream);
  if (!upstream.includes('://')) return /^[A-Za-z0-9.-]+(?::\d+)?$/.test(upstream) ? upstream : 'invalid';
  try {
    const u = new URL(upstream);
    const port =
      u.port ||
      (u.protocol === 'https:' || u.protocol === 'wss:'
        ? '443'
        : u.protocol === 'http:' || u.protocol === 'ws:'
          ? '80'
          : '');
    return port ? `${u.hostname}:${port}` : u.hostname;
  } catch {
    return 'invalid';
  }
}

/** The eth_subscribe kinds the gateway serves (each exported, at 0 when none is active). */
const SUBSCRIPTION_KINDS = ['newHeads', 'logs', 'newPendingTransactions'] as const;

export class Metrics {
  readonly registry = new Registry();
  private readonly requestsByNet = new Map<string, Map<string, RequestSeries>>();
  private readonly requestDuration: PrebucketedHistogram;
  private readonly upstreamDuration: PrebucketedHistogram;
  private readonly upstreamByNet = new Map<string, Map<string | number, HistSeries>>();
  private readonly upstreamUp: Gauge<'network' | 'upstream'>;
  private readonly upstreamCircuit: Gauge<'network' | 'upstream'>;
  private readonly upstreamLag: Gauge<'network' | 'upstream'>;
  private readonly upstreamResends: Counter<'network' | 'kind'>;
  private readonly limitRefusals: Counter<'network' | 'period'>;
  private readonly ownErrors: Counter<'network' | 'outcome' | 'reason'>;
  private readonly usageDropped: Counter;
  private readonly usageFlushFailures: Counter;
  private readonly requestLogDropped: Counter;
  private readonly requestLogWritten: Counter;
  private readonly requestLogFlushFailures: Counter;
  private readonly notificationsByNet = new Map<string, number>();
  /** Response cache lookups: network → method → [hits, misses] (plain numbers: the hot path). */
  private readonly cacheByNet = new Map<string, Map<string, [number, number]>>();

  constructor(opts: MetricsOptions = {}) {
    const registers = [this.registry];
    const requestsByNet = this.requestsByNet;
    new Counter({
      name: 'rpcgate_requests_total',
      help: 'Node API calls by network, method (contract methods, else "other") and outcome.',
      labelNames: ['network', 'method', 'outcome'] as const,
      registers,
      collect() {
        this.reset();
        for (const byMethod of requestsByNet.values())
          for (const s of byMethod.values())
            for (let i = 0; i < OUTCOMES.length; i++)
              if (s.outcomes[i] > 0)
                this.inc({ network: s.network, method: s.method, outcome: OUTCOMES[i] }, s.outcomes[i]);
      },
    });
    new Counter({
      name: 'rpcgate_units_total',
      help: "Compute units of node API calls (each call its method's x-gateway.units in openrpc.json) by network and method.",
      labelNames: ['network', 'method'] as const,
      registers,
      collect() {
        this.reset();
        for (const byMethod of requestsByNet.values())
          for (const s of byMethod.values())
            if (s.units > 0) this.inc({ network: s.network, method: s.method }, s.units);
      },
    });
    this.requestDuration = new PrebucketedHistogram(
      'rpcgate_request_duration_seconds',
      'Node API call latency as seen by rpcgate (request read → response), by network and method.',
      PROM_BOUNDS_SECONDS,
    );
    this.upstreamDuration = new PrebucketedHistogram(
      'rpcgate_upstream_duration_seconds',
      'Upstream node request latency by network and upstream (index or host:port).',
      PROM_BOUNDS_SECONDS,
    );
    this.registry.registerMetric(this.requestDuration as unknown as Metric);
    this.registry.registerMetric(this.upstreamDuration as unknown as Metric);
    this.upstreamUp = new Gauge({
      name: 'rpcgate_upstream_up',
      help: 'Upstream health: 1 healthy, 0 unhealthy.',
      labelNames: ['network', 'upstream'] as const,
      registers,
    });
    this.upstreamCircuit = new Gauge({
      name: 'rpcgate_upstream_circuit_state',
      help: 'Upstream circuit breaker: 0 closed (serving), 1 half-open (being probed), 2 open (no traffic).',
      labelNames: ['network', 'upstream'] as const,
      registers,
    });
    this.upstreamLag = new Gauge({
      name: 'rpcgate_upstream_lag_blocks',
      help: "Blocks an upstream is behind its network's best head (networks of two or more upstreams, polled while in use); over upstream.fleet.maxBlockLag it serves no head-relative calls.",
      labelNames: ['network', 'upstream'] as const,
      registers,
    });
    this.upstreamResends = new Counter({
      name: 'rpcgate_upstream_resends_total',
      help: 'Calls sent to an upstream again, by network and kind: hedge (second upstream after the latency quantile), retry (after a failure), split (out of a slow, refused or oversized batch).',
      labelNames: ['network', 'kind'] as const,
      registers,
    });
    this.limitRefusals = new Counter({
      name: 'rpcgate_limit_refusals_total',
      help: 'Calls refused by a rate or quota limit, by network and limit period.',
      labelNames: ['network', 'period'] as const,
      registers,
    });
    this.ownErrors = new Counter({
      name: 'rpcgate_refusals_total',
      help: "Node API calls answered with an error of rpcgate's own (data.source rpcgate), by network, outcome and data.reason (rate, quota, block-range, subscriptions, filters, key, ip, upstream, …).",
      labelNames: ['network', 'outcome', 'reason'] as const,
      registers,
    });
    const activeKeys = opts.activeKeys;
    new Gauge({
      name: 'rpcgate_active_keys',
      help: 'Keys the access index currently accepts, by kind.',
      labelNames: ['kind'] as const,
      registers,
      collect() {
        this.reset();
        if (!activeKeys) return;
        const v = activeKeys();
        const entries = Symbol.iterator in v ? (v as Iterable<readonly [string, number]>) : Object.entries(v);
        for (const [kind, n] of entries) this.set({ kind }, n);
      },
    });
    this.usageDropped = new Counter({
      name: 'rpcgate_usage_dropped_total',
      help: 'Metered calls not stored because the in-memory usage buffer was full (store unavailable too long).',
      registers,
    });
    this.usageFlushFailures = new Counter({
      name: 'rpcgate_usage_flush_failures_total',
      help: 'Usage flushes that failed (their rows are kept and retried).',
      registers,
    });
    this.requestLogDropped = new Counter({
      name: 'rpcgate_request_log_dropped_total',
      help: 'Request log entries dropped because the write queue was full (store slower than traffic) or a write failed.',
      registers,
    });
    this.requestLogWritten = new Counter({
      name: 'rpcgate_request_log_written_total',
      help: 'Request log entries written to the store.',
      registers,
    });
    this.requestLogFlushFailures = new Counter({
      name: 'rpcgate_request_log_flush_failures_total',
      help: 'Request log batch writes that failed (their entries are dropped).',
      registers,
    });
    // WebSocket layer: gauges read the live counts of the running transport and subscriptions at scrape time, so they
    // can never drift from them (no inc/dec to miss on an error path).
    const networks = opts.networks ?? [];
    const { websocketConnections, subscriptionsActive } = opts;
    new Gauge({
      name: 'rpcgate_websocket_connections',
      help: 'Open node API WebSocket connections on this replica, by network.',
      labelNames: ['network'] as const,
      registers,
      collect() {
        this.reset();
        const open = websocketConnections?.() ?? {};
        for (const network of new Set([...networks, ...Object.keys(open)])) this.set({ network }, open[network] ?? 0);
      },
    });
    new Gauge({
      name: 'rpcgate_subscriptions_active',
      help: 'Active eth_subscribe subscriptions on this replica, by network and kind (newHeads, logs, newPendingTransactions).',
      labelNames: ['network', 'kind'] as const,
      registers,
      collect() {
        this.reset();
        const active = subscriptionsActive?.() ?? {};
        for (const network of new Set([...networks, ...Object.keys(active)])) {
          const byKind = active[network] ?? {};
          for (const kind of new Set([...SUBSCRIPTION_KINDS, ...Object.keys(byKind)]))
            this.set({ network, kind }, byKind[kind] ?? 0);
        }
      },
    });
    const notificationsByNet = this.notificationsByNet;
    new Counter({
      name: 'rpcgate_websocket_notifications_total',
      help: 'eth_subscription notifications delivered to WebSocket clients, by network.',
      labelNames: ['network'] as const,
      registers,
      collect() {
        this.reset();
        for (const network of networks) if (!notificationsByNet.has(network)) this.inc({ network }, 0);
        for (const [network, n] of notificationsByNet) this.inc({ network }, n);
      },
    });
    const cacheByNet = this.cacheByNet;
    new Counter({
      name: 'rpcgate_cache_requests_total',
      help: 'Response cache lookups of node API calls by network, method and result (hit: answered from the cache; miss: sent to the node).',
      labelNames: ['network', 'method', 'result'] as const,
      registers,
      collect() {
        this.reset();
        for (const [network, byMethod] of cacheByNet)
          for (const [method, [hit, miss]] of byMethod) {
            this.inc({ network, method, result: 'hit' }, hit);
            this.inc({ network, method, result: 'miss' }, miss);
          }
      },
    });
    const cacheBytes = opts.cacheBytes;
    new Gauge({
      name: 'rpcgate_cache_bytes',
      help: 'Bytes of answers the response cache holds in memory (estimated), by network.',
      labelNames: ['network'] as const,
      registers,
      collect() {
        this.reset();
        for (const [network, n] of Object.entries(cacheBytes?.() ?? {})) this.set({ network }, n);
      },
    });
    const accountThrottled = opts.accountThrottled;
    new Counter({
      name: 'rpcgate_account_throttled_total',
      help: 'Account API calls (log-in, sign-up) refused by a throttle with 429, by scope: email+ip, email, device, ip, signup-ip, password-hashing (the hash gate was full).',
      labelNames: ['scope'] as const,
      registers,
      collect() {
        this.reset();
        for (const [scope, n] of Object.entries(accountThrottled?.() ?? {})) this.inc({ scope }, n);
      },
    });
    const backendsUp = opts.backendsUp;
    new Gauge({
      name: 'rpcgate_backend_up',
      help: 'Backend reachable: 1 up, 0 down, by backend (store: the database; redis-limits, redis-filters, redis-accounts, redis-cache: each Redis client).',
      labelNames: ['backend'] as const,
      registers,
      collect() {
        this.reset();
        for (const [backend, up] of Object.entries(backendsUp?.() ?? {})) this.set({ backend }, up ? 1 : 0);
      },
    });
    if (opts.processMetrics) collectDefaultMetrics({ register: this.registry, prefix: 'rpcgate_' });
  }

  /** The counters of one (network, method) — labels already normalised. Hot path: two Map lookups. */
  requestSeries(network: string, method: string): RequestSeries {
    let byMethod = this.requestsByNet.get(network);
    if (byMethod === undefined) this.requestsByNet.set(network, (byMethod = new Map()));
    let s = byMethod.get(method);
    if (s === undefined)
      byMethod.set(method, (s = new RequestSeries(network, method, this.requestDuration.child({ network, method }))));
    return s;
  }

  /** Counts `n` calls of a series with one outcome and latency (fine histogram bucket `fineBucket`), weighing `units`
   *  compute units together. */
  observeRequest(
    s: RequestSeries,
    outcomeIndex: number,
    fineBucket: number,
    latencyMs: number,
    n: number,
    units = 0,
  ): void {
    s.outcomes[outcomeIndex] += n;
    s.units += units;
    const d = s.duration;
    d.counts[FINE_TO_PROM[fineBucket]] += n;
    d.sum += (latencyMs / 1000) * n;
    d.count += n;
  }

  /** For the upstream pools: one upstream request's latency. `upstream` is an index or a URL/host (see upstreamLabel). */
  observeUpstream(network: string, upstream: string | number, seconds: number): void {
    let byUp = this.upstreamByNet.get(network);
    if (byUp === undefined) this.upstreamByNet.set(network, (byUp = new Map()));
    let s = byUp.get(upstream);
    if (s === undefined) {
      if (byUp.size >= 64) return; // upstreams are configured, so a handful; never let a caller grow this unbounded
      byUp.set(upstream, (s = this.upstreamDuration.child({ network, upstream: upstreamLabel(upstream) })));
    }
    s.counts[FINE_TO_PROM[bucketIndex(seconds * 1000)]] += 1;
    s.sum += seconds;
    s.count += 1;
  }

  /** For the upstream pools' health checks. */
  setUpstreamHealth(network: string, upstream: string | number, up: boolean): void {
    this.upstreamUp.set({ network, upstream: upstreamLabel(upstream) }, up ? 1 : 0);
  }

  /** For the upstream pools' circuit breakers: 0 closed, 1 half-open, 2 open. */
  setUpstreamCircuit(network: string, upstream: string | number, state: number): void {
    this.upstreamCircuit.set({ network, upstream: upstreamLabel(upstream) }, state);
  }

  setUpstreamLag(network: string, upstream: string | number, lag: number): void {
    this.upstreamLag.set({ network, upstream: upstreamLabel(upstream) }, lag);
  }

  /** A call the upstream pool sent again (rare: a counter with labels is fine here). */
  upstreamResend(network: string, kind: 'hedge' | 'retry' | 'split'): void {
    this.upstreamResends.inc({ network, kind });
  }

  /** A call refused by a limit (the limiter's decision period). */
  limitRefusal(network: string, period: LimitPeriod, n = 1): void {
    this.limitRefusals.inc({ network, period }, n);
  }

  /** A call answered with one of rpcgate's own errors (`reason`: a word of the error table, a bounded label). */
  ownError(network: string, outcome: string, reason: string): void {
    this.ownErrors.inc({ network, outcome, reason });
  }

  /** `n` eth_subscription notifications delivered on `network` (a plain number: notifications are a hot path). */
  notificationsDelivered(network: string, n: number): void {
    this.notificationsByNet.set(network, (this.notificationsByNet.get(network) ?? 0) + n);
  }

  /** A response cache lookup (src/gateway/cache): `method` is a contract method (bounded labels). */
  cacheLookup(network: string, method: string, hit: boolean): void {
    let byMethod = this.cacheByNet.get(network);
    if (byMethod === undefined) this.cacheByNet.set(network, (byMethod = new Map()));
    let c = byMethod.get(method);
    if (c === undefined) byMethod.set(method, (c = [0, 0]));
    c[hit ? 0 : 1]++;
  }

  /** Used by the Meter. */
  usageDroppedInc(n: number): void {
    this.usageDropped.inc(n);
  }
  usageFlushFailed(): void {
    this.usageFlushFailures.inc();
  }

  /** Used by the RequestLog. */
  requestLogDroppedInc(n: number): void {
    this.requestLogDropped.inc(n);
  }
  requestLogWrittenInc(n: number): void {
    this.requestLogWritten.inc(n);
  }
  requestLogFlushFailed(): void {
    this.requestLogFlushFailures.inc();
  }

  /** Content-Type of metricsText(). */
  get contentType(): string {
    return this.registry.contentType;
  }

  /** Prometheus text format (0.0.4). */
  async metricsText(): Promise<string> {
    // prom-client writes NaN as `Nan` (lib/util.js), which the text format does not allow (it is `NaN`); a gauge
    // with no samples yet (e.g. event-loop lag right after start) would make the whole scrape unparsable.
    return (await this.registry.metrics()).replace(/ Nan$/gm, ' NaN');
  }
}
