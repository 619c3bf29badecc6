// Issue 26 item 3: per-user caps under races, as an attacker would try them — hundreds of creates at once, as HTTP
// batches and as concurrent single requests, spread over two rpcgate processes sharing PostgreSQL and Redis. The cap
// must hold exactly (4 network keys, `accounts.maxAppsPerUser` apps): the count and the insert are decided in one
// database transaction serialized on the user's row, so no replica can see a stale count.
// Needs PostgreSQL and Redis (skipped with a message when unreachable, unless CI is set).
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRpcgateChild, type RpcgateChild } from './helpers/rpcgate-child.js';
import {
  deleteRedisKeys,
  pgReachable,
  redisReachable,
  REDIS_URL,
  scratchDatabase,
  scratchPrefix,
  skipUnless,
} from './helpers/services.js';
import { startStubNode, type StubNode } from './helpers/stub-node.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

const skip = skipUnless((await pgReachable()) && (await redisReachable()), 'caps-race', 'PostgreSQL or Redis');

const PASSWORD = 'a long enough password for the race';
const MAX_APPS = 10; // the default of accounts.maxAppsPerUser

describe.skipIf(skip)('caps under races: two replicas on PostgreSQL + Redis', () => {
  const db = scratchDatabase();
  const prefix = scratchPrefix();
  const dirs: string[] = [];
  const replicas: RpcgateChild[] = [];
  let upstream: StubNode;

  beforeAll(async () => {
    await db.create();
    upstream = await startStubNode();
    const secret = randomBytes(32).toString('hex');
    const config = (dataDir: string) => ({
      port: 0,
      logLevel: 'silent',
      dataDir,
      devKey: false,
      databaseUrl: db.url,
      redisUrl: REDIS_URL,
      redisPrefix: prefix,
      secret,
      redis: { commandTimeoutMs: 5000 },
      networks: { mainnet: { upstreams: [upstream.url] } },
    });
    const dir = () => {
      const d = mkdtempSync(join(tmpdir(), 'rpcgate-caps-'));
      dirs.push(d);
      return d;
    };
    // One after the other: both run the migrations on start.
    replicas.push(await startRpcgateChild(config(dir())));
    replicas.push(await startRpcgateChild(config(dir())));
  }, 120_000);

  afterAll(async () => {
    await Promise.all(replicas.map((r) => r.stop()));
    await upstream?.close();
    await deleteRedisKeys(prefix);
    await db.drop();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  }, 60_000);

  /** POSTs to a replica's account API with the session cookie (no Origin header: not a browser, as the CLI). */
  async function api(replica: number, cookie: string, body: unknown): Promise<{ status: number; body: Json }> {
    const res = await fetch(`${replicas[replica].url}/api`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', cookie },
      body: JSON.stringify(body),
    });
    return { status: res.status, body: await res.json() };
  }

  /** A new user, logged in: the session cookie (sessions live in the shared database: valid on both replicas). */
  async function newSession(): Promise<{ cookie: string; userId: string }> {
    const cred = { email: `race-${randomBytes(6).toString('hex')}@example.com`, password: PASSWORD };
    await api(0, '', { jsonrpc: '2.0', id: 1, method: 'account_signUp', params: [cred] });
    const res = await fetch(`${replicas[1].url}/api`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'account_logIn', params: [cred] }),
    });
    const body = (await res.json()) as Json;
    expect(body.result?.user?.id, JSON.stringify(body)).toBeTruthy();
    const cookie = res.headers
      .getSetCookie()
      .map((c) => c.split(';')[0])
      .find((c) => c.startsWith('rpcgate_session='))!;
    return { cookie, userId: body.result.user.id };
  }

  /**
   * `total` creates at once, half through each replica: batches of 20 (the account API's batch cap) for the first
   * `inBatches`, single requests for the rest. Answers: created, refused with -32005, anything else.
   */
  async function flood(
    cookie: string,
    total: number,
    inBatches: number,
    create: (i: number) => { method: string; params: unknown[] },
  ) {
    const sends: Promise<Json[]>[] = [];
    let sent = 0;
    for (let b = 0; sent < inBatches; b++) {
      const n = Math.min(20, inBatches - sent);
      const batch = Array.from({ length: n }, (_, i) => ({ jsonrpc: '2.0', id: sent + i, ...create(sent + i) }));
      sent += n;
      sends.push(api(b % 2, cookie, batch).then((r) => (Array.isArray(r.body) ? r.body : [r.body])));
    }
    for (let i = sent; i < total; i++)
      sends.push(
        api(i % 2, cookie, { jsonrpc: '2.0', id: i, ...create(i) }).then((r) => [{ ...r.body, status: r.status }]),
      );
    const answers = (await Promise.all(sends)).flat();
    expect(answers).toHaveLength(total);
    const created = answers.filter((a) => a.result !== undefined);
    const refused = answers.filter((a) => a.error?.code === -32005);
    const other = answers.filter((a) => a.result === undefined && a.error?.code !== -32005);
    return { created, refused, other };
  }

  async function countRows(table: 'apps' | 'network_keys', userId: string): Promise<number> {
    const c = new pg.Client({ connectionString: db.url });
    await c.connect();
    try {
      return (await c.query(`SELECT count(*)::int AS n FROM ${table} WHERE user_id = $1`, [userId])).rows[0].n;
    } finally {
      await c.end();
    }
  }

  it('300 keys_create at once (batches and single requests, both replicas): exactly 4 keys, the other 296 refused with -32005', async () => {
    const { cookie, userId } = await newSession();
    const r = await flood(cookie, 300, 100, (i) => ({
      method: 'keys_create',
      params: [{ name: `race ${i}`, network: 'mainnet' }],
    }));
    console.log(
      `[caps-race] 300 keys_create: ${r.created.length} created, ${r.refused.length} refused, ${r.other.length} other`,
    );
    expect(r.other.map((a) => JSON.stringify(a).slice(0, 200))).toEqual([]);
    expect(r.created).toHaveLength(4);
    expect(r.refused).toHaveLength(296);
    for (const a of r.refused) expect(a.error.data).toMatchObject({ limit: 4, what: 'network API keys' });
    expect(await countRows('network_keys', userId)).toBe(4);
    // Every created key serves on both replicas (they are real keys), and the list agrees.
    expect(
      (await api(1, cookie, { jsonrpc: '2.0', id: 1, method: 'keys_list', params: [] })).body.result.keys,
    ).toHaveLength(4);
  }, 120_000);

  it(`60 apps_create at once (batches and single requests, both replicas): exactly ${MAX_APPS} apps (accounts.maxAppsPerUser), the rest refused with -32005 {limit, what: "apps"}`, async () => {
    const { cookie, userId } = await newSession();
    const r = await flood(cookie, 60, 20, (i) => ({
      method: 'apps_create',
      params: [{ name: `race ${i}`, useCase: 'Defi', chain: 'ethereum', services: ['node-api'] }],
    }));
    console.log(
      `[caps-race] 60 apps_create: ${r.created.length} created, ${r.refused.length} refused, ${r.other.length} other`,
    );
    expect(r.other.map((a) => JSON.stringify(a).slice(0, 200))).toEqual([]);
    expect(r.created).toHaveLength(MAX_APPS);
    expect(r.refused).toHaveLength(60 - MAX_APPS);
    for (const a of r.refused) {
      expect(a.error.data).toEqual({ limit: MAX_APPS, what: 'apps' });
      expect(a.error.message).toMatch(new RegExp(`at most ${MAX_APPS} apps per user`));
    }
    // A refused single request is HTTP 409, as the 5th network key is.
    expect(r.refused.filter((a) => a.status !== undefined).every((a) => a.status === 409)).toBe(true);
    expect(await countRows('apps', userId)).toBe(MAX_APPS);
    // Deleting one frees exactly one slot.
    expect(
      (await api(0, cookie, { jsonrpc: '2.0', id: 1, method: 'apps_delete', params: [r.created[0].result.id] })).body
        .result.deleted,
    ).toBe(true);
    const again = await flood(cookie, 10, 0, (i) => ({
      method: 'apps_create',
      params: [{ name: `again ${i}`, useCase: 'Defi', chain: 'ethereum', services: ['node-api'] }],
    }));
    expect([again.created.length, again.refused.length, again.other.length]).toEqual([1, 9, 0]);
    expect(await countRows('apps', userId)).toBe(MAX_APPS);
  }, 120_000);
});
