// Hedging: an idempotent call still unanswered after its method's latency quantile goes to a second upstream too
// (first answer wins, the other request is aborted). The delay is learned per method from answered calls, clamped to
// [minDelayMs, maxDelayMs]; until minSamples are in, maxDelayMs.
import type { UpstreamConfig } from '../../config/config.js';
import { LatencyQuantile } from '../latency.js';

export class HedgePolicy {
  private readonly latency = new Map<string, LatencyQuantile>();

  constructor(private readonly cfg: UpstreamConfig['hedge']) {}

  get enabled(): boolean {
    return this.cfg.enabled;
  }

  /** How long a call of `method` waits before it is hedged. */
  delay(method: string): number {
    const h = this.cfg;
    const t = this.latency.get(method);
    if (t === undefined || t.samples < h.minSamples) return h.maxDelayMs;
    return Math.min(h.maxDelayMs, Math.max(h.minDelayMs, t.value()));
  }

  /** An answered call of `method` took `ms`. */
  observe(method: string, ms: number): void {
    let t = this.latency.get(method);
    if (t === undefined) {
      if (this.latency.size >= 1000) return; // methods come from the contract; never let a caller grow this unbounded
      this.latency.set(method, (t = new LatencyQuantile(this.cfg.quantile)));
    }
    t.observe(ms);
  }
}
