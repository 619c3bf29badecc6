// The key index's lookup cache (src/gateway/access/index.ts: raw key → principal for recently found keys, bounded, emptied
// with every index change): a key that is hot in the cache is refused right after it is revoked, rotated or its app
// deleted (at the sync that applies the event — not later), a changed key (allowlist, JWT) is served with its new
// principal at once, and the bound evicts without losing correctness. Also over HTTP against a running service.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AccessIndex, type AppPrincipal } from '../src/gateway/access/index.js';
import { startService, type RunningService } from '../src/gateway/server/index.js';
import {
  createApp,
  createNetworkKey,
  createUser,
  deleteApp,
  deleteNetworkKey,
  openStore,
  rotateAppKey,
  setAllowlist,
  type Store,
} from '../src/gateway/store/index.js';
import { call, post } from './helpers/metering-traffic.js';
import { startStubNode, type StubNode } from './helpers/stub-node.js';

const appInput = { name: 'cached', useCase: 'Defi', chain: 'ethereum', services: ['node-api'] };

describe('lookup cache of the key index', () => {
  const secret = randomBytes(32);
  let dir: string;
  let store: Store;
  let index: AccessIndex;
  let userId: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'rpcgate-access-cache-'));
    store = await openStore({ dataDir: dir });
    userId = (await createUser(store.db, { email: 'cache@example.com', passwordHash: 'x' })).id;
    // Timers off: events are applied by sync()/refresh() only, so "right after" is exact.
    index = new AccessIndex({
      db: store.db,
      secret,
      chains: { ethereum: ['mainnet', 'testnet'] },
      pollMs: 3_600_000,
      rebuildMs: 3_600_000,
    });
    await index.start();
  });

  afterAll(async () => {
    await index?.stop();
    await store?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('a cached key is refused right after revoke, rotate and delete', async () => {
    const nk = await createNetworkKey(store.db, secret, userId, { name: 'hot', network: 'mainnet' });
    const app = await createApp(store.db, secret, userId, appInput);
    const doomed = await createApp(store.db, secret, userId, appInput);
    await index.sync();
    // Hot: the same principal object served from the cache again and again.
    const first = index.lookup(nk.key);
    for (let i = 0; i < 100; i++) expect(index.lookup(nk.key)).toBe(first);
    for (const k of [app.key, doomed.key]) expect(index.lookup(k)).toBeDefined();

    await deleteNetworkKey(store.db, userId, nk.id);
    // Before the event is applied the index still serves the key (it is eventually consistent by design) …
    expect(index.lookup(nk.key)).toBe(first);
    await index.sync();
    // … and right after, the cached key is refused.
    expect(index.lookup(nk.key)).toBeUndefined();

    const rotated = await rotateAppKey(store.db, secret, userId, app.id);
    await deleteApp(store.db, userId, doomed.id);
    await index.sync();
    expect(index.lookup(app.key)).toBeUndefined();
    expect(index.lookup(doomed.key)).toBeUndefined();
    expect(index.lookup(rotated!.key)).toMatchObject({ appId: app.id });
  });

  it('a changed key is served with its new principal at once (no stale cached principal)', async () => {
    const app = await createApp(store.db, secret, userId, appInput);
    await index.sync();
    const before = index.lookup(app.key) as AppPrincipal;
    expect(before.allowlists?.method).toBeUndefined();
    await setAllowlist(store.db, userId, app.id, 'method', ['eth_chainId']);
    await index.sync();
    const after = index.lookup(app.key) as AppPrincipal;
    expect(after).not.toBe(before);
    expect(after.allowlists?.method?.has('eth_chainId')).toBe(true);
  });

  it('a full rebuild empties the cache too; misses are never cached', async () => {
    const other = (await createUser(store.db, { email: 'cache2@example.com', passwordHash: 'x' })).id;
    const nk = await createNetworkKey(store.db, secret, other, { name: 'rebuild', network: 'mainnet' });
    await index.sync();
    expect(index.lookup(nk.key)).toBeDefined();
    await deleteNetworkKey(store.db, other, nk.id);
    await index.refresh();
    expect(index.lookup(nk.key)).toBeUndefined();

    // Unknown keys (more than the cache holds) are not remembered: a key created afterwards resolves at its sync,
    // and a hot key is still served.
    const keep = await createNetworkKey(store.db, secret, other, { name: 'keep', network: 'mainnet' });
    await index.sync();
    const kp = index.lookup(keep.key);
    expect(kp).toBeDefined();
    for (let i = 0; i < 5000; i++) expect(index.lookup(`${keep.key}x${i}`)).toBeUndefined();
    expect(index.lookup(keep.key)).toBe(kp);
  });
});

describe('over HTTP', () => {
  let stub: StubNode;
  let svc: RunningService;
  let dir: string;
  beforeAll(async () => {
    stub = await startStubNode();
    dir = mkdtempSync(join(tmpdir(), 'rpcgate-access-cache-http-'));
    svc = await startService({
      port: 0,
      logLevel: 'silent',
      dataDir: dir,
      devKey: false,
      networks: { mainnet: { upstreams: [stub.url] } },
    });
  });
  afterAll(async () => {
    await svc?.stop();
    await stub?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('a key in constant use is refused (401) by the first request after its revoke is applied', async () => {
    const userId = (await createUser(svc.store.db, { email: 'http-cache@example.com', passwordHash: 'x' })).id;
    const nk = await createNetworkKey(svc.store.db, svc.secret, userId, { name: 'hot', network: 'mainnet' });
    const app = await createApp(svc.store.db, svc.secret, userId, appInput);
    await svc.access.sync();
    const B = `${svc.url}/mainnet/${nk.key}`;
    const A = `${svc.url}/mainnet/v2/${app.key}`;
    for (let i = 0; i < 20; i++) {
      expect((await post(B, call('eth_blockNumber'))).status).toBe(200);
      expect((await post(A, call('eth_blockNumber'))).status).toBe(200);
    }
    await deleteNetworkKey(svc.store.db, userId, nk.id);
    const rotated = await rotateAppKey(svc.store.db, svc.secret, userId, app.id);
    await svc.access.sync();
    const r = await post(B, call('eth_blockNumber'));
    expect([r.status, r.body.error.code]).toEqual([401, -32016]);
    expect((await post(A, call('eth_blockNumber'))).status).toBe(401);
    expect((await post(`${svc.url}/mainnet/v2/${rotated!.key}`, call('eth_blockNumber'))).status).toBe(200);
  });
});
