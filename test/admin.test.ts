// Operators (issue 27 items 1 and 5) end to end over HTTP: every admin_ method of the contract refuses non-admins;
// accounts listed and searched with their usage; suspension refuses an account's keys on HTTP and an open WebSocket,
// ends its sessions, refuses its log-in and deletes nothing (SQLite, one process; then two rpcgate processes on
// PostgreSQL + Redis, by PID, within 2 s); a plan override lowers the quota the limiter applies; the audit trail names
// the operator; the CLI grants the role against a store with no service running, and its admin commands answer --json.
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, RpcClientError, type AccountClient } from '../generated/account/client.js';
import { startService, type RunningService } from '../src/gateway/server/index.js';
import { cookieFetch, signUpAndLogIn } from './helpers/account.js';
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
import { Raw, until } from './helpers/ws-client.js';

// JSON from the contract and the CLI.
type Json = any;

const ROOT = join(import.meta.dirname, '..');
const PW = 'correct horse battery staple';
const ADMIN = `ops-${randomBytes(4).toString('hex')}@example.com`;
const contract = JSON.parse(readFileSync(join(ROOT, 'contracts/account.openrpc.json'), 'utf8'));
const ADMIN_METHODS: Json[] = contract.methods.filter((m: Json) => m.name.startsWith('admin_'));

let stub: StubNode;
const dirs: string[] = [];
const tmp = () => {
  const d = mkdtempSync(join(tmpdir(), 'rpcgate-admin-'));
  dirs.push(d);
  return d;
};
const email = (tag: string) => `${tag}-${randomBytes(4).toString('hex')}@example.com`;
const client = (url: string): AccountClient => createClient({ url: `${url}/api`, fetch: cookieFetch() });

async function refusal(p: Promise<unknown>): Promise<RpcClientError> {
  const e = await p.then(
    () => undefined,
    (x: unknown) => x,
  );
  expect(e, 'the call was expected to fail').toBeInstanceOf(RpcClientError);
  return e as RpcClientError;
}

/** A raw JSON-RPC POST (status and body as the client sees them). */
async function post(url: string, method: string, params: unknown, cookie?: string) {
  const r = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(cookie === undefined ? {} : { cookie }) },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
  return { status: r.status, body: (await r.json()) as Json, headers: r.headers };
}
const nodeCall = (url: string) => post(url, 'eth_blockNumber', []);
/** A key URL the account API gave, as served by `base` (another replica, or the in-process service). */
const on = (base: string, url: string) => base + new URL(url).pathname;
const wsUrl = (httpUrl: string) => httpUrl.replace(/^http/, 'ws');

/** Logs in and returns the session cookie (for raw posts). */
async function cookieOf(base: string, who: string): Promise<string> {
  const r = await fetch(`${base}/api`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'account_logIn', params: [{ email: who, password: PW }] }),
  });
  const c = r.headers.getSetCookie().find((x) => x.startsWith('rpcgate_session='));
  expect(c, `log-in of ${who}: ${await r.text()}`).toBeDefined();
  return c!.split(';')[0];
}

beforeAll(async () => {
  stub = await startStubNode();
});
afterAll(async () => {
  await stub?.close();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

// ---- one process on SQLite ------------------------------------------------------------------------------------------

describe('admin API on SQLite', () => {
  let svc: RunningService;
  let admin: AccountClient;
  let adminId: string;

  beforeAll(async () => {
    svc = await startService({
      port: 0,
      dataDir: tmp(),
      logLevel: 'silent',
      strictResults: true,
      devKey: false,
      accounts: { admins: [ADMIN.toUpperCase()] }, // compared case-insensitively
      plans: { tiny: { daily: 3, maxKeys: 1 }, gold: { daily: 1_000_000, maxApps: 50 } },
      durability: { usageFlushIntervalMs: 200 },
      networks: { mainnet: { upstreams: [stub.url] } },
    });
    admin = client(svc.url);
    await signUpAndLogIn(admin, { email: ADMIN, password: PW });
    const me = await admin.request('account_me');
    expect(me.admin).toBe(true);
    adminId = me.id;
  }, 120_000);
  afterAll(async () => {
    await svc?.stop();
  });

  it('every admin_ method of the contract refuses a non-admin (-32041, HTTP 403, admin-only) and no session (401)', async () => {
    expect(ADMIN_METHODS.map((m) => m.name)).toEqual(
      expect.arrayContaining([
        'admin_listAccounts',
        'admin_getAccount',
        'admin_suspend',
        'admin_unsuspend',
        'admin_setPlan',
        'admin_plans',
        'admin_usage',
        'admin_activity',
      ]),
    );
    const who = email('plain');
    const user = client(svc.url);
    await signUpAndLogIn(user, { email: who, password: PW });
    expect((await user.request('account_me')).admin).toBe(false);
    const cookie = await cookieOf(svc.url, who);
    const target = (await user.request('account_me')).id;
    for (const m of ADMIN_METHODS) {
      // The contract's example params, aimed at a real account (the refusal must not depend on a not-found).
      const params = JSON.parse(
        JSON.stringify(m.examples[0].params.map((p: Json) => p.value)).replaceAll('usr_4Tb8Rk2WqLz9XmNc5PyVhG', target),
      );
      const r = await post(`${svc.url}/api`, m.name, params, cookie);
      expect(r.status, m.name).toBe(403);
      expect(r.body.error, m.name).toMatchObject({ code: -32041, data: { source: 'rpcgate', reason: 'admin-only' } });
      const anon = await post(`${svc.url}/api`, m.name, params);
      expect(anon.status, m.name).toBe(401);
      // The admin passes the gate (an answer, or a refusal that is not admin-only): with the example's own params,
      // whose user does not exist here, so nothing is changed.
      const examples = m.examples[0].params.map((p: Json) => p.value);
      const ok = await post(`${svc.url}/api`, m.name, examples, await cookieOf(svc.url, ADMIN));
      expect(ok.body.error?.data?.reason, `${m.name}: ${JSON.stringify(ok.body)}`).not.toBe('admin-only');
    }
    // Nothing changed for the target: the example suspension was refused.
    expect((await user.request('account_me')).id).toBe(target);
    const a = await admin.request('admin_getAccount', [{ userId: target }]);
    expect(a.suspended).toBeNull();
  });

  it('lists and searches accounts with their apps, keys and usage today and this month', async () => {
    const who = email('busy');
    const user = client(svc.url);
    await signUpAndLogIn(user, { email: who, password: PW });
    const key = await user.request('keys_create', [{ name: 'k1', network: 'mainnet' }]);
    await user.request('apps_create', [{ name: 'app', useCase: 'Defi', chain: 'ethereum', services: ['node-api'] }]);
    for (let i = 0; i < 5; i++) expect((await nodeCall(on(svc.url, key.url))).status).toBe(200);

    const found = await until('usage flushed and listed', async () => {
      const page = await admin.request('admin_listAccounts', [{ search: who.split('@')[0].toUpperCase() }]);
      const a = page.accounts.find((x) => x.email === who);
      return a !== undefined && a.usage.today >= 5 ? a : undefined;
    });
    expect(found).toMatchObject({ email: who, admin: false, suspended: null, plan: null, apps: 1, keys: 1 });
    expect(found.usage).toEqual({ today: 5, month: 5 });
    // The deployment's limits when no plan is set.
    expect(found.limits).toMatchObject({ keysDaily: 25_000, maxKeys: 4, maxApps: 10 });
    // Search by user id; a search that matches nobody.
    expect((await admin.request('admin_listAccounts', [{ search: found.id }])).accounts.map((a) => a.id)).toEqual([
      found.id,
    ]);
    expect((await admin.request('admin_listAccounts', [{ search: 'nobody-at-all' }])).accounts).toEqual([]);
    // Paging: one per page, newest first, the cursor reaches the older ones.
    const first = await admin.request('admin_listAccounts', [{ limit: 1 }]);
    expect(first.accounts).toHaveLength(1);
    expect(first.next).not.toBeNull();
    const second = await admin.request('admin_listAccounts', [{ limit: 1, cursor: first.next! }]);
    expect(second.accounts[0].id).not.toBe(first.accounts[0].id);
    // The detail: apps and keys by id and name, never the key value.
    const detail = await admin.request('admin_getAccount', [{ userId: found.id }]);
    expect(detail.keyList).toEqual([{ id: key.id, name: 'k1', network: 'mainnet', createdAt: key.createdAt }]);
    expect(detail.appList).toHaveLength(1);
    expect(JSON.stringify(detail)).not.toContain(key.key);
    // Usage by day across accounts: today has at least these 5 calls, from at least one account.
    const today = new Date().toISOString().slice(0, 10);
    const usage = await admin.request('admin_usage', [{ since: today, until: today, userId: found.id }]);
    expect(usage.days).toEqual([{ day: today, requests: 5, success: 5, units: expect.any(Number), accounts: 1 }]);
    const bad = await refusal(admin.request('admin_usage', [{ since: today, until: '2000-01-01' }]));
    expect(bad.data).toMatchObject({ path: '/0/until' });
  });

  it('suspension: HTTP and an open WebSocket refused (suspended), sessions ended, log-in refused, nothing deleted; unsuspend restores', async () => {
    const who = email('abuser');
    const user = client(svc.url);
    await signUpAndLogIn(user, { email: who, password: PW });
    const userId = (await user.request('account_me')).id;
    const key = await user.request('keys_create', [{ name: 'k', network: 'mainnet' }]);
    const app = await user.request('apps_create', [
      { name: 'a', useCase: 'Defi', chain: 'ethereum', services: ['node-api'] },
    ]);
    const appUrl = on(svc.url, app.urls.mainnet!);
    expect((await nodeCall(on(svc.url, key.url))).status).toBe(200);
    expect((await nodeCall(appUrl)).status).toBe(200);
    const ws = await Raw.open(wsUrl(on(svc.url, key.url)));
    expect((await ws.call('eth_blockNumber')).result).toBe('0x10');

    const self = await refusal(admin.request('admin_suspend', [{ userId: adminId, reason: 'oops' }]));
    expect(self.code).toBe(-32602);
    const s = await admin.request('admin_suspend', [{ userId, reason: 'abuse: scraping' }]);
    expect(s.suspended).toMatchObject({ reason: 'abuse: scraping' });
    // This replica applied it before answering: refused at once, with the reason; the socket closed (4403).
    for (const url of [on(svc.url, key.url), appUrl]) {
      const r = await nodeCall(url);
      expect(r.status).toBe(403);
      expect(r.body.error).toMatchObject({ code: -32041, data: { source: 'rpcgate', reason: 'suspended' } });
    }
    expect((await ws.waitClosed(2000)).code).toBe(4403);
    // The session ended; log-in refused with the reason (after the right password only).
    expect((await refusal(user.request('account_me'))).code).toBe(-32016);
    const login = await refusal(client(svc.url).request('account_logIn', [{ email: who, password: PW }]));
    expect([login.code, (login.data as Json).reason]).toEqual([-32041, 'suspended']);
    const wrong = await refusal(client(svc.url).request('account_logIn', [{ email: who, password: `${PW}!` }]));
    expect((wrong.data as Json).reason).toBe('credentials');
    // Nothing deleted.
    const kept = await admin.request('admin_getAccount', [{ userId }]);
    expect([kept.keys, kept.apps, kept.keyList[0].id]).toEqual([1, 1, key.id]);
    expect((await admin.request('admin_listAccounts', [{ status: 'suspended' }])).accounts.map((a) => a.id)).toContain(
      userId,
    );

    const u = await admin.request('admin_unsuspend', [{ userId }]);
    expect(u.suspended).toBeNull();
    expect((await nodeCall(on(svc.url, key.url))).status).toBe(200);
    expect((await nodeCall(appUrl)).status).toBe(200);
    const back = client(svc.url);
    await back.request('account_logIn', [{ email: who, password: PW }]);
    // The user's own trail shows what the operator did; the admins' trail names the operator.
    const own = await back.request('account_activity', [{ limit: 10 }]);
    const ops = own.entries.filter((e) => e.byOperator).map((e) => e.action);
    expect(ops).toEqual(['unsuspended', 'suspended']);
    const trail = await admin.request('admin_activity', [{ userId, action: 'suspended' }]);
    expect(trail.entries).toHaveLength(1);
    expect(trail.entries[0]).toMatchObject({
      action: 'suspended',
      userId,
      email: who,
      byOperator: true,
      detail: { reason: 'abuse: scraping' },
      actor: { id: adminId, email: ADMIN },
    });
    ws.socket.close();
  });

  it('a plan and a per-account override take effect on the quota and the key cap', async () => {
    const who = email('planned');
    const user = client(svc.url);
    await signUpAndLogIn(user, { email: who, password: PW });
    const userId = (await user.request('account_me')).id;
    const key = await user.request('keys_create', [{ name: 'k', network: 'mainnet' }]);
    const url = on(svc.url, key.url);
    expect((await nodeCall(url)).status).toBe(200); // 1 of 25,000

    const unknown = await refusal(admin.request('admin_setPlan', [{ userId, plan: 'platinum' }]));
    expect(unknown.data).toMatchObject({ path: '/0/plan' });
    // Plan tiny: 3 requests a day, 1 key. Override: 4 a day (over the plan); the key cap stays the plan's.
    const a = await admin.request('admin_setPlan', [{ userId, plan: 'tiny', override: { daily: 4 } }]);
    expect(a).toMatchObject({ plan: 'tiny', planOverride: { daily: 4 } });
    expect(a.limits).toMatchObject({ daily: 4, keysDaily: 4, maxKeys: 1 });
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) statuses.push((await nodeCall(url)).status);
    // The call made before the change counts: 1 + 3 fit the 4, the 4th of these is refused.
    expect(statuses).toEqual([200, 200, 200, 402]);
    const refused = await nodeCall(url);
    expect(refused.body.error).toMatchObject({ code: -32005, data: { reason: 'quota', limit: 4, period: 'day' } });
    const list = await user.request('keys_list');
    expect([list.maxKeys, list.usage.limit, list.usage.used]).toEqual([1, 4, 4]);
    // The apps' (A) daily quota follows the same plan; their rate and monthly quota stay the deployment's.
    const appsUsage = await user.request('apps_usage');
    expect(appsUsage.quotas.find((q) => q.period === 'day')).toMatchObject({ limit: 4, used: 0 });
    expect([appsUsage.perSecond, appsUsage.maxApps]).toEqual([100, 10]);
    const capped = await refusal(user.request('keys_create', [{ name: 'k2', network: 'mainnet' }]));
    expect([capped.code, (capped.data as Json).limit]).toEqual([-32005, 1]);
    // Override removed, plan gold: the quota is back up; the audit trail has both changes.
    const g = await admin.request('admin_setPlan', [{ userId, plan: 'gold', override: null }]);
    expect(g.limits).toMatchObject({ keysDaily: 1_000_000, maxApps: 50, maxKeys: 4 });
    expect((await user.request('apps_usage')).maxApps).toBe(50);
    expect((await nodeCall(url)).status).toBe(200);
    const plans = await admin.request('admin_plans');
    expect(plans.plans.map((p) => p.name)).toEqual(['tiny', 'gold']);
    expect(plans.base).toMatchObject({ keysDaily: 25_000, maxKeys: 4 });
    const trail = await admin.request('admin_activity', [{ userId, action: 'plan_changed' }]);
    expect(trail.entries.map((e) => e.detail?.plan)).toEqual(['gold', 'tiny']);
  });
});

// ---- the CLI ----------------------------------------------------------------------------------------------------------

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}
function cli(args: string[], configDir: string, env: Record<string, string> = {}): Promise<Run> {
  return new Promise((resolve) => {
    const childEnv: NodeJS.ProcessEnv = { ...process.env, RPCGATE_CONFIG_DIR: configDir, ...env };
    for (const k of ['RPCGATE_SERVER', 'RPCGATE_EMAIL', 'RPCGATE_PASSWORD', 'DATABASE_URL', 'RPCGATE_DATA_DIR'])
      if (!(k in env)) delete childEnv[k];
    execFile(
      process.execPath,
      ['--import', 'tsx', join(ROOT, 'src/cli/main.ts'), ...args],
      { cwd: ROOT, env: childEnv, timeout: 60_000 },
      (err, stdout, stderr) =>
        resolve({ code: err ? (typeof err.code === 'number' ? err.code : -1) : 0, stdout, stderr }),
    );
  });
}
/** stdout must be exactly one JSON object. */
function one(r: Run): Json {
  const v = JSON.parse(r.stdout);
  expect(v !== null && typeof v === 'object' && !Array.isArray(v), r.stdout).toBe(true);
  return v;
}

describe('rpcgate admin (CLI)', () => {
  it('grant against the store with no service running; then that user calls admin_listAccounts; --json outputs', async () => {
    const dataDir = tmp();
    const configDir = tmp();
    const who = email('promoted');
    const other = email('customer');
    const cfg = {
      port: 0,
      dataDir,
      logLevel: 'silent' as const,
      devKey: false,
      networks: { mainnet: { upstreams: [stub.url] } },
    };
    let svc = await startService(cfg);
    for (const e of [who, other]) await signUpAndLogIn(client(svc.url), { email: e, password: PW });
    const refused = await refusal(
      (async () => {
        const c = client(svc.url);
        await c.request('account_logIn', [{ email: who, password: PW }]);
        return c.request('admin_listAccounts');
      })(),
    );
    expect((refused.data as Json).reason).toBe('admin-only');
    await svc.stop();

    // No service: the CLI opens the store itself.
    const missing = await cli(['admin', 'grant', 'nobody@example.com', '--data-dir', dataDir, '--json'], configDir);
    expect(missing.code).toBe(1);
    expect(one(missing).error).toMatchObject({ code: -32010 });
    const granted = await cli(['admin', 'grant', who.toUpperCase(), '--data-dir', dataDir, '--json'], configDir);
    expect(granted.code, granted.stderr).toBe(0);
    expect(one(granted)).toMatchObject({ email: who, role: 'admin', admin: true, adminByConfig: false });

    svc = await startService(cfg);
    try {
      const c = client(svc.url);
      await c.request('account_logIn', [{ email: who, password: PW }]);
      expect((await c.request('account_me')).admin).toBe(true);
      const page = await c.request('admin_listAccounts');
      expect(page.accounts.map((a) => a.email).sort()).toEqual([other, who].sort());
      // The grant is in the account's trail, done on the server host.
      const trail = await c.request('admin_activity', [{ action: 'admin_granted' }]);
      expect(trail.entries[0]).toMatchObject({ userId: page.accounts.find((a) => a.email === who)!.id });
      expect(trail.entries[0].actor).toEqual({ id: 'cli', email: null });

      // The API commands, with the CLI's session.
      const server = ['--server', svc.url];
      expect(
        (await cli(['login', ...server, '--email', who, '--json'], configDir, { RPCGATE_PASSWORD: PW })).code,
      ).toBe(0);
      const users = one(await cli(['admin', 'users', ...server, '--search', other, '--json'], configDir));
      expect(users.accounts.map((a: Json) => a.email)).toEqual([other]);
      const susp = await cli(['admin', 'suspend', other, '--reason', 'unpaid', ...server, '--json'], configDir);
      expect(susp.code, susp.stdout + susp.stderr).toBe(0);
      expect(one(susp)).toMatchObject({ email: other, suspended: { reason: 'unpaid' } });
      const noReason = await cli(['admin', 'suspend', other, ...server, '--json'], configDir);
      expect([noReason.code, one(noReason).error.code]).toEqual([1, -32602]);
      expect(one(await cli(['admin', 'unsuspend', other, ...server, '--json'], configDir))).toMatchObject({
        suspended: null,
      });
      const plan = one(
        await cli(['admin', 'plan', other, '--override', '{"daily":7,"maxKeys":2}', ...server, '--json'], configDir),
      );
      expect(plan).toMatchObject({ plan: null, planOverride: { daily: 7, maxKeys: 2 }, limits: { keysDaily: 7 } });
      const usage = one(await cli(['admin', 'usage', ...server, '--json'], configDir));
      expect(usage.days).toHaveLength(30);
      const human = await cli(['admin', 'users', ...server], configDir);
      expect(human.stdout).toMatch(/^ID\s+EMAIL\s+ADMIN\s+STATUS/);
      expect(human.stdout).toContain(other);

      // Revoked in the store: the next admin call through the API is refused.
      const revoked = await cli(['admin', 'revoke', who, '--data-dir', dataDir, '--json'], configDir);
      expect(one(revoked)).toMatchObject({ role: 'user', admin: false });
      const after = await cli(['admin', 'users', ...server, '--json'], configDir);
      expect(after.code).toBe(1);
      expect(one(after).error).toMatchObject({ code: -32041, data: { reason: 'admin-only' } });
    } finally {
      await svc.stop();
    }
  }, 120_000);
});

// ---- two rpcgate processes on PostgreSQL + Redis ---------------------------------------------------------------------

const shared = (await pgReachable()) && (await redisReachable());
const skipShared = skipUnless(shared, 'admin: two replicas', 'PostgreSQL and Redis');

describe.skipIf(skipShared)('suspension across two rpcgate processes (PostgreSQL + Redis)', () => {
  const db = scratchDatabase();
  const prefix = scratchPrefix();
  const replicas: RpcgateChild[] = [];

  beforeAll(async () => {
    await db.create();
    const cfg = {
      port: 0,
      dataDir: tmp(),
      logLevel: 'silent',
      devKey: false,
      databaseUrl: db.url,
      redisUrl: REDIS_URL,
      redisPrefix: prefix,
      secret: randomBytes(32).toString('hex'),
      accounts: { admins: [ADMIN] },
      durability: { usageFlushIntervalMs: 200 },
      networks: { mainnet: { upstreams: [stub.url] } },
    };
    replicas.push(...(await Promise.all([startRpcgateChild(cfg), startRpcgateChild(cfg)])));
  }, 120_000);
  afterAll(async () => {
    for (const r of replicas) await r.stop();
    await db.drop();
    await deleteRedisKeys(prefix);
  });

  it('suspended on one process: the other refuses HTTP and closes an open WebSocket within 2 s; unsuspend restores', async () => {
    const [one_, two] = replicas;
    const adm = client(one_.url);
    await signUpAndLogIn(adm, { email: ADMIN, password: PW });
    const who = email('replicas');
    const user = client(two.url);
    await signUpAndLogIn(user, { email: who, password: PW });
    const userId = (await user.request('account_me')).id;
    const key = await user.request('keys_create', [{ name: 'k', network: 'mainnet' }]);
    const onOne = on(one_.url, key.url);
    const onTwo = on(two.url, key.url);
    await until('the key on replica one', async () => (await nodeCall(onOne)).status === 200);
    const ws = await Raw.open(wsUrl(onTwo));
    expect((await ws.call('eth_blockNumber')).result).toBe('0x10');

    const t0 = performance.now();
    await adm.request('admin_suspend', [{ userId, reason: 'abuse' }]);
    let httpAfter = Number.NaN;
    while (performance.now() - t0 < 3000) {
      const r = await nodeCall(onTwo);
      if (r.status === 403) {
        expect(r.body.error.data).toMatchObject({ source: 'rpcgate', reason: 'suspended' });
        httpAfter = performance.now() - t0;
        break;
      }
      await new Promise((res) => setTimeout(res, 20));
    }
    const closed = await ws.waitClosed(3000);
    const wsAfter = performance.now() - t0;
    console.log(
      `suspension seen by the other process: HTTP refused after ${Math.round(httpAfter)} ms, socket closed (${closed.code}) by ${Math.round(wsAfter)} ms`,
    );
    expect(httpAfter).toBeLessThan(2000);
    expect(closed.code).toBe(4403);
    expect(wsAfter).toBeLessThan(2000);
    // The user's session (made on replica two) ended; log-in on either process is refused.
    expect((await refusal(user.request('account_me'))).code).toBe(-32016);
    const login = await refusal(client(two.url).request('account_logIn', [{ email: who, password: PW }]));
    expect((login.data as Json).reason).toBe('suspended');
    // A WebSocket opened now is refused too.
    const late = await Raw.open(wsUrl(onTwo));
    const ans = await late.call('eth_blockNumber');
    expect(ans.error.data.reason).toBe('suspended');

    const t1 = performance.now();
    await adm.request('admin_unsuspend', [{ userId }]);
    await until('the key works again on replica two', async () => (await nodeCall(onTwo)).status === 200, 2000);
    console.log(`unsuspension seen by the other process after ${Math.round(performance.now() - t1)} ms`);

    // A plan override set on one process lowers the quota the other applies (Redis counters): the daily limit set
    // below what is used already (1), every further call is refused (402) within 2 s.
    const back = client(two.url);
    await back.request('account_logIn', [{ email: who, password: PW }]);
    const used = (await back.request('keys_list')).usage.used;
    expect(used).toBeGreaterThan(0);
    const t2 = performance.now();
    const planned = await adm.request('admin_setPlan', [{ userId, plan: null, override: { daily: 1 } }]);
    expect(planned.limits.keysDaily).toBe(1);
    await until('the lowered quota on replica two', async () => (await nodeCall(onTwo)).status === 402, 2000);
    console.log(`plan override applied by the other process after ${Math.round(performance.now() - t2)} ms`);
    const r = await nodeCall(onOne);
    expect([r.status, r.body.error.data.reason, r.body.error.data.limit]).toEqual([402, 'quota', 1]);

    // The operators' view on PostgreSQL: the account with its usage and state, usage by day.
    const listed = await until('usage flushed', async () => {
      const a = (await adm.request('admin_listAccounts', [{ search: who }])).accounts[0];
      return a !== undefined && a.usage.today > 0 ? a : undefined;
    });
    // Metered calls (every outcome, refusals too) of all this test's rounds; the month includes today.
    expect(listed.usage.month).toBeGreaterThanOrEqual(listed.usage.today);
    expect(listed).toMatchObject({ id: userId, keys: 1, suspended: null, planOverride: { daily: 1 } });
    const today = new Date().toISOString().slice(0, 10);
    const days = await adm.request('admin_usage', [{ since: today, until: today }]);
    expect(days.days[0].requests).toBeGreaterThanOrEqual(listed.usage.today);
    expect(days.days[0].accounts).toBeGreaterThanOrEqual(1);
    const trail = await adm.request('admin_activity', [{ userId }]);
    expect(trail.entries.filter((e) => e.byOperator).map((e) => e.action)).toEqual([
      'plan_changed',
      'unsuspended',
      'suspended',
    ]);
  }, 60_000);
});
