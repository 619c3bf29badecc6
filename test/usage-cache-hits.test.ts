// Cache hits in usage, end to end over HTTP: rpcgate (startService) in front of a stand-in node, the response cache on
// for mainnet and off for testnet, an account's app (access point A, both networks) and network key (B, mainnet).
// N reads of one finalized block: the first is a miss (the node is asked once), the rest hits → after the meter's
// flush the account API's metrics (apps_metrics, keys_metrics) say calls N and cacheHits N-1 on mainnet, and N / 0 on
// testnet; a batch mixing a hit and a miss counts each item by its own answer. On SQLite and PostgreSQL (skipped with a
// message when PostgreSQL is unreachable, unless CI is set).
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AccountClient } from '../generated/account/client.js';
import type { UsageSeries } from '../generated/account/types.js';
import { validators } from '../generated/account/validators.js';
import { startService, type RunningService } from '../src/gateway/server/index.js';
import { account, signUpAndLogIn } from './helpers/account.js';
import { startChainNode, type ChainNode } from './helpers/chain-node.js';
import { pgReachable, scratchDatabase, skipUnless } from './helpers/services.js';
import { until } from './helpers/ws-client.js';

const pgSkip = skipUnless(await pgReachable(), 'usage-cache-hits.test', 'PostgreSQL');
const N = 6;
const hex = (n: number) => `0x${n.toString(16)}`;

let node: ChainNode;
const dirs: string[] = [];
beforeAll(async () => {
  // Head 200, finalized 192: blocks 150 and 151 are final, cached at the first answer.
  node = await startChainNode({ head: 200, finalityDepth: 8 });
});
afterAll(async () => {
  await node?.close();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

async function rpc(url: string, body: unknown): Promise<unknown> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(10_000),
  });
  expect(res.status).toBe(200);
  return res.json();
}
const block = (url: string, n: number) =>
  rpc(url, { jsonrpc: '2.0', id: 1, method: 'eth_getBlockByNumber', params: [hex(n), false] });

describe.each([
  { dialect: 'sqlite', skip: false },
  { dialect: 'postgres', skip: pgSkip },
])('cache hits in usage through the account API ($dialect)', ({ dialect, skip }) => {
  let svc: RunningService;
  let pg: ReturnType<typeof scratchDatabase> | undefined;
  let api: AccountClient;
  // A static key (metered in Prometheus only, never in usage) to wake the head tracker before the counted calls.
  const STATIC = `static_${randomBytes(8).toString('hex')}`;

  beforeAll(async () => {
    if (skip) return;
    if (dialect === 'postgres') {
      pg = scratchDatabase();
      await pg.create();
    }
    const dataDir = mkdtempSync(join(tmpdir(), `rpcgate-usage-cache-hits-${dialect}-`));
    dirs.push(dataDir);
    svc = await startService(
      {
        port: 0,
        logLevel: 'silent',
        dataDir,
        ...(pg ? { databaseUrl: pg.url } : {}),
        devKey: false,
        keys: [STATIC],
        networks: {
          mainnet: { upstreams: [node.url], chainId: 31337, blockTime: 1 },
          testnet: { upstreams: [node.url], chainId: 31338, blockTime: 1 },
        },
        cache: { networks: { testnet: { enabled: false } } },
      },
      // Only explicit flushes.
      { meter: { flushIntervalMs: 3_600_000 } },
    );
    api = account(svc);
    await signUpAndLogIn(api, {
      email: `hits-${randomBytes(6).toString('hex')}@example.com`,
      password: 'cache hits password',
    });
  }, 60_000);
  afterAll(async () => {
    await svc?.stop();
    await pg?.drop();
  });

  it.skipIf(skip)(
    'N reads of a finalized block: calls N, cacheHits N-1 with the cache on; 0 with it off; batches count per item',
    async () => {
      const app = await api.request('apps_create', [
        { name: 'hits', useCase: 'Analytics', chain: 'ethereum', services: ['node-api'] },
      ]);
      const key = await api.request('keys_create', [{ name: 'hits key', network: 'Mainnet' }]);
      const from = new Date(Date.now() - 60_000).toISOString();
      const appUrl = (network: string) => `${svc.url}/${network}/v2/${app.key}`;
      const keyUrl = `${svc.url}/mainnet/${key.key}`;
      // Until the cache knows the head, it cannot tell a block is final (such a call is a miss, not stored).
      await rpc(`${svc.url}/mainnet/${STATIC}`, { jsonrpc: '2.0', id: 1, method: 'eth_blockNumber', params: [] });
      await until('the finalized block', () => svc.caches.get('mainnet')!.tracker.finalized !== undefined);

      // App on mainnet (cache on): one node call for N answers, all the same block.
      let before = node.count('eth_getBlockByNumber');
      for (let i = 0; i < N; i++)
        expect(await block(appUrl('mainnet'), 150)).toMatchObject({ result: { number: hex(150) } });
      expect(node.count('eth_getBlockByNumber') - before).toBe(1);
      // App on testnet (cache off): every call reaches the node.
      before = node.count('eth_getBlockByNumber');
      for (let i = 0; i < N; i++)
        expect(await block(appUrl('testnet'), 150)).toMatchObject({ result: { number: hex(150) } });
      expect(node.count('eth_getBlockByNumber') - before).toBe(N);
      // Network key on mainnet: block 150 is cached already (hit), 151 is not (miss), in one batch; then 151 again (hit).
      const batch = (await rpc(
        keyUrl,
        [150, 151].map((n, id) => ({ jsonrpc: '2.0', id, method: 'eth_getBlockByNumber', params: [hex(n), false] })),
      )) as { result: { number: string } }[];
      expect(batch.map((r) => r.result.number).sort()).toEqual([hex(150), hex(151)]);
      expect(await block(keyUrl, 151)).toMatchObject({ result: { number: hex(151) } });

      const to = new Date(Date.now() + 120_000).toISOString();
      const appMetrics = (network: string) =>
        api.request('apps_metrics', [app.id, { from, to, granularity: 'hour', network }]);
      const keyMetrics = () => api.request('keys_metrics', [key.id, { from, to, granularity: 'minute' }]);
      // Aggregated in memory: nothing in the store before the flush.
      expect((await appMetrics('mainnet')).summary).toMatchObject({ total: 0, cacheHits: 0 });

      await svc.meter!.flush();
      const check = (s: UsageSeries, what: string) => {
        expect(
          validators.apps_metrics.result(s),
          `${what}: ${JSON.stringify(validators.apps_metrics.result.errors)}`,
        ).toBe(true);
        // The points add up to the summary.
        expect(
          s.points.reduce((n, p) => n + p.cacheHits, 0),
          what,
        ).toBe(s.summary.cacheHits);
        return s.summary;
      };
      expect(check(await appMetrics('mainnet'), 'app mainnet')).toMatchObject({
        total: N,
        success: N,
        cacheHits: N - 1,
        methods: { eth_getBlockByNumber: N },
      });
      expect(check(await appMetrics('testnet'), 'app testnet')).toMatchObject({ total: N, success: N, cacheHits: 0 });
      expect(check(await keyMetrics(), 'key')).toMatchObject({ total: 3, success: 3, cacheHits: 2 });
      // The app's whole usage: both networks.
      const all = await api.request('apps_metrics', [app.id, { from, to, granularity: 'day' }]);
      expect(all.summary).toMatchObject({ total: 2 * N, cacheHits: N - 1 });
    },
  );
});
