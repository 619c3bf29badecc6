// Issue 24 items 1–3: a network in front of unlike upstreams, each a stand-in node in its own process
// (test/helpers/standin-node.ts) on one deterministic chain. The pool learns what each can answer (head, state depth,
// getLogs limit, missing methods), routes calls to one that can, never passes a "not here" while another could answer,
// keeps a consensus head that never goes backwards, and splits eth_getLogs around each node's limit — checked against
// the answer of a stand-in without limits. The acceptance run goes through a real rpcgate process configured with the
// three URLs only.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { methods as nodeMethods } from '../generated/node/methods.js';
import { RawResult } from '../packages/toolkit/src/rpc/engine.js';
import { defaults } from '../src/gateway/config/config.js';
import { meaningTable } from '../src/gateway/method-meaning.js';
import { Capabilities, refusalOf } from '../src/gateway/upstream/capabilities.js';
import { Consensus, FLEET_DEFAULTS, type FleetConfig } from '../src/gateway/upstream/consensus.js';
import { UpstreamPool } from '../src/gateway/upstream/index.js';
import { startRpcgateChild, type RpcgateChild } from './helpers/rpcgate-child.js';
import { type Standin, type StandinOptions, balanceAt, startStandin } from './helpers/standin-node.js';

const MEANINGS = meaningTable(nodeMethods);
const KEY = 'fleetStaticKey0123456789ab';
const H0 = 3000;
const BLOCK_MS = 1000;
const chain = { t0: Date.now(), h0: H0, blockMs: BLOCK_MS };
const started: Standin[] = [];
const standin = async (o: Partial<StandinOptions>) => {
  const s = await startStandin({ ...chain, ...o });
  started.push(s);
  return s;
};
const pools: UpstreamPool[] = [];
const pool = (urls: string[], fleet: object = {}) => {
  const p = new UpstreamPool({
    network: 'fleet',
    urls,
    config: { ...defaults.upstream, fleet: { headPollMs: 200, ...fleet } },
    methods: MEANINGS,
  });
  pools.push(p);
  return p;
};
const raw = (r: unknown) => (r instanceof RawResult ? r.json : JSON.stringify(r));
const hex = (n: number) => `0x${n.toString(16)}`;
const addr = (i: number) => `0x${(i + 1).toString(16).padStart(40, '0')}`;

async function direct(url: string, method: string, params: unknown[]): Promise<string> {
  const res = await fetch(url, { method: 'POST', body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }) });
  return res.text();
}
/** The `result` of a JSON-RPC response, as the bytes it was sent as. */
const resultBytes = (body: string) => body.slice(body.indexOf('"result":') + 9, body.lastIndexOf('}'));
const headOf = async (url: string) => Number(JSON.parse(await direct(url, 'eth_blockNumber', [])).result);

afterAll(async () => {
  await Promise.all(pools.map((p) => p.close()));
  await Promise.all(started.map((s) => s.stop()));
});

describe('refusals that mean "not here"', () => {
  it('classifies node messages of geth, erigon, providers', () => {
    const kind = (method: string, code: number, message: string) => refusalOf(method, { code, message })?.kind;
    expect(kind('eth_getBalance', -32000, 'missing trie node 1234 (path ) state 0xab is not available')).toBe('state');
    expect(kind('eth_call', -32000, 'historical state 0xab is not available')).toBe('state');
    expect(kind('eth_getBalance', -32000, 'header not found')).toBe('block');
    expect(kind('trace_block', -32601, 'the method trace_block does not exist/is not available')).toBe('method');
    expect(refusalOf('eth_getLogs', { code: -32005, message: 'exceed maximum block range: 500' })).toEqual({
      kind: 'logs-range',
      max: 500,
    });
    expect(refusalOf('eth_getLogs', { code: -32602, message: 'eth_getLogs is limited to 1024 block range' })).toEqual({
      kind: 'logs-range',
      max: 1024,
    });
    expect(kind('eth_getLogs', -32005, 'query returned more than 10000 results')).toBe('logs-results');
    // the call's own answers and rate limits are not "not here"
    expect(kind('eth_call', 3, 'execution reverted')).toBeUndefined();
    expect(kind('eth_getLogs', -32005, 'daily request count exceeded, request rate limited')).toBeUndefined();
    // a range that is the query's own fault (geth), the same answer on every node: not a node's range limit
    expect(kind('eth_getLogs', -32602, 'block range extends beyond current head block')).toBeUndefined();
    expect(kind('eth_getLogs', -32602, 'invalid block range params')).toBeUndefined();
  });
});

describe('consensus head', () => {
  const fleet = (heads: number[], over: Partial<FleetConfig> = {}, down: number[] = []) => {
    const members = heads.map((h, i) => {
      const caps = new Capabilities();
      caps.head = h;
      return { caps, label: i, healthy: () => !down.includes(i), send: () => Promise.reject(new Error('unused')) };
    });
    return { c: new Consensus(members, { ...FLEET_DEFAULTS, ...over }), members };
  };
  it('the highest block a quorum of the healthy upstreams serve (default: a majority, at least one)', () => {
    expect(fleet([100, 98, 80]).c.consensusHead()).toBe(98); // 2 of 3
    expect(fleet([100, 98, 80, 99]).c.consensusHead()).toBe(98); // 3 of 4
    expect(fleet([100, 98, 80], { quorum: 1 }).c.consensusHead()).toBe(100);
    expect(fleet([100, 98, 80], { quorum: 3 }).c.consensusHead()).toBe(80);
    expect(fleet([100, 98, 80], {}, [0]).c.consensusHead()).toBe(80); // the healthy two: 98 and 80
    expect(fleet([100], { quorum: 5 }).c.consensusHead()).toBe(100);
    expect(fleet([]).c.consensusHead()).toBeUndefined();
  });
  it('rotation by maxBlockLag; answers never below the floor', () => {
    const { c, members } = fleet([100, 95, 94]);
    expect(members.map((m) => c.inRotation(m))).toEqual([true, true, false]);
    expect(members.map((m) => c.lagOf(m))).toEqual([0, 5, 6]);
    expect(c.answered(members[0], 101)).toBe(101);
    expect(c.answered(members[1], 96)).toBe(101);
    expect(members[1].caps.head).toBe(96);
  });
});

describe('pool over unlike upstreams', () => {
  it('a method one upstream lacks goes to another, and that upstream is no longer asked for it', async () => {
    const lacking = await standin({ missing: ['eth_getCode'] });
    const full = await standin({});
    const p = pool([lacking.url, full.url]);
    for (let i = 0; i < 6; i++) expect(raw(await p.call('eth_getCode', [addr(i), 'latest']))).toBe('"0x"');
    expect((await lacking.stats()).eth_getCode ?? 0).toBeLessThanOrEqual(1);
    expect((await full.stats()).eth_getCode).toBeGreaterThanOrEqual(5);
    // alone, the lacking node's -32601 is the answer
    const alone = pool([lacking.url]);
    await expect(alone.call('eth_getCode', [addr(0), 'latest'])).rejects.toMatchObject({ code: -32601 });
  });

  it('a pruned node: its depth probed at start, old state read from the archive node only', async () => {
    const pruned = await standin({ stateDepth: 128 });
    const archive = await standin({});
    const p = pool([pruned.url, archive.url]);
    await p.call('eth_chainId', []);
    await sleep(1500); // a poll or two: heads known, the pruned node's depth probed
    const before = (await pruned.stats()).eth_getBalance ?? 0;
    const head = await headOf(archive.url);
    for (let i = 0; i < 20; i++) {
      const b = 10 + i * 50;
      expect(raw(await p.call('eth_getBalance', [addr(i), hex(b)]))).toBe(JSON.stringify(balanceAt(addr(i), b)));
    }
    // recent state: either may answer
    expect(raw(await p.call('eth_getBalance', [addr(0), hex(head - 3)]))).toBe(
      JSON.stringify(balanceAt(addr(0), head - 3)),
    );
    expect((await pruned.stats()).eth_getBalance ?? 0).toBeLessThanOrEqual(before + 1);
    console.log(
      `[fleet] pruned node probed with ${before} eth_getBalance calls; of 20 old-state reads it got ${(await pruned.stats()).eth_getBalance - before}`,
    );
  });

  it('consensus: a node lagging 20 blocks serves no head-relative call; eth_blockNumber never goes backwards', async () => {
    const a = await standin({});
    const b = await standin({});
    const lagging = await standin({ lag: 20 });
    const p = pool([lagging.url, a.url, b.url]);
    await p.call('eth_chainId', []);
    await sleep(800);
    let prev = 0;
    for (let i = 0; i < 20; i++) {
      const n = Number(JSON.parse(raw(await p.call('eth_blockNumber', []))));
      expect(n).toBeGreaterThanOrEqual(prev);
      expect((await headOf(a.url)) - n).toBeLessThanOrEqual(2);
      prev = n;
    }
    expect((await lagging.stats()).eth_blockNumber ?? 0).toBeLessThanOrEqual(4 + 2); // its polls only, not calls
    const st = p.status();
    expect(st[0].lag).toBeGreaterThanOrEqual(18);
    expect(st[1].lag).toBeLessThanOrEqual(2);
    // an old block: the lagging node may serve it
    expect(raw(await p.call('eth_getBalance', [addr(1), hex(100)]))).toBe(JSON.stringify(balanceAt(addr(1), 100)));
  });

  it('eth_getLogs: split at a learned range limit, bisected on too many results, byte for byte the unlimited answer', async () => {
    const ref = await standin({});
    const limited = await standin({ logsMaxRange: 500, logsMaxResults: 150 });
    const p = pool([limited.url]);
    const to = H0 - 1;
    for (const filter of [
      { fromBlock: '0x0', toBlock: hex(to) },
      { fromBlock: hex(17), toBlock: hex(1234), address: `0x${'b2'.repeat(20)}` },
    ]) {
      const got = raw(await p.call('eth_getLogs', [filter]));
      expect(got).toBe(resultBytes(await direct(ref.url, 'eth_getLogs', [filter])));
    }
    expect(p.fleetStats.logsSplits).toBeGreaterThan(1);
    // `latest` bounds on a fixed chain: the first query is refused as it is, then split at the head
    const fixed = { t0: chain.t0, h0: 2100, blockMs: 0 };
    const [fixedRef, fixedLimited] = await Promise.all([
      standin(fixed),
      standin({ ...fixed, logsMaxRange: 300, logsMaxResults: 150 }),
    ]);
    const q = pool([fixedLimited.url]);
    for (const filter of [{ fromBlock: hex(5) }, { fromBlock: 'earliest', toBlock: 'latest' }])
      expect(raw(await q.call('eth_getLogs', [filter]))).toBe(
        resultBytes(await direct(fixedRef.url, 'eth_getLogs', [filter])),
      );
    // within every limit: one call, as it is
    const before = (await fixedLimited.stats()).eth_getLogs;
    await q.call('eth_getLogs', [{ fromBlock: hex(2050) }]);
    expect((await fixedLimited.stats()).eth_getLogs).toBe(before + 1);
    console.log(
      `[fleet] eth_getLogs 0..${to} over a 500-block / 150-result node: ${p.fleetStats.logsChunks} chunks, ${(await limited.stats()).eth_getLogs} node calls`,
    );
  });
});

describe('acceptance (issue 24): pruned, archive and 20-behind upstreams by URL only, through rpcgate', () => {
  let gate: RpcgateChild;
  let archive: Standin;
  let reference: Standin;
  let dataDir: string;
  beforeAll(async () => {
    const limits = { logsMaxRange: 500 };
    const [pruned, arch, lagging, ref] = await Promise.all([
      standin({ ...limits, stateDepth: 128 }),
      standin({ ...limits }),
      standin({ ...limits, lag: 20 }),
      standin({}),
    ]);
    archive = arch;
    reference = ref;
    dataDir = mkdtempSync(join(tmpdir(), 'rpcgate-fleet-'));
    gate = await startRpcgateChild({
      port: 0,
      logLevel: 'warn',
      dataDir,
      devKey: false,
      keys: [KEY],
      networks: { mainnet: { upstreams: [pruned.url, arch.url, lagging.url] }, testnet: null },
    });
  }, 60_000);
  afterAll(async () => {
    await gate?.stop();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });
  const rpc = async (method: string, params: unknown[]) => {
    const res = await fetch(`${gate.url}/mainnet/${KEY}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
    });
    return res.text();
  };

  it('old state 30/30, eth_getLogs over the whole chain = the node’s own, eth_blockNumber monotonic within 2 blocks', {
    timeout: 60_000,
  }, async () => {
    await rpc('eth_chainId', []);
    const head = await headOf(archive.url);
    let oldOk = 0;
    for (let i = 0; i < 30; i++) {
      const b = 1 + ((i * 97) % (head - 200));
      const body = JSON.parse(await rpc('eth_getBalance', [addr(i), hex(b)]));
      if (body.result === balanceAt(addr(i), b)) oldOk++;
      else console.log(`[fleet] old-state read at ${b}: ${JSON.stringify(body)}`);
    }
    const filter = { fromBlock: '0x0', toBlock: hex(head - 25) };
    const t = performance.now();
    const logs = await rpc('eth_getLogs', [filter]);
    const ms = Math.round(performance.now() - t);
    const own = await direct(reference.url, 'eth_getLogs', [filter]);
    const logsEqual = resultBytes(logs) === resultBytes(own);
    const count = (JSON.parse(own).result as unknown[]).length;
    // The filter methods query logs through the same pool: eth_getFilterLogs over the whole chain is split too.
    const id = JSON.parse(await rpc('eth_newFilter', [filter])).result as string;
    const filterLogs = await rpc('eth_getFilterLogs', [id]);
    const filterEqual = resultBytes(filterLogs) === resultBytes(own);
    if (!filterEqual) console.log(`[fleet] eth_getFilterLogs: ${filterLogs.slice(0, 300)}`);

    let backwards = 0;
    let lagging = 0;
    let maxLag = 0;
    let prev = 0;
    for (let i = 0; i < 60; i++) {
      const n = Number(JSON.parse(await rpc('eth_blockNumber', [])).result);
      const lag = (await headOf(archive.url)) - n;
      if (n < prev) backwards++;
      if (lag > 2) lagging++;
      maxLag = Math.max(maxLag, lag);
      prev = n;
      await sleep(50);
    }
    console.log(
      `[fleet] old-state eth_getBalance answered ${oldOk}/30; eth_getLogs over blocks 0..${head - 25} (${count} logs, ${ms} ms) ${logsEqual ? 'equals' : 'DIFFERS from'} the node's own answer (eth_getFilterLogs: ${filterEqual ? 'equal' : 'DIFFERS'}); eth_blockNumber: ${backwards}/60 backwards, ${lagging}/60 lagging > 2 blocks (max lag ${maxLag})`,
    );
    expect(oldOk).toBe(30);
    expect(logsEqual).toBe(true);
    expect(filterEqual).toBe(true);
    expect(backwards).toBe(0);
    expect(lagging).toBe(0);
    const ready = (await (await fetch(`${gate.url}/readyz`)).json()) as {
      networks?: { mainnet?: { upstreams: { lag?: number }[] } };
    };
    const lags = JSON.stringify(ready).match(/"lag":\d+/g);
    console.log(`[fleet] /readyz upstream lags: ${lags?.join(' ')}`);
    expect(lags?.length).toBe(3);
    const metrics = await (await fetch(`${gate.url}/metrics`)).text();
    const gauges = metrics.split('\n').filter((l) => l.startsWith('rpcgate_upstream_lag_blocks{'));
    console.log(`[fleet] /metrics: ${gauges.join(' | ')}`);
    expect(gauges).toHaveLength(3);
    expect(gauges.filter((l) => / (?:19|20|21)$/.test(l))).toHaveLength(1);
  });
});
