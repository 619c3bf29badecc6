// The circuit breaker of one upstream. Two rules, either opens the circuit: `failureThreshold` failed requests in a
// row, and a failed share of at least `errorRate` among the last `windowSize` requests once `minCalls` are in; a
// refused connection opens it at once (nothing listens there). The window counts requests, not seconds: a time
// window would judge a quiet node on two calls and a busy one on thousands, a count judges both on the same
// evidence, and a ring of bytes costs no timer and no allocation per request. Timeouts are failures in both (a node
// that times out on most calls is failing), but a single timeout never opens the circuit — it may be the call (one
// huge eth_getLogs), not the node: the in-a-row rule then needs at least 2, the rate rule always needs at least 2
// failures. Outcomes count only while closed; a circuit that closes again starts with an empty window. An open
// circuit half-opens after probeIntervalMs and one probe (given by the owner: it knows the transport) decides.
import type { UpstreamConfig } from '../../config/config.js';

/** Circuit states, as exported by rpcgate_upstream_circuit_state. */
export const CIRCUIT = { closed: 0, halfOpen: 1, open: 2 } as const;
export type CircuitState = keyof typeof CIRCUIT;
/** What opened a circuit: failures in a row, the error rate over the window, or a refused connection. */
export type BreakerRule = 'consecutive' | 'rate' | 'refused';

export interface BreakerHooks {
  /** One probe request; resolves when the upstream answered well, rejects otherwise. */
  probe(): Promise<void>;
  /** Every state change (for the circuit gauge). */
  onState(state: CircuitState): void;
  /** Opened from closed (healthy false, reason, rule) or closed again (healthy true). */
  onHealth(healthy: boolean, reason?: string, rule?: BreakerRule): void;
}

export class CircuitBreaker {
  state: CircuitState = 'closed';
  lastError: string | undefined;
  downSince: number | undefined;
  /** Failed requests in a row (the consecutive rule). */
  private failures = 0;
  /** The rate rule's window: outcomes of the last requests while closed (1 = failed), a ring; `windowFailed` of the
   *  `windowCount` held failed. Empty when the rate rule is off. */
  private readonly window: Uint8Array;
  private windowPos = 0;
  private windowCount = 0;
  private windowFailed = 0;
  /** Rate rule: outcomes the window needs before it applies (at most its size). */
  private readonly minCalls: number;
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;

  constructor(
    private readonly cfg: UpstreamConfig['circuitBreaker'],
    private readonly probeIntervalMs: number,
    private readonly hooks: BreakerHooks,
  ) {
    this.window = new Uint8Array(cfg.errorRate > 0 ? cfg.windowSize : 0);
    this.minCalls = Math.min(cfg.minCalls, cfg.windowSize);
  }

  get closed(): boolean {
    return this.state === 'closed';
  }

  success(): void {
    this.failures = 0;
    if (this.window.length > 0 && this.state === 'closed') this.record(0);
  }

  /** A failed request. A timeout counts, but one alone never opens the circuit (it may be the call, not the node). */
  failure(reason: string, timeout = false): void {
    this.lastError = reason;
    if (this.state !== 'closed') return;
    const threshold = this.cfg.failureThreshold;
    if (++this.failures >= (timeout ? Math.max(2, threshold) : threshold)) {
      this.open(`${reason} (${this.failures} failed requests in a row)`, 'consecutive');
      return;
    }
    if (this.window.length === 0) return;
    this.record(1);
    const n = this.windowCount;
    if (n >= this.minCalls && this.windowFailed >= 2 && this.windowFailed >= this.cfg.errorRate * n) {
      this.open(
        `${reason} (${this.windowFailed} of the last ${n} requests failed, errorRate ${this.cfg.errorRate})`,
        'rate',
      );
    }
  }

  /** One outcome into the rate rule's ring (1 = failed), the oldest dropped once it is full. */
  private record(failed: 0 | 1): void {
    const w = this.window;
    const i = this.windowPos;
    if (this.windowCount === w.length) this.windowFailed -= w[i];
    else this.windowCount++;
    w[i] = failed;
    this.windowFailed += failed;
    this.windowPos = i + 1 === w.length ? 0 : i + 1;
  }

  private set(state: CircuitState): void {
    this.state = state;
    this.hooks.onState(state);
  }

  /** Opens the circuit; `rule` (what opened a closed one) goes to the log. */
  open(reason: string, rule?: BreakerRule): void {
    this.lastError = reason;
    if (this.state === 'open') return;
    const wasClosed = this.state === 'closed';
    this.set('open');
    if (wasClosed) {
      this.downSince = Date.now();
      this.failures = 0;
      this.window.fill(0);
      this.windowPos = this.windowCount = this.windowFailed = 0;
      this.hooks.onHealth(false, `circuit open: ${reason}`, rule);
    }
    this.schedule(this.probeIntervalMs);
  }

  /** Probe now rather than at the end of the interval (the transport says the upstream is back). */
  probeSoon(): void {
    if (this.state === 'open') this.schedule(0);
  }

  private schedule(ms: number): void {
    if (this.stopped) return;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.probe(), ms);
    this.timer.unref();
  }

  /** Half-open: one probe decides. */
  private async probe(): Promise<void> {
    if (this.stopped || this.state !== 'open') return;
    this.set('halfOpen');
    try {
      await this.hooks.probe();
      if (this.stopped) return;
      this.failures = 0;
      this.downSince = undefined;
      this.set('closed');
      this.hooks.onHealth(true);
    } catch (e) {
      this.lastError = (e as Error).message;
      this.open(this.lastError);
    }
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
  }
}
