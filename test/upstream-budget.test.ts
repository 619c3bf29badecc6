// Per-upstream budgets (issue 24 item 4) against stand-in nodes in their own processes that enforce a provider's plan
// (test/helpers/standin-rate-limited-node.ts answers HTTP 429 over it): the pool, given each upstream's plan
// (`rateLimit`), never sends one more than its plan in any second of its arrivals and never trips its 429; an
// upstream's own 429 backs that upstream alone off until its Retry-After (seconds or an HTTP date), the call failing
// over — even one that is never resent once it may have been processed (eth_sendRawTransaction).
import { afterEach, describe, expect, it } from 'vitest';
import { setTimeout as sleep } from 'node:timers/promises';
import { defaults, loadConfig } from '../src/gateway/config/config.js';
import { UpstreamPool, type UpstreamMethodPolicy } from '../src/gateway/upstream/index.js';
import { UpstreamBudget } from '../src/gateway/upstream/failsafe/budget.js';
import { retryAfterMs } from '../src/gateway/upstream/transports/http.js';
import { busiestSecond, startRateLimitedNode, type RateLimitedNode } from './helpers/standin-rate-limited-node.js';

const WEIGHTS = { eth_call: 26, eth_blockNumber: 10, eth_sendRawTransaction: 40 };
const METHODS = new Map<string, UpstreamMethodPolicy>([
  ['eth_call', { idempotent: true, retryable: true, cost: 'light', units: WEIGHTS.eth_call }],
  ['eth_blockNumber', { idempotent: true, retryable: true, cost: 'light', units: WEIGHTS.eth_blockNumber }],
  [
    'eth_sendRawTransaction',
    { idempotent: false, retryable: false, cost: 'light', units: WEIGHTS.eth_sendRawTransaction },
  ],
]);

let nodes: RateLimitedNode[] = [];
let pools: UpstreamPool[] = [];
afterEach(async () => {
  await Promise.all(pools.map((p) => p.close()));
  await Promise.all(nodes.map((n) => n.stop()));
  nodes = [];
  pools = [];
});

// The fleet's head polls and state probe off: these tests count exactly the calls the pool was given (a poll would also
// take the stand-in's one scripted 429). Polls count against the budget and back off on a 429 too (pool.ts, the fleet's `send`).
function config(budget: { maxWaitMs?: number } = {}) {
  const d = defaults.upstream;
  return { ...d, budget: { ...d.budget, ...budget }, fleet: { headPollMs: 0, probeState: false } };
}

describe('per-upstream budgets', () => {
  it('never sends an upstream more than its plan (requests and units per second): no 429, every call answered', async () => {
    const plan = { requestsPerSecond: 20, unitsPerSecond: 400 };
    nodes = await Promise.all([
      startRateLimitedNode({ ...plan, weights: WEIGHTS, defaultWeight: 20 }),
      startRateLimitedNode({ ...plan, weights: WEIGHTS, defaultWeight: 20 }),
    ]);
    const pool = new UpstreamPool({
      network: 'mainnet',
      urls: nodes.map((n) => ({ url: n.url, rateLimit: plan })),
      config: config({ maxWaitMs: 8000 }),
      raw: false,
      methods: METHODS,
    });
    pools.push(pool);
    // 60 calls at once (1,080 units): three times what the two plans take in a second — by units as much as by count.
    const calls = Array.from({ length: 60 }, (_, i) =>
      i % 2 === 0
        ? pool.call('eth_call', [`0x${i.toString(16)}`])
        : pool.call('eth_blockNumber', [`0x${i.toString(16)}`]),
    );
    const results = await Promise.all(calls);
    expect(results.map((r, i) => (i % 2 === 0 ? r === `0x${i.toString(16)}` : r === '0x100')).every(Boolean)).toBe(
      true,
    );
    for (const n of nodes) {
      const log = await n.log();
      expect(log.filter((r) => r.refused)).toEqual([]);
      const busiest = busiestSecond(log);
      expect(busiest.calls).toBeLessThanOrEqual(plan.requestsPerSecond);
      expect(busiest.units).toBeLessThanOrEqual(plan.unitsPerSecond);
      expect(log.reduce((s, r) => s + r.calls, 0)).toBeGreaterThan(0);
    }
    // The plans did hold calls back (without them the stand-ins would have refused most of this burst).
    expect(pool.stats.budgetWaits).toBeGreaterThan(0);
    expect(pool.stats.limited).toBe(0);
  }, 30_000);

  it("an upstream's 429 backs it off alone until Retry-After (seconds or an HTTP date); the call fails over", async () => {
    nodes = await Promise.all([startRateLimitedNode({}), startRateLimitedNode({})]);
    const [a, b] = nodes;
    const pool = new UpstreamPool({
      network: 'mainnet',
      urls: nodes.map((n) => n.url),
      config: { ...config(), coalesce: false, hedge: { ...config().hedge, enabled: false } },
      raw: false,
      methods: METHODS,
    });
    pools.push(pool);
    await a.refuseNext('2');
    // Sequential sends alternate between the two: the first that reaches A is refused with Retry-After 2 s and goes to
    // B — a raw transaction too, which is never resent once it may have been processed (a 429 was not).
    const sent: unknown[] = [];
    for (let i = 0; i < 4; i++) sent.push(await pool.call('eth_sendRawTransaction', [`0x0${i}`]));
    expect(sent).toEqual(['0x00', '0x01', '0x02', '0x03']);
    const refusal = (await a.log()).find((r) => r.refused);
    expect(refusal).toBeDefined();
    // For the next ~1.5 s every call goes to B.
    while (Date.now() < refusal!.at + 1500) {
      await pool.call('eth_blockNumber', [String(Date.now())]);
      await sleep(20);
    }
    const aLog = await a.log();
    expect(aLog.filter((r) => r.at > refusal!.at && r.at < refusal!.at + 2000)).toEqual([]);
    expect(pool.status().every((s) => s.healthy)).toBe(true); // a 429 is not a failure of the node
    // After Retry-After, A gets calls again.
    await sleep(Math.max(0, refusal!.at + 2100 - Date.now()));
    for (let i = 0; i < 4; i++) await pool.call('eth_blockNumber', [`after-${i}`]);
    expect((await a.log()).filter((r) => r.at >= refusal!.at + 2000).length).toBeGreaterThan(0);

    // An HTTP date: B is refused with a date ~3 s ahead; nothing reaches B before that date.
    const until = new Date(Math.ceil((Date.now() + 3000) / 1000) * 1000);
    await b.refuseNext(until.toUTCString());
    for (let i = 0; i < 4; i++) await pool.call('eth_blockNumber', [`date-${i}`]);
    const bRefusal = (await b.log()).find((r) => r.refused);
    expect(bRefusal).toBeDefined();
    while (Date.now() < until.getTime() - 300) {
      await pool.call('eth_blockNumber', [String(Date.now())]);
      await sleep(20);
    }
    expect((await b.log()).filter((r) => r.at > bRefusal!.at && r.at < until.getTime())).toEqual([]);
    expect(pool.stats.limited).toBe(2);
  }, 30_000);

  it('when every upstream is backing off, a call waits (bounded by maxWaitMs), else fails with 503', async () => {
    nodes = [await startRateLimitedNode({})];
    const [a] = nodes;
    const pool = new UpstreamPool({
      network: 'mainnet',
      urls: [a.url],
      config: { ...config({ maxWaitMs: 300 }), coalesce: false },
      raw: false,
      methods: METHODS,
    });
    pools.push(pool);
    await a.refuseNext('5');
    const t0 = performance.now();
    const err = await pool.call('eth_blockNumber', ['x']).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: -32042 });
    expect(String((err as Error).message) + JSON.stringify((err as { data?: unknown }).data)).toMatch(/429/);
    expect(performance.now() - t0).toBeLessThan(2000);
    expect((await a.log()).length).toBe(1);
  }, 30_000);
});

describe('budget parts', () => {
  it('Retry-After: delay-seconds or an HTTP date', () => {
    const now = Date.UTC(2026, 10, 26, 12, 0, 0);
    expect(retryAfterMs('3', now)).toBe(3000);
    expect(retryAfterMs('Thu, 26 Nov 2026 12:00:05 GMT', now)).toBe(5000);
    expect(retryAfterMs('Thu, 26 Nov 2026 11:59:00 GMT', now)).toBe(0);
    expect(retryAfterMs(undefined, now)).toBeUndefined();
    expect(retryAfterMs('soon', now)).toBeUndefined();
  });

  it('the window slides: room comes back as old sends leave it', () => {
    const b = new UpstreamBudget(
      { requestsPerSecond: 3, unitsPerSecond: 100 },
      { maxWaitMs: 1000, guardMs: 0, backoffMs: 1000, maxBackoffMs: 300_000 },
    );
    expect(b.take(2, 20, 0)).toBe(true);
    expect(b.take(1, 20, 500)).toBe(true);
    expect(b.waitMs(1, 10, 600)).toBe(400); // the first send leaves the window at 1000
    expect(b.take(1, 10, 1000)).toBe(true);
    expect(b.waitMs(1, 70, 1000)).toBe(0); // units 20 + 10 + 70 = 100: fits
    expect(b.waitMs(1, 71, 1000)).toBe(500); // one more only once the 500 ms send is out
    b.backOff(2000, 1000);
    expect(b.waitMs(1, 1, 1000)).toBe(2000);
  });

  it('the config takes an upstream as a URL, a pair or either with its plan', () => {
    const cfg = loadConfig({
      env: {},
      overrides: {
        networks: {
          mainnet: {
            chainId: 1,
            blockTime: 12,
            upstreams: [
              'http://127.0.0.1:1',
              { url: 'http://127.0.0.1:2', rateLimit: { requestsPerSecond: 25, unitsPerSecond: 500 } },
              { http: 'http://127.0.0.1:3', ws: 'ws://127.0.0.1:3', rateLimit: { requestsPerSecond: 10 } },
            ],
          },
        },
      },
    });
    expect(cfg.networks.mainnet.upstreams[1]).toEqual({
      url: 'http://127.0.0.1:2',
      rateLimit: { requestsPerSecond: 25, unitsPerSecond: 500 },
    });
  });
});
