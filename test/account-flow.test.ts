// The whole flow as a user and their tools see it: the generated account client (generated/account/client.ts, with a
// cookie-keeping fetch) signs up, creates an app (access point A) and a network key (access point B), and the node API
// is then called with ethers v6 and viem on both networks for A and on the key's network for B — block number and a
// block. Keys created, rotated or deleted through the API take effect on this replica before the answer.
// On SQLite with embedded chains; then on PostgreSQL + Redis (skipped with a message when they are unreachable and CI
// is not set; under CI they must run), with the same chains as upstreams, plus the 4-key race on PostgreSQL.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { JsonRpcProvider } from 'ethers';
import { createPublicClient, http } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RpcClientError } from '../generated/account/client.js';
import { account, signUpAndLogIn } from './helpers/account.js';
import { startService, type RunningService } from '../src/gateway/server/index.js';
import {
  deleteRedisKeys,
  pgReachable,
  PG_ADMIN_URL,
  redisReachable,
  REDIS_URL,
  scratchDatabase,
  scratchPrefix,
  skipUnless,
} from './helpers/services.js';

async function nodeStatus(url: string): Promise<number> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_blockNumber', params: [] }),
  });
  await res.arrayBuffer();
  return res.status;
}

/** Reads the head and a block with ethers and with viem; both must agree with the chain id the account API lists. */
async function readWithSdks(url: string, chainId: number): Promise<void> {
  const provider = new JsonRpcProvider(url);
  try {
    expect(Number((await provider.getNetwork()).chainId)).toBe(chainId);
    const head = await provider.getBlockNumber();
    expect(head).toBeGreaterThan(0);
    const block = await provider.getBlock(head);
    expect(block?.number).toBe(head);
    expect(block?.hash).toMatch(/^0x[0-9a-f]{64}$/);
  } finally {
    provider.destroy();
  }
  const client = createPublicClient({ transport: http(url, { retryCount: 0 }) });
  expect(await client.getChainId()).toBe(chainId);
  const n = await client.getBlockNumber();
  expect(n).toBeGreaterThan(0n);
  const b = await client.getBlock({ blockNumber: n });
  expect(b.number).toBe(n);
  const latest = await client.getBlock();
  expect(latest.number! >= n).toBe(true);
}

async function wholeFlow(svc: RunningService): Promise<void> {
  const api = account(svc);
  const email = `flow-${randomBytes(4).toString('hex')}@example.com`;
  const session = await signUpAndLogIn(api, { email, password: 'a long enough password' });
  expect(session.user.email).toBe(email);
  expect((await api.request('account_me')).id).toBe(session.user.id);

  // What the dashboard offers: the chain search and the use cases.
  const [chain] = await api.request('chains_list', ['eth']);
  expect(chain.networks.map((n) => n.network)).toEqual(['mainnet', 'testnet']);
  const chainIds = Object.fromEntries(chain.networks.map((n) => [n.network, n.chainId]));
  expect(await api.request('useCases_list')).toContain('Defi');

  // Access point A: an app on the chain, one URL per network.
  const app = await api.request('apps_create', [
    { name: 'flow app', description: 'ethers + viem', useCase: 'Defi', chain: chain.id, services: ['node-api'] },
  ]);
  expect(Object.keys(app.urls).sort()).toEqual(['mainnet', 'testnet']);
  for (const network of ['mainnet', 'testnet']) {
    const url = app.urls[network]!;
    expect(url).toBe(`${svc.url}/${network}/v2/${app.key}`);
    await readWithSdks(url, chainIds[network]);
  }

  // Access point B: a key bound to testnet works there, and only there.
  const key = await api.request('keys_create', [{ name: 'flow key', network: 'Testnet', description: 'backend' }]);
  expect(key.url).toBe(`${svc.url}/testnet/${key.key}`);
  await readWithSdks(key.url, chainIds.testnet);
  expect(await nodeStatus(`${svc.url}/mainnet/${key.key}`)).toBe(403);
  const detail = await api.request('keys_get', [key.id]);
  expect(detail.examples.find((x) => x.method === 'eth_blockNumber' && x.id === 'curl')!.code).toContain(key.url);

  // Today's usage counts what was just sent through the B key.
  const listed = await api.request('keys_list');
  expect(listed.keys.map((k) => k.id)).toEqual([key.id]);
  expect(listed.usage.used).toBeGreaterThan(0);
  expect(listed.usage.used + listed.usage.remaining).toBe(listed.usage.limit);

  // Rotating and deleting take effect on this replica before the answer.
  const rotated = await api.request('apps_rotateKey', [app.id]);
  expect(await nodeStatus(app.urls.mainnet!)).toBe(401);
  expect(await nodeStatus(rotated.urls.mainnet!)).toBe(200);
  await api.request('keys_delete', [key.id]);
  expect(await nodeStatus(key.url)).toBe(401);

  // Log out: the client's next call is refused.
  await api.request('account_logOut');
  const err = await api.request('apps_list').catch((e: unknown) => e);
  expect(err).toBeInstanceOf(RpcClientError);
  expect((err as RpcClientError).code).toBe(-32016);
  expect((err as RpcClientError).status).toBe(401);
}

describe('account flow on SQLite (embedded chains)', () => {
  let svc: RunningService;
  let dataDir: string;

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'rpcgate-account-flow-'));
    svc = await startService({ port: 0, dataDir, logLevel: 'silent', strictResults: true, devKey: false });
  }, 120_000);

  afterAll(async () => {
    await svc?.stop();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  it('sign up, create an app and a network key, call the node API with ethers and viem (A on both networks, B on its own)', async () => {
    await wholeFlow(svc);
  }, 60_000);

  // ---- PostgreSQL + Redis ---------------------------------------------------------------------------------------
  describe('on PostgreSQL + Redis', () => {
    let up = false;
    let pgSvc: RunningService | undefined;
    const db = scratchDatabase();
    const prefix = scratchPrefix();
    let pgDir: string | undefined;

    beforeAll(async () => {
      up = (await pgReachable()) && (await redisReachable());
      if (!up) {
        if (process.env.CI)
          throw new Error(`CI is set but PostgreSQL (${PG_ADMIN_URL}) or Redis (${REDIS_URL}) is unreachable`);
        skipUnless(up, 'account-flow', 'PostgreSQL or Redis');
        return;
      }
      await db.create();
      pgDir = mkdtempSync(join(tmpdir(), 'rpcgate-account-flow-pg-'));
      pgSvc = await startService({
        port: 0,
        dataDir: pgDir,
        logLevel: 'silent',
        strictResults: true,
        devKey: false,
        databaseUrl: db.url,
        redisUrl: REDIS_URL,
        redisPrefix: prefix,
        secret: randomBytes(32).toString('hex'),
        // The SQLite instance's embedded chains serve as this instance's nodes (same chain ids).
        networks: {
          mainnet: { upstreams: svc.networks.mainnet.upstreams, chainId: svc.networks.mainnet.chainId },
          testnet: { upstreams: svc.networks.testnet.upstreams, chainId: svc.networks.testnet.chainId },
        },
      });
    }, 60_000);

    afterAll(async () => {
      await pgSvc?.stop();
      if (pgDir) rmSync(pgDir, { recursive: true, force: true });
      if (!up) return;
      await deleteRedisKeys(prefix);
      await db.drop();
    });

    it('the whole flow', async (t) => {
      if (!up) return t.skip();
      await wholeFlow(pgSvc!);
    }, 60_000);

    it('the 5th key is refused and ten concurrent creates leave exactly 4', async (t) => {
      if (!up) return t.skip();
      const api = account(pgSvc!);
      const me = await signUpAndLogIn(api, {
        email: `race-${randomBytes(4).toString('hex')}@example.com`,
        password: 'a long enough password',
      });
      const results = await Promise.allSettled(
        Array.from({ length: 10 }, (_, i) =>
          api.request('keys_create', [{ name: `race ${i}`, network: i % 2 ? 'Mainnet' : 'Testnet' }]),
        ),
      );
      expect(results.filter((r) => r.status === 'fulfilled').length).toBe(4);
      const refused = results
        .filter((r): r is PromiseRejectedResult => r.status === 'rejected')
        .map((r) => r.reason as RpcClientError);
      expect(refused.length).toBe(6);
      for (const e of refused) {
        expect(e.code).toBe(-32005);
        expect(e.message).toMatch(/at most 4 network API keys per user/);
      }
      expect((await api.request('keys_list')).keys.length).toBe(4);
      const n = await pgSvc!.store.db
        .selectFrom('network_keys')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('user_id', '=', me.user.id)
        .executeTakeFirstOrThrow();
      expect(Number(n.n)).toBe(4);
    }, 60_000);
  });
});
