// The account API (contracts/account.openrpc.json) over HTTP: startService on a temp SQLite data dir, plain fetch with a
// cookie jar of our own. Table-driven: bad input on every changing method (-32602 with data, and the database is
// byte-for-byte unchanged), cross-user access on every method that takes an id (not found, and the owner's rows
// unchanged), the 4-key cap (sequential and ten concurrent creates), session and Origin checks on every method.
// The node API is not used here: the networks point at a closed local port, so no chain is started.
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { methods } from '../generated/account/methods.js';
import { validators } from '../generated/account/validators.js';
import { newId } from '../src/gateway/secrets/index.js';
import { startService, type RunningService } from '../src/gateway/server/index.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

const root = resolve(import.meta.dirname, '..');
const contract = JSON.parse(readFileSync(join(root, 'contracts/account.openrpc.json'), 'utf8'));

/** Keeps the `rpcgate_session` cookie the server sets (and clears), like a browser would for this one origin. */
class Jar {
  cookie = '';
  /** Every Set-Cookie seen, raw (for attribute checks). */
  seen: string[] = [];
  take(res: Response): void {
    for (const sc of res.headers.getSetCookie()) {
      this.seen.push(sc);
      const pair = sc.split(';')[0];
      const eq = pair.indexOf('=');
      if (pair.slice(0, eq) !== 'rpcgate_session') continue;
      this.cookie = pair.slice(eq + 1) === '' ? '' : pair;
    }
  }
}

let svc: RunningService;
let dataDir: string;
let api: string;

interface Answer {
  status: number;
  body: Json;
  headers: Headers;
}

async function rpc(
  jar: Jar | undefined,
  method: string,
  params: unknown = [],
  headers: Record<string, string> = {},
): Promise<Answer> {
  const res = await fetch(api, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(jar?.cookie ? { cookie: jar.cookie } : {}), ...headers },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
  jar?.take(res);
  const text = await res.text();
  return { status: res.status, body: text === '' ? undefined : JSON.parse(text), headers: res.headers };
}

/** The result, or a failed expectation showing the error. */
async function ok(jar: Jar, method: string, params: unknown = []): Promise<Json> {
  const r = await rpc(jar, method, params);
  expect(r.body.error, `${method}: ${JSON.stringify(r.body.error)}`).toBeUndefined();
  expect(r.status).toBe(200);
  return r.body.result;
}

/** Sign-up starts no session (its answer is the same for a registered email): log in after it, as the dashboard does. */
async function signUp(jar: Jar, email: string, password = PASSWORD): Promise<Json> {
  expect(await ok(jar, 'account_signUp', [{ email, password }])).toEqual({ email, next: 'account_logIn' });
  return ok(jar, 'account_logIn', [{ email, password }]);
}

const TABLES = ['users', 'sessions', 'apps', 'app_allowlists', 'app_jwt_keys', 'network_keys', 'key_events'] as const;

/** Every row of every account table, as one string: "nothing stored / nothing changed" compares two of these. */
async function snapshot(): Promise<string> {
  const out: Record<string, string[]> = {};
  for (const t of TABLES) {
    const rows = await svc.store.db.selectFrom(t).selectAll().execute();
    out[t] = rows.map((r) => JSON.stringify(r)).sort();
  }
  return JSON.stringify(out);
}

async function count(table: (typeof TABLES)[number], where?: { column: string; value: string }): Promise<number> {
  let q = svc.store.db.selectFrom(table).select((eb) => eb.fn.countAll<number>().as('n'));
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  if (where) q = q.where(where.column as any, '=', where.value);
  return Number((await q.executeTakeFirstOrThrow()).n);
}

function pem(type: 'ec' | 'rsa', opt: { namedCurve?: string; modulusLength?: number }): string {
  const { publicKey } =
    type === 'ec'
      ? generateKeyPairSync('ec', { namedCurve: opt.namedCurve! })
      : generateKeyPairSync('rsa', { modulusLength: opt.modulusLength! });
  return publicKey.export({ type: 'spki', format: 'pem' }).toString();
}
const P256 = pem('ec', { namedCurve: 'P-256' });
const P384 = pem('ec', { namedCurve: 'P-384' });
const RSA1024 = pem('rsa', { modulusLength: 1024 });

const A = new Jar();
const B = new Jar();
const emailA = `alice-${randomBytes(4).toString('hex')}@example.com`;
const emailB = `bob-${randomBytes(4).toString('hex')}@example.com`;
const PASSWORD = 'correct horse battery';
let appA: Json;
let appB: Json;
let keyA: Json;
let entryA: Json;
let jwtA: Json;

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'rpcgate-account-api-'));
  // Networks on a closed port: the account API needs no node, so no embedded chain is started.
  const closed = { upstreams: ['http://127.0.0.1:9'] };
  svc = await startService({
    port: 0,
    dataDir,
    logLevel: 'silent',
    strictResults: true,
    networks: { mainnet: closed, testnet: { ...closed, chainId: 31338 } },
  });
  api = `${svc.url}/api`;
  await signUp(A, emailA);
  await signUp(B, emailB);
  appA = await ok(A, 'apps_create', [
    { name: 'alice app', description: 'd', useCase: 'Defi', chain: 'ethereum', services: ['node-api'] },
  ]);
  appB = await ok(B, 'apps_create', [
    { name: 'bob app', useCase: 'Gaming', chain: 'ethereum', services: ['node-api'] },
  ]);
  entryA = await ok(A, 'apps_addAllowlistEntry', [appA.id, { kind: 'origin', value: 'https://*.example.com' }]);
  jwtA = await ok(A, 'apps_addJwtKey', [appA.id, { alg: 'ES256', publicKeyPem: P256 }]);
  keyA = await ok(A, 'keys_create', [{ name: 'alice key', network: 'Testnet', description: 'backend' }]);
}, 60_000);

afterAll(async () => {
  await svc?.stop();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

describe('account contract', () => {
  it('every method has an example, and the generated validators accept its params and result', () => {
    for (const m of contract.methods) {
      expect(m.examples.length, m.name).toBeGreaterThan(0);
      for (const x of m.examples) {
        const v = validators[m.name];
        expect(
          v.params(x.params.map((p: Json) => p.value)),
          `${m.name} params: ${JSON.stringify(v.params.errors)}`,
        ).toBe(true);
        expect(v.result(x.result.value), `${m.name} result: ${JSON.stringify(v.result.errors)}`).toBe(true);
      }
    }
  });
});

describe('account API: sessions', () => {
  it('sets an HttpOnly, SameSite=Lax session cookie (no Secure over http) and knows the user', async () => {
    const sc = A.seen.find((c) => c.startsWith('rpcgate_session='))!;
    expect(sc).toMatch(/; HttpOnly/);
    expect(sc).toMatch(/; SameSite=Lax/);
    expect(sc).toMatch(/; Path=\//);
    expect(sc).toMatch(/; Max-Age=\d+/);
    expect(sc).not.toMatch(/Secure/);
    const me = await ok(A, 'account_me');
    expect(me.email).toBe(emailA);
    // Only the token's hash is stored.
    const token = A.cookie.split('=')[1];
    const rows = await svc.store.db.selectFrom('sessions').select('token_hash').execute();
    expect(rows.some((r) => r.token_hash === token)).toBe(false);
    expect(rows.length).toBeGreaterThanOrEqual(2);
  });

  it('log in: wrong password and unknown email get the same -32016; right password gets a new session', async () => {
    const wrong = await rpc(new Jar(), 'account_logIn', [{ email: emailA, password: 'not the password' }]);
    const unknown = await rpc(new Jar(), 'account_logIn', [
      { email: `nobody-${randomBytes(4).toString('hex')}@example.com`, password: PASSWORD },
    ]);
    const sqlish = await rpc(new Jar(), 'account_logIn', [
      { email: "'or'1'='1'--@example.com", password: "' OR '1'='1" },
    ]);
    for (const r of [wrong, unknown, sqlish]) {
      expect(r.status).toBe(401);
      expect(r.body.error.code).toBe(-32016);
      expect(r.body.error.data).toEqual({ source: 'rpcgate', reason: 'credentials' });
      expect(r.body.error.message).toBe('invalid email or password');
    }
    const jar = new Jar();
    const s = await ok(jar, 'account_logIn', [{ email: emailA.toUpperCase(), password: PASSWORD }]);
    expect(s.user.email).toBe(emailA);
    expect((await ok(jar, 'account_me')).id).toBe(s.user.id);
  });

  it('log out deletes the session: the old cookie no longer works, and the cookie is cleared', async () => {
    const jar = new Jar();
    await ok(jar, 'account_logIn', [{ email: emailA, password: PASSWORD }]);
    const old = jar.cookie;
    const before = await count('sessions');
    expect(await ok(jar, 'account_logOut')).toEqual({ loggedOut: true });
    expect(jar.seen.at(-1)).toMatch(/^rpcgate_session=; .*Max-Age=0/);
    expect(jar.cookie).toBe('');
    expect(await count('sessions')).toBe(before - 1);
    const replay = await rpc(undefined, 'account_me', [], { cookie: old });
    expect(replay.status).toBe(401);
    expect(replay.body.error.code).toBe(-32016);
    // A's own session is untouched.
    expect((await ok(A, 'account_me')).email).toBe(emailA);
  });

  it('sign up with a registered email (any case) answers exactly as a fresh sign-up, changes nothing, starts no session', async () => {
    const before = await snapshot();
    const taken = await rpc(new Jar(), 'account_signUp', [
      { email: emailA.toUpperCase(), password: 'another strong passphrase' },
    ]);
    expect(await snapshot(), 'a duplicate sign-up changed the database').toBe(before);
    const freshEmail = `fresh-${randomBytes(4).toString('hex')}@example.com`;
    const fresh = await rpc(new Jar(), 'account_signUp', [
      { email: freshEmail.toUpperCase(), password: 'another strong passphrase' },
    ]);
    for (const r of [taken, fresh]) {
      expect(r.status).toBe(200);
      expect(r.headers.getSetCookie()).toEqual([]);
      expect(Object.keys(r.body.result).sort()).toEqual(['email', 'next']);
      expect(r.body.result.next).toBe('account_logIn');
    }
    expect(taken.body.result.email).toBe(emailA);
    expect(fresh.body.result.email).toBe(freshEmail);
    // The owner's password still works; the duplicate's does not.
    await ok(new Jar(), 'account_logIn', [{ email: emailA, password: PASSWORD }]);
    expect(
      (await rpc(new Jar(), 'account_logIn', [{ email: emailA, password: 'another strong passphrase' }])).status,
    ).toBe(401);
  });

  it('repeated failed log-ins for one email are slowed down (429, -32005, Retry-After)', async () => {
    const jar = new Jar();
    const email = `target-${randomBytes(4).toString('hex')}@example.com`;
    await ok(jar, 'account_signUp', [{ email, password: PASSWORD }]);
    for (let i = 0; i < 10; i++)
      expect((await rpc(undefined, 'account_logIn', [{ email, password: 'wrong password' }])).status).toBe(401);
    const r = await rpc(undefined, 'account_logIn', [{ email, password: PASSWORD }]);
    expect(r.status).toBe(429);
    expect(r.body.error.code).toBe(-32005);
    expect(r.body.error.data).toMatchObject({ source: 'rpcgate', reason: 'rate' });
    expect(Number(r.headers.get('retry-after'))).toBeGreaterThan(0);
  });

  const exampleParams = (m: Json) => (m.examples[0]?.params ?? []).map((p: Json) => p.value);
  const OPEN = new Set([
    'account_signUp',
    'account_logIn',
    'account_logOut',
    'account_requestPasswordReset',
    'account_resetPassword',
    'account_verifyEmail',
    'account_signUpMode',
    'networks_list',
  ]);

  it('every method but sign up / log in / log out / the mailed-link ones / networks_list needs a session (-32016, HTTP 401)', async () => {
    const names = contract.methods.map((m: Json) => m.name).filter((n: string) => !OPEN.has(n));
    expect(names.length).toBe(Object.keys(methods).length - OPEN.size);
    const before = await snapshot();
    for (const m of contract.methods.filter((x: Json) => !OPEN.has(x.name))) {
      for (const cookie of [
        undefined,
        `rpcgate_session=${randomBytes(32).toString('base64url')}`,
        'rpcgate_session=garbage',
      ]) {
        const r = await rpc(undefined, m.name, exampleParams(m), cookie ? { cookie } : {});
        expect(r.status, `${m.name} ${cookie}`).toBe(401);
        expect(r.body.error.code, m.name).toBe(-32016);
      }
    }
    expect(await snapshot()).toBe(before);
  });

  const READS = new Set([
    'account_me',
    'account_activity',
    'account_alertWebhook',
    'alerts_list',
    'chains_list',
    'networks_list',
    'useCases_list',
    'apps_list',
    'apps_usage',
    'apps_get',
    'apps_metrics',
    'apps_logs',
    'apps_listAllowlist',
    'apps_listJwtKeys',
    'keys_list',
    'keys_get',
    'keys_metrics',
    'keys_logs',
    'admin_listAccounts',
    'admin_getAccount',
    'admin_plans',
    'admin_usage',
    'admin_activity',
    'account_signUpMode',
    'admin_listInvites',
  ]);

  it('every changing method refuses a foreign Origin (-32041, HTTP 403) and changes nothing', async () => {
    const changing = contract.methods.filter((m: Json) => !READS.has(m.name));
    expect(changing.length).toBe(26);
    const before = await snapshot();
    for (const m of changing) {
      for (const origin of ['https://evil.example', 'null', svc.url.replace('127.0.0.1', 'localhost')]) {
        const r = await rpc(A, m.name, exampleParams(m), { origin });
        expect(r.status, `${m.name} from ${origin}`).toBe(403);
        expect(r.body.error.code).toBe(-32041);
        expect(r.body.error.data).toMatchObject({ source: 'rpcgate', reason: 'origin' });
      }
    }
    expect(await snapshot()).toBe(before);
    expect(A.cookie).not.toBe(''); // log out from a foreign origin did not end the session
    // Reads are not Origin-checked; the own origin, and no Origin at all (CLI, scripts), may change things.
    expect((await rpc(A, 'account_me', [], { origin: 'https://evil.example' })).status).toBe(200);
    const own = await rpc(A, 'apps_update', [appA.id, { description: 'd' }], { origin: svc.url });
    expect(own.body.error).toBeUndefined();
  });

  it('takes only application/json bodies (415 otherwise) and answers with Cache-Control: no-store', async () => {
    const res = await fetch(api, {
      method: 'POST',
      headers: { 'content-type': 'text/plain', cookie: A.cookie },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'account_me' }),
    });
    expect(res.status).toBe(415);
    const r = await rpc(A, 'account_me');
    expect(r.headers.get('cache-control')).toBe('no-store');
    expect(r.headers.get('access-control-allow-origin')).toBeNull();
  });
});

describe('account API: bad input gets -32602 with data, and nothing is stored', () => {
  const long = (n: number) => 'x'.repeat(n);
  const newApp = { name: 'ok', useCase: 'Defi', chain: 'ethereum', services: ['node-api'] };
  // [method, params, path the error must name (undefined: a count error, which names the param instead)]
  const rows = (): [string, unknown, string | undefined][] => [
    ['account_signUp', [{ email: 'new@example.com' }], '/0'],
    ['account_signUp', [{ password: PASSWORD }], '/0'],
    ['account_signUp', [{ email: 'not-an-email', password: PASSWORD }], '/0/email'],
    ['account_signUp', [{ email: 'new@example.com', password: 'short' }], '/0/password'],
    ['account_signUp', [{ email: 'new@example.com', password: long(129) }], '/0/password'],
    // Guessable passwords (issue 14 item 7): common, a key run, whitespace only, the email's own name.
    ['account_signUp', [{ email: 'new@example.com', password: 'password' }], '/0/password'],
    ['account_signUp', [{ email: 'new@example.com', password: 'Password123!' }], '/0/password'],
    ['account_signUp', [{ email: 'new@example.com', password: '12345678' }], '/0/password'],
    ['account_signUp', [{ email: 'new@example.com', password: 'qwertyuiop' }], '/0/password'],
    ['account_signUp', [{ email: 'new@example.com', password: '        ' }], '/0/password'],
    ['account_signUp', [{ email: 'new@example.com', password: 'aaaaaaaaaaaa' }], '/0/password'],
    ['account_signUp', [{ email: 'margaret.h@example.com', password: 'margaret.h 1999' }], '/0/password'],
    ['account_signUp', [{ email: `${long(250)}@example.com`, password: PASSWORD }], '/0/email'],
    ['account_signUp', [{ email: 5, password: PASSWORD }], '/0/email'],
    ['account_signUp', [{ email: 'new@example.com', password: PASSWORD, admin: true }], '/0'],
    ['account_signUp', ['new@example.com', PASSWORD], undefined],
    ['account_signUp', [], undefined],
    ['account_logIn', [{ email: emailA }], '/0'],
    ['account_logIn', [{ email: emailA, password: PASSWORD, remember: true }], '/0'],
    ['apps_create', [{ ...newApp, name: undefined }], '/0'],
    ['apps_create', [{ name: 'x', chain: 'ethereum', services: ['node-api'] }], '/0'],
    ['apps_create', [{ name: 'x', useCase: 'Defi', services: ['node-api'] }], '/0'],
    ['apps_create', [{ name: 'x', useCase: 'Defi', chain: 'ethereum' }], '/0'],
    ['apps_create', [{ ...newApp, name: '' }], '/0/name'],
    ['apps_create', [{ ...newApp, name: '    ' }], '/0/name'],
    ['apps_create', [{ ...newApp, name: long(65) }], '/0/name'],
    ['apps_create', [{ ...newApp, name: 'tab\there' }], '/0/name'],
    ['apps_create', [{ ...newApp, name: 'nul\u0000' }], '/0/name'],
    ['apps_create', [{ ...newApp, name: 42 }], '/0/name'],
    ['apps_create', [{ ...newApp, description: long(501) }], '/0/description'],
    ['apps_create', [{ ...newApp, description: ['a'] }], '/0/description'],
    ['apps_create', [{ ...newApp, useCase: long(65) }], '/0/useCase'],
    ['apps_create', [{ ...newApp, chain: 'solana' }], '/0/chain'],
    ['apps_create', [{ ...newApp, chain: long(65) }], '/0/chain'],
    ['apps_create', [{ ...newApp, services: [] }], '/0/services'],
    ['apps_create', [{ ...newApp, services: ['node-api', 'node-api'] }], '/0/services'],
    ['apps_create', [{ ...newApp, services: ['mining'] }], '/0/services/0'],
    ['apps_create', [{ ...newApp, services: 'node-api' }], '/0/services'],
    ['apps_create', [{ ...newApp, userId: 'usr_x' }], '/0'],
    ['apps_create', [{ ...newApp, requireJwt: true }], '/0'],
    ['apps_create', [newApp, newApp], undefined],
    ['apps_update', [appA.id, {}], '/1'],
    ['apps_update', [appA.id, { name: long(65) }], '/1/name'],
    ['apps_update', [appA.id, { key: 'mine' }], '/1'],
    ['apps_update', [appA.id, { chain: 'solana' }], '/1/chain'],
    ['apps_update', [appA.id, { services: [] }], '/1/services'],
    ['apps_update', ['nope', { name: 'x' }], '/0'],
    ['apps_update', [appA.id], undefined],
    ['apps_rotateKey', [42], '/0'],
    ['apps_rotateKey', ["app_'; DROP TABLE apps;--"], '/0'],
    ['apps_delete', [keyA.id], '/0'],
    ['apps_delete', [], undefined],
    ['apps_addAllowlistEntry', [appA.id, { kind: 'host', value: 'x' }], '/1/kind'],
    ['apps_addAllowlistEntry', [appA.id, { kind: 'origin', value: 'javascript:alert(1)' }], '/1/value'],
    ['apps_addAllowlistEntry', [appA.id, { kind: 'origin', value: 'https://a.example.com/path' }], '/1/value'],
    ['apps_addAllowlistEntry', [appA.id, { kind: 'origin', value: 'https://a.example.com:99999' }], '/1/value'],
    ['apps_addAllowlistEntry', [appA.id, { kind: 'ip', value: '999.1.1.1' }], '/1/value'],
    ['apps_addAllowlistEntry', [appA.id, { kind: 'ip', value: '10.0.0.0/33' }], '/1/value'],
    ['apps_addAllowlistEntry', [appA.id, { kind: 'ip', value: '2001:db8::/129' }], '/1/value'],
    ['apps_addAllowlistEntry', [appA.id, { kind: 'ip', value: 'example.com' }], '/1/value'],
    ['apps_addAllowlistEntry', [appA.id, { kind: 'address', value: '0x1234' }], '/1/value'],
    ['apps_addAllowlistEntry', [appA.id, { kind: 'method', value: 'eth_sendMoney' }], '/1/value'],
    ['apps_addAllowlistEntry', [appA.id, { kind: 'method', value: 'eth call' }], '/1/value'],
    ['apps_addAllowlistEntry', [appA.id, { kind: 'ip' }], '/1'],
    ['apps_addAllowlistEntry', [appA.id, { kind: 'ip', value: '1.2.3.4', note: 'x' }], '/1'],
    ['apps_removeAllowlistEntry', [appA.id, 'alw_'], '/1'],
    ['apps_removeAllowlistEntry', [appA.id], undefined],
    ['apps_addJwtKey', [appA.id, { alg: 'HS256', publicKeyPem: P256 }], '/1/alg'],
    ['apps_addJwtKey', [appA.id, { alg: 'none', publicKeyPem: P256 }], '/1/alg'],
    ['apps_addJwtKey', [appA.id, { alg: 'ES256', publicKeyPem: 'hello' }], '/1/publicKeyPem'],
    [
      'apps_addJwtKey',
      [appA.id, { alg: 'ES256', publicKeyPem: `-----BEGIN PUBLIC KEY-----\n${long(80)}\n-----END PUBLIC KEY-----\n` }],
      '/1/publicKeyPem',
    ],
    ['apps_addJwtKey', [appA.id, { alg: 'ES256', publicKeyPem: P384 }], '/1/publicKeyPem'],
    ['apps_addJwtKey', [appA.id, { alg: 'ES384', publicKeyPem: P256 }], '/1/publicKeyPem'],
    ['apps_addJwtKey', [appA.id, { alg: 'RS256', publicKeyPem: P256 }], '/1/publicKeyPem'],
    ['apps_addJwtKey', [appA.id, { alg: 'RS256', publicKeyPem: RSA1024 }], '/1/publicKeyPem'],
    ['apps_addJwtKey', [appA.id, { alg: 'ES256', publicKeyPem: P256, kid: 'mine' }], '/1'],
    ['apps_removeJwtKey', [appA.id, 'kid_x'], '/1'],
    ['apps_setRequireJwt', [appA.id, 'yes'], '/1'],
    ['apps_setRequireJwt', [appA.id], undefined],
    ['keys_create', [{ name: 'k' }], '/0'],
    ['keys_create', [{ network: 'Testnet' }], '/0'],
    ['keys_create', [{ name: 'k', network: 'Devnet' }], '/0/network'],
    ['keys_create', [{ name: long(65), network: 'Testnet' }], '/0/name'],
    ['keys_create', [{ name: 'k', network: 'Testnet', description: long(501) }], '/0/description'],
    ['keys_create', [{ name: 'k', network: 'Testnet', limit: 1e9 }], '/0'],
    ['keys_create', [{ name: ['k'], network: 'Testnet' }], '/0/name'],
    ['keys_delete', [appA.id], '/0'],
    ['keys_delete', [null], '/0'],
    ['keys_get', [{}], '/0'],
    // Self-service: the schema's shapes, then what only the handler knows (a password, a token).
    ['account_changePassword', [{ currentPassword: 'correct horse battery' }], '/0'],
    [
      'account_changePassword',
      [{ currentPassword: 'not my password at all', newPassword: 'purple otter umbrella lantern' }],
      '/0/currentPassword',
    ],
    ['account_delete', [{}], '/0'],
    ['account_delete', [{ password: 'not my password at all' }], '/0/password'],
    ['account_requestPasswordReset', [{ email: 'not an email' }], '/0/email'],
    ['account_resetPassword', [{ token: 'short', newPassword: 'purple otter umbrella lantern' }], '/0/token'],
    ['account_resetPassword', [{ token: 'A'.repeat(43), newPassword: 'purple otter umbrella lantern' }], '/0/token'],
    ['account_verifyEmail', [{ token: 'A'.repeat(43) }], '/0/token'],
    ['account_resendVerification', ['now'], undefined],
    ['account_activity', [{ limit: 0 }], '/0/limit'],
    ['account_activity', [{ cursor: 'newest' }], '/0/cursor'],
    // Metrics (reads, but their query is checked like any input; the full table is in test/account-metrics.test.ts).
    [
      'apps_metrics',
      [appA.id, { from: '2025-03-01T09:00:00Z', to: '2025-03-01T08:00:00Z', granularity: 'hour' }],
      '/1/to',
    ],
    [
      'apps_metrics',
      [appA.id, { from: '2025-03-01T09:00:00Z', to: '2025-03-01T10:00:00Z', granularity: 'week' }],
      '/1/granularity',
    ],
    ['keys_metrics', [keyA.id, { from: 1740819600000, to: '2025-03-01T10:00:00Z', granularity: 'hour' }], '/1/from'],
    ['chains_list', [5], '/0'],
    ['chains_list', [long(65)], '/0'],
    ['networks_list', ['mainnet'], undefined],
    // A network name that is well-formed but not configured: refused at run time (the contract cannot list them).
    ['keys_create', [{ name: 'k', network: 'main net' }], '/0/network'],
    [
      'keys_metrics',
      [keyA.id, { from: '2025-03-01T09:00:00Z', to: '2025-03-01T10:00:00Z', granularity: 'hour', network: 'holesky' }],
      '/1/network',
    ],
    // Request log queries: the schema's bounds, then what only the handler knows (network, cursor, time order).
    ['apps_logs', [appA.id, { limit: 0 }], '/1/limit'],
    ['apps_logs', [appA.id, { limit: 501 }], '/1/limit'],
    ['apps_logs', [appA.id, { minLatencyMs: -1 }], '/1/minLatencyMs'],
    ['apps_logs', [appA.id, { status: 'failed' }], '/1/status'],
    ['apps_logs', [appA.id, { since: '2025-02-30T00:00:00Z' }], '/1/since'],
    ['apps_logs', [appA.id, { since: '2025-03-01T10:00:00Z', until: '2025-03-01T09:00:00Z' }], '/1/until'],
    ['apps_logs', [appA.id, { cursor: 'AAAA' }], '/1/cursor'],
    ['apps_logs', [appA.id, { network: 'holesky' }], '/1/network'],
    ['keys_logs', [keyA.id, { httpStatus: 99 }], '/1/httpStatus'],
    ['keys_logs', [keyA.id, { requestId: '' }], '/1/requestId'],
    ['keys_logs', [keyA.id, { surprise: 1 }], '/1'],
    // Alert webhook: a URL the schema allows but that is no http(s) URL, then the schema's type.
    ['account_setAlertWebhook', ['ftp://hooks.example.com/x'], '/0'],
    ['account_setAlertWebhook', ['not a url'], '/0'],
    ['account_setAlertWebhook', [42], '/0'],
    // … and one pointing into the deployment's own network (alerts.allowPrivateWebhooks is off): loopback, RFC 1918,
    // unique local, link-local with cloud metadata, unspecified, carrier-grade NAT, IPv4-mapped, localhost.
    ['account_setAlertWebhook', ['http://127.0.0.1:8545/hook'], '/0'],
    ['account_setAlertWebhook', ['https://10.1.2.3/hook'], '/0'],
    ['account_setAlertWebhook', ['https://192.168.0.10/hook'], '/0'],
    ['account_setAlertWebhook', ['https://[fd00::5]/hook'], '/0'],
    ['account_setAlertWebhook', ['http://169.254.169.254/latest/meta-data/'], '/0'],
    ['account_setAlertWebhook', ['http://[fe80::1]/hook'], '/0'],
    ['account_setAlertWebhook', ['http://0.0.0.0:9/hook'], '/0'],
    ['account_setAlertWebhook', ['https://100.64.1.1/hook'], '/0'],
    ['account_setAlertWebhook', ['https://[::ffff:127.0.0.1]/hook'], '/0'],
    ['account_setAlertWebhook', ['http://localhost:3000/hook'], '/0'],
    // Operators' methods: the contract's schemas refuse these before the admin gate is asked.
    ['admin_listAccounts', [{ status: 'deleted' }], '/0/status'],
    ['admin_listAccounts', [{ limit: 0 }], '/0/limit'],
    ['admin_getAccount', [{ userId: 'app_7Kc2PqWx9LmN4RtB8ZyVhD' }], '/0/userId'],
    ['admin_suspend', [{ userId: 'usr_4Tb8Rk2WqLz9XmNc5PyVhG', reason: '' }], '/0/reason'],
    ['admin_unsuspend', [{}], '/0'],
    ['admin_setPlan', [{ userId: 'usr_4Tb8Rk2WqLz9XmNc5PyVhG', plan: 'no spaces' }], '/0/plan'],
    [
      'admin_setPlan',
      [{ userId: 'usr_4Tb8Rk2WqLz9XmNc5PyVhG', plan: null, override: { daily: -1 } }],
      '/0/override/daily',
    ],
    ['admin_usage', [{ since: '2025-3-1', until: '2025-03-02' }], '/0/since'],
    ['admin_activity', [{ action: 'exploded' }], '/0/action'],
    ['account_signUp', [{ email: 'new@example.com', password: PASSWORD, invite: 'not a token!' }], '/0/invite'],
    ['admin_createInvite', [{ ttlHours: 0 }], '/0/ttlHours'],
    ['admin_createInvite', [{ email: 'not an email' }], '/0/email'],
    ['admin_revokeInvite', [{ id: 'usr_4Tb8Rk2WqLz9XmNc5PyVhG' }], '/0/id'],
  ];

  it('covers every changing method', () => {
    const covered = new Set(rows().map((r) => r[0]));
    for (const m of Object.keys(methods)) {
      if (
        [
          'account_logOut',
          'account_me',
          'account_alertWebhook',
          'alerts_list',
          'apps_list',
          'apps_usage',
          'keys_list',
          'useCases_list',
          'apps_get',
          'apps_listAllowlist',
          'apps_listJwtKeys',
          'admin_plans',
          'account_signUpMode',
          'admin_listInvites',
        ].includes(m)
      )
        continue;
      expect(covered, m).toContain(m);
    }
  });

  it('each row: -32602 naming the param/path and why, HTTP 200, database unchanged', async () => {
    for (const [method, params, path] of rows()) {
      const before = await snapshot();
      const jar = method === 'account_signUp' || method === 'account_logIn' ? new Jar() : A;
      const r = await rpc(jar, method, params);
      const what = `${method} ${JSON.stringify(params).slice(0, 120)}`;
      expect(r.body.error?.code, `${what} → ${JSON.stringify(r.body)}`).toBe(-32602);
      expect(r.status, what).toBe(200);
      const data = r.body.error.data;
      expect(typeof data.reason, what).toBe('string');
      expect(data.reason.length, what).toBeGreaterThan(0);
      if (path !== undefined) expect(data.path, `${what}: ${JSON.stringify(data)}`).toBe(path);
      else expect(typeof data.param === 'string' || typeof data.got === 'number', what).toBe(true);
      expect(await snapshot(), `${what} changed the database`).toBe(before);
    }
  });

  it('stores HTML and SQL in names verbatim, never interpreting them', async () => {
    const names = [
      "'); DROP TABLE users;--",
      '<script>alert(1)</script>',
      'Robert"); DELETE FROM apps; --',
      '  <img src=x onerror=alert(1)>  ',
      'ünïcødé 🚀 名前',
    ];
    const users = await count('users');
    for (const name of names) {
      const app = await ok(A, 'apps_create', [{ ...newApp, name, description: `<b>${name}</b>\n' OR 1=1 --` }]);
      expect(app.name).toBe(name.trim());
      const row = await svc.store.db
        .selectFrom('apps')
        .select(['name', 'description'])
        .where('id', '=', app.id)
        .executeTakeFirstOrThrow();
      expect(row.name).toBe(name.trim());
      expect(row.description).toBe(`<b>${name}</b>\n' OR 1=1 --`);
      expect((await ok(A, 'apps_get', [app.id])).name).toBe(name.trim());
      await ok(A, 'apps_delete', [app.id]);
    }
    const key = await ok(A, 'keys_create', [{ name: "x' OR '1'='1", network: 'Mainnet' }]);
    expect((await ok(A, 'keys_get', [key.id])).name).toBe("x' OR '1'='1");
    await ok(A, 'keys_delete', [key.id]);
    expect(await count('users')).toBe(users);
    // The API answers JSON (never HTML), so a name cannot run as markup in an API answer.
    const r = await rpc(A, 'apps_list');
    expect(r.headers.get('content-type')).toBe('application/json');
  });
});

describe('account API: ownership', () => {
  /** Every method that takes an object id, with user A's ids — user B sends these. */
  const rows = (): [string, unknown[]][] => [
    ['apps_get', [appA.id]],
    ['apps_update', [appA.id, { name: 'taken over' }]],
    ['apps_rotateKey', [appA.id]],
    ['apps_delete', [appA.id]],
    ['apps_addAllowlistEntry', [appA.id, { kind: 'ip', value: '203.0.113.7' }]],
    ['apps_listAllowlist', [appA.id]],
    ['apps_removeAllowlistEntry', [appA.id, entryA.id]],
    ['apps_removeAllowlistEntry', [appB.id, entryA.id]], // B's own app, A's entry
    ['apps_addJwtKey', [appA.id, { alg: 'ES256', publicKeyPem: P256 }]],
    ['apps_addJwtKey', [appA.id, { alg: 'ES256', publicKeyPem: P384 }]], // a bad key: still "not found" first
    ['apps_listJwtKeys', [appA.id]],
    ['apps_removeJwtKey', [appA.id, jwtA.id]],
    ['apps_removeJwtKey', [appB.id, jwtA.id]], // B's own app, A's JWT key
    ['apps_setRequireJwt', [appA.id, true]],
    ['apps_setRequireJwt', [appA.id, false]],
    ['keys_get', [keyA.id]],
    ['keys_metrics', [keyA.id, { from: '2025-03-01T09:00:00Z', to: '2025-03-01T10:00:00Z', granularity: 'minute' }]],
    ['apps_metrics', [appA.id, { from: '2025-03-01T09:00:00Z', to: '2025-03-01T10:00:00Z', granularity: 'minute' }]],
    ['apps_metrics', [appA.id, { from: '2025-03-01T09:00:00Z', to: '2025-03-01T08:00:00Z', granularity: 'minute' }]], // a bad query: still "not found" first
    ['apps_logs', [appA.id]],
    ['apps_logs', [appA.id, { method: 'eth_call', status: 'error', limit: 5 }]],
    ['apps_logs', [appA.id, { cursor: 'AAAA' }]], // a bad query: still "not found" first
    ['keys_logs', [keyA.id]],
    ['keys_logs', [keyA.id, { since: '2025-03-01T09:00:00Z', minLatencyMs: 1 }]],
    ['keys_delete', [keyA.id]],
  ];

  it('the table covers every method that takes an id', () => {
    const covered = new Set(rows().map((r) => r[0]));
    const withId = contract.methods
      .filter((m: Json) => m.params.some((p: Json) => /Id$/.test(p.name)))
      .map((m: Json) => m.name);
    expect(withId.length).toBe(17);
    for (const m of withId) expect(covered, m).toContain(m);
  });

  it("user B gets 'not found' (as for an id that does not exist) on every one, and A's objects are unchanged", async () => {
    const before = await snapshot();
    const ghost = (v: unknown) =>
      typeof v === 'string' && /^(app|alw|kid|key)_/.test(v) && v !== appB.id ? newId(v.slice(0, 3)) : v;
    for (const [method, params] of rows()) {
      const r = await rpc(B, method, params);
      expect(r.body.error?.code, `${method} ${JSON.stringify(params).slice(0, 100)} → ${JSON.stringify(r.body)}`).toBe(
        -32010,
      );
      expect(r.status).toBe(404);
      // Indistinguishable from a missing object: same message, data names only the id sent.
      const missing = await rpc(B, method, params.map(ghost));
      expect(missing.body.error.code).toBe(-32010);
      expect(r.body.error.message).toBe(missing.body.error.message);
      expect(Object.keys(r.body.error.data).sort()).toEqual(['id', 'what']);
    }
    expect(await snapshot(), "B's calls changed the database").toBe(before);
    // And A still sees everything as it was.
    const a = await ok(A, 'apps_get', [appA.id]);
    expect(a.key).toBe(appA.key);
    expect(a.name).toBe(appA.name);
    expect((await ok(A, 'apps_listAllowlist', [appA.id])).map((e: Json) => e.id)).toEqual([entryA.id]);
    expect((await ok(A, 'apps_listJwtKeys', [appA.id])).map((k: Json) => k.id)).toEqual([jwtA.id]);
    expect((await ok(A, 'keys_get', [keyA.id])).key).toBe(keyA.key);
  });

  it("lists never show another user's objects", async () => {
    expect((await ok(B, 'apps_list')).map((a: Json) => a.id)).toEqual([appB.id]);
    expect((await ok(B, 'keys_list')).keys).toEqual([]);
    expect((await ok(A, 'apps_list')).map((a: Json) => a.id)).toContain(appA.id);
    expect((await ok(A, 'apps_list')).map((a: Json) => a.id)).not.toContain(appB.id);
  });
});

describe('account API: apps, allowlists, JWT keys, network keys', () => {
  it('an app carries its key and one A URL per network of its chain; rotate replaces the key', async () => {
    const a = await ok(A, 'apps_get', [appA.id]);
    expect(a.urls).toEqual({ mainnet: `${svc.url}/mainnet/v2/${a.key}`, testnet: `${svc.url}/testnet/v2/${a.key}` });
    const listed = (await ok(A, 'apps_list')).find((x: Json) => x.id === appA.id);
    expect(listed.key).toBeUndefined();
    const app = await ok(A, 'apps_create', [
      { name: 'to rotate', useCase: 'Wallet', chain: 'Ethereum', services: ['node-api'] },
    ]);
    expect(app.chain).toBe('ethereum');
    const rotated = await ok(A, 'apps_rotateKey', [app.id]);
    expect(rotated.key).not.toBe(app.key);
    expect(rotated.keyRotatedAt).not.toBeNull();
    const updated = await ok(A, 'apps_update', [app.id, { name: '  renamed  ', useCase: 'My own use case' }]);
    expect(updated).toMatchObject({ name: 'renamed', useCase: 'My own use case', key: rotated.key });
    expect(await ok(A, 'apps_delete', [app.id])).toEqual({ id: app.id, deleted: true });
    expect((await rpc(A, 'apps_get', [app.id])).body.error.code).toBe(-32010);
  });

  it('allowlist entries of every kind; JWT keys of every algorithm; require JWT needs a key', async () => {
    const app = await ok(A, 'apps_create', [
      { name: 'guarded', useCase: 'Analytics', chain: 'ethereum', services: ['node-api'] },
    ]);
    const entries = [
      { kind: 'origin', value: 'https://app.example.com' },
      { kind: 'origin', value: '*.example.org' },
      { kind: 'origin', value: 'http://localhost:3000' },
      { kind: 'ip', value: '203.0.113.7' },
      { kind: 'ip', value: '10.0.0.0/8' },
      { kind: 'ip', value: '2001:db8::/32' },
      { kind: 'address', value: `0x${'aB'.repeat(20)}` },
      { kind: 'method', value: 'eth_call' },
    ];
    for (const e of entries) expect(await ok(A, 'apps_addAllowlistEntry', [app.id, e])).toMatchObject(e);
    const again = await ok(A, 'apps_addAllowlistEntry', [app.id, entries[0]]);
    const list = await ok(A, 'apps_listAllowlist', [app.id]);
    expect(list.length).toBe(entries.length);
    expect(list.map((e: Json) => e.id)).toContain(again.id);
    expect(await ok(A, 'apps_removeAllowlistEntry', [app.id, again.id])).toEqual({ id: again.id, deleted: true });
    expect((await ok(A, 'apps_listAllowlist', [app.id])).length).toBe(entries.length - 1);

    const noKey = await rpc(A, 'apps_setRequireJwt', [app.id, true]);
    expect(noKey.body.error.code).toBe(-32011);
    const keys = [
      { alg: 'RS256', publicKeyPem: pem('rsa', { modulusLength: 2048 }) },
      { alg: 'RS384', publicKeyPem: pem('rsa', { modulusLength: 2048 }) },
      { alg: 'RS512', publicKeyPem: pem('rsa', { modulusLength: 3072 }) },
      { alg: 'ES256', publicKeyPem: P256 },
      { alg: 'ES384', publicKeyPem: P384 },
    ];
    const kids: string[] = [];
    for (const k of keys) {
      const r = await ok(A, 'apps_addJwtKey', [app.id, k]);
      expect(r.id).toMatch(/^kid_/);
      expect(r.alg).toBe(k.alg);
      kids.push(r.id);
    }
    expect((await ok(A, 'apps_listJwtKeys', [app.id])).map((k: Json) => k.id)).toEqual(kids);
    expect((await ok(A, 'apps_setRequireJwt', [app.id, true])).requireJwt).toBe(true);
    expect(await ok(A, 'apps_removeJwtKey', [app.id, kids[0]])).toEqual({ id: kids[0], deleted: true });
    expect((await ok(A, 'apps_setRequireJwt', [app.id, false])).requireJwt).toBe(false);
    await ok(A, 'apps_delete', [app.id]);
    expect(await count('app_allowlists', { column: 'app_id', value: app.id })).toBe(0);
    expect(await count('app_jwt_keys', { column: 'app_id', value: app.id })).toBe(0);
  });

  it('a network key: B URL on its network, ready examples with the URL filled in, daily usage in the list', async () => {
    const k = await ok(A, 'keys_get', [keyA.id]);
    expect(k.url).toBe(`${svc.url}/testnet/${k.key}`);
    expect(k.network).toBe('testnet');
    expect(k.networkLabel).toBe('Testnet');
    const methodsShown = new Set(k.examples.map((x: Json) => x.method));
    expect([...methodsShown].sort()).toEqual(['eth_blockNumber', 'eth_getBlockByNumber']);
    for (const x of k.examples) {
      expect(x.code).toContain(k.url);
      expect(x.code).not.toContain('{{RPC_URL}}');
    }
    expect(k.examples.map((x: Json) => x.id)).toEqual(
      expect.arrayContaining(['curl', 'ethers', 'viem', 'web3js', 'fetch', 'rpcgate', 'web3py', 'rpcgatepy']),
    );
    const list = await ok(A, 'keys_list');
    expect(list.maxKeys).toBe(4);
    expect(list.keys.map((x: Json) => x.id)).toEqual([keyA.id]);
    expect(list.keys[0].key).toBeUndefined();
    expect(list.usage).toMatchObject({ used: 0, limit: 25_000, remaining: 25_000, period: 'day' });
    expect(Date.parse(list.usage.resetAt) % 86_400_000).toBe(0);
  });

  it('chains and use cases: the chain search and the open use-case list', async () => {
    const all = await ok(A, 'chains_list');
    expect(all).toEqual([
      {
        id: 'ethereum',
        name: 'Ethereum',
        networks: [
          { network: 'mainnet', label: 'Mainnet', chainId: 31337, local: false },
          { network: 'testnet', label: 'Testnet', chainId: 31338, local: false },
        ],
      },
    ]);
    expect(await ok(A, 'chains_list', ['ETH'])).toEqual(all);
    expect(await ok(A, 'chains_list', ['test'])).toEqual(all);
    expect(await ok(A, 'chains_list', ['solana'])).toEqual([]);
    expect(await ok(A, 'useCases_list')).toEqual(expect.arrayContaining(['Defi', 'Analytics', 'Gaming', 'Wallet']));
  });

  it('the 5th network key is refused with a clear error and nothing is created', async () => {
    for (let i = (await ok(A, 'keys_list')).keys.length; i < 4; i++)
      await ok(A, 'keys_create', [{ name: `k${i}`, network: i % 2 ? 'Mainnet' : 'testnet' }]);
    const before = await snapshot();
    const r = await rpc(A, 'keys_create', [{ name: 'fifth', network: 'Mainnet' }]);
    expect(r.status).toBe(409);
    expect(r.body.error.code).toBe(-32005);
    expect(r.body.error.message).toMatch(/at most 4 network API keys per user/);
    expect(r.body.error.data).toMatchObject({ limit: 4 });
    expect(await snapshot()).toBe(before);
    expect((await ok(A, 'keys_list')).keys.length).toBe(4);
  });

  it('apps: the 11th is refused like the 5th key (-32005, HTTP 409, {limit: 10, what: apps}), nothing created; apps_usage shows the account-wide quotas', async () => {
    const D = new Jar();
    await signUp(D, `dora-${randomBytes(4).toString('hex')}@example.com`);
    const usage = await ok(D, 'apps_usage');
    expect(usage).toMatchObject({ apps: 0, maxApps: 10, perSecond: 100 });
    expect(usage.quotas.map((q: Json) => [q.period, q.used, q.limit, q.remaining])).toEqual([
      ['day', 0, 100_000, 100_000],
      ['month', 0, 3_000_000, 3_000_000],
    ]);
    for (let i = 0; i < 10; i++)
      await ok(D, 'apps_create', [{ name: `app ${i}`, useCase: 'Defi', chain: 'ethereum', services: ['node-api'] }]);
    const before = await snapshot();
    const r = await rpc(D, 'apps_create', [
      { name: 'eleventh', useCase: 'Defi', chain: 'ethereum', services: ['node-api'] },
    ]);
    expect([r.status, r.body.error.code, r.body.error.data]).toEqual([409, -32005, { limit: 10, what: 'apps' }]);
    expect(r.body.error.message).toMatch(/at most 10 apps per user/);
    expect(await snapshot()).toBe(before);
    expect((await ok(D, 'apps_usage')).apps).toBe(10);
  });

  it('ten concurrent creates leave exactly 4 keys', async () => {
    const C = new Jar();
    const c = await signUp(C, `carol-${randomBytes(4).toString('hex')}@example.com`);
    const answers = await Promise.all(
      Array.from({ length: 10 }, (_, i) => rpc(C, 'keys_create', [{ name: `race ${i}`, network: 'Testnet' }])),
    );
    const created = answers.filter((r) => r.body.result !== undefined);
    const refused = answers.filter((r) => r.body.error?.code === -32005);
    expect(created.length).toBe(4);
    expect(refused.length).toBe(6);
    expect((await ok(C, 'keys_list')).keys.length).toBe(4);
    expect(await count('network_keys', { column: 'user_id', value: c.user.id })).toBe(4);
    // Deleting one frees a slot.
    await ok(C, 'keys_delete', [created[0].body.result.id]);
    await ok(C, 'keys_create', [{ name: 'again', network: 'Mainnet' }]);
    expect(await count('network_keys', { column: 'user_id', value: c.user.id })).toBe(4);
  });
});
