// Account self-service (issue 27 items 3 and 4) end to end over HTTP, with a real SMTP server the test runs
// (test/helpers/mailbox.ts): the reset link is read out of the received mail, as a user would; password change ends
// the other sessions; deleting the account revokes its keys, ends its sessions, removes its request log and
// anonymises its usage; reset requests answer alike for unknown emails and are throttled; email verification gates
// apps and keys; without `smtp` the link goes to the operator's log. Across two replicas on PostgreSQL + Redis, a
// deleted account's key is refused by the other replica within 2 s.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, RpcClientError, type AccountClient } from '../generated/account/client.js';
import { startService, type RunningService } from '../src/gateway/server/index.js';
import * as store from '../src/gateway/store/index.js';
import { cookieFetch, signUpAndLogIn } from './helpers/account.js';
import { startMailbox, tokenIn, type Mailbox } from './helpers/mailbox.js';
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

const PUBLIC = 'https://rpc.example.test';
const PW = 'correct horse battery staple';
const NEW_PW = 'purple otter umbrella lantern';

let mailbox: Mailbox;
let stub: StubNode;
let svc: RunningService;
const dirs: string[] = [];

const client = (s: RunningService): AccountClient => createClient({ url: `${s.url}/api`, fetch: cookieFetch() });
const email = (tag: string) => `${tag}-${randomBytes(4).toString('hex')}@example.com`;

/** The error a call must fail with (the call must fail). */
async function refusal(p: Promise<unknown>): Promise<RpcClientError> {
  const e = await p.then(
    () => undefined,
    (x: unknown) => x,
  );
  expect(e, 'the call was expected to fail').toBeInstanceOf(RpcClientError);
  return e as RpcClientError;
}

const nodeCall = (url: string) =>
  fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_blockNumber', params: [] }),
  }).then(async (r) => ({ status: r.status, body: (await r.json()) as { result?: string; error?: { code: number } } }));

/** A URL the account API gave (on the public base URL) as served by replica `s`. */
const on = (s: RunningService, url: string) => s.url + new URL(url).pathname;

function tmp(): string {
  const d = mkdtempSync(join(tmpdir(), 'rpcgate-self-service-'));
  dirs.push(d);
  return d;
}

beforeAll(async () => {
  mailbox = await startMailbox();
  stub = await startStubNode();
  svc = await startService({
    port: 0,
    dataDir: tmp(),
    logLevel: 'silent',
    strictResults: true,
    devKey: false,
    publicBaseUrl: PUBLIC,
    smtp: { url: mailbox.url, from: 'rpcgate <no-reply@example.test>' },
    accountSecurity: { passwordResetsPerEmail: 3 },
    networks: { mainnet: { upstreams: [stub.url] } },
  });
}, 120_000);

afterAll(async () => {
  await svc?.stop();
  await stub?.close();
  await mailbox?.close();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe('password reset by mail', () => {
  it('mails a single-use link to a known email; an unknown email gets the same answer and no mail', async () => {
    const who = email('reset');
    const me = client(svc);
    await signUpAndLogIn(me, { email: who, password: PW });
    const stranger = client(svc);
    expect(await stranger.request('account_requestPasswordReset', [{ email: who.toUpperCase() }])).toEqual({
      requested: true,
    });
    const nobody = email('nobody');
    expect(await stranger.request('account_requestPasswordReset', [{ email: nobody }])).toEqual({ requested: true });

    const mail = await mailbox.next(who);
    expect(mail.subject).toBe('Reset your rpcgate password');
    expect(mail.from).toContain('no-reply@example.test');
    const { link, token } = tokenIn(mail, 'reset');
    // The link's host is the configured public URL, never a request's Host header.
    expect(link.startsWith(`${PUBLIC}/#/reset/`)).toBe(true);

    // A weak new password is refused and leaves the link usable.
    const weak = await refusal(stranger.request('account_resetPassword', [{ token, newPassword: 'password123' }]));
    expect(weak.code).toBe(-32602);
    expect(weak.data).toMatchObject({ path: '/0/newPassword' });
    expect(await stranger.request('account_resetPassword', [{ token, newPassword: NEW_PW }])).toEqual({
      reset: true,
      next: 'account_logIn',
    });
    // Used: the link works once.
    const again = await refusal(stranger.request('account_resetPassword', [{ token, newPassword: `${NEW_PW} 2` }]));
    expect(again.data).toMatchObject({ path: '/0/token' });
    // Every session of the account ended; the old password is gone, the new one works.
    expect((await refusal(me.request('account_me'))).code).toBe(-32016);
    expect((await refusal(client(svc).request('account_logIn', [{ email: who, password: PW }]))).code).toBe(-32016);
    const fresh = client(svc);
    await fresh.request('account_logIn', [{ email: who, password: NEW_PW }]);
    expect((await fresh.request('account_me')).email).toBe(who);

    // No mail ever went to the unknown address (the known one's arrived after it was asked for).
    await new Promise((r) => setTimeout(r, 300));
    expect(mailbox.received.filter((m) => m.to === nobody)).toEqual([]);
  });

  it('two concurrent resets with one link: exactly one succeeds', async () => {
    const who = email('race');
    await client(svc).request('account_signUp', [{ email: who, password: PW }]);
    await client(svc).request('account_requestPasswordReset', [{ email: who }]);
    const { token } = tokenIn(await mailbox.next(who), 'reset');
    const results = await Promise.allSettled(
      ['lantern', 'harbour'].map((w) =>
        client(svc).request('account_resetPassword', [{ token, newPassword: `${NEW_PW} ${w}` }]),
      ),
    );
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    const lost = results.find((r) => r.status === 'rejected') as PromiseRejectedResult;
    expect((lost.reason as RpcClientError).data).toMatchObject({ path: '/0/token' });
  });

  it('an expired or unknown token is refused, and tokens are stored only as hashes', async () => {
    const u = await store.createUser(svc.store.db, { email: email('exp'), passwordHash: 'x' });
    const t0 = Date.now();
    const { token } = await store.createAccountToken(svc.store.db, u.id, 'reset', 60_000, t0 - 120_000);
    const e = await refusal(client(svc).request('account_resetPassword', [{ token, newPassword: NEW_PW }]));
    expect(e.data).toMatchObject({ path: '/0/token' });
    const unknown = randomBytes(32).toString('base64url');
    expect(
      (await refusal(client(svc).request('account_resetPassword', [{ token: unknown, newPassword: NEW_PW }]))).data,
    ).toMatchObject({ path: '/0/token' });
    const live = await store.createAccountToken(svc.store.db, u.id, 'verify', 60_000);
    const rows = await svc.store.db.selectFrom('account_tokens').select('token_hash').execute();
    expect(rows.some((r) => r.token_hash === live.token)).toBe(false);
    // A reset token is no verification token and the other way round.
    expect(
      (await refusal(client(svc).request('account_resetPassword', [{ token: live.token, newPassword: NEW_PW }]))).data,
    ).toMatchObject({ path: '/0/token' });
  });

  it('reset requests are limited per email, known and unknown alike (-32005, 429, reset-email)', async () => {
    for (const who of [email('known'), email('unknown')]) {
      if (who.startsWith('known')) await client(svc).request('account_signUp', [{ email: who, password: PW }]);
      const c = client(svc);
      for (let i = 0; i < 3; i++) await c.request('account_requestPasswordReset', [{ email: who }]);
      const e = await refusal(c.request('account_requestPasswordReset', [{ email: who }]));
      expect(e.code).toBe(-32005);
      expect(e.data).toMatchObject({ scope: 'reset-email' });
    }
  });
});

describe('password change', () => {
  it('needs the current password (counted like a log-in), ends the other sessions, keeps this one', async () => {
    const who = email('change');
    const here = client(svc);
    const there = client(svc);
    await signUpAndLogIn(here, { email: who, password: PW });
    await there.request('account_logIn', [{ email: who, password: PW }]);

    const wrong = await refusal(
      here.request('account_changePassword', [{ currentPassword: `${PW}!`, newPassword: NEW_PW }]),
    );
    expect(wrong.code).toBe(-32602);
    expect(wrong.data).toMatchObject({ path: '/0/currentPassword' });
    const same = await refusal(here.request('account_changePassword', [{ currentPassword: PW, newPassword: PW }]));
    expect(same.data).toMatchObject({ path: '/0/newPassword' });

    expect(await here.request('account_changePassword', [{ currentPassword: PW, newPassword: NEW_PW }])).toEqual({
      changed: true,
      otherSessionsEnded: 1,
    });
    expect((await here.request('account_me')).email).toBe(who);
    expect((await refusal(there.request('account_me'))).code).toBe(-32016);
    await client(svc).request('account_logIn', [{ email: who, password: NEW_PW }]);
  });

  it('wrong current passwords run into the log-in limit (email+ip)', async () => {
    const who = email('guess');
    const c = client(svc);
    await signUpAndLogIn(c, { email: who, password: PW });
    const codes: number[] = [];
    for (let i = 0; i < 11; i++)
      codes.push(
        (await refusal(c.request('account_changePassword', [{ currentPassword: `guess ${i} x`, newPassword: NEW_PW }])))
          .code,
      );
    expect(codes.slice(0, 10).every((x) => x === -32602)).toBe(true);
    expect(codes[10]).toBe(-32005);
    // The refused burst is in the account's activity, as a log-in burst is (once per counter window).
    await c.request('account_changePassword', [{ currentPassword: 'guess 12 x', newPassword: NEW_PW }]).catch(() => 0);
    const actions = (await c.request('account_activity', [{ limit: 200 }])).entries.map((e) => e.action);
    expect(actions.filter((a) => a === 'login_throttled')).toHaveLength(1);
  });

  it('is refused inside a batch (one password check per HTTP request)', async () => {
    const res = await fetch(`${svc.url}/api`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify([
        {
          jsonrpc: '2.0',
          id: 1,
          method: 'account_changePassword',
          params: [{ currentPassword: PW, newPassword: NEW_PW }],
        },
        { jsonrpc: '2.0', id: 2, method: 'networks_list', params: [] },
      ]),
    });
    const body = (await res.json()) as { id: number; error?: { code: number } }[];
    expect(body.find((r) => r.id === 1)?.error?.code).toBe(-32600);
  });
});

describe('security activity (audit trail)', () => {
  it('lists log-ins, a throttled burst (once), password and key changes with time and address, newest first, paged', async () => {
    const who = email('audit');
    const me = client(svc);
    await signUpAndLogIn(me, { email: who, password: PW });
    const key = await me.request('keys_create', [{ name: 'audited', network: 'mainnet' }]);
    await me.request('keys_delete', [key.id]);
    // 10 failures from this address use up the email+ip counter; the next attempts are refused: one event.
    for (let i = 0; i < 13; i++)
      await client(svc)
        .request('account_logIn', [{ email: who, password: `wrong guess ${i}` }])
        .catch(() => undefined);
    await me.request('account_changePassword', [{ currentPassword: PW, newPassword: NEW_PW }]).catch(() => undefined);
    const all = await me.request('account_activity', [{ limit: 200 }]);
    const actions = all.entries.map((e) => e.action);
    expect(actions.filter((a) => a === 'login_throttled')).toHaveLength(1);
    expect(actions).toEqual(
      expect.arrayContaining(['signed_up', 'logged_in', 'key_created', 'key_deleted', 'login_throttled']),
    );
    expect(actions.at(-1)).toBe('signed_up'); // the first event of an account
    expect(actions.indexOf('key_deleted')).toBeLessThan(actions.indexOf('key_created')); // newest first
    const created = all.entries.find((e) => e.action === 'key_created')!;
    expect(created).toMatchObject({
      byOperator: false,
      detail: { keyId: key.id, name: 'audited', network: 'mainnet' },
    });
    expect(created.ip).toMatch(/127\.0\.0\.1/);
    expect(Date.parse(created.time)).toBeGreaterThan(Date.now() - 60_000);
    // Pages: two at a time, in the same order, to the end.
    const paged: string[] = [];
    let cursor: string | undefined;
    for (;;) {
      const p = await me.request('account_activity', [{ limit: 2, ...(cursor ? { cursor } : {}) }]);
      paged.push(...p.entries.map((e) => e.action));
      if (p.next === null) break;
      cursor = p.next;
    }
    expect(paged).toEqual(actions);
    // Another account sees only its own.
    const other = client(svc);
    await signUpAndLogIn(other, { email: email('audit-other'), password: PW });
    const theirs = await other.request('account_activity');
    expect(theirs.entries.map((e) => e.action)).toEqual(['logged_in', 'signed_up']); // newest first
  });
});

describe('account deletion', () => {
  it('revokes keys and apps at once, ends sessions, deletes the request log and anonymises usage', async () => {
    const who = email('delete');
    const me = client(svc);
    await signUpAndLogIn(me, { email: who, password: PW });
    const other = client(svc);
    await other.request('account_logIn', [{ email: who, password: PW }]);
    const userId = (await me.request('account_me')).id;
    const key = await me.request('keys_create', [{ name: 'k', network: 'mainnet' }]);
    const app = await me.request('apps_create', [
      { name: 'a', useCase: 'Defi', chain: 'ethereum', services: ['node-api'] },
    ]);
    const appUrl = on(svc, app.urls.mainnet!);
    expect((await nodeCall(on(svc, key.url))).body.result).toBe('0x10');
    expect((await nodeCall(appUrl)).body.result).toBe('0x10');
    await svc.meter!.flush();
    await svc.requestLog!.flush();
    const usageRows = async (id: string) =>
      Number(
        (await sql<{ n: unknown }>`select count(*) as n from usage_minute where user_id = ${id}`.execute(svc.store.db))
          .rows[0].n,
      );
    const before = await usageRows(userId);
    expect(before).toBeGreaterThan(0);
    // Their apps' and keys' log rows, by the principal ids they had (read now: the deletion removes those too).
    const principals = () =>
      svc.store.db.selectFrom('request_log_principals').select('id').where('user_id', '=', userId).execute();
    const refs = (await principals()).map((r) => r.id);
    expect(refs.length).toBeGreaterThan(0);
    const logRows = () => svc.store.db.selectFrom('request_log').select('id').where('principal', 'in', refs).execute();
    expect((await logRows()).length).toBeGreaterThan(0);
    const totalUsage = async () =>
      Number((await sql<{ n: unknown }>`select sum("count") as n from usage_minute`.execute(svc.store.db)).rows[0].n);
    const totalBefore = await totalUsage();

    const wrong = await refusal(me.request('account_delete', [{ password: NEW_PW }]));
    expect(wrong.data).toMatchObject({ path: '/0/password' });
    expect(await me.request('account_delete', [{ password: PW }])).toEqual({ deleted: true, usage: 'anonymised' });

    // Refused on this replica before the answer came back (the access index applied the change).
    for (const u of [on(svc, key.url), appUrl]) {
      const r = await nodeCall(u);
      expect(r.status).toBe(401);
      expect(r.body.error?.code).toBe(-32016);
    }
    for (const c of [me, other]) expect((await refusal(c.request('account_me'))).code).toBe(-32016);
    expect((await refusal(client(svc).request('account_logIn', [{ email: who, password: PW }]))).code).toBe(-32016);
    expect(await store.findUserByEmail(svc.store.db, who)).toBeUndefined();
    expect(await logRows()).toEqual([]);
    expect(await principals()).toEqual([]);
    expect(await svc.store.db.selectFrom('audit_events').select('id').where('user_id', '=', userId).execute()).toEqual(
      [],
    );
    expect(await usageRows(userId)).toBe(0);
    expect(await totalUsage()).toBe(totalBefore); // kept, under another owner id
    // The email is free again.
    await signUpAndLogIn(client(svc), { email: who, password: NEW_PW });
  });
});

describe('without smtp: links go to the operator log', () => {
  it('writes the reset link to the log (level warn), and mails nothing', async () => {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk, _enc, done) {
        lines.push(...String(chunk).split('\n').filter(Boolean));
        done();
      },
    });
    const plain = await startService(
      { port: 0, dataDir: tmp(), logLevel: 'info', devKey: false, networks: { mainnet: { upstreams: [stub.url] } } },
      { logDestination: sink },
    );
    try {
      const who = email('nomail');
      await client(plain).request('account_signUp', [{ email: who, password: PW }]);
      await client(plain).request('account_requestPasswordReset', [{ email: who }]);
      const line = await (async () => {
        for (let i = 0; i < 200; i++) {
          const l = lines.find((x) => x.includes('mail not sent') && x.includes(who));
          if (l) return JSON.parse(l) as { level: number; text: string };
          await new Promise((r) => setTimeout(r, 25));
        }
        throw new Error(`no log line with the link: ${lines.join('\n')}`);
      })();
      expect(line.level).toBe(40);
      const { link, token } = tokenIn({ to: who, from: '', subject: '', text: line.text }, 'reset');
      expect(link.startsWith(`${plain.url}/#/reset/`)).toBe(true);
      expect(await client(plain).request('account_resetPassword', [{ token, newPassword: NEW_PW }])).toMatchObject({
        reset: true,
      });
      expect(mailbox.received.some((m) => m.to === who)).toBe(false);
    } finally {
      await plain.stop();
    }
  });

  it('smtp without publicBaseUrl does not start (a mailed link must not take its host from a request)', async () => {
    await expect(
      startService({
        port: 0,
        dataDir: tmp(),
        logLevel: 'silent',
        smtp: { url: mailbox.url, from: 'x <x@example.test>' },
        networks: { mainnet: { upstreams: [stub.url] } },
      }),
    ).rejects.toThrow(/\/smtp: needs publicBaseUrl/);
  });
});

describe('email verification (accounts.verifyEmail)', () => {
  it('mails a link at sign-up; apps and keys wait for it; the link verifies once', async () => {
    const strict = await startService({
      port: 0,
      dataDir: tmp(),
      logLevel: 'silent',
      strictResults: true,
      devKey: false,
      publicBaseUrl: PUBLIC,
      smtp: { url: mailbox.url, from: 'rpcgate <no-reply@example.test>' },
      accounts: { verifyEmail: true },
      networks: { mainnet: { upstreams: [stub.url] } },
    });
    try {
      const who = email('verify');
      const me = client(strict);
      await signUpAndLogIn(me, { email: who, password: PW });
      expect((await me.request('account_me')).emailVerified).toBe(false);
      for (const p of [
        me.request('keys_create', [{ name: 'k', network: 'mainnet' }]),
        me.request('apps_create', [{ name: 'a', useCase: 'Defi', chain: 'ethereum', services: ['node-api'] }]),
      ]) {
        const e = await refusal(p);
        expect(e.code).toBe(-32041);
        expect(e.data).toMatchObject({ reason: 'email-not-verified' });
      }
      const first = await mailbox.next(who);
      expect(first.subject).toBe('Confirm your email for rpcgate');
      expect(await me.request('account_resendVerification')).toEqual({ sent: true });
      const second = tokenIn(await mailbox.next(who, 10_000, 1), 'verify');
      // Opened in another browser (no session): fine.
      expect(await client(strict).request('account_verifyEmail', [{ token: second.token }])).toEqual({
        verified: true,
      });
      expect(
        (await refusal(client(strict).request('account_verifyEmail', [{ token: second.token }]))).data,
      ).toMatchObject({ path: '/0/token' });
      expect((await me.request('account_me')).emailVerified).toBe(true);
      expect(await me.request('account_resendVerification')).toEqual({ sent: false });
      const k = await me.request('keys_create', [{ name: 'k', network: 'mainnet' }]);
      expect((await nodeCall(on(strict, k.url))).body.result).toBe('0x10');
    } finally {
      await strict.stop();
    }
  });
});

// ---- two replicas on PostgreSQL + Redis ------------------------------------------------------------------------

const [pgUp, redisUp] = await Promise.all([pgReachable(), redisReachable()]);
const skipShared = skipUnless(pgUp && redisUp, 'account-self-service', 'PostgreSQL and Redis');

describe.skipIf(skipShared)('two replicas (PostgreSQL + Redis)', () => {
  const db = scratchDatabase();
  const prefix = scratchPrefix();
  const replicas: RunningService[] = [];

  beforeAll(async () => {
    await db.create();
    const secret = randomBytes(32).toString('hex');
    for (let i = 0; i < 2; i++)
      replicas.push(
        await startService({
          port: 0,
          dataDir: tmp(),
          logLevel: 'silent',
          devKey: false,
          databaseUrl: db.url,
          redisUrl: REDIS_URL,
          redisPrefix: prefix,
          secret,
          publicBaseUrl: PUBLIC,
          smtp: { url: mailbox.url, from: 'rpcgate <no-reply@example.test>' },
          networks: { mainnet: { upstreams: [stub.url] } },
        }),
      );
  }, 120_000);

  afterAll(async () => {
    for (const r of replicas) await r.stop();
    await db.drop();
    await deleteRedisKeys(prefix);
  });

  it("deleting the account on one replica refuses its key on the other within 2 s; a reset on one ends the other's sessions", async () => {
    const [one, two] = replicas;
    const who = email('replicas');
    const onOne = client(one);
    await signUpAndLogIn(onOne, { email: who, password: PW });
    const onTwo = client(two);
    await onTwo.request('account_logIn', [{ email: who, password: PW }]);
    const key = await onOne.request('keys_create', [{ name: 'k', network: 'mainnet' }]);
    const onTwoUrl = on(two, key.url);
    // The key reaches replica two by its change feed.
    const t = Date.now();
    while ((await nodeCall(onTwoUrl)).status !== 200) {
      expect(Date.now() - t).toBeLessThan(5000);
      await new Promise((r) => setTimeout(r, 50));
    }

    // A reset asked on replica two, completed on replica one: the session on two ends.
    await client(two).request('account_requestPasswordReset', [{ email: who }]);
    const { token } = tokenIn(await mailbox.next(who), 'reset');
    await client(one).request('account_resetPassword', [{ token, newPassword: NEW_PW }]);
    expect((await refusal(onTwo.request('account_me'))).code).toBe(-32016);

    const again = client(two);
    await again.request('account_logIn', [{ email: who, password: NEW_PW }]);
    const t0 = performance.now();
    await again.request('account_delete', [{ password: NEW_PW }]);
    let refusedAfter = Number.NaN;
    while (performance.now() - t0 < 3000) {
      const r = await nodeCall(on(one, key.url));
      if (r.status === 401) {
        refusedAfter = performance.now() - t0;
        break;
      }
      await new Promise((res) => setTimeout(res, 20));
    }
    console.log(`deleted account's key refused by the other replica after ${Math.round(refusedAfter)} ms`);
    expect(refusedAfter).toBeLessThan(2000);
  }, 60_000);
});
