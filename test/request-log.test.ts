// The request log end to end (issue 25), on SQLite and PostgreSQL: real service, a stand-in node, calls through the
// node API (single, batch, WebSocket, a refusal, a cache-less node error), read back through apps_logs / keys_logs with
// every filter and the cursor, within 5 s of the call (the flush interval is the production default, 1 s); body
// capture per app with redaction; ownership (another account gets "not found" for both methods and never sees an
// entry); and the bound: 100,000 calls through the writer leave the table within requestLog.maxRows and drop (and
// count) what the queue cannot hold instead of slowing anything; on PostgreSQL, calls answer while the table is locked
// (a log write waiting on the store holds no call). Redaction of captured bodies, retention defaults, pruning in batches.
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pgLib from 'pg';
import WebSocket from 'ws';
import type { AccountClient } from '../generated/account/client.js';
import { RequestLog, requestLogRetentionMs } from '../src/gateway/metering/request-log.js';
import { startService, type RunningService } from '../src/gateway/server/index.js';
import { countRequestLog, pruneRequestLog } from '../src/gateway/store/index.js';
import { account, signUpAndLogIn } from './helpers/account.js';
import { pgReachable, scratchDatabase, skipUnless } from './helpers/services.js';
import { startStubNode, type StubNode } from './helpers/stub-node.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

const pgSkip = skipUnless(await pgReachable(), 'request-log.test', 'PostgreSQL');

async function rpc(url: string, body: unknown, headers: Record<string, string> = {}) {
  const r = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
  return { status: r.status, rid: r.headers.get('x-request-id'), body: await r.json() };
}

/** Polls `f` until it returns something truthy, at most `ms`; returns it and how long it took. */
async function within<T>(ms: number, f: () => Promise<T | undefined>): Promise<{ value: T; tookMs: number }> {
  const t0 = Date.now();
  for (;;) {
    const v = await f();
    if (v) return { value: v, tookMs: Date.now() - t0 };
    if (Date.now() - t0 > ms) throw new Error(`not within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe.each([
  { dialect: 'sqlite', skip: false },
  { dialect: 'postgres', skip: pgSkip },
])('request log ($dialect)', ({ dialect, skip }) => {
  let svc: RunningService;
  let stub: StubNode;
  let dataDir: string;
  let pg: ReturnType<typeof scratchDatabase> | undefined;
  let A: AccountClient;
  let B: AccountClient;
  let app: Json;
  let key: Json;
  let appB: Json;

  beforeAll(async () => {
    if (skip) return;
    stub = await startStubNode();
    dataDir = mkdtempSync(join(tmpdir(), 'rpcgate-request-log-'));
    if (dialect === 'postgres') {
      pg = scratchDatabase();
      await pg.create();
    }
    svc = await startService({
      port: 0,
      logLevel: 'silent',
      dataDir,
      ...(pg ? { databaseUrl: pg.url } : {}),
      devKey: false,
      networks: { mainnet: { upstreams: [stub.url] } },
    });
    A = account(svc);
    B = account(svc);
    await signUpAndLogIn(A, { email: `${randomUUID()}@example.com`, password: 'request log password A' });
    await signUpAndLogIn(B, { email: `${randomUUID()}@example.com`, password: 'request log password B' });
    app = await A.request('apps_create', [
      { name: 'logged', useCase: 'Defi', chain: 'ethereum', services: ['node-api'] },
    ]);
    key = await A.request('keys_create', [{ name: 'k', network: 'mainnet' }]);
    appB = await B.request('apps_create', [
      { name: 'other', useCase: 'Defi', chain: 'ethereum', services: ['node-api'] },
    ]);
  });

  afterAll(async () => {
    await svc?.stop();
    await stub?.close();
    await pg?.drop();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  it.skipIf(skip)('HTTP, batch items, WebSocket and refusals show up within 5 s with what happened', async () => {
    const A_URL = app.urls.mainnet as string;
    const single = await rpc(A_URL, { jsonrpc: '2.0', id: 1, method: 'eth_blockNumber', params: [] });
    expect(single.body.result).toBe('0x10');
    const batch = await rpc(A_URL, [
      { jsonrpc: '2.0', id: 1, method: 'eth_chainId', params: [] },
      { jsonrpc: '2.0', id: 2, method: 'eth_call', params: [{ to: `0x${'11'.repeat(20)}`, data: '0x' }, 'latest'] },
      { jsonrpc: '2.0', id: 3, method: 'eth_nope', params: [] },
    ]);
    expect(batch.status).toBe(200);
    // The same eth_chainId again: answered from the response cache (immutable), no upstream.
    const cached = await rpc(A_URL, { jsonrpc: '2.0', id: 5, method: 'eth_chainId', params: [] });
    expect(cached.body.result).toBe('0x1');
    // A WebSocket call.
    const ws = new WebSocket(A_URL.replace('http', 'ws'));
    await new Promise((r, j) => ws.once('open', r).once('error', j));
    const wsAnswer = new Promise<Json>((r) => ws.once('message', (m) => r(JSON.parse(String(m)))));
    ws.send(
      JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'eth_getBalance', params: [`0x${'22'.repeat(20)}`, 'latest'] }),
    );
    expect((await wsAnswer).result).toBe('0x0');
    ws.close();
    // Network key: a refusal before the engine (wrong content type) with the key known.
    const refused = await fetch(key.url, {
      method: 'POST',
      headers: { 'content-type': 'application/xml' },
      body: '{}',
    });
    expect(refused.status).toBe(415);

    const { value: page, tookMs } = await within(5000, async () => {
      const p = await A.request('apps_logs', [app.id]);
      return p.entries.length >= 6 ? p : undefined;
    });
    expect(tookMs).toBeLessThan(5000);
    const entries = page.entries;
    expect(entries.map((e: Json) => e.method).sort()).toEqual(
      ['eth_blockNumber', 'eth_call', 'eth_chainId', 'eth_chainId', 'eth_getBalance', 'eth_nope'].sort(),
    );
    // Newest first.
    const times = entries.map((e: Json) => Date.parse(e.time));
    expect([...times].sort((a, b) => b - a)).toEqual(times);
    const by = (m: string): Json => entries.find((e: Json) => e.method === m);
    const stubHost = new URL(stub.url).host;
    expect(by('eth_blockNumber')).toMatchObject({
      network: 'mainnet',
      httpStatus: 200,
      code: null,
      cacheHit: false,
      upstream: stubHost,
      requestId: single.rid,
      transport: 'http',
    });
    expect(by('eth_blockNumber').ipHash).toMatch(/^[0-9a-f]{32}$/);
    expect(by('eth_blockNumber').latencyMs).toBeGreaterThan(0);
    expect(by('eth_blockNumber')).not.toHaveProperty('params'); // capture is off by default
    expect(by('eth_call')).toMatchObject({ code: -32000, httpStatus: 200, upstream: stubHost, requestId: batch.rid });
    // Each batch item is its own entry under the batch's request id; the repeated eth_chainId was a cache hit.
    const chainIds = entries.filter((e: Json) => e.method === 'eth_chainId');
    expect(chainIds.find((e: Json) => e.requestId === batch.rid)).toMatchObject({
      cacheHit: false,
      upstream: stubHost,
    });
    expect(chainIds.find((e: Json) => e.requestId === cached.rid)).toMatchObject({ cacheHit: true, upstream: null });
    // A method outside the contract is logged as sent (the usage metrics count it as `other`).
    expect(by('eth_nope')).toMatchObject({ code: -32601, upstream: null });
    expect(by('eth_getBalance')).toMatchObject({ transport: 'ws', code: null, upstream: stubHost });
    // The same IP hashes alike.
    expect(new Set(entries.map((e: Json) => e.ipHash)).size).toBe(1);

    const keyLog = await within(5000, async () => {
      const p = await A.request('keys_logs', [key.id]);
      return p.entries.length >= 1 ? p : undefined;
    });
    expect(keyLog.value.entries[0]).toMatchObject({ method: 'other', httpStatus: 415, code: -32600 });
  });

  it.skipIf(skip)('filters and the cursor select exactly the matching entries, newest first', async () => {
    const A_URL = app.urls.mainnet as string;
    // 7 more eth_blockNumber calls (cursor paging over 3 per page).
    const rids: string[] = [];
    for (let i = 0; i < 7; i++)
      rids.push((await rpc(A_URL, { jsonrpc: '2.0', id: i, method: 'eth_blockNumber', params: [] })).rid!);
    await svc.requestLog!.flush();
    const q = (query: Json) => A.request('apps_logs', [app.id, query]);
    expect((await q({ method: 'eth_call' })).entries.map((e: Json) => e.method)).toEqual(['eth_call']);
    expect((await q({ code: -32000 })).entries.map((e: Json) => e.method)).toEqual(['eth_call']);
    expect((await q({ status: 'error' })).entries.map((e: Json) => e.method).sort()).toEqual(['eth_call', 'eth_nope']);
    expect((await q({ status: 'ok' })).entries.every((e: Json) => e.code === null)).toBe(true);
    expect((await q({ httpStatus: 200, method: 'eth_nope' })).entries).toHaveLength(1);
    expect((await q({ httpStatus: 429 })).entries).toHaveLength(0);
    expect((await q({ requestId: rids[3] })).entries.map((e: Json) => e.requestId)).toEqual([rids[3]]);
    expect((await q({ minLatencyMs: 1e9 })).entries).toHaveLength(0);
    expect((await q({ network: 'MAINNET', method: 'eth_blockNumber' })).entries).toHaveLength(8);
    const future = new Date(Date.now() + 3_600_000).toISOString().replace(/\.\d+Z$/, 'Z');
    expect((await q({ since: future })).entries).toHaveLength(0);
    expect((await q({ until: '2020-01-01T00:00:00Z' })).entries).toHaveLength(0);
    // Paging: 8 eth_blockNumber entries, 3 per page → 3 + 3 + 2, no duplicates, newest first across pages.
    const seen: Json[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const p = await q({ method: 'eth_blockNumber', limit: 3, ...(cursor ? { cursor } : {}) });
      seen.push(...p.entries);
      cursor = p.next ?? undefined;
      pages++;
    } while (cursor !== undefined && pages < 10);
    expect(pages).toBe(3);
    expect(seen).toHaveLength(8);
    expect(new Set(seen.map((e) => e.id)).size).toBe(8);
    const ids = seen.map((e) => Number(e.id));
    expect([...ids].sort((a, b) => b - a)).toEqual(ids);
    expect(seen.slice(0, 7).map((e) => e.requestId)).toEqual([...rids].reverse());
  });

  it.skipIf(skip)('another account gets "not found" from both methods and never sees an entry', async () => {
    for (const [method, id] of [
      ['apps_logs', app.id],
      ['keys_logs', key.id],
    ] as const) {
      const err = await B.request(method, [id] as never).then(
        () => undefined,
        (e: Json) => e,
      );
      expect(err?.code, method).toBe(-32010);
    }
    // B's own app: its own (empty) log only, whatever the filters.
    const own = await B.request('apps_logs', [appB.id, { limit: 500 }]);
    expect(own.entries).toHaveLength(0);
    // B's calls are B's; A's log does not grow with them.
    const before = (await A.request('apps_logs', [app.id, { limit: 500 }])).entries.length;
    await rpc(appB.urls.mainnet, { jsonrpc: '2.0', id: 1, method: 'eth_blockNumber', params: [] });
    await svc.requestLog!.flush();
    expect((await B.request('apps_logs', [appB.id])).entries).toHaveLength(1);
    expect((await A.request('apps_logs', [app.id, { limit: 500 }])).entries).toHaveLength(before);
    // Nor with A's cursor.
    const pA = await A.request('apps_logs', [app.id, { limit: 1 }]);
    const viaCursor = await B.request('apps_logs', [appB.id, { cursor: pA.next! }]);
    expect(viaCursor.entries.every((e: Json) => e.id !== pA.entries[0].id)).toBe(true);
  });

  it.skipIf(skip)('body capture per app: off by default, redacted and size-capped when on', async () => {
    const updated = await A.request('apps_update', [app.id, { logBodies: true }]);
    expect(updated.logBodies).toBe(true);
    await svc.access.sync();
    const secretish = `https://user:pw@node.example/v3/${'aB3'.repeat(12)}`;
    const big = `0x${'ab'.repeat(5000)}`;
    await rpc(app.urls.mainnet, {
      jsonrpc: '2.0',
      id: 1,
      method: 'eth_call',
      params: [{ to: `0x${'11'.repeat(20)}`, data: big }, 'latest'],
    });
    await rpc(app.urls.mainnet, {
      jsonrpc: '2.0',
      id: 2,
      method: 'eth_getBalance',
      params: [`0x${'33'.repeat(20)}`, 'latest'],
    });
    await rpc(app.urls.mainnet, { jsonrpc: '2.0', id: 4, method: 'eth_sendRawTransaction', params: [secretish] });
    await svc.requestLog!.flush();
    const p = await A.request('apps_logs', [app.id, { limit: 4 }]);
    const by = (m: string): Json => p.entries.find((e: Json) => e.method === m);
    expect(by('eth_getBalance').params).toBe(JSON.stringify([`0x${'33'.repeat(20)}`, 'latest']));
    expect(by('eth_getBalance').result).toBe('"0x0"');
    expect(by('eth_call').params.endsWith('…[truncated]')).toBe(true);
    expect(by('eth_call').params.length).toBeLessThanOrEqual(4096 + 20);
    expect(by('eth_call').result).toContain('execution reverted');
    // A call refused at params validation is logged with the params as sent (what made it fail), redacted.
    const raw = by('eth_sendRawTransaction');
    expect(raw).toMatchObject({ code: -32602 });
    expect(raw.result).toContain('-32602');
    expect(raw.params).toContain('node.example');
    expect(raw.params).not.toContain('pw@');
    expect(raw.params).not.toContain('aB3aB3aB3aB3');
    await A.request('apps_update', [app.id, { logBodies: false }]);
    await svc.access.sync();
  });

  it.skipIf(skip)('captured params and results: API keys, JWTs, cookies and URL credentials never stored', async () => {
    const log = new RequestLog({ db: svc.store.db, secret: svc.secret });
    const principal = { kind: 'app' as const, appId: app.id, userId: 'usr_redact' };
    const jwt =
      'eyJhbGciOiJSUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJhcHAiLCJleHAiOjQxMDI0NDQ4MDB9.c2lnbmF0dXJlLWJ5dGVzLWhlcmUtMTIzNDU2';
    const session = 'q7Yx3vJp0LkT9sWz2mB8nR4cF6hD1gKa5eUiOoPl';
    const providerKey = 'Zk29fhQ0pLm3Xv8RtY6wB1nC4sD7gH5j';
    const address = `0x${'ab'.repeat(20)}`;
    const secrets = [app.key as string, key.key as string, jwt, session, providerKey, 'hunter2'];
    log.record({
      principal,
      network: 'mainnet',
      method: 'eth_call',
      httpStatus: 200,
      code: undefined,
      latencyMs: 1,
      cacheHit: false,
      upstream: undefined,
      requestId: 'redact-1',
      ip: undefined,
      transport: 'http',
      params: [
        { to: address, data: '0x70a08231' },
        `https://rpc.example/mainnet/v2/${app.key}`,
        `Bearer ${jwt}`,
        `cookie: rpcgate_session=${session}; theme=dark`,
        `https://alice:hunter2@node.example/v3/${providerKey}`,
        `see /mainnet/${key.key} too`,
        key.key,
      ],
      result: { token: jwt, header: `Authorization: Bearer ${session}`, echo: app.key, balance: '0x0' },
    });
    await log.flush();
    const row = await svc.store.db
      .selectFrom('request_log')
      .select(['params', 'result'])
      .where('request_id', '=', 'redact-1')
      .executeTakeFirstOrThrow();
    for (const v of [row.params!, row.result!]) {
      for (const secret of secrets) expect(v, `${secret} in ${v}`).not.toContain(secret);
      expect(v).toContain('[redacted]');
    }
    // Chain data and the shape stay readable.
    expect(row.params).toContain(address);
    expect(row.params).toContain('0x70a08231');
    expect(row.params).toContain('rpc.example');
    expect(row.params).toContain('theme=dark');
    expect(row.result).toContain('"balance":"0x0"');
  });

  it.skipIf(skip)(
    '100,000 calls: the queue drops (and counts) what it cannot hold, the table stays within maxRows',
    async () => {
      const maxRows = 20_000;
      const log = new RequestLog({
        db: svc.store.db,
        secret: svc.secret,
        metrics: svc.metrics,
        maxRows,
        maxQueued: 30_000,
      });
      const principal = { kind: 'key' as const, keyId: key.id, userId: 'usr_flood' };
      let dropped = 0;
      const t0 = performance.now();
      for (let i = 0; i < 100_000; i++) {
        log.record({
          principal,
          network: 'mainnet',
          method: 'eth_blockNumber',
          httpStatus: 200,
          code: undefined,
          latencyMs: 1,
          cacheHit: false,
          upstream: 'x:1',
          requestId: `r${i}`,
          ip: `10.0.${i & 255}.1`,
          transport: 'http',
        });
        // Flush every 25,000 calls (as the timer would under a flood); the queue overflows in between.
        if (i % 25_000 === 24_999) await log.flush();
      }
      const recordMs = performance.now() - t0;
      await log.flush();
      const s = log.stats();
      dropped = s.dropped;
      expect(s.written + s.dropped).toBe(100_000);
      expect(s.written).toBe(100_000); // 25,000 < maxQueued between flushes: none dropped here
      const rows = await countRequestLog(svc.store.db);
      expect(rows).toBeLessThanOrEqual(maxRows);
      expect(rows).toBeGreaterThan(maxRows - 1); // the newest maxRows kept exactly
      // Now a queue smaller than the flood: recording never waits, drops are counted in /metrics.
      const small = new RequestLog({
        db: svc.store.db,
        secret: svc.secret,
        metrics: svc.metrics,
        maxRows,
        maxQueued: 1000,
      });
      for (let i = 0; i < 5000; i++)
        small.record({
          principal,
          network: 'mainnet',
          method: 'eth_chainId',
          httpStatus: 200,
          code: undefined,
          latencyMs: 1,
          cacheHit: false,
          upstream: undefined,
          requestId: undefined,
          ip: undefined,
          transport: 'http',
        });
      expect(small.stats()).toMatchObject({ queued: 1000, dropped: 4000 });
      await small.flush();
      expect(await countRequestLog(svc.store.db)).toBeLessThanOrEqual(maxRows);
      const text = await svc.metrics.metricsText();
      expect(Number(/^rpcgate_request_log_dropped_total (\d+)/m.exec(text)?.[1])).toBeGreaterThanOrEqual(
        4000 + dropped,
      );
      // The table's size on disk for the closing note (PostgreSQL: table + indexes + TOAST; SQLite: the whole file).
      const bytes =
        dialect === 'postgres'
          ? Number(
              (await sql<{ n: string }>`select pg_total_relation_size('request_log') as n`.execute(svc.store.db))
                .rows[0].n,
            )
          : Number(
              (
                await sql<{
                  n: number;
                }>`select page_count * page_size as n from pragma_page_count(), pragma_page_size()`.execute(
                  svc.store.db,
                )
              ).rows[0].n,
            );
      console.log(
        `request log (${dialect}): 100,000 calls recorded in ${recordMs.toFixed(0)} ms (incl. 4 flushes), table ${rows} rows (maxRows ${maxRows}), ${(bytes / 1048576).toFixed(1)} MiB on disk${dialect === 'sqlite' ? ' (whole database file)' : ''}`,
      );
      // The service's own log still answers (the oldest entries were trimmed, not the structure).
      expect((await A.request('keys_logs', [key.id, { limit: 1 }])).entries.length).toBeLessThanOrEqual(1);
    },
    120_000,
  );

  // PostgreSQL only: declared for that dialect alone (SQLite has no lock another connection holds while calls run).
  if (dialect === 'postgres')
    it.skipIf(skip)(
      'a blocked log write never holds a call: calls answer while the table is locked, entries follow after',
      async () => {
        const locker = new pgLib.Client({ connectionString: pg!.url });
        await locker.connect();
        try {
          await locker.query('BEGIN');
          await locker.query('LOCK TABLE request_log IN ACCESS EXCLUSIVE MODE');
          const A_URL = app.urls.mainnet as string;
          const first = await rpc(A_URL, { jsonrpc: '2.0', id: 1, method: 'eth_blockNumber', params: [] });
          expect(first.status).toBe(200);
          let flushDone = false;
          const flushing = svc.requestLog!.flush().finally(() => (flushDone = true)); // waits on the lock
          const rids: string[] = [];
          for (let i = 0; i < 30; i++) {
            const r = await rpc(A_URL, { jsonrpc: '2.0', id: i, method: 'eth_chainId', params: [] });
            expect(r.status).toBe(200);
            rids.push(r.rid!);
          }
          // Every call answered while the write was still waiting on the lock.
          expect(flushDone).toBe(false);
          await locker.query('COMMIT');
          await flushing.catch(() => {});
          await svc.requestLog!.flush();
          const logged = await A.request('apps_logs', [app.id, { requestId: rids[29] }]);
          expect(logged.entries.map((e: Json) => e.method)).toEqual(['eth_chainId']);
        } finally {
          await locker.query('ROLLBACK').catch(() => {});
          await locker.end();
        }
      },
    );

  it('retention: 10 days by default on PostgreSQL, 2 on SQLite, else requestLog.retentionDays', () => {
    expect(requestLogRetentionMs(undefined, true)).toBe(10 * 86_400_000);
    expect(requestLogRetentionMs(undefined, false)).toBe(2 * 86_400_000);
    expect(requestLogRetentionMs(0.5, false)).toBe(43_200_000);
  });

  it.skipIf(skip)('pruning deletes in batches of `batch` rows until none is older, newer rows kept', async () => {
    // Pruning walks ids, which grow with time (rows are written in the order calls end): this test's clock goes back
    // five days, so the earlier tests' (younger) rows are cleared first.
    await sql`delete from request_log`.execute(svc.store.db);
    const principal = { kind: 'key' as const, keyId: 'key_batches', userId: 'usr_batches' };
    let now = Date.now() - 5 * 86_400_000;
    const log = new RequestLog({ db: svc.store.db, secret: svc.secret, now: () => now });
    const entry = (method: string) => ({
      principal,
      network: 'mainnet',
      method,
      httpStatus: 200,
      code: undefined,
      latencyMs: 1,
      cacheHit: false,
      upstream: undefined,
      requestId: undefined,
      ip: undefined,
      transport: 'http' as const,
    });
    for (let i = 0; i < 23; i++) log.record(entry('eth_batchOld'));
    await log.flush();
    now = Date.now();
    for (let i = 0; i < 4; i++) log.record(entry('eth_batchNew'));
    await log.flush();
    const statements: string[] = [];
    const counting = svc.store.db.withPlugin({
      transformQuery: (a) => {
        statements.push(a.node.kind);
        return a.node;
      },
      transformResult: async (a) => a.result,
    });
    // One read of where the young rows start, then batches of 5: 23 old rows go in 5 deletes (5+5+5+5+3), the last
    // short one ends the loop.
    expect(await pruneRequestLog(counting, Date.now() - 2 * 86_400_000, 5)).toBe(23);
    expect(statements).toEqual(['RawNode', 'RawNode', 'RawNode', 'RawNode', 'RawNode', 'RawNode']);
    const left = await svc.store.db
      .selectFrom('request_log')
      .innerJoin('request_log_principals as p', 'p.id', 'request_log.principal')
      .select('method')
      .where('p.user_id', '=', 'usr_batches')
      .execute();
    expect(left.map((r) => r.method)).toEqual(['eth_batchNew', 'eth_batchNew', 'eth_batchNew', 'eth_batchNew']);
  });

  it.skipIf(skip)('retention prunes entries older than retentionDays in batches', async () => {
    await sql`delete from request_log`.execute(svc.store.db);
    let now = Date.now();
    const log = new RequestLog({ db: svc.store.db, secret: svc.secret, retentionMs: 2 * 86_400_000, now: () => now });
    const principal = { kind: 'key' as const, keyId: key.id, userId: 'usr_old' };
    now -= 3 * 86_400_000; // three days ago
    for (let i = 0; i < 50; i++)
      log.record({
        principal,
        network: 'mainnet',
        method: 'eth_old',
        httpStatus: 200,
        code: undefined,
        latencyMs: 1,
        cacheHit: false,
        upstream: undefined,
        requestId: undefined,
        ip: undefined,
        transport: 'http',
      });
    await log.flush();
    now += 3 * 86_400_000;
    const before = await countRequestLog(svc.store.db);
    expect(await log.prune()).toBe(50);
    expect(await countRequestLog(svc.store.db)).toBe(before - 50);
  });
});
