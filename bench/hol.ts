// Head-of-line benchmark (issue 13): the p99 latency of eth_blockNumber through the upstream pool, alone and while
// eth_getLogs calls that take the node 500 ms are in flight, measured AT THE SAME TIME through two pools to one
// stand-in node in its own process (eth_blockNumber 1 ms). A third pool shows the old behaviour for comparison: the
// same load with eth_getLogs declared `light`, i.e. batched together with eth_blockNumber (no cost classes).
// Run alone: `tsx bench/hol.ts` (BENCH_ROUNDS rounds of BENCH_CALLS calls per pool; defaults 3 and 1000).
import { defaults } from '../src/gateway/config/config.js';
import { meaningTable } from '../src/gateway/method-meaning.js';
import { UpstreamPool } from '../src/gateway/upstream/index.js';
import { methods } from '../generated/node/methods.js';
import { startFaultNode } from '../test/helpers/fault-node.js';
import { blockNumberLatencies, fmt, median, p99 } from './lib/latency.js';

const ROUNDS = Math.max(1, Number(process.env.BENCH_ROUNDS ?? 3));
const CALLS = Math.max(100, Number(process.env.BENCH_CALLS ?? 1000));
const CONC = 4;

const node = await startFaultNode();
process.once('SIGINT', () => void node.kill().then(() => process.exit(130)));
try {
  await node.mode('ok', 0, { eth_getLogs: 500, eth_blockNumber: 1 });
  const meaning = meaningTable(methods);
  const light = new Map(meaning);
  light.set('eth_getLogs', { ...meaning.get('eth_getLogs')!, cost: 'light' });
  const mk = (m: typeof meaning, lingerMs = 0) =>
    new UpstreamPool({
      network: 'bench',
      urls: [node.url],
      methods: m,
      config: {
        ...defaults.upstream,
        classes: { ...defaults.upstream.classes, light: { ...defaults.upstream.classes.light, lingerMs } },
      },
    });
  const alonePool = mk(meaning);
  const loadedPool = mk(meaning);
  // The old pool: one queue for all; the 2 ms linger lets batches form as they do under many clients.
  const oldPool = mk(light, 2);
  const pools = [alonePool, loadedPool, oldPool];
  await Promise.all(pools.map((p) => blockNumberLatencies(p, 200, CONC)));

  // ~20 eth_getLogs in flight on the loaded pools: a new one every 25 ms.
  let i = 0;
  const pending: Promise<unknown>[] = [];
  const load = setInterval(() => {
    for (const p of [loadedPool, oldPool])
      pending.push(
        p.call('eth_getLogs', [{ fromBlock: `0x${(i++).toString(16)}`, toBlock: 'latest' }]).catch(() => undefined),
      );
  }, 25);
  await new Promise((r) => setTimeout(r, 200));
  const rows: { alone: number; loaded: number; old: number }[] = [];
  const errors = { alone: { n: 0 }, loaded: { n: 0 }, old: { n: 0 } };
  for (let r = 0; r < ROUNDS; r++) {
    // The old pool gets 40 calls: each waits for a 500 ms eth_getLogs (or worse, see below).
    const [a, l, o] = await Promise.all([
      blockNumberLatencies(alonePool, CALLS, CONC, errors.alone),
      blockNumberLatencies(loadedPool, CALLS, CONC, errors.loaded),
      blockNumberLatencies(oldPool, 40, CONC, errors.old),
    ]);
    rows.push({ alone: p99(a), loaded: p99(l), old: p99(o) });
    console.log(
      `round ${r + 1}: eth_blockNumber p99 alone ${fmt(p99(a))} ms | with eth_getLogs in flight ${fmt(p99(l))} ms | old pool (no cost classes) ${fmt(p99(o))} ms`,
    );
  }
  clearInterval(load);
  await Promise.all(pending);
  const alone = median(rows.map((x) => x.alone));
  const loaded = median(rows.map((x) => x.loaded));
  const old = median(rows.map((x) => x.old));
  console.log(`\nmedian of ${ROUNDS} rounds (${CALLS} calls per pool per round, ${CONC} callers):`);
  console.log(`  eth_blockNumber p99 alone:                    ${fmt(alone)} ms`);
  console.log(
    `  eth_blockNumber p99 with eth_getLogs in flight: ${fmt(loaded)} ms   (difference ${fmt(loaded - alone)} ms, ratio ${(loaded / alone).toFixed(2)})`,
  );
  console.log(
    `  same load, eth_getLogs batched with it (old):  ${fmt(old)} ms   (ratio to alone ${(old / alone).toFixed(1)})`,
  );
  console.log(
    `  failed calls: alone ${errors.alone.n}, loaded ${errors.loaded.n}, old ${errors.old.n} (old: batches holding a 500 ms eth_getLogs take all the connections; the queue behind them grows until calls time out)`,
  );
  await Promise.all(pools.map((p) => p.close()));
} finally {
  await node.kill();
}
