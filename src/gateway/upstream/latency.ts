// Per-method latency quantiles for hedging: a log-bucketed histogram (about 15% wide buckets from 50 µs to 60 s)
// whose counts are halved every `halfLife` observations, so the estimate follows the node's recent behaviour.
// Observing is one log and an array increment; the quantile walks ~100 buckets and is cached between updates.

const BASE_MS = 0.05;
const RATIO = 1.15;
const LOG_RATIO = Math.log(RATIO);
const BUCKETS = Math.ceil(Math.log(60_000 / BASE_MS) / LOG_RATIO) + 1;

export class LatencyQuantile {
  private readonly counts = new Float64Array(BUCKETS);
  private total = 0;
  private seen = 0;
  private cached = -1;

  constructor(
    private readonly q: number,
    private readonly halfLife = 1000,
  ) {}

  observe(ms: number): void {
    const i = ms <= BASE_MS ? 0 : Math.min(BUCKETS - 1, Math.floor(Math.log(ms / BASE_MS) / LOG_RATIO));
    this.counts[i] += 1;
    this.total += 1;
    this.seen += 1;
    if (this.seen % this.halfLife === 0) {
      for (let j = 0; j < BUCKETS; j++) this.counts[j] /= 2;
      this.total /= 2;
    }
    // Recompute at most every 16 observations (and always while few).
    if (this.seen < 64 || (this.seen & 15) === 0) this.cached = -1;
  }

  /** Observations so far (not decayed). */
  get samples(): number {
    return this.seen;
  }

  /** The upper edge of the bucket holding the q-quantile (ms); 0 with no data. */
  value(): number {
    if (this.cached >= 0) return this.cached;
    if (this.total === 0) return 0;
    const want = this.q * this.total;
    let cum = 0;
    let i = 0;
    for (; i < BUCKETS - 1; i++) {
      cum += this.counts[i];
      if (cum >= want) break;
    }
    this.cached = BASE_MS * RATIO ** (i + 1);
    return this.cached;
  }
}
