// The upstream pool of one network: several node URLs over undici keep-alive pools, with health and failover,
// and — the reason this is more than a pipe — coalescing: calls arriving in the same event-loop turn are sent to
// the node as ONE JSON-RPC batch (flushed at setImmediate or when `maxBatch` calls are waiting), and identical
// concurrent calls of idempotent methods (same method + params) share one upstream call. One HTTP round trip to the node then serves
// many client requests, which is what lets a Node proxy keep up with nginx on one core.
import { Pool } from 'undici';
import type { UpstreamConfig } from '../config/config.js';
import { RawResult } from '../../toolkit/rpc/engine.js';
import { RpcError } from '../../toolkit/rpc/errors.js';
import { splitResponse } from './split.js';
import { upstreamTimeout, upstreamUnavailable, upstreamBadResponse, nodeError } from './errors.js';

/** What the pool must know of a method (src/gateway/method-meaning.ts's GatewayMeaning fits): whether identical
 * concurrent calls may share one upstream call, and whether the call may be resent to another upstream once the
 * request may have reached a node. A method the pool is not told about is neither (fail closed). */
export interface UpstreamMethodPolicy {
  readonly idempotent: boolean;
  readonly retryable: boolean;
}

interface Call {
  /** `"method"` already quoted for the body. */
  m: string;
  /** params already serialised (`[...]`). */
  p: string;
  resolve: (v: unknown) => void;
  reject: (e: unknown) => void;
  /** dedupe key while in flight (idempotent methods only). */
  key: string | undefined;
  retryable: boolean;
}

/** Why an attempt against one upstream failed; decides health marking and retry. */
class AttemptError extends Error {
  constructor(
    readonly kind: 'connect' | 'timeout' | 'http' | 'body',
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
  lastError?: string;
  downSince?: number;
}

class Upstream {
  healthy = true;
  /** Label for metrics: host:port (or the index when host:port repeats in the pool); never credentials or path. */
  label: string | number = 0;
  lastError: string | undefined;
  downSince: number | undefined;
  probe: NodeJS.Timeout | undefined;
  readonly pool: Pool;
  readonly path: string;
  readonly headers: Record<string, string>;

  constructor(readonly url: string, cfg: UpstreamConfig) {
    const u = new URL(url);
    this.path = (u.pathname || '/') + u.search;
    this.headers = { 'content-type': 'application/json', accept: 'application/json' };
    if (u.username || u.password) {
      this.headers.authorization = 'Basic ' + Buffer.from(`${decodeURIComponent(u.username)}:${decodeURIComponent(u.password)}`).toString('base64');
    }
    this.pool = new Pool(u.origin, {
      connections: cfg.connections,
      pipelining: cfg.pipelining,
      keepAliveTimeout: 30_000,
      keepAliveMaxTimeout: 600_000,
      headersTimeout: cfg.requestTimeoutMs,
      bodyTimeout: cfg.requestTimeoutMs,
      connect: { timeout: cfg.connectTimeoutMs },
    });
  }
}

export interface UpstreamPoolOptions {
  network: string;
  urls: string[];
  config: UpstreamConfig;
  /** Resolve results as RawResult (the node's bytes, not parsed; default true) or as parsed values. */
  raw?: boolean;
  /** Per method name: may it be deduped / retried on another upstream (built once from the contract; absent or a
   *  method not in it = neither). */
  methods?: ReadonlyMap<string, UpstreamMethodPolicy>;
  /** Called when an upstream changes health (for logs). */
  onHealth?: (url: string, healthy: boolean, reason?: string) => void;
  /** Prometheus metrics (src/gateway/metering Metrics fits): upstream latency per HTTP request, health. */
  metrics?: UpstreamMetrics;
}

/** What the pool reports to /metrics. `upstream` is host:port or an index, never a URL (keys live in paths). */
export interface UpstreamMetrics {
  observeUpstream(network: string, upstream: string | number, seconds: number): void;
  setUpstreamHealth(network: string, upstream: string | number, up: boolean): void;
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

export class UpstreamPool {
  readonly network: string;
  private readonly upstreams: Upstream[];
  private readonly cfg: UpstreamConfig;
  private readonly onHealth: UpstreamPoolOptions['onHealth'];
  private readonly metrics: UpstreamMetrics | undefined;
  private readonly raw: boolean;
  private readonly methods: ReadonlyMap<string, UpstreamMethodPolicy>;
  private queue: Call[] = [];
  private scheduled = false;
  private readonly inflight = new Map<string, Promise<unknown>>();
  private rr = 0;
  private closed = false;
  /** Counters for tests and the bench: upstream HTTP requests sent, calls served, calls deduped. */
  readonly stats = { requests: 0, calls: 0, deduped: 0, failovers: 0 };

  constructor(opts: UpstreamPoolOptions) {
    if (opts.urls.length === 0) throw new Error(`network ${opts.network}: no upstream URL`);
    this.network = opts.network;
    this.cfg = opts.config;
    this.onHealth = opts.onHealth;
    this.raw = opts.raw ?? true;
    this.methods = opts.methods ?? new Map();
    this.upstreams = opts.urls.map((u) => new Upstream(u, opts.config));
    this.metrics = opts.metrics;
    const hostPorts = this.upstreams.map((u) => {
      const url = new URL(u.url);
      return `${url.hostname}:${url.port || (url.protocol === 'https:' ? '443' : '80')}`;
    });
    this.upstreams.forEach((u, i) => {
      u.label = hostPorts.indexOf(hostPorts[i]) === hostPorts.lastIndexOf(hostPorts[i]) ? hostPorts[i] : i;
      this.metrics?.setUpstreamHealth(this.network, u.label, true);
    });
    this.flush = this.flush.bind(this);
  }

  /** Forwards one call; resolves with the node's result (a RawResult unless `raw: false`), rejects with RpcError (node error passed through,
   * or upstream unavailable / timeout). */
  call(method: string, params?: readonly unknown[] | Record<string, unknown>): Promise<unknown> {
    return this.callSerialized(method, params === undefined ? '[]' : JSON.stringify(params));
  }

  /** As `call`, with params already serialised as JSON. */
  callSerialized(method: string, paramsJson: string): Promise<unknown> {
    if (this.closed) return Promise.reject(upstreamUnavailable(this.network, 'service is shutting down'));
    this.stats.calls++;
    const policy = this.methods.get(method);
    const retryable = policy?.retryable === true;
    let key: string | undefined;
    if (policy?.idempotent === true && this.cfg.coalesce) {
      key = method + paramsJson;
      const same = this.inflight.get(key);
      if (same !== undefined) {
        this.stats.deduped++;
        return same;
      }
    }
    const m = quote(method);
    const promise = new Promise<unknown>((resolve, reject) => {
      const c: Call = { m, p: paramsJson, resolve, reject, key, retryable };
      if (!this.cfg.coalesce) {
        void this.send([c]);
        return;
      }
      this.queue.push(c);
      if (this.queue.length >= this.cfg.maxBatch) this.flush();
      else if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(this.flush);
      }
    });
    if (key !== undefined) this.inflight.set(key, promise);
    return promise;
  }

  private flush(): void {
    this.scheduled = false;
    const q = this.queue;
    if (q.length === 0) return;
    this.queue = [];
    void this.send(q);
  }

  /** Sends calls as one HTTP request (a batch when more than one), failing over to other healthy upstreams. */
  private async send(calls: Call[]): Promise<void> {
    const body = buildBody(calls);
    const tried: Upstream[] = [];
    let lastErr: AttemptError | undefined;
    for (;;) {
      const up = this.pick(tried);
      if (up === undefined) {
        const err = lastErr?.kind === 'timeout'
          ? upstreamTimeout(this.network, lastErr.message)
          : upstreamUnavailable(this.network, lastErr ? lastErr.message : 'no healthy upstream', lastErr ? 502 : 503);
        for (const c of calls) this.settle(c, undefined, err);
        return;
      }
      tried.push(up);
      let text: string;
      try {
        text = await this.post(up, body);
      } catch (e) {
        const ae = e instanceof AttemptError ? e : new AttemptError('connect', String((e as Error)?.message ?? e), false);
        lastErr = ae;
        this.markDown(up, ae.message);
        // Calls that must not run twice fail here unless the request provably never left.
        if (!ae.notSent && calls.some((c) => !c.retryable)) {
          const err = ae.kind === 'timeout' ? upstreamTimeout(this.network, ae.message) : upstreamUnavailable(this.network, ae.message, 502);
          calls = calls.filter((c) => (c.retryable ? true : (this.settle(c, undefined, err), false)));
          if (calls.length === 0) return;
          return this.send(calls);
        }
        this.stats.failovers++;
        continue;
      }
      this.deliver(calls, text);
      return;
    }
  }

  /** One POST to one upstream; resolves with the body text of a usable (2xx or JSON-RPC error) answer. */
  private async post(up: Upstream, body: string, probe = false): Promise<string> {
    if (!probe) this.stats.requests++;
    const t0 = performance.now();
    let res;
    try {
      res = await up.pool.request({ path: up.path, method: 'POST', headers: up.headers, body });
    } catch (e) {
      throw classify(e);
    }
    let text: string;
    try {
      text = await res.body.text();
    } catch (e) {
      throw classify(e);
    }
    // One observation per upstream HTTP request (a coalesced batch is one), answered at all; probes excluded.
    if (!probe) this.metrics?.observeUpstream(this.network, up.label, (performance.now() - t0) / 1000);
    if (res.statusCode >= 500 || res.statusCode === 429 || res.statusCode === 408) {
      // A node behind a proxy may still answer a JSON-RPC error with 5xx; treat the upstream as failing anyway.
      throw new AttemptError('http', `upstream answered HTTP ${res.statusCode}`, false);
    }
    return text;
  }

  /** Maps the node's answer back to the calls: by id for batches (nodes may reorder), whole-batch errors to all. */
  private deliver(calls: Call[], text: string): void {
    if (this.raw && this.deliverRaw(calls, text)) return;
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      const err = upstreamBadResponse(this.network, 'upstream answered with invalid JSON');
      for (const c of calls) this.settle(c, undefined, err);
      return;
    }
    if (calls.length === 1 && !Array.isArray(parsed)) {
      this.settleFrom(calls[0], parsed);
      return;
    }
    if (Array.isArray(parsed)) {
      const done = new Uint8Array(calls.length);
      for (let i = 0; i < parsed.length; i++) {
        const item = parsed[i] as { id?: unknown } | null;
        const id = item !== null && typeof item === 'object' ? item.id : undefined;
        if (typeof id === 'number' && id >= 0 && id < calls.length && done[id] === 0) {
          done[id] = 1;
          this.settleFrom(calls[id], item);
        } else if (calls.length === 1 && parsed.length === 1 && done[0] === 0) {
          done[0] = 1;
          this.settleFrom(calls[0], item);
        }
      }
      for (let i = 0; i < calls.length; i++) {
        if (done[i] === 0) this.settle(calls[i], undefined, upstreamBadResponse(this.network, 'upstream returned no response for this call'));
      }
      return;
    }
    // A single object for a batch: the node refused the batch as a whole (e.g. batches unsupported or too large).
    const err = parsed !== null && typeof parsed === 'object' && 'error' in parsed
      ? toNodeError((parsed as { error: unknown }).error)
      : upstreamBadResponse(this.network, 'upstream answered a batch with a non-batch response');
    for (const c of calls) this.settle(c, undefined, err);
  }

  /** The fast path: split the text and hand results out as the node's bytes. false = parse instead. */
  private deliverRaw(calls: Call[], text: string): boolean {
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
      if (it.resultStart !== -1) this.settle(c, new RawResult(text.slice(it.resultStart, it.resultEnd)), undefined);
      else {
        let error: unknown;
        try {
          error = JSON.parse(text.slice(it.errorStart, it.errorEnd));
        } catch {
          error = 'node error';
        }
        this.settle(c, undefined, toNodeError(error));
      }
    }
    for (let i = 0; i < n; i++) {
      if (done[i] === 0) this.settle(calls[i], undefined, upstreamBadResponse(this.network, 'upstream returned no response for this call'));
    }
    return true;
  }

  private settleFrom(c: Call, item: unknown): void {
    if (item === null || typeof item !== 'object') {
      this.settle(c, undefined, upstreamBadResponse(this.network, 'upstream returned a malformed response'));
      return;
    }
    const o = item as { result?: unknown; error?: unknown };
    if (o.error !== undefined) this.settle(c, undefined, toNodeError(o.error));
    else if ('result' in o) this.settle(c, o.result, undefined);
    else this.settle(c, undefined, upstreamBadResponse(this.network, 'upstream response has neither result nor error'));
  }

  private settle(c: Call, result: unknown, err: RpcError | undefined): void {
    if (c.key !== undefined) this.inflight.delete(c.key);
    if (err !== undefined) c.reject(err);
    else c.resolve(result);
  }

  /** Round-robin over healthy upstreams not yet tried for this request. */
  private pick(tried: Upstream[]): Upstream | undefined {
    const n = this.upstreams.length;
    if (n === 1) {
      const u = this.upstreams[0];
      return u.healthy && tried.length === 0 ? u : undefined;
    }
    for (let i = 0; i < n; i++) {
      const u = this.upstreams[(this.rr + i) % n];
      if (u.healthy && !tried.includes(u)) {
        this.rr = (this.rr + i + 1) % n;
        return u;
      }
    }
    return undefined;
  }

  private markDown(up: Upstream, reason: string): void {
    up.lastError = reason;
    if (!up.healthy) return;
    up.healthy = false;
    up.downSince = Date.now();
    this.metrics?.setUpstreamHealth(this.network, up.label, false);
    this.onHealth?.(up.url, false, reason);
    if (this.closed) return;
    up.probe = setInterval(() => void this.probe(up), this.cfg.probeIntervalMs);
    up.probe.unref();
  }

  private probing = new WeakSet<Upstream>();
  private async probe(up: Upstream): Promise<void> {
    if (this.probing.has(up) || this.closed) return;
    this.probing.add(up);
    try {
      const text = await this.post(up, PROBE_BODY, true);
      const parsed = JSON.parse(text) as { result?: unknown };
      if (parsed && typeof parsed === 'object' && 'result' in parsed) {
        clearInterval(up.probe);
        up.probe = undefined;
        up.healthy = true;
        up.downSince = undefined;
        this.metrics?.setUpstreamHealth(this.network, up.label, true);
        this.onHealth?.(up.url, true);
      }
    } catch (e) {
      up.lastError = (e as Error).message;
    } finally {
      this.probing.delete(up);
    }
  }

  status(): UpstreamStatus[] {
    return this.upstreams.map((u) => ({ url: u.url, healthy: u.healthy, lastError: u.lastError, downSince: u.downSince }));
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const u of this.upstreams) if (u.probe) clearInterval(u.probe);
    // Calls still queued fail cleanly; in-flight ones settle or fail as their sockets close.
    const q = this.queue;
    this.queue = [];
    for (const c of q) this.settle(c, undefined, upstreamUnavailable(this.network, 'service is shutting down'));
    await Promise.all(this.upstreams.map((u) => u.pool.destroy().catch(() => undefined)));
  }
}

/** The request body by concatenation of already-serialised parts (ids are the call's index in the batch). */
function buildBody(calls: Call[]): string {
  if (calls.length === 1) {
    const c = calls[0];
    return '{"jsonrpc":"2.0","id":0,"method":' + c.m + ',"params":' + c.p + '}';
  }
  let s = '[';
  for (let i = 0; i < calls.length; i++) {
    const c = calls[i];
    s += (i === 0 ? '{"jsonrpc":"2.0","id":' : ',{"jsonrpc":"2.0","id":') + i + ',"method":' + c.m + ',"params":' + c.p + '}';
  }
  return s + ']';
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
    return nodeError(typeof e.code === 'number' ? e.code : -32603, typeof e.message === 'string' ? e.message : 'node error', e.data);
  }
  return nodeError(-32603, typeof error === 'string' ? error : 'node error', undefined);
}
