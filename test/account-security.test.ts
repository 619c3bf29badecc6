// Issue 14, account security, over HTTP against real services (startService, a stand-in node, and a redis-server of our
// own for the replica case):
//   1. log-in throttle: a batch + parallel attack on one email checks at most the limit of passwords;
//   2. password-hash flood: bounded concurrent hashing (429 beyond it), /docs and the node API stay responsive;
//      unknown emails cost a check like known ones and count against the IP limit;
//   3. lockout per (email, IP): an attacker's address does not lock the owner out; data.retryAfter + Retry-After;
//   7. sign-up limit per IP;
//   8. per-app JWT maximum lifetime;
//   9. behind a TLS proxy: Secure cookie and the Origin check against the public URL.
// Figures are printed (console.log) so the run shows them.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { exportSPKI, generateKeyPair, SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startService, type RunningService } from '../src/gateway/server/index.js';
import type { ConfigInput } from '../src/gateway/config/config.js';
import { startStubNode, type StubNode } from './helpers/stub-node.js';
import { weakPasswordReason } from '../src/gateway/secrets/password-policy.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

const PASSWORD = 'violet tram oyster nine';
const rnd = () => randomBytes(4).toString('hex');
const call = (method: string, params: unknown, id: unknown = 1) => ({ jsonrpc: '2.0', id, method, params });

interface Answer {
  status: number;
  body: Json;
  headers: Headers;
}

async function post(url: string, body: unknown, headers: Record<string, string> = {}): Promise<Answer> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text === '' ? undefined : JSON.parse(text), headers: res.headers };
}

const cookieOf = (r: Answer) =>
  /^[^;]+/.exec(r.headers.getSetCookie().find((c) => c.startsWith('rpcgate_session=')) ?? '')?.[0];

const dirs: string[] = [];
const services: RunningService[] = [];
let stub: StubNode;

async function start(cfg: Partial<ConfigInput> = {}): Promise<RunningService> {
  const dataDir = mkdtempSync(join(tmpdir(), 'rpcgate-account-security-'));
  dirs.push(dataDir);
  const svc = await startService({
    port: 0,
    dataDir,
    logLevel: 'silent',
    devKey: true,
    networks: { mainnet: { upstreams: [stub.url], chainId: 1 }, testnet: { upstreams: [stub.url], chainId: 31338 } },
    ...cfg,
  } as ConfigInput);
  services.push(svc);
  return svc;
}

async function signUp(
  svc: RunningService,
  email: string,
  password = PASSWORD,
  headers: Record<string, string> = {},
): Promise<string> {
  const r = await post(`${svc.url}/api`, call('account_signUp', [{ email, password }]), headers);
  expect(r.body.result, JSON.stringify(r.body)).toEqual({ email, next: 'account_logIn' });
  const l = await post(`${svc.url}/api`, call('account_logIn', [{ email, password }]), headers);
  expect(l.status, JSON.stringify(l.body)).toBe(200);
  return cookieOf(l)!;
}

const logIn = (svc: RunningService, email: string, password: string, ip?: string) =>
  post(
    `${svc.url}/api`,
    call('account_logIn', [{ email, password }]),
    ip === undefined ? {} : { 'x-forwarded-for': ip },
  );

// The flooding client (argv: API URL, parallel, duration ms): prints what it got as JSON.
const FLOOD = `
const [url, parallel, ms] = process.argv.slice(1);
const end = Date.now() + Number(ms);
const r = { total: 0, s401: 0, s429: 0, other: [], hashing: 0, retryAfter: [] };
let n = 0;
async function one() {
  while (Date.now() < end) {
    const i = n++;
    const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', 'x-forwarded-for': '10.' + ((i >> 16) & 255) + '.' + ((i >> 8) & 255) + '.' + (i & 255) },
      body: JSON.stringify({ jsonrpc: '2.0', id: i, method: 'account_logIn', params: [{ email: 'nobody-' + i + '@example.com', password: 'flood password' }] }) });
    const body = await res.json();
    r.total++;
    if (res.status === 401) r.s401++;
    else if (res.status === 429) {
      r.s429++;
      if (body.error.data.scope === 'password-hashing' && body.error.data.retryAfter === 1) r.hashing++;
      if (!r.retryAfter.includes(res.headers.get('retry-after'))) r.retryAfter.push(res.headers.get('retry-after'));
    } else r.other.push(res.status);
  }
}
await Promise.all(Array.from({ length: Number(parallel) }, one));
process.stdout.write(JSON.stringify(r));
`;

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const max = (xs: number[]) => Math.max(...xs);

beforeAll(async () => {
  stub = await startStubNode();
});

afterAll(async () => {
  for (const s of services) await s.stop();
  await stub?.close();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe('item 1: log-in throttle', () => {
  it('50 parallel batches of 20 log-ins plus 200 parallel single log-ins on one email check at most 10 passwords', async () => {
    // The per-IP counter (every attempt, never given back) would otherwise refuse the late guesses below first when a
    // loaded machine lets the hash gate refuse most of the burst: this test is about the (email, IP) counter.
    const svc = await start({ accountSecurity: { loginsPerIp: 1000 } });
    const email = `victim-${rnd()}@example.com`;
    await signUp(svc, email);
    const gate = svc.account.throttle.gate;
    const before = gate.done;
    const t0 = performance.now();
    const batch = Array.from({ length: 20 }, (_, i) =>
      call('account_logIn', [{ email, password: `guess number ${i}` }], i),
    );
    const batches = await Promise.all(Array.from({ length: 50 }, () => post(`${svc.url}/api`, batch)));
    const afterBatches = gate.done - before;
    const singles = await Promise.all(Array.from({ length: 200 }, (_, i) => logIn(svc, email, `single guess ${i}`)));
    const checked = gate.done - before;
    const ms = performance.now() - t0;
    console.log(
      `[issue 14 item 1] 50 batches × 20 + 200 parallel single log-ins on one email: ${checked} passwords checked (limit 10; batches checked ${afterBatches}) in ${ms.toFixed(0)} ms; before the fix 50 × 20 checked 620`,
    );

    // Inside a batch, log-in is refused before any check: -32600 with reason "batch".
    for (const b of batches) {
      expect(b.status).toBe(200);
      expect(b.body).toHaveLength(20);
      for (const item of b.body)
        expect([item.error.code, item.error.data.reason, item.error.data.method]).toEqual([
          -32600,
          'batch',
          'account_logIn',
        ]);
    }
    expect(afterBatches).toBe(0);
    expect(checked).toBeLessThanOrEqual(10);
    const statuses = singles.map((r) => r.status);
    expect(statuses.filter((s) => s === 401).length).toBe(checked);
    expect(statuses.filter((s) => s !== 401 && s !== 429)).toEqual([]);
    // The burst may end before the (email, IP) counter is full: attempts the hashing gate refused (429
    // password-hashing) gave their point back. Attempts one at a time then fill it — still no more than 10 checks.
    let limited = singles.find((r) => r.body.error?.data?.scope === 'email+ip');
    for (let i = 0; limited === undefined && i < 11; i++) {
      const r = await logIn(svc, email, `late guess ${i}`);
      if (r.body.error?.data?.scope === 'email+ip') limited = r;
    }
    expect(gate.done - before).toBeLessThanOrEqual(10);
    if (limited === undefined) throw new Error('no log-in was refused by the (email, IP) limit');
    expect(limited.body.error.data).toMatchObject({ source: 'rpcgate', reason: 'rate', scope: 'email+ip', limit: 10 });
    expect(Number(limited.headers.get('retry-after'))).toBe(limited.body.error.data.retryAfter);
    // A batch with one log-in and nothing else is one check: allowed. Sign-up is refused in batches too.
    const mixed = await post(`${svc.url}/api`, [
      call('networks_list', [], 1),
      call('account_signUp', [{ email: `b-${rnd()}@example.com`, password: PASSWORD }], 2),
    ]);
    expect(mixed.body[0].result).toBeDefined();
    expect(mixed.body[1].error).toMatchObject({ code: -32600, data: { reason: 'batch', method: 'account_signUp' } });
  }, 60_000);
});

describe('item 1 across replicas: counters in Redis (our own redis-server), in-process while it is down', () => {
  let redis: ChildProcess | undefined;
  let port = 0;
  const startRedis = () =>
    new Promise<ChildProcess>((resolve, reject) => {
      const p = spawn(
        'redis-server',
        ['--port', String(port), '--save', '', '--appendonly', 'no', '--bind', '127.0.0.1'],
        { stdio: ['ignore', 'pipe', 'ignore'] },
      );
      p.once('error', reject);
      p.stdout!.on('data', (d: Buffer) => {
        if (d.toString().includes('Ready to accept connections')) resolve(p);
      });
    });
  const stopRedis = async () => {
    const p = redis;
    redis = undefined;
    if (p === undefined || p.exitCode !== null) return;
    await new Promise<void>((r) => {
      p.once('exit', () => r());
      p.kill('SIGKILL');
    });
  };

  beforeAll(async () => {
    port = await new Promise<number>((r) => {
      const s = createServer().listen(0, '127.0.0.1', () => {
        const p = (s.address() as { port: number }).port;
        s.close(() => r(p));
      });
    });
    try {
      redis = await startRedis();
    } catch (e) {
      if (process.env.CI) throw e;
      console.warn(
        `[account-security] redis-server not runnable (${(e as Error).message}): the replica case is skipped`,
      );
    }
  });
  afterAll(stopRedis);

  it('ten failures on replica 1 lock the (email, IP) on replica 2; with Redis killed each replica still answers, then shares again', async (t) => {
    if (redis === undefined) return t.skip();
    const cfg = { redisUrl: `redis://127.0.0.1:${port}`, redisPrefix: `acct-test-${rnd()}` };
    const r1 = await start(cfg);
    const r2 = await start(cfg);
    await expect.poll(() => r1.account.throttle.shared && r2.account.throttle.shared, { timeout: 10_000 }).toBe(true);
    const email = `shared-${rnd()}@example.com`;
    for (let i = 0; i < 10; i++) expect((await logIn(i % 2 ? r1 : r2, email, `wrong guess ${i}`)).status).toBe(401);
    const refused = await logIn(r2, email, 'wrong again');
    expect([refused.status, refused.body.error.data.scope]).toEqual([429, 'email+ip']);

    await stopRedis();
    const t0 = performance.now();
    const down = await logIn(r1, `other-${rnd()}@example.com`, 'wrong while redis is down');
    const downMs = performance.now() - t0;
    console.log(
      `[issue 14 item 1] Redis killed: a log-in on replica 1 answered ${down.status} in ${downMs.toFixed(0)} ms (in-process counters)`,
    );
    expect(down.status).toBe(401);

    redis = await startRedis();
    const email2 = `shared2-${rnd()}@example.com`;
    // The clients reconnect by themselves; then the counters are shared again.
    await expect
      .poll(() => r1.account.throttle.shared && r2.account.throttle.shared, { timeout: 15_000, interval: 100 })
      .toBe(true);
    expect(await svc2Shared(r1, r2, email2)).toBe(true); // once: repeated tries would fill r2's own counters too
  }, 60_000);

  /** True once a failure counted on r1 is seen on r2 (Redis shared again): r2 refuses after 10 in total. */
  async function svc2Shared(r1: RunningService, r2: RunningService, email: string): Promise<boolean> {
    for (let i = 0; i < 12; i++) {
      const r = await logIn(r1, email, `fill guess ${i}`);
      if (r.status === 429) break;
    }
    return (await logIn(r2, email, 'after password')).status === 429;
  }
});

describe('item 2: password-hash flood', () => {
  it('a flood of log-ins to unknown emails from many addresses: hashing stays bounded, /docs and the node API stay responsive', async () => {
    const svc = await start({ trustProxy: 1, accountSecurity: { passwordHashConcurrency: 1, passwordHashQueue: 4 } });
    const docs = `${svc.url}/docs/index.html`;
    const node = svc.urls.mainnet.B;
    const timeDocs = async () => {
      const t = performance.now();
      const r = await fetch(docs);
      await r.arrayBuffer();
      expect(r.status).toBe(200);
      return performance.now() - t;
    };
    const timeNode = async () => {
      const t = performance.now();
      const r = await post(node, call('eth_blockNumber', []));
      expect(r.body.result).toBe('0x10');
      return performance.now() - t;
    };
    const base = { docs: [] as number[], node: [] as number[] };
    for (let i = 0; i < 20; i++) {
      base.docs.push(await timeDocs());
      base.node.push(await timeNode());
    }

    const gate = svc.account.throttle.gate;
    const before = { done: gate.done, refused: gate.refused };
    // The attacker is a process of its own (its client work does not load this event loop): 16 log-ins in flight,
    // each from another X-Forwarded-For address, for 4 s.
    const child = spawn(process.execPath, ['--input-type=module', '-e', FLOOD, `${svc.url}/api`, '16', '4000'], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    const exited = new Promise<void>((r) => child.once('exit', () => r()));
    const t0 = performance.now();
    const during = { docs: [] as number[], node: [] as number[] };
    await new Promise((r) => setTimeout(r, 500));
    for (let i = 0; i < 20; i++) {
      during.docs.push(await timeDocs());
      during.node.push(await timeNode());
    }
    await exited;
    const secs = (performance.now() - t0) / 1000;
    const f = JSON.parse(out) as {
      total: number;
      s401: number;
      s429: number;
      other: number[];
      hashing: number;
      retryAfter: string[];
    };
    const checked = gate.done - before.done;
    console.log(
      `[issue 14 item 2] flood: ${f.total} log-ins to unknown emails in ${secs.toFixed(1)} s from ${f.total} addresses, ${checked} passwords checked (${(checked / secs).toFixed(0)}/s, peak ${gate.peak} at once), ${f.s429} refused 429 (${f.hashing} password-hashing); ` +
        `GET /docs/index.html median ${median(base.docs).toFixed(1)} → ${median(during.docs).toFixed(1)} ms (max ${max(during.docs).toFixed(0)} ms); ` +
        `node API median ${median(base.node).toFixed(1)} → ${median(during.node).toFixed(1)} ms (max ${max(during.node).toFixed(0)} ms)`,
    );
    expect(f.other).toEqual([]);
    expect(f.s401).toBe(checked);
    expect(f.hashing).toBeGreaterThan(0);
    expect(f.hashing).toBe(gate.refused - before.refused);
    expect(new Set(f.retryAfter)).toEqual(new Set(['1']));
    expect(gate.peak).toBe(1);
    // Generous behavioural bounds (the issue saw 3.0 s for the docs page): no request queues behind the hashing.
    expect(median(during.docs)).toBeLessThan(Math.max(500, 20 * median(base.docs)));
    expect(max(during.docs)).toBeLessThan(1500); // without the gate: 2.5 s here, 3.0 s in the issue
    expect(median(during.node)).toBeLessThan(Math.max(500, 20 * median(base.node)));
  }, 120_000);

  it('unknown emails cost one password check like known ones and count against the per-IP limit', async () => {
    const svc = await start({ trustProxy: 1, accountSecurity: { loginsPerIp: 5 } });
    const email = `known-${rnd()}@example.com`;
    await signUp(svc, email);
    const gate = svc.account.throttle.gate;
    const ip = '198.51.100.7';
    let d = gate.done;
    expect((await logIn(svc, email, 'not the password', ip)).status).toBe(401);
    expect(gate.done - d).toBe(1);
    d = gate.done;
    for (let i = 0; i < 4; i++)
      expect((await logIn(svc, `unknown-${i}-${rnd()}@example.com`, 'whatever it is', ip)).status).toBe(401);
    expect(gate.done - d).toBe(4);
    const sixth = await logIn(svc, `unknown-${rnd()}@example.com`, 'whatever it is', ip);
    expect([sixth.status, sixth.body.error.data.scope, sixth.body.error.data.limit]).toEqual([429, 'ip', 5]);
    expect(gate.done - d).toBe(4);
    // Another address is not affected.
    expect((await logIn(svc, email, PASSWORD, '198.51.100.8')).status).toBe(200);
  }, 60_000);
});

describe('item 3: lockout per (email, IP)', () => {
  it("an attacker's address exhausting its limit does not lock out the owner; the softer per-email limit still applies", async () => {
    const svc = await start({
      trustProxy: 1,
      accountSecurity: { failedLoginsPerEmailIp: 10, failedLoginsPerEmail: 25 },
    });
    const email = `owner-${rnd()}@example.com`;
    await signUp(svc, email, PASSWORD, { 'x-forwarded-for': '192.0.2.1' });
    const attacker = '203.0.113.66';
    for (let i = 0; i < 10; i++) expect((await logIn(svc, email, `guess number ${i}`, attacker)).status).toBe(401);
    const locked = await logIn(svc, email, PASSWORD, attacker); // even the right password: this address is locked
    expect(locked.status).toBe(429);
    expect(locked.body.error.data).toMatchObject({
      source: 'rpcgate',
      reason: 'rate',
      scope: 'email+ip',
      limit: 10,
      period: '15 minutes',
    });
    const retryAfter = locked.body.error.data.retryAfter;
    expect(retryAfter).toBeGreaterThan(800);
    expect(retryAfter).toBeLessThanOrEqual(900);
    expect(locked.headers.get('retry-after')).toBe(String(retryAfter));
    expect(locked.body.error.message).toMatch(/try again in \d+ s/);
    console.log(
      `[issue 14 item 3] attacker locked after 10 failures (retry in ${retryAfter} s); owner from another address: ${(await logIn(svc, email, PASSWORD, '192.0.2.1')).status}`,
    );

    // The owner, from their own address, logs in (and a success gives back its email points).
    expect((await logIn(svc, email, PASSWORD, '192.0.2.1')).status).toBe(200);
    // Many addresses together reach the per-email limit (25 failures per hour): then every address that never logged
    // in to this account waits (issue 26: the owner's known address does not — see the issue 26 tests below).
    let fails = 10;
    for (let a = 1; fails < 25; a++)
      for (let i = 0; i < 10 && fails < 25; i++, fails++)
        expect((await logIn(svc, email, `guess number ${i}`, `203.0.113.${a}`)).status).toBe(401);
    const all = await logIn(svc, email, PASSWORD, '192.0.2.99');
    expect([all.status, all.body.error.data.scope, all.body.error.data.period]).toEqual([429, 'email', 'hour']);
    // Attempts refused by the email limit check nothing and do not fill that address's own (email, IP) counter.
    for (let i = 0; i < 12; i++)
      expect((await logIn(svc, email, `owner retry ${i}`, '192.0.2.2')).body.error.data.scope).toBe('email');
    expect((await logIn(svc, email, PASSWORD, '192.0.2.1')).status).toBe(200);
    // Operators see the refusals by scope: the locked attacker's 1, the per-email 1 + 12.
    const metrics = await (await fetch(`${svc.url}/metrics`)).text();
    const throttled = (scope: string) =>
      Number(
        new RegExp(`^rpcgate_account_throttled_total\\{scope="${scope.replace('+', '\\+')}"\\} (\\d+)$`, 'm').exec(
          metrics,
        )?.[1],
      );
    expect([throttled('email+ip'), throttled('email'), throttled('ip'), throttled('password-hashing')]).toEqual([
      1, 13, 0, 0,
    ]);
  }, 60_000);
});

describe('item 3: IPv6 clients are counted by /64', () => {
  it('two addresses of one /64 share the (email, IP) lock; another /64 does not', async () => {
    const svc = await start({ trustProxy: 1, accountSecurity: { failedLoginsPerEmailIp: 2 } });
    const email = `v6-${rnd()}@example.com`;
    await signUp(svc, email);
    expect((await logIn(svc, email, 'wrong guess one', '2001:db8:aa:1::1')).status).toBe(401);
    expect((await logIn(svc, email, 'wrong guess two', '2001:db8:aa:1:ffff::2')).status).toBe(401);
    const third = await logIn(svc, email, PASSWORD, '2001:db8:aa:1:1234:5678:9abc:def0');
    expect([third.status, third.body.error.data.scope]).toEqual([429, 'email+ip']);
    expect((await logIn(svc, email, PASSWORD, '2001:db8:aa:2::1')).status).toBe(200);
  }, 60_000);
});

describe('item 7: password strength', () => {
  it('zxcvbn-ts (@zxcvbn-ts/core + language-common) refuses what the plain rules let through', async () => {
    expect(await weakPasswordReason('summer2023', 'x@example.com')).toMatch(
      /^is too easy to guess \(strength [0-2] of 4, at least 3 needed\)/,
    );
    const svc = await start();
    const r = await post(
      `${svc.url}/api`,
      call('account_signUp', [{ email: `weak-${rnd()}@example.com`, password: 'summer2023' }]),
    );
    expect([r.status, r.body.error.code, r.body.error.data.path]).toEqual([200, -32602, '/0/password']);
    expect(r.body.error.message).toMatch(/: password is too easy to guess/);
    // The passphrases the tests and docs use pass.
    for (const p of [PASSWORD, 'correct horse battery', 'a long enough password'])
      expect(await weakPasswordReason(p, 'someone@example.com'), p).toBeUndefined();
  }, 60_000);
});

describe('item 7: sign-up limit per IP', () => {
  it('refuses the sign-up after the limit from one address (registered emails count too), not from another', async () => {
    const svc = await start({ trustProxy: 1, accountSecurity: { signupsPerIp: 2 } });
    const ip = { 'x-forwarded-for': '198.51.100.20' };
    const email = `first-${rnd()}@example.com`;
    expect((await post(`${svc.url}/api`, call('account_signUp', [{ email, password: PASSWORD }]), ip)).status).toBe(
      200,
    );
    expect((await post(`${svc.url}/api`, call('account_signUp', [{ email, password: PASSWORD }]), ip)).status).toBe(
      200,
    );
    const third = await post(
      `${svc.url}/api`,
      call('account_signUp', [{ email: `third-${rnd()}@example.com`, password: PASSWORD }]),
      ip,
    );
    expect([third.status, third.body.error.code, third.body.error.data.scope, third.body.error.data.period]).toEqual([
      429,
      -32005,
      'signup-ip',
      'hour',
    ]);
    expect(Number(third.headers.get('retry-after'))).toBeGreaterThan(3000);
    // A weak password is refused before the limit is touched.
    expect(
      (await post(`${svc.url}/api`, call('account_signUp', [{ email, password: '12345678' }]), ip)).body.error.code,
    ).toBe(-32602);
    expect(
      (
        await post(
          `${svc.url}/api`,
          call('account_signUp', [{ email: `other-${rnd()}@example.com`, password: PASSWORD }]),
          { 'x-forwarded-for': '198.51.100.21' },
        )
      ).status,
    ).toBe(200);
  }, 60_000);
});

describe('item 8: JWT maximum lifetime per app', () => {
  it('default 24 h: a token with exp in the year 3000 or without iat is refused; the owner sets it in the app settings', async () => {
    const svc = await start();
    const cookie = await signUp(svc, `jwt-${rnd()}@example.com`);
    const api = (method: string, params: unknown) => post(`${svc.url}/api`, call(method, params), { cookie });
    const app = (
      await api('apps_create', [{ name: 'jwt app', useCase: 'Defi', chain: 'ethereum', services: ['node-api'] }])
    ).body.result;
    expect(app.jwtMaxLifetimeSec).toBe(86_400);
    const { publicKey, privateKey } = await generateKeyPair('ES256');
    const kid = (await api('apps_addJwtKey', [app.id, { alg: 'ES256', publicKeyPem: await exportSPKI(publicKey) }]))
      .body.result.id;
    expect((await api('apps_setRequireJwt', [app.id, true])).status).toBe(200);
    const now = Math.floor(Date.now() / 1000);
    const token = (claims: Record<string, number>) =>
      new SignJWT(claims).setProtectedHeader({ alg: 'ES256', kid }).sign(privateKey);
    const nodeCall = async (claims: Record<string, number>) => {
      const r = await post(app.urls.mainnet, call('eth_blockNumber', []), {
        authorization: `Bearer ${await token(claims)}`,
      });
      return r.status === 200 ? 'ok' : `${r.status} ${r.body.error.data.detail}`;
    };
    const year3000 = Date.UTC(3000, 0, 1) / 1000;
    expect(await nodeCall({ iat: now, exp: now + 3600 })).toBe('ok');
    expect(await nodeCall({ iat: now, exp: now + 86_400 })).toBe('ok');
    expect(await nodeCall({ iat: now, exp: year3000 })).toBe('401 lifetime too long');
    expect(await nodeCall({ iat: now, exp: now + 86_401 })).toBe('401 lifetime too long');
    expect(await nodeCall({ exp: now + 3600 })).toBe('401 missing iat');
    const refused = await post(app.urls.mainnet, call('eth_blockNumber', []), {
      authorization: `Bearer ${await token({ iat: now, exp: year3000 })}`,
    });
    expect(refused.body.error).toMatchObject({
      code: -32016,
      data: { reason: 'jwt', detail: 'lifetime too long', maxLifetimeSec: 86_400 },
    });
    expect(refused.body.error.message).toMatch(/longer than this app allows/);

    // Shorter: 10 minutes (applies on this replica before the answer).
    expect((await api('apps_update', [app.id, { jwtMaxLifetimeSec: 600 }])).body.result.jwtMaxLifetimeSec).toBe(600);
    expect(await nodeCall({ iat: now, exp: now + 3600 })).toBe('401 lifetime too long');
    expect(await nodeCall({ iat: now, exp: now + 600 })).toBe('ok');
    // No maximum (null): exp is still required, iat is not.
    expect((await api('apps_update', [app.id, { jwtMaxLifetimeSec: null }])).body.result.jwtMaxLifetimeSec).toBeNull();
    expect(await nodeCall({ exp: now + 7 * 86_400 })).toBe('ok');
    // Out of range: -32602, nothing changed.
    for (const bad of [59, 31_536_001, 1.5, '3600']) {
      const r = await api('apps_update', [app.id, { jwtMaxLifetimeSec: bad }]);
      expect(r.body.error.code, String(bad)).toBe(-32602);
    }
    expect((await api('apps_get', [app.id])).body.result.jwtMaxLifetimeSec).toBeNull();
  }, 60_000);
});

describe('item 9: behind a TLS proxy (publicBaseUrl, allowedOrigins)', () => {
  it('https public URL: the session cookie is Secure; Origin is compared with the public URL, not the Host', async () => {
    const svc = await start({ publicBaseUrl: 'https://public.example', allowedOrigins: ['https://dash.example'] });
    const email = `proxy-${rnd()}@example.com`;
    expect((await post(`${svc.url}/api`, call('account_signUp', [{ email, password: PASSWORD }]))).status).toBe(200);
    const withOrigin = (origin: string) =>
      post(`${svc.url}/api`, call('account_logIn', [{ email, password: PASSWORD }]), { origin });
    const pub = await withOrigin('https://public.example');
    expect(pub.status).toBe(200);
    const cookie = pub.headers.getSetCookie().find((c) => c.startsWith('rpcgate_session='))!;
    expect(cookie).toMatch(/; Secure/);
    expect((await withOrigin('https://dash.example')).status).toBe(200);
    for (const origin of [svc.url, 'http://public.example', 'https://evil.example']) {
      const r = await withOrigin(origin);
      expect([r.status, r.body.error.code, r.body.error.data.reason], origin).toEqual([403, -32041, 'origin']);
    }
    // URLs shown use the public base.
    const app = (
      await post(
        `${svc.url}/api`,
        call('apps_create', [{ name: 'p', useCase: 'Defi', chain: 'ethereum', services: ['node-api'] }]),
        { cookie: cookieOf(pub)! },
      )
    ).body.result;
    expect(app.urls.mainnet).toMatch(/^https:\/\/public\.example\/mainnet\/v2\//);
  }, 60_000);

  it('http public URL: no Secure flag', async () => {
    const svc = await start({ publicBaseUrl: 'http://plain.example:8080' });
    const email = `plain-${rnd()}@example.com`;
    await post(`${svc.url}/api`, call('account_signUp', [{ email, password: PASSWORD }]));
    const r = await post(`${svc.url}/api`, call('account_logIn', [{ email, password: PASSWORD }]), {
      origin: 'http://plain.example:8080',
    });
    expect(r.status).toBe(200);
    expect(r.headers.getSetCookie().find((c) => c.startsWith('rpcgate_session='))).not.toMatch(/Secure/);
  }, 60_000);
});

// Issue 26 item 6: distributed attacks on one account. The device cookie (src/gateway/accounts/device.ts) and known
// (email, client IP) pairs exempt the owner from the per-email limit and give them a password-hashing queue of their own.
const deviceOf = (r: Answer) =>
  /^[^;]+/.exec(r.headers.getSetCookie().find((c) => c.startsWith('rpcgate_device=')) ?? '')?.[0];
const logInWith = (svc: RunningService, email: string, password: string, ip: string, cookie?: string) =>
  post(`${svc.url}/api`, call('account_logIn', [{ email, password }]), {
    'x-forwarded-for': ip,
    ...(cookie === undefined ? {} : { cookie }),
  });

// The flood (argv: API URL, parallel, min ms, min requests, max ms): log-ins to unknown emails from 10,000 addresses
// in turn (X-Forwarded-For), until both the time and the count are reached (or the max time); prints counts as JSON.
const UNKNOWN_FLOOD = `
const [url, parallel, minMs, minN, maxMs] = process.argv.slice(1).map((v, i) => i === 0 ? v : Number(v));
const t0 = Date.now();
const r = { total: 0, s401: 0, s429: 0, hashing: 0, other: 0, addresses: 0 };
let n = 0;
const more = () => Date.now() - t0 < maxMs && (Date.now() - t0 < minMs || n < minN);
async function one() {
  while (more()) {
    const i = n++;
    const a = i % 10000;
    try {
      const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', 'x-forwarded-for': '10.9.' + (a >> 8) + '.' + (a & 255) },
        body: JSON.stringify({ jsonrpc: '2.0', id: i, method: 'account_logIn', params: [{ email: 'nobody-' + i + '@example.com', password: 'flood password' }] }) });
      const body = await res.json();
      r.total++;
      if (res.status === 401) r.s401++;
      else if (res.status === 429) { r.s429++; if (body.error.data.scope === 'password-hashing') r.hashing++; }
      else r.other++;
    } catch { r.other++; }
  }
}
await Promise.all(Array.from({ length: parallel }, one));
r.addresses = Math.min(n, 10000);
process.stdout.write(JSON.stringify(r));
`;

describe('issue 26 item 6: log-in under distributed attack', () => {
  it('15 addresses × 10 wrong passwords lock the email for strangers, not for the owner (device cookie, or usual address); a stolen cookie is bounded per device', async () => {
    const svc = await start({ trustProxy: 1 });
    const email = `distributed-${rnd()}@example.com`;
    const home = '192.0.2.10';
    expect(
      (
        await post(`${svc.url}/api`, call('account_signUp', [{ email, password: PASSWORD }]), {
          'x-forwarded-for': home,
        })
      ).status,
    ).toBe(200);
    const first = await logInWith(svc, email, PASSWORD, home);
    expect(first.status).toBe(200);
    const device = deviceOf(first)!;
    const raw = first.headers.getSetCookie().find((c) => c.startsWith('rpcgate_device='))!;
    expect(raw).toMatch(
      /^rpcgate_device=[A-Za-z0-9_-]{22}\.\d+\.[A-Za-z0-9_-]{43}; Path=\/; HttpOnly; SameSite=Strict; Max-Age=15552000$/,
    );

    // The attack: 15 addresses × 10 wrong passwords (the per-email limit, 100 per hour, is used up on the way).
    const statuses: Record<string, number> = {};
    for (let a = 1; a <= 15; a++)
      for (let i = 0; i < 10; i++) {
        const r = await logInWith(svc, email, `guess ${a}.${i}`, `203.0.113.${a}`);
        const k = r.status === 429 ? `429 ${r.body.error.data.scope}` : String(r.status);
        statuses[k] = (statuses[k] ?? 0) + 1;
      }
    expect(statuses).toEqual({ 401: 100, '429 email': 50 });
    // A stranger (new browser, new address) is held to the per-email limit, right password or not.
    const stranger = await logInWith(svc, email, PASSWORD, '198.51.100.200');
    expect([stranger.status, stranger.body.error.data.scope, stranger.body.error.data.period]).toEqual([
      429,
      'email',
      'hour',
    ]);

    // The owner: with the device cookie from any address, and from the usual address without it — at once.
    const t0 = performance.now();
    const withDevice = await logInWith(svc, email, PASSWORD, '198.51.100.77', device);
    const fromHome = await logInWith(svc, email, PASSWORD, home);
    console.log(
      `[issue 26 item 6] after 15 × 10 failures (${JSON.stringify(statuses)}): stranger ${stranger.status}; owner with device cookie ${withDevice.status}, from the usual address ${fromHome.status} (${(performance.now() - t0).toFixed(0)} ms); before the fix both 429 for an hour`,
    );
    expect(withDevice.status, JSON.stringify(withDevice.body)).toBe(200);
    expect(fromHome.status, JSON.stringify(fromHome.body)).toBe(200);
    expect(deviceOf(withDevice)!.split('.')[0]).toBe(device.split('.')[0]); // the same device id, issued anew

    // A cookie is bound to its email: presented for another account (or forged) it counts for nothing.
    const other = `other-${rnd()}@example.com`;
    await post(`${svc.url}/api`, call('account_signUp', [{ email: other, password: PASSWORD }]), {
      'x-forwarded-for': home,
    });
    for (let i = 0; i < 10; i++)
      expect((await logInWith(svc, other, `x guess ${i}`, `203.0.114.${i}`)).status).toBe(401);
    for (let i = 0; i < 90; i++) await logInWith(svc, other, `y guess ${i}`, `203.0.115.${i % 200}`);
    const forged = device.replace(/.$/, (c) => (c === 'A' ? 'B' : 'A'));
    for (const cookie of [device, forged])
      expect((await logInWith(svc, other, PASSWORD, '198.51.100.78', cookie)).body.error?.data?.scope).toBe('email');

    // A stolen cookie, from many addresses: 10 failures per 15 minutes per device, then 429 `device`.
    for (let i = 0; i < 10; i++) {
      const r = await logInWith(svc, email, `thief guess ${i}`, `203.0.116.${i}`, device);
      expect(r.status, JSON.stringify(r.body)).toBe(401);
    }
    const thief = await logInWith(svc, email, `thief guess 10`, '203.0.116.10', device);
    expect([thief.status, thief.body.error.data.scope, thief.body.error.data.limit]).toEqual([429, 'device', 10]);
  }, 120_000);

  it('a flood of unknown-email log-ins from 10,000 addresses: the owner (device cookie; usual address) logs in ≥ 9 times of 10', async () => {
    const svc = await start({ trustProxy: 1 });
    const email = `flooded-${rnd()}@example.com`;
    const home = '192.0.2.20';
    expect(
      (
        await post(`${svc.url}/api`, call('account_signUp', [{ email, password: PASSWORD }]), {
          'x-forwarded-for': home,
        })
      ).status,
    ).toBe(200);
    let device = deviceOf(await logInWith(svc, email, PASSWORD, home))!;
    const gate = svc.account.throttle.gate;
    const refusedBefore = gate.refused;

    const child = spawn(
      process.execPath,
      ['--input-type=module', '-e', UNKNOWN_FLOOD, `${svc.url}/api`, '48', '6000', '10000', '60000'],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    let out = '';
    child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    const exited = new Promise<void>((r) => child.once('exit', () => r()));
    try {
      // Wait until the flood fills the gate (refusals), then the owner tries, one at a time.
      await expect.poll(() => gate.refused - refusedBefore, { timeout: 20_000, interval: 50 }).toBeGreaterThan(50);
      const owner = { device: [] as number[], home: [] as number[] };
      for (let i = 0; i < 10; i++) {
        const r = await logInWith(svc, email, PASSWORD, '198.51.100.90', device);
        owner.device.push(r.status);
        device = deviceOf(r) ?? device;
      }
      for (let i = 0; i < 10; i++) owner.home.push((await logInWith(svc, email, PASSWORD, home)).status);
      const stranger: number[] = [];
      for (let i = 0; i < 10; i++)
        stranger.push((await logInWith(svc, email, PASSWORD, `198.51.100.${100 + i}`)).status);
      await exited;
      const f = JSON.parse(out) as {
        total: number;
        s401: number;
        s429: number;
        hashing: number;
        other: number;
        addresses: number;
      };
      const ok = (xs: number[]) => xs.filter((s) => s === 200).length;
      console.log(
        `[issue 26 item 6] flood of ${f.total} unknown-email log-ins from ${f.addresses} addresses (${f.s401} checked, ${f.hashing} refused password-hashing): ` +
          `owner with device cookie ${ok(owner.device)}/10, from the usual address ${ok(owner.home)}/10, a new browser on a new address ${ok(stranger)}/10; before the fix the audit saw 1 of 15`,
      );
      expect(f.addresses).toBe(10_000);
      expect(f.hashing).toBeGreaterThan(100); // the gate really was full
      expect(ok(owner.device)).toBeGreaterThanOrEqual(9);
      expect(ok(owner.home)).toBeGreaterThanOrEqual(9);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  }, 120_000);
});
