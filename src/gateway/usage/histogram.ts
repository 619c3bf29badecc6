// Fixed log-spaced latency histogram shared by the meter (bucket counts per minute), the usage store (one column per
// bucket, summed by upsert-add, roll-up and queries) and /metrics (every 4th bound is a Prometheus bucket).
//
// Layout (pinned by migration 0002_usage — changing it needs a new migration):
//   70 buckets, 4 per octave (factor 2^(1/4) ≈ 1.189, the resolution of Prometheus native histograms schema 2):
//   b0            latency ≤ 0.25 ms
//   b1 … b68      b_k = (2^((k-9)/4), 2^((k-8)/4)] ms    (b8 ends at 1 ms, b68 at 32 768 ms ≈ 32.8 s)
//   b69           latency > 32 768 ms (overflow)
//
// Percentiles are nearest-rank over the summed bucket counts, reported as the bucket's geometric midpoint. For a true
// percentile in b1…b68 the estimate is within a factor 2^(1/8) of it: relative error ≤ 2^(1/8) − 1 ≈ 9.05 %.
// b0 is reported as 0.125 ms (absolute error ≤ 0.125 ms); b69 as 32 768 ms (a lower bound: "≥ 32.8 s").
// Summing buckets (minutes → hours → days, replicas, principals) loses nothing, so the bound holds after
// aggregation and downsampling. The mean is exact (latency_sum_ms / count).

export const HISTOGRAM_BUCKETS = 70;
const OFFSET = 8; // buckets below 1 ms
const LAST_FINITE = HISTOGRAM_BUCKETS - 2; // 68
export const OVERFLOW_BUCKET = HISTOGRAM_BUCKETS - 1; // 69
/** Max relative error of a percentile whose true value lies in b1…b68. */
export const PERCENTILE_RELATIVE_ERROR = 2 ** (1 / 8) - 1;

/** Column names of the bucket counts in the usage tables. */
export const BUCKET_COLUMNS: readonly string[] = Object.freeze(
  Array.from({ length: HISTOGRAM_BUCKETS }, (_, i) => `b${i}`),
);

/** Bucket of a latency in ms: O(1), no allocation. Non-numbers and negatives land in b0. */
export function bucketIndex(ms: number): number {
  if (!(ms > 0.25)) return 0;
  const k = Math.ceil(4 * Math.log2(ms)) + OFFSET;
  return k > LAST_FINITE ? OVERFLOW_BUCKET : k;
}

/** Inclusive upper bound of bucket k in ms (Infinity for the overflow bucket). */
export function bucketUpperMs(k: number): number {
  return k >= OVERFLOW_BUCKET ? Infinity : 2 ** ((k - OFFSET) / 4);
}

/** Exclusive lower bound of bucket k in ms (0 for b0). */
export function bucketLowerMs(k: number): number {
  return k <= 0 ? 0 : 2 ** ((k - 1 - OFFSET) / 4);
}

/** The value a percentile falling into bucket k is reported as (see the error bounds above). */
export function bucketValueMs(k: number): number {
  if (k <= 0) return 0.125;
  if (k >= OVERFLOW_BUCKET) return bucketLowerMs(OVERFLOW_BUCKET);
  return 2 ** ((k - 0.5 - OFFSET) / 4);
}

/** Nearest-rank percentile (q in (0, 1]) of a bucket-count array; null when it is empty. */
export function percentileMs(buckets: ArrayLike<number>, q: number): number | null {
  let total = 0;
  for (let i = 0; i < buckets.length; i++) total += buckets[i];
  if (total <= 0) return null;
  const rank = Math.max(1, Math.ceil(q * total));
  let cum = 0;
  for (let i = 0; i < buckets.length; i++) {
    cum += buckets[i];
    if (cum >= rank) return bucketValueMs(i);
  }
  return bucketValueMs(buckets.length - 1);
}

// Prometheus buckets: every 4th bound, 0.25 ms … 32.768 s (powers of two), so a fine bucket maps to exactly one
// Prometheus bucket without a second search.
/** Prometheus histogram upper bounds in seconds: 2^j ms for j = −2 … 15 (18 bounds; +Inf is implicit). */
export const PROM_BOUNDS_SECONDS: readonly number[] = Object.freeze(
  Array.from({ length: LAST_FINITE / 4 + 1 }, (_, p) => 2 ** (p - 2) / 1000),
);
/** Fine bucket → index into PROM_BOUNDS_SECONDS (PROM_BOUNDS_SECONDS.length = the +Inf slot). */
export const FINE_TO_PROM: Readonly<Uint8Array> = (() => {
  const t = new Uint8Array(HISTOGRAM_BUCKETS);
  for (let k = 0; k < HISTOGRAM_BUCKETS; k++)
    t[k] = k === OVERFLOW_BUCKET ? PROM_BOUNDS_SECONDS.length : Math.ceil(k / 4);
  return t;
})();
