// Sign-up modes and invites (issue 27 item 2) end to end over HTTP: `accounts.signup` open, closed and invite
// (account_signUpMode, account_signUp refused with -32041 / HTTP 403 `signup-closed` / `invite-required`); an invite is
// single use, expires, binds an email, stops working when revoked, and is left unused by a registered email; the link
// (`/signup?invite=`) leads to the dashboard's sign-up page; without smtp an emailed invite goes to the operator log,
// with smtp it arrives by mail (a real SMTP server). On PostgreSQL + Redis across two rpcgate processes, two concurrent
// sign-ups with one invite create exactly one account. The CLI: `rpcgate signup` says the mode when refused,
// `rpcgate admin invite|invites` answer --json.
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, RpcClientError, type AccountClient } from '../generated/account/client.js';
import { startService, type RunningService } from '../src/gateway/server/index.js';
import { cookieFetch, signUpAndLogIn } from './helpers/account.js';
import { startMailbox, type Mailbox } from './helpers/mailbox.js';
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

// JSON from the API and the CLI.
type Json = any;

const ROOT = join(import.meta.dirname, '..');
const PW = 'correct horse battery staple';
const ADMIN = `ops-${randomBytes(4).toString('hex')}@example.com`;

let stub: StubNode;
const dirs: string[] = [];
const tmp = () => {
  const d = mkdtempSync(join(tmpdir(), 'rpcgate-invites-'));
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

/** A raw JSON-RPC POST to the account API (HTTP status and body). */
async function post(base: string, method: string, params: unknown) {
  const r = await fetch(`${base}/api`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
  return { status: r.status, body: (await r.json()) as Json };
}

const tokenOf = (url: string) => new URL(url).searchParams.get('invite')!;

/** Signs up with an invite, then logs in (the dashboard's order). */
async function signUpInvited(api: AccountClient, who: string, invite: string) {
  await api.request('account_signUp', [{ email: who, password: PW, invite }]);
  return api.request('account_logIn', [{ email: who, password: PW }]);
}

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}
function cli(args: string[], configDir: string): Promise<Run> {
  return new Promise((resolve) => {
    const env: NodeJS.ProcessEnv = { ...process.env, RPCGATE_CONFIG_DIR: configDir };
    for (const k of ['RPCGATE_SERVER', 'RPCGATE_EMAIL', 'RPCGATE_PASSWORD', 'DATABASE_URL', 'RPCGATE_DATA_DIR'])
      delete env[k];
    execFile(
      process.execPath,
      ['--import', 'tsx', join(ROOT, 'src/cli/main.ts'), ...args],
      { cwd: ROOT, env, timeout: 60_000 },
      (err, stdout, stderr) =>
        resolve({ code: err ? (typeof err.code === 'number' ? err.code : -1) : 0, stdout, stderr }),
    );
  });
}

beforeAll(async () => {
  stub = await startStubNode();
});
afterAll(async () => {
  await stub?.close();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const base = (dataDir: string, signup: 'open' | 'invite' | 'closed') => ({
  port: 0,
  dataDir,
  logLevel: 'info' as const,
  devKey: false,
  accounts: { signup, admins: [ADMIN] },
  networks: { mainnet: { upstreams: [stub.url] } },
});

describe('sign-up modes (SQLite, one process per mode on one store)', () => {
  const dataDir = tmp();
  const early = email('early');

  it('open: anyone signs up; an invite given is ignored', async () => {
    const svc = await startService(base(dataDir, 'open'), {
      logDestination: new Writable({ write: (_c, _e, d) => d() }),
    });
    try {
      expect(await client(svc.url).request('account_signUpMode')).toEqual({ mode: 'open' });
      await signUpAndLogIn(client(svc.url), { email: early, password: PW });
      const c = client(svc.url);
      await c.request('account_signUp', [{ email: email('open'), password: PW, invite: 'x'.repeat(43) }]);
    } finally {
      await svc.stop();
    }
  }, 60_000);

  it('closed: sign-up refused (403, signup-closed), existing accounts log in, a config admin may sign up; the CLI says the mode', async () => {
    const svc = await startService(base(dataDir, 'closed'), {
      logDestination: new Writable({ write: (_c, _e, d) => d() }),
    });
    try {
      expect(await client(svc.url).request('account_signUpMode')).toEqual({ mode: 'closed' });
      const who = email('late');
      const r = await post(svc.url, 'account_signUp', [{ email: who, password: PW }]);
      expect(r.status).toBe(403);
      expect(r.body.error).toMatchObject({ code: -32041, data: { reason: 'signup-closed', source: 'rpcgate' } });
      // Nothing was created: the log-in is refused as for any unknown email.
      expect((await refusal(client(svc.url).request('account_logIn', [{ email: who, password: PW }]))).code).toBe(
        -32016,
      );
      await client(svc.url).request('account_logIn', [{ email: early, password: PW }]);
      await signUpAndLogIn(client(svc.url), { email: ADMIN, password: PW }); // the first operator's account
      expect((await client(svc.url).request('account_logIn', [{ email: ADMIN, password: PW }])).user.admin).toBe(true);

      const run = await cli(['signup', '--server', svc.url, '--email', who, '--password', PW], tmp());
      expect(run.code, run.stderr).toBe(1);
      expect(run.stderr).toMatch(/sign-up is closed on .* \(sign-up mode: closed\)/);
      const json = await cli(['signup', '--server', svc.url, '--email', who, '--password', PW, '--json'], tmp());
      expect(JSON.parse(json.stdout).error).toMatchObject({ code: -32041, data: { reason: 'signup-closed' } });
    } finally {
      await svc.stop();
    }
  }, 90_000);

  describe('invite', () => {
    let svc: RunningService;
    let admin: AccountClient;
    const lines: string[] = [];

    beforeAll(async () => {
      svc = await startService(base(dataDir, 'invite'), {
        logDestination: new Writable({
          write(chunk, _enc, done) {
            lines.push(...String(chunk).split('\n').filter(Boolean));
            done();
          },
        }),
      });
      admin = client(svc.url);
      await admin.request('account_logIn', [{ email: ADMIN, password: PW }]);
    }, 60_000);
    afterAll(async () => {
      await svc?.stop();
    });

    it('without an invite: 403 invite-required; a non-admin cannot issue one', async () => {
      expect(await client(svc.url).request('account_signUpMode')).toEqual({ mode: 'invite' });
      const r = await post(svc.url, 'account_signUp', [{ email: email('noinv'), password: PW }]);
      expect(r.status).toBe(403);
      expect(r.body.error).toMatchObject({ code: -32041, data: { reason: 'invite-required', invite: 'missing' } });
      const user = client(svc.url);
      await user.request('account_logIn', [{ email: early, password: PW }]);
      for (const [m, p] of [
        ['admin_createInvite', [{}]],
        ['admin_listInvites', []],
        ['admin_revokeInvite', [{ id: 'inv_7Hq2Lm9XcV4bN8kP3rT5wZ' }]],
      ] as const) {
        const e = await refusal(user.request(m as 'admin_listInvites', p as never));
        expect([e.code, (e.data as Json).reason], m).toEqual([-32041, 'admin-only']);
      }
    });

    it('single use; the link leads to the sign-up page; the invitee logs in', async () => {
      const inv = await admin.request('admin_createInvite', [{}]);
      expect(inv).toMatchObject({ email: null, mailed: false });
      expect(inv.url.startsWith(`${svc.url}/signup?invite=`)).toBe(true);
      expect(Date.parse(inv.expiresAt) - Date.now()).toBeGreaterThan(71 * 3_600_000); // accounts.inviteTtlHours: 72
      const page = await fetch(inv.url, { redirect: 'manual' });
      expect(page.status).toBe(302);
      expect(page.headers.get('location')).toBe(`/#/signup/${tokenOf(inv.url)}`);

      const first = email('invited');
      await client(svc.url).request('account_signUp', [{ email: first, password: PW, invite: tokenOf(inv.url) }]);
      const me = await client(svc.url).request('account_logIn', [{ email: first, password: PW }]);
      const again = await post(svc.url, 'account_signUp', [
        { email: email('second'), password: PW, invite: tokenOf(inv.url) },
      ]);
      expect(again.status).toBe(403);
      expect(again.body.error.data).toMatchObject({ reason: 'invite-required', invite: 'invalid' });
      const listed = (await admin.request('admin_listInvites')).invites.find((i) => i.id === inv.id);
      expect(listed).toMatchObject({ status: 'used', usedBy: me.user.id, createdBy: ADMIN });
      const trail = await admin.request('admin_activity', [{ userId: me.user.id }]);
      expect(trail.entries.map((e) => [e.action, e.detail])).toContainEqual(['signed_up', { invite: inv.id }]);
    });

    it('bound to an email: another email is refused, that one (any case) signs up; the link goes to the operator log', async () => {
      const bound = email('bound');
      const inv = await admin.request('admin_createInvite', [{ email: bound, ttlHours: 2 }]);
      expect(inv).toMatchObject({ email: bound, mailed: false });
      expect(Date.parse(inv.expiresAt) - Date.now()).toBeLessThanOrEqual(2 * 3_600_000);
      const logged = lines.find((l) => l.includes('mail not sent') && l.includes(bound));
      expect(logged, lines.join('\n')).toBeDefined();
      expect(JSON.parse(logged!).text).toContain(inv.url);

      const other = await post(svc.url, 'account_signUp', [
        { email: email('other'), password: PW, invite: tokenOf(inv.url) },
      ]);
      expect(other.status).toBe(403);
      expect(other.body.error.data).toMatchObject({ reason: 'invite-required', invite: 'email' });
      const me = await signUpInvited(client(svc.url), bound.toUpperCase(), tokenOf(inv.url));
      expect(me.user.email).toBe(bound);
    });

    it('revoked: refused; revoking again changes nothing; an unknown id is not found', async () => {
      const inv = await admin.request('admin_createInvite', [{}]);
      expect(await admin.request('admin_revokeInvite', [{ id: inv.id }])).toEqual({ revoked: true });
      const r = await post(svc.url, 'account_signUp', [
        { email: email('rev'), password: PW, invite: tokenOf(inv.url) },
      ]);
      expect(r.body.error.data).toMatchObject({ reason: 'invite-required', invite: 'invalid' });
      expect(await admin.request('admin_revokeInvite', [{ id: inv.id }])).toEqual({ revoked: false });
      expect((await refusal(admin.request('admin_revokeInvite', [{ id: 'inv_7Hq2Lm9XcV4bN8kP3rT5wZ' }]))).code).toBe(
        -32010,
      );
      expect((await admin.request('admin_listInvites')).invites.find((i) => i.id === inv.id)?.status).toBe('revoked');
    });

    it('expired: refused, listed as expired', async () => {
      const inv = await admin.request('admin_createInvite', [{}]);
      // Its expiry moved into the past in the store (the server compares with its own clock).
      await svc.store.db
        .updateTable('invites')
        .set({ expires_at: Date.now() - 1 })
        .where('id', '=', inv.id)
        .execute();
      const r = await post(svc.url, 'account_signUp', [
        { email: email('exp'), password: PW, invite: tokenOf(inv.url) },
      ]);
      expect(r.status).toBe(403);
      expect(r.body.error.data).toMatchObject({ reason: 'invite-required', invite: 'invalid' });
      expect((await admin.request('admin_listInvites')).invites.find((i) => i.id === inv.id)?.status).toBe('expired');
    });

    it('a registered email: the same answer, the account unchanged, the invite still unused', async () => {
      const inv = await admin.request('admin_createInvite', [{}]);
      const r = await client(svc.url).request('account_signUp', [
        { email: early, password: 'another horse battery staple', invite: tokenOf(inv.url) },
      ]);
      expect(r).toEqual({ email: early, next: 'account_logIn' });
      await client(svc.url).request('account_logIn', [{ email: early, password: PW }]);
      expect((await admin.request('admin_listInvites')).invites.find((i) => i.id === inv.id)?.status).toBe('pending');
    });

    it('CLI: rpcgate signup says invite-only, then signs up with --invite <link>; admin invite / invites --json', async () => {
      const configDir = tmp();
      const login = await cli(['login', '--server', svc.url, '--email', ADMIN, '--password', PW], configDir);
      expect(login.code, login.stderr).toBe(0);
      const made = await cli(['admin', 'invite', '--server', svc.url, '--ttl-hours', '5', '--json'], configDir);
      expect(made.code, made.stderr).toBe(0);
      const inv = JSON.parse(made.stdout);
      expect(inv).toMatchObject({ id: expect.stringMatching(/^inv_/), email: null, mailed: false });
      const list = await cli(['admin', 'invites', '--server', svc.url, '--json'], configDir);
      expect(JSON.parse(list.stdout).invites[0]).toMatchObject({ id: inv.id, status: 'pending' });
      const text = await cli(['admin', 'invites', '--server', svc.url], configDir);
      expect(text.stdout).toContain(inv.id);
      const spare = JSON.parse((await cli(['admin', 'invite', '--server', svc.url, '--json'], configDir)).stdout);
      const revoked = await cli(['admin', 'revoke-invite', spare.id, '--server', svc.url, '--json'], configDir);
      expect(JSON.parse(revoked.stdout)).toEqual({ revoked: true });
      expect(
        (await post(svc.url, 'account_signUp', [{ email: email('spare'), password: PW, invite: tokenOf(spare.url) }]))
          .status,
      ).toBe(403);

      const who = email('cli');
      const userDir = tmp();
      const refused = await cli(['signup', '--server', svc.url, '--email', who, '--password', PW], userDir);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toMatch(/by invite only \(sign-up mode: invite\): pass --invite/);
      const ok = await cli(
        ['signup', '--server', svc.url, '--email', who, '--password', PW, '--invite', inv.url, '--json'],
        userDir,
      );
      expect(ok.code, ok.stderr + ok.stdout).toBe(0);
      expect(JSON.parse(ok.stdout).user.email).toBe(who);
    }, 120_000);
  });
});

// ---- two rpcgate processes on PostgreSQL + Redis --------------------------------------------------------------------

const shared = (await pgReachable()) && (await redisReachable());
const skipShared = skipUnless(shared, 'invites: two replicas', 'PostgreSQL and Redis');

describe.skipIf(skipShared)('invites across two rpcgate processes (PostgreSQL + Redis, smtp)', () => {
  const db = scratchDatabase();
  const prefix = scratchPrefix();
  const replicas: RpcgateChild[] = [];
  let mailbox: Mailbox;

  beforeAll(async () => {
    await db.create();
    mailbox = await startMailbox();
    const cfg = {
      ...base(tmp(), 'invite'),
      logLevel: 'warn',
      databaseUrl: db.url,
      redisUrl: REDIS_URL,
      redisPrefix: prefix,
      publicBaseUrl: 'https://rpc.example.test',
      smtp: { url: mailbox.url, from: 'rpcgate <ops@example.test>' },
      accountSecurity: { signupsPerIp: 1000 }, // every sign-up here comes from 127.0.0.1
    };
    replicas.push(await startRpcgateChild(cfg)); // the first migrates; then the second
    replicas.push(await startRpcgateChild(cfg));
  }, 120_000);
  afterAll(async () => {
    for (const r of replicas) await r.stop();
    await mailbox?.close();
    await db.drop();
    await deleteRedisKeys(prefix);
  });

  it('an invite bound to an email arrives by mail; its link signs up on the other replica', async () => {
    const [one, two] = replicas;
    const admin = client(one.url);
    await signUpAndLogIn(admin, { email: ADMIN, password: PW });
    const who = email('mailed');
    const inv = await admin.request('admin_createInvite', [{ email: who }]);
    expect(inv).toMatchObject({ email: who, mailed: true });
    expect(inv.url.startsWith('https://rpc.example.test/signup?invite=')).toBe(true);
    const mail = await mailbox.next(who);
    expect(mail.subject).toBe('You are invited to rpcgate');
    expect(mail.text).toContain(inv.url);
    await signUpInvited(client(two.url), who, tokenOf(inv.url));
  }, 60_000);

  it('two concurrent sign-ups with one invite, one per replica: exactly one account', async () => {
    const [one, two] = replicas;
    const admin = client(one.url);
    await admin.request('account_logIn', [{ email: ADMIN, password: PW }]);
    for (let round = 0; round < 5; round++) {
      const inv = await admin.request('admin_createInvite', [{}]);
      const token = tokenOf(inv.url);
      const pair = [email(`race${round}a`), email(`race${round}b`)];
      const results = await Promise.all([
        post(one.url, 'account_signUp', [{ email: pair[0], password: PW, invite: token }]),
        post(two.url, 'account_signUp', [{ email: pair[1], password: PW, invite: token }]),
      ]);
      const won = results.filter((r) => r.status === 200);
      const lost = results.filter((r) => r.status !== 200);
      expect(won.length, JSON.stringify(results)).toBe(1);
      expect(lost[0].status).toBe(403);
      expect(lost[0].body.error.data).toMatchObject({ reason: 'invite-required', invite: 'invalid' });
      let accounts = 0;
      for (const e of pair) accounts += (await admin.request('admin_listAccounts', [{ search: e }])).accounts.length;
      expect(accounts).toBe(1);
      const listed = (await admin.request('admin_listInvites')).invites.find((i) => i.id === inv.id);
      expect(listed?.status).toBe('used');
    }
  }, 120_000);
});
