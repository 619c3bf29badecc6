// Issue 13.4: PostgreSQL stopped (as in a crash: pg_ctl stop -m immediate) and started again while rpcgate serves.
// A PostgreSQL server of this test's own (test/helpers/pg-cluster.ts: initdb in a temp dir, free port) — never the
// machine's shared one — and a real rpcgate child process on it. While the database is down: the node API keeps
// serving known keys from the in-memory index; the account API answers -32045 (HTTP 503, data.reason "store") fast;
// usage stays in memory. After the restart, on the same port, without restarting rpcgate: the account API works
// again, a key created then works on the node API. Then a stalled database (every PostgreSQL process SIGSTOPped: the
// connections stay open, nothing answers): the account API answers -32045 within the configured timeouts, not hanging,
// and recovers on SIGCONT. In the end the store holds exactly every call made (none lost, none twice).
import { afterAll, describe, expect, it } from 'vitest';
import { openStore, usageSeries, type Store } from '../src/gateway/store/index.js';
import { cookieFetch } from './helpers/account.js';
import { pgBinDir, startPgCluster, type PgCluster } from './helpers/pg-cluster.js';
import { newNetworkKey, startRpcgateChild, type RpcgateChild } from './helpers/rpcgate-child.js';
import { startStubNode, type StubNode } from './helpers/stub-node.js';

const BIN = pgBinDir();
const skip = BIN === undefined && !process.env.CI;
if (skip)
  console.warn(
    '[faults-postgres] PostgreSQL server binaries (/usr/lib/postgresql/*/bin/pg_ctl) not installed: SKIPPED (required when CI is set)',
  );

const FLUSH_MS = 1_000;
const MIN = 60_000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const CALL = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_blockNumber', params: [] });

async function nodeCalls(url: string, n: number): Promise<number> {
  let ok = 0;
  for (let i = 0; i < n; i++) {
    const r = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: CALL });
    if (r.status === 200 && ((await r.json()) as { result?: string }).result === '0x10') ok++;
  }
  return ok;
}

describe.skipIf(skip)('PostgreSQL crashing under a transaction in progress', () => {
  it('a connection held between two queries (as the usage flush holds one) fails its transaction; the process lives on', {
    timeout: 120_000,
  }, async () => {
    const cluster = await startPgCluster(BIN!);
    const errors: unknown[] = [];
    const s = await openStore({
      dataDir: '/nonexistent-unused',
      databaseUrl: cluster.url,
      connectTimeoutMs: 1_000,
      onError: (e) => errors.push(e),
    });
    try {
      let inside!: () => void;
      const held = new Promise<void>((r) => (inside = r));
      const tx = s.db.transaction().execute(async (trx) => {
        await trx.selectFrom('users').select('id').limit(1).execute();
        inside();
        await sleep(1_500); // the client is checked out, no query running: the crash comes now
        await trx.selectFrom('users').select('id').limit(1).execute();
      });
      await held;
      cluster.crash();
      await expect(tx).rejects.toThrow();
      // Without a listener on the checked-out client its 'error' event is unhandled: the process (here, the test
      // worker) would crash instead of getting here.
      expect(errors.length).toBeGreaterThanOrEqual(1);
      cluster.start();
      let back = false;
      for (const started = Date.now(); Date.now() - started < 30_000 && !back; await sleep(200)) {
        back = await s.db
          .selectFrom('users')
          .select('id')
          .limit(1)
          .execute()
          .then(
            () => true,
            () => false,
          );
      }
      expect(back).toBe(true);
    } finally {
      await s.close();
      cluster.destroy();
    }
  });
});

describe.skipIf(skip)('PostgreSQL stopped and restarted under a running rpcgate', () => {
  let pg: PgCluster | undefined;
  let node: StubNode | undefined;
  let child: RpcgateChild | undefined;
  let store: Store | undefined;

  afterAll(async () => {
    await child?.stop();
    await store?.close();
    await node?.close();
    pg?.destroy();
  });

  it('node API serves on, account API answers -32045 fast, usage is buffered and written once after recovery', {
    timeout: 180_000,
  }, async () => {
    pg = await startPgCluster(BIN!);
    node = await startStubNode();
    child = await startRpcgateChild({
      port: 0,
      logLevel: 'error',
      dataDir: '/nonexistent-unused',
      databaseUrl: pg.url,
      devKey: false,
      networks: { mainnet: { upstreams: [node.url] } },
      // The default store timeouts (connect 1 s, statement 5 s): the stall bound below is the one a deployment gets.
      durability: { usageFlushIntervalMs: FLUSH_MS },
    });
    const t0 = Date.now();
    const { key, keyId, userId } = await newNetworkKey(child.url, 'mainnet');
    const keyUrl = `${child.url}/mainnet/${key}`;
    const session = cookieFetch();
    const account = async (method: string, params: unknown[] = []) => {
      const started = performance.now();
      const r = await session(`${child!.url}/api`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
      });
      return {
        status: r.status,
        body: (await r.json()) as {
          result?: unknown;
          error?: { code: number; data?: { reason?: string; source?: string } };
        },
        ms: performance.now() - started,
      };
    };
    const email = `pg-${Date.now()}@example.com`;
    expect((await account('account_signUp', [{ email, password: 'correct horse battery staple' }])).status).toBe(200);
    expect((await account('account_logIn', [{ email, password: 'correct horse battery staple' }])).status).toBe(200);

    const before = await nodeCalls(keyUrl, 200);
    expect(before).toBe(200);
    await sleep(FLUSH_MS + 500);

    // ---- the database goes away
    pg.crash();
    const during = await nodeCalls(keyUrl, 300);
    expect(during).toBe(300); // known keys are served from memory

    const outage: number[] = [];
    for (const [method, params] of [
      ['account_me', []],
      ['keys_list', []],
      ['account_signUp', [{ email: `x-${Date.now()}@example.com`, password: 'correct horse battery staple' }]],
    ] as const) {
      const r = await account(method, [...params]);
      expect(r.status, method).toBe(503);
      expect(r.body.error?.code, method).toBe(-32045);
      expect(r.body.error?.data).toMatchObject({ source: 'rpcgate', reason: 'store' });
      outage.push(r.ms);
    }
    // Fast, not hanging: within the connect timeout (2 s) plus a generous margin for a loaded machine.
    expect(Math.max(...outage)).toBeLessThan(5_000);
    await sleep(3 * FLUSH_MS); // flushes fail meanwhile; the usage stays in memory
    expect(child.proc.exitCode).toBeNull();
    expect(await nodeCalls(keyUrl, 1)).toBe(1);

    // ---- the database comes back on the same port; rpcgate is not restarted
    const downFor = Date.now();
    pg.start();
    let recoveredMs = -1;
    for (const started = Date.now(); Date.now() - started < 30_000; await sleep(200)) {
      if ((await account('account_me')).status === 200) {
        recoveredMs = Date.now() - downFor;
        break;
      }
    }
    expect(recoveredMs).toBeGreaterThanOrEqual(0);
    // The key index follows the store again: a key created now works on the node API.
    const fresh = await newNetworkKey(child.url, 'mainnet');
    let freshOk = false;
    for (const started = Date.now(); Date.now() - started < 10_000 && !freshOk; await sleep(200))
      freshOk = (await nodeCalls(`${child.url}/mainnet/${fresh.key}`, 1)) === 1;
    expect(freshOk).toBe(true);

    // ---- a stalled database: every PostgreSQL process SIGSTOPped (connections open, nothing answers)
    pg.freeze();
    const stalled: number[] = [];
    let stalledCalls = 0;
    try {
      stalledCalls = await nodeCalls(keyUrl, 50);
      expect(stalledCalls).toBe(50);
      for (const method of ['account_me', 'keys_list', 'account_me', 'apps_list']) {
        const r = await account(method);
        expect(r.status, method).toBe(503);
        expect(r.body.error?.code, method).toBe(-32045);
        stalled.push(r.ms);
      }
      // Issue 26 (audit: 6.0 s, then 2.0 s): the first call is answered once the store watch's ping (sent 250 ms into
      // the call) has waited the connect timeout (1 s) and its confirmation half of that: about 1.75 s; later calls at
      // once while the store is known down. Slack for a loaded machine.
      expect(stalled[0]).toBeLessThan(2_500);
      // Later calls must not wait for a ping of their own (that takes ≥ 1.25 s): a call begun just before the store was
      // known down answers in ≈ 250 ms, the rest at once. 1 s: a loaded CI machine once took 751 ms (ci5).
      expect(Math.max(...stalled.slice(1))).toBeLessThan(1_000);
    } finally {
      pg.thaw();
    }
    const thawedAt = Date.now();
    let thawedMs = -1;
    for (; Date.now() - thawedAt < 30_000 && thawedMs < 0; await sleep(50))
      if ((await account('account_me')).status === 200) thawedMs = Date.now() - thawedAt;
    expect(thawedMs).toBeGreaterThanOrEqual(0);
    expect(thawedMs).toBeLessThan(3_000); // the watch probes every 500 ms

    const after = await nodeCalls(keyUrl, 100);
    expect(after).toBe(100);
    await sleep(FLUSH_MS * 2 + 1_000);
    store = await openStore({ dataDir: '/nonexistent-unused', databaseUrl: pg.url });
    const s = await usageSeries(store.db, {
      userId,
      keyId,
      from: t0 - MIN,
      to: Date.now() + 2 * MIN,
      granularity: 'minute',
      fill: false,
    });
    console.log(
      `[faults-postgres] account API with PostgreSQL down: -32045 in ${outage.map((m) => m.toFixed(0)).join(' / ')} ms; ` +
        `account API back ${recoveredMs} ms after the restart; stalled (SIGSTOP) database: -32045 in ${stalled.map((m) => m.toFixed(0)).join(' / ')} ms, account API back ${thawedMs} ms after SIGCONT; ` +
        `usage stored ${s.summary.total} of ${before + during + 1 + stalledCalls + after} calls`,
    );
    expect(s.summary.total).toBe(before + during + 1 + stalledCalls + after);
  });
});
