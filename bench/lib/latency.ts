// Latency helpers of the upstream benches (bench/hol.ts, bench/hedge.ts): percentiles and sequential callers.

/** The q-quantile (nearest rank) of `xs`. */
export function quantile(xs: readonly number[], q: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.max(0, Math.ceil(s.length * q) - 1)];
}
export const p99 = (xs: readonly number[]) => quantile(xs, 0.99);
export const median = (xs: readonly number[]) => quantile(xs, 0.5);
export const fmt = (ms: number) => ms.toFixed(2);

/** `n` calls made by `conc` sequential callers; their latencies (ms). `make(i)` gives the i-th call's promise. */
export async function latencies(n: number, conc: number, make: (i: number) => Promise<unknown>): Promise<number[]> {
  const out: number[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: conc }, async () => {
      while (next < n) {
        const i = next++;
        const t0 = performance.now();
        await make(i);
        out.push(performance.now() - t0);
      }
    }),
  );
  return out;
}

/** `n` eth_blockNumber calls through `pool` from `conc` sequential callers (a failed call counts with its time to
 *  the error, and in `errors`). */
export function blockNumberLatencies(
  pool: { call(method: string, params?: unknown[]): Promise<unknown> },
  n: number,
  conc: number,
  errors = { n: 0 },
): Promise<number[]> {
  return latencies(n, conc, () => pool.call('eth_blockNumber', []).catch(() => void errors.n++));
}
