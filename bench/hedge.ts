// Hedging benchmark (issue 13): p99 latency of eth_getBalance over two upstreams (stand-in nodes in their own
// processes) of which one answers 200 ms late in 5% of its requests, through a pool with hedging on and one with it
// off — alternating rounds in one run, ratio printed. Calls are distinct (no dedupe) and coalesced as in production.
// Run alone: `tsx bench/hedge.ts` (BENCH_ROUNDS rounds of BENCH_CALLS calls per pool; defaults 3 and 2000).
import { defaults } from '../src/gateway/config/config.js';
import { meaningTable } from '../src/gateway/method-meaning.js';
import { UpstreamPool } from '../src/gateway/upstream/index.js';
import { methods } from '../generated/node/methods.js';
import { startFaultNode } from '../test/helpers/fault-node.js';
import { fmt, latencies, median, p99, quantile } from './lib/latency.js';

const ROUNDS = Math.max(1, Number(process.env.BENCH_ROUNDS ?? 3));
const CALLS = Math.max(200, Number(process.env.BENCH_CALLS ?? 2000));
const CONC = 8;

const tail = await startFaultNode();
const steady = await startFaultNode();
const killAll = () => Promise.all([tail.kill(), steady.kill()]);
process.once('SIGINT', () => void killAll().then(() => process.exit(130)));
try {
  await tail.mode('ok', 0, { eth_getBalance: 1 }, { slowShare: 0.05, slowMs: 200 });
  await steady.mode('ok', 0, { eth_getBalance: 1 });
  const meaning = meaningTable(methods);
  const mk = (enabled: boolean) =>
    new UpstreamPool({
      network: 'bench',
      urls: [tail.url, steady.url],
      methods: meaning,
      config: { ...defaults.upstream, hedge: { ...defaults.upstream.hedge, enabled } },
    });
  const hedged = mk(true);
  const plain = mk(false);
  let k = 0;
  const run = (p: UpstreamPool, n: number) =>
    latencies(n, CONC, () => p.call('eth_getBalance', [`0x${(k++).toString(16).padStart(40, '0')}`, 'latest']));
  await Promise.all([run(hedged, 300), run(plain, 300)]); // warm: connections, and the hedge's latency quantile
  const rows: { hedged: number[]; plain: number[] }[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    const h = await run(hedged, CALLS);
    const n = await run(plain, CALLS);
    rows.push({ hedged: h, plain: n });
    console.log(
      `round ${r + 1}: p99 hedged ${fmt(p99(h))} ms, not hedged ${fmt(p99(n))} ms (p50 ${fmt(quantile(h, 0.5))} / ${fmt(quantile(n, 0.5))} ms)`,
    );
  }
  const h99 = median(rows.map((x) => p99(x.hedged)));
  const n99 = median(rows.map((x) => p99(x.plain)));
  const extra = hedged.stats.requests / Math.max(1, plain.stats.requests);
  console.log(
    `\nmedian of ${ROUNDS} rounds (${CALLS} calls per pool per round, ${CONC} callers; one upstream +200 ms in 5% of requests):`,
  );
  console.log(`  p99 not hedged: ${fmt(n99)} ms`);
  console.log(`  p99 hedged:     ${fmt(h99)} ms   ratio not hedged / hedged: ${(n99 / h99).toFixed(1)}x`);
  console.log(
    `  upstream requests hedged / not hedged: ${extra.toFixed(2)} (hedges ${hedged.stats.hedges}, batch splits ${hedged.stats.splits})`,
  );
  await Promise.all([hedged.close(), plain.close()]);
} finally {
  await killAll();
}
