// A deployment with a third network (issue 10: networks come from the config everywhere). mainnet and testnet point
// at a closed port (never called here); `holesky` runs on an embedded anvil with its own chain id and a configured
// label. Through the account API: networks_list lists all three without a session, keys and app URLs are made for
// holesky (its name in any case), requests on it are served by its chain, and an unknown network is refused with the
// documented -32602 naming the valid ones.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RpcClientError } from '../generated/account/client.js';
import { startService, type RunningService } from '../src/gateway/server/index.js';
import { account, signUpAndLogIn } from './helpers/account.js';

let svc: RunningService;
let dataDir: string;

async function chainId(url: string): Promise<{ status: number; result?: string }> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_chainId', params: [] }),
  });
  const body = (await res.json()) as { result?: string };
  return { status: res.status, result: body.result };
}

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'rpcgate-networks-'));
  const closed = ['http://127.0.0.1:9'];
  const networks = {
    mainnet: { upstreams: closed },
    testnet: { upstreams: closed, chainId: 31338 },
    holesky: { upstreams: [], chainId: 17000, blockTime: 1, label: 'Holesky testnet' },
  };
  svc = await startService({ port: 0, dataDir, logLevel: 'silent', devKey: false, networks });
}, 60_000);

afterAll(async () => {
  await svc?.stop();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

describe('a third configured network', () => {
  it('networks_list: every configured network with label and chain id, no session needed', async () => {
    expect(await account(svc).request('networks_list')).toEqual([
      { network: 'mainnet', label: 'Mainnet', chainId: 31337, local: false },
      { network: 'testnet', label: 'Testnet', chainId: 31338, local: false },
      { network: 'holesky', label: 'Holesky testnet', chainId: 17000, local: true },
    ]);
  });

  it('keys and app URLs on it, its name in any case; requests on it are served by its chain', async () => {
    const api = account(svc);
    await signUpAndLogIn(api, {
      email: `net-${randomBytes(4).toString('hex')}@example.com`,
      password: 'a long enough password',
    });

    const key = await api.request('keys_create', [{ name: 'holesky key', network: 'HOLESKY' }]);
    expect([key.network, key.networkLabel, key.url]).toEqual([
      'holesky',
      'Holesky testnet',
      `${svc.url}/holesky/${key.key}`,
    ]);
    expect((await api.request('keys_list')).keys.map((k) => k.network)).toEqual(['holesky']);
    expect(await chainId(key.url)).toEqual({ status: 200, result: '0x4268' });

    const app = await api.request('apps_create', [
      { name: 'three networks', useCase: 'Defi', chain: 'ethereum', services: ['node-api'] },
    ]);
    expect(app.networks).toEqual(['mainnet', 'testnet', 'holesky']);
    expect(app.urls.holesky).toBe(`${svc.url}/holesky/v2/${app.key}`);
    expect(await chainId(app.urls.holesky!)).toEqual({ status: 200, result: '0x4268' });

    // Metrics may be filtered by it (case-insensitively, like every network param).
    const to = new Date(Date.now() + 60_000).toISOString();
    const from = new Date(Date.now() - 3_600_000).toISOString();
    const m = await api.request('keys_metrics', [key.id, { from, to, granularity: 'hour', network: 'Holesky' }]);
    expect(m.granularity).toBe('hour');

    // An unknown network: -32602 at the param's path, the reason naming the configured networks; nothing created.
    const err = await api.request('keys_create', [{ name: 'nope', network: 'sepolia' }]).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RpcClientError);
    expect((err as RpcClientError).code).toBe(-32602);
    expect((err as RpcClientError).data).toEqual({
      param: 'key',
      path: '/0/network',
      reason: `unknown network "sepolia": this deployment's networks are mainnet, testnet, holesky`,
    });
    expect((await api.request('keys_list')).keys).toHaveLength(1);
  });
});
