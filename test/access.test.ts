// Access on the node API, unit level (table-driven): allowlist matching, JWT verification, the request-level check,
// the route check per principal kind, and the key index following the store's key-event feed.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { base64url, exportPKCS8, exportSPKI, generateKeyPair, importPKCS8, SignJWT, type CryptoKey } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  addressesOf,
  checkCallAllowlists,
  checkRequestAllowlists,
  compileAllowlists,
  compileIps,
  compileOrigins,
  ipAllowed,
  originAllowed,
} from '../src/gateway/access/allowlist.js';
import {
  AccessIndex,
  checkKey,
  checkRequest,
  clientIp,
  ConfigKeyStore,
  KeyStores,
  type AppPrincipal,
  type Principal,
} from '../src/gateway/access/index.js';
import { JwtKeySet, bearerToken } from '../src/gateway/access/jwt.js';
import { RpcError } from '../packages/toolkit/src/rpc/errors.js';
import { methods } from '../generated/node/methods.js';
import { addressParamsTable, meaningTable } from '../src/gateway/method-meaning.js';
import type { CompiledAllowlists } from '../src/gateway/access/allowlist.js';
import {
  addJwtKey,
  createApp,
  createNetworkKey,
  createUser,
  deleteApp,
  deleteNetworkKey,
  deleteUser,
  openStore,
  rotateAppKey,
  setAllowlist,
  updateApp,
  type Store,
} from '../src/gateway/store/index.js';
import type { Allowlists } from '../src/gateway/store/access.js';
import type { IncomingMessage } from 'node:http';

const lists = (p: Partial<Allowlists>): Allowlists => ({ origin: [], ip: [], address: [], method: [], ...p });
const reasonOf = (e: RpcError | undefined) => (e === undefined ? 'ok' : (e.data as { reason: string }).reason);

// ---- origins -------------------------------------------------------------------------------------------------------

describe('origin allowlist', () => {
  const cases: [entries: string[], origin: string | undefined, allowed: boolean][] = [
    [['https://app.example.com'], 'https://app.example.com', true],
    [['https://app.example.com'], 'http://app.example.com', false],
    [['https://app.example.com'], 'https://app.example.com:8443', false],
    [['https://app.example.com'], 'https://app.example.com:443', true],
    [['https://app.example.com:443'], 'https://app.example.com', true],
    [['https://App.Example.com/'], 'https://app.example.com', true],
    [['https://app.example.com'], 'https://other.example.com', false],
    [['https://app.example.com'], undefined, false],
    [['https://app.example.com'], 'null', false],
    [['https://app.example.com'], '', false],
    [['https://*.example.com'], 'https://a.example.com', true],
    [['https://*.example.com'], 'https://a.b.example.com', true],
    [['https://*.example.com'], 'https://example.com', false],
    [['https://*.example.com'], 'https://badexample.com', false],
    [['https://*.example.com'], 'http://a.example.com', false],
    [['https://*.example.com'], 'https://a.example.com.evil.net', false],
    [['*.example.com'], 'http://a.example.com', true],
    [['*.example.com'], 'https://a.b.example.com', true],
    [['*.example.com'], 'https://example.com', false],
    [['app.example.com'], 'https://app.example.com', true],
    [['app.example.com'], 'http://app.example.com', true],
    [['app.example.com'], 'http://app.example.com:8080', false],
    [['localhost:3000'], 'http://localhost:3000', true],
    [['localhost:3000'], 'http://localhost:3001', false],
    [['http://[::1]:3000'], 'http://[::1]:3000', true],
    [['https://a.example', 'https://b.example'], 'https://b.example', true],
    [['not a url', 'https://x/y'], 'https://x', false],
    [['https://*'], 'https://anything', false],
  ];
  it.each(cases)('%j vs %s → %s', (entries, origin, allowed) => {
    expect(originAllowed(compileOrigins(entries), origin)).toBe(allowed);
  });
});

// ---- IPs -----------------------------------------------------------------------------------------------------------

describe('IP allowlist', () => {
  const cases: [entries: string[], ip: string | undefined, allowed: boolean][] = [
    [['203.0.113.7'], '203.0.113.7', true],
    [['203.0.113.7'], '203.0.113.8', false],
    [['203.0.113.7'], '::ffff:203.0.113.7', true],
    [['203.0.113.0/24'], '203.0.113.255', true],
    [['203.0.113.0/24'], '203.0.114.1', false],
    [['10.0.0.0/8', '192.168.1.1'], '10.200.3.4', true],
    [['10.0.0.0/8', '192.168.1.1'], '192.168.1.1', true],
    [['10.0.0.0/8', '192.168.1.1'], '192.168.1.2', false],
    [['2001:db8::1'], '2001:db8::1', true],
    [['2001:db8::1'], '2001:db8::2', false],
    [['2001:db8::/32'], '2001:db8:ffff::1', true],
    [['2001:db8::/32'], '2001:db9::1', false],
    [['::1'], '::1', true],
    [['::1'], '127.0.0.1', false],
    [['127.0.0.1'], undefined, false],
    [['127.0.0.1'], 'garbage', false],
    [['bogus', '1.2.3.4/99'], '1.2.3.4', false],
  ];
  it.each(cases)('%j vs %s → %s', (entries, ip, allowed) => {
    expect(ipAllowed(compileIps(entries), ip)).toBe(allowed);
  });

  it('client IP: the socket peer, or the trusted X-Forwarded-For hop', () => {
    const req = (xff?: string) =>
      ({
        socket: { remoteAddress: '127.0.0.1' },
        headers: xff === undefined ? {} : { 'x-forwarded-for': xff },
      }) as unknown as IncomingMessage;
    expect(clientIp(req('1.1.1.1'), 0)).toBe('127.0.0.1');
    expect(clientIp(req(), 1)).toBe('127.0.0.1');
    expect(clientIp(req('6.6.6.6, 1.1.1.1'), 1)).toBe('1.1.1.1');
    expect(clientIp(req('6.6.6.6, 1.1.1.1, 2.2.2.2'), 2)).toBe('1.1.1.1');
    expect(clientIp(req('1.1.1.1'), 3)).toBe('1.1.1.1');
  });
});

// ---- addresses and methods (per call) -----------------------------------------------------------------------------

// Where each node method names contract addresses comes from the contract (x-gateway.addressParams).
const ADDRESS_PARAMS = addressParamsTable(meaningTable(methods));
const check = (c: CompiledAllowlists, method: string, params: unknown[]) =>
  checkCallAllowlists(c, method, params, ADDRESS_PARAMS.get(method));

describe('per-call allowlists', () => {
  const A = `0x${'ab'.repeat(20)}`;
  const B = `0x${'cd'.repeat(20)}`;
  const C = `0x${'12'.repeat(20)}`;
  const addr = compileAllowlists(lists({ address: [A, B.toUpperCase().replace('0X', '0x')] }))!;
  const cases: [method: string, params: unknown[], result: string][] = [
    ['eth_call', [{ to: A, data: '0x' }, 'latest'], 'ok'],
    ['eth_call', [{ to: A.toUpperCase().replace('0X', '0x') }], 'ok'],
    ['eth_call', [{ to: C }], 'address'],
    ['eth_call', [{ data: '0x00' }], 'address'],
    ['eth_getLogs', [{ address: A }], 'ok'],
    ['eth_getLogs', [{ address: [A, B] }], 'ok'],
    ['eth_getLogs', [{ address: [A, C] }], 'address'],
    ['eth_getLogs', [{ address: [] }], 'address'],
    ['eth_getLogs', [{ fromBlock: '0x0' }], 'address'],
    // A log filter reads the same logs over time: the same check (its polls are the gateway's own eth_getLogs).
    ['eth_newFilter', [{ address: [A, B] }], 'ok'],
    ['eth_newFilter', [{ address: C }], 'address'],
    ['eth_newFilter', [{ topics: [] }], 'address'],
    ['eth_newBlockFilter', [], 'ok'],
    ['eth_getCode', [B, 'latest'], 'ok'],
    ['eth_getCode', [C, 'latest'], 'address'],
    ['eth_getStorageAt', [A, '0x0', 'latest'], 'ok'],
    ['eth_getStorageAt', [C, '0x0', 'latest'], 'address'],
    ['eth_getProof', [A, [], 'latest'], 'ok'],
    ['eth_getProof', [C, [], 'latest'], 'address'],
    ['eth_estimateGas', [{ to: B }], 'ok'],
    ['eth_estimateGas', [{ to: C }], 'address'],
    ['eth_estimateGas', [{ data: '0x00' }], 'address'],
    ['eth_createAccessList', [{ to: A }, 'latest'], 'ok'],
    ['eth_createAccessList', [{ to: C }, 'latest'], 'address'],
    // eth_subscribe("logs") reads logs as eth_getLogs does: the same rule (no address, or one off the list: refused).
    ['eth_subscribe', ['logs', { address: A }], 'ok'],
    ['eth_subscribe', ['logs', { address: [A, B], topics: [] }], 'ok'],
    ['eth_subscribe', ['logs', {}], 'address'],
    ['eth_subscribe', ['logs'], 'address'],
    ['eth_subscribe', ['logs', { address: C }], 'address'],
    ['eth_subscribe', ['logs', { address: [A, C] }], 'address'],
    ['eth_subscribe', ['newHeads'], 'ok'],
    ['eth_subscribe', ['newPendingTransactions'], 'ok'],
    // An account's balance and nonce are not contract reads (wallets read them for their own accounts).
    ['eth_getBalance', [C, 'latest'], 'ok'],
    ['eth_getTransactionCount', [C, 'latest'], 'ok'],
    ['eth_blockNumber', [], 'ok'],
  ];
  it.each(cases)('address allowlist: %s %j → %s', (method, params, result) => {
    const e = check(addr, method, params);
    expect(reasonOf(e)).toBe(result);
    if (e) {
      expect(e.code).toBe(-32041);
      expect(e.httpStatus).toBe(403);
      expect((e.data as { source: string }).source).toBe('rpcgate');
    }
  });

  it('addressesOf reads the places the contract names: by index, by (nested) path, string or array, only when its condition holds', () => {
    expect(addressesOf(undefined, [A])).toBeUndefined();
    expect(addressesOf([{ param: 1 }], [A, B])).toEqual([B]);
    expect(addressesOf([{ param: 0, path: 'a.b' }], [{ a: { b: [A, B] } }])).toEqual([A, B]);
    expect(addressesOf([{ param: 0, path: 'a.b' }], [{ a: 'x' }])).toBeNull();
    expect(addressesOf([{ param: 0, path: 'toString' }], [{}])).toBeNull(); // own properties only
    expect(
      addressesOf([{ param: 1, path: 'address', when: { param: 0, equals: 'logs' } }], ['newHeads']),
    ).toBeUndefined();
    expect(
      addressesOf([{ param: 1, path: 'address', when: { param: 0, equals: 'logs' } }], ['logs', { address: [] }]),
    ).toBeNull();
    expect(addressesOf([{ param: 0 }, { param: 1 }], [A, B])).toEqual([A, B]);
  });

  it('method allowlist: only listed methods', () => {
    const m = compileAllowlists(lists({ method: ['eth_blockNumber', 'eth_call'] }))!;
    expect(check(m, 'eth_blockNumber', [])).toBeUndefined();
    expect(check(m, 'eth_call', [{ to: C }])).toBeUndefined();
    const e = check(m, 'eth_getBalance', [C, 'latest'])!;
    // The method exists: -32601 with HTTP 403 and rpcgate's data, unlike an unknown method (-32601, 200, no data).
    expect([e.code, e.httpStatus, e.data]).toEqual([
      -32601,
      403,
      { source: 'rpcgate', reason: 'method', method: 'eth_getBalance' },
    ]);
    expect(e.message).toMatch(/method not allowed for this key: eth_getBalance/);
  });

  it('empty kinds allow all; nothing restricted compiles to undefined', () => {
    expect(compileAllowlists(lists({}))).toBeUndefined();
    expect(compileAllowlists(lists({ origin: ['https://a.example'] }))!.perCall).toBe(false);
  });

  it('kinds combine with AND, entries with OR', () => {
    const c = compileAllowlists(
      lists({
        origin: ['https://a.example', 'https://*.b.example'],
        ip: ['10.0.0.0/8'],
        method: ['eth_call', 'eth_getCode'],
        address: [A],
      }),
    )!;
    const table: [origin: string | undefined, ip: string, method: string, params: unknown[], reason: string][] = [
      ['https://a.example', '10.1.2.3', 'eth_call', [{ to: A }], 'ok'],
      ['https://x.b.example', '10.1.2.3', 'eth_getCode', [A], 'ok'],
      ['https://c.example', '10.1.2.3', 'eth_call', [{ to: A }], 'origin'],
      [undefined, '10.1.2.3', 'eth_call', [{ to: A }], 'origin'],
      ['https://a.example', '11.1.2.3', 'eth_call', [{ to: A }], 'ip'],
      ['https://a.example', '10.1.2.3', 'eth_getBalance', [A, 'latest'], 'method'],
      ['https://a.example', '10.1.2.3', 'eth_call', [{ to: C }], 'address'],
    ];
    for (const [origin, ip, method, params, reason] of table) {
      const e = checkRequestAllowlists(c, origin, ip) ?? check(c, method, params);
      expect(reasonOf(e), `${origin} ${ip} ${method}`).toBe(reason);
    }
  });

  it('a refusal without an Origin header says so', () => {
    const c = compileAllowlists(lists({ origin: ['https://a.example'] }))!;
    const e = checkRequestAllowlists(c, undefined, '1.2.3.4')!;
    expect(e.httpStatus).toBe(403);
    expect(e.message).toMatch(/no Origin header/);
    expect(e.data).toEqual({ source: 'rpcgate', reason: 'origin', origin: null });
  });
});

// ---- JWT -----------------------------------------------------------------------------------------------------------

interface KeyPair {
  kid: string;
  alg: 'RS256' | 'ES256';
  privateKey: CryptoKey;
  pem: string;
}

async function keyPair(alg: 'RS256' | 'ES256', kid: string): Promise<KeyPair> {
  const { publicKey, privateKey } = await generateKeyPair(alg, { extractable: true });
  return { kid, alg, privateKey, pem: await exportSPKI(publicKey) };
}

const now = () => Math.floor(Date.now() / 1000);

function sign(
  k: KeyPair,
  claims: Record<string, unknown> = { exp: now() + 300 },
  header: Record<string, unknown> = {},
): Promise<string> {
  return new SignJWT(claims).setProtectedHeader({ alg: k.alg, kid: k.kid, ...header }).sign(k.privateKey);
}

function unsigned(header: Record<string, unknown>, claims: Record<string, unknown>): string {
  const enc = (o: unknown) => base64url.encode(JSON.stringify(o));
  return `${enc(header)}.${enc(claims)}.`;
}

describe('JWT', () => {
  let rs: KeyPair;
  let es: KeyPair;
  let set: JwtKeySet;

  beforeAll(async () => {
    rs = await keyPair('RS256', 'kid_rsa');
    es = await keyPair('ES256', 'kid_ec');
    set = new JwtKeySet([
      { kid: rs.kid, alg: 'RS256', publicKeyPem: rs.pem },
      { kid: es.kid, alg: 'ES256', publicKeyPem: es.pem },
    ]);
  });

  const detail = (e: RpcError | undefined) => (e === undefined ? 'valid' : (e.data as { detail: string }).detail);

  it('accepts valid RS256 and ES256 tokens (and exp within the clock tolerance)', async () => {
    expect(detail(await set.verify(await sign(rs)))).toBe('valid');
    expect(detail(await set.verify(await sign(es)))).toBe('valid');
    expect(detail(await set.verify(await sign(rs, { exp: now() - 10 })))).toBe('valid');
  });

  it('refuses bad tokens with a clear reason', async () => {
    const good = await sign(rs);
    const [h, p, s] = good.split('.');
    const otherPayload = base64url.encode(JSON.stringify({ exp: now() + 300, sub: 'admin' }));
    const flipped = (s[0] === 'A' ? 'B' : 'A') + s.slice(1);
    // The same RSA key, used with RS384 (WebCrypto keys are bound to one hash: re-import the private key for RS384).
    const rs384Key = await importPKCS8(await exportPKCS8(rs.privateKey), 'RS384');
    const rs384 = await new SignJWT({ exp: now() + 300 })
      .setProtectedHeader({ alg: 'RS384', kid: rs.kid })
      .sign(rs384Key);
    const hs256 = await new SignJWT({ exp: now() + 300 })
      .setProtectedHeader({ alg: 'HS256', kid: rs.kid })
      .sign(new TextEncoder().encode(rs.pem));
    const esForRsKid = await new SignJWT({ exp: now() + 300 })
      .setProtectedHeader({ alg: 'ES256', kid: rs.kid })
      .sign(es.privateKey);
    const table: [name: string, token: string, detail: string][] = [
      ['expired', await sign(rs, { exp: now() - 3600 }), 'expired'],
      ['no exp', await sign(rs, { sub: 'x' }), 'missing exp'],
      ['exp not a number', await sign(rs, { exp: 'tomorrow' }), 'invalid claims'],
      ['not yet valid', await sign(rs, { exp: now() + 3600, nbf: now() + 600 }), 'not yet valid'],
      ['wrong kid', await sign(rs, undefined, { kid: 'kid_nope' }), 'unknown kid'],
      [
        'no kid',
        await new SignJWT({ exp: now() + 300 }).setProtectedHeader({ alg: 'RS256' }).sign(rs.privateKey),
        'missing kid',
      ],
      ['RS384 for an RS256 key', rs384, 'algorithm not allowed'],
      ['HS256 with the public key as secret', hs256, 'algorithm not allowed'],
      ['ES256 token naming the RS256 kid', esForRsKid, 'algorithm not allowed'],
      ['alg none', unsigned({ alg: 'none', kid: rs.kid }, { exp: now() + 300 }), 'algorithm not allowed'],
      [
        'alg none, typ JWT',
        unsigned({ alg: 'none', typ: 'JWT', kid: es.kid }, { exp: now() + 300 }),
        'algorithm not allowed',
      ],
      ['tampered payload', `${h}.${otherPayload}.${s}`, 'bad signature'],
      ['tampered signature', `${h}.${p}.${flipped}`, 'bad signature'],
      ['garbage', 'not.a.jwt', 'malformed'],
      ['two parts', `${h}.${p}`, 'malformed'],
    ];
    for (const [name, token, want] of table) {
      const e = await set.verify(token);
      expect(detail(e), name).toBe(want);
      expect(e!.code, name).toBe(-32016);
      expect(e!.httpStatus, name).toBe(401);
    }
  });

  it('a maximum lifetime (issue 14 item 8): exp - iat above it, or no iat, is refused; exactly the maximum passes', async () => {
    const capped = new JwtKeySet([{ kid: es.kid, alg: 'ES256', publicKeyPem: es.pem }], 86_400);
    const t = now();
    const table: [name: string, claims: Record<string, unknown>, detail: string][] = [
      ['1 h', { iat: t, exp: t + 3600 }, 'valid'],
      ['exactly 24 h', { iat: t, exp: t + 86_400 }, 'valid'],
      ['24 h + 1 s', { iat: t, exp: t + 86_401 }, 'lifetime too long'],
      ['exp in the year 3000', { iat: t, exp: Date.UTC(3000, 0, 1) / 1000 }, 'lifetime too long'],
      ['no iat', { exp: t + 60 }, 'missing iat'],
      ['no exp', { iat: t }, 'missing exp'],
      ['iat long ago, still within exp', { iat: t - 30 * 86_400, exp: t + 60 }, 'lifetime too long'],
      // Issue 26 item 2: the audit's bypass — an iat an hour before an exp in the year 3000.
      [
        'iat = exp - 1 h, exp in the year 3000',
        { iat: Date.UTC(3000, 0, 1) / 1000 - 3600, exp: Date.UTC(3000, 0, 1) / 1000 },
        'issued in the future',
      ],
      ['iat 1 min in the future', { iat: t + 60, exp: t + 120 }, 'issued in the future'],
      ['iat within the clock tolerance', { iat: t + 20, exp: t + 120 }, 'valid'],
      ['iat and exp in milliseconds', { iat: t * 1000, exp: t * 1000 + 3_600_000 }, 'timestamp in milliseconds'],
      ['exp in milliseconds, iat in seconds', { iat: t, exp: t * 1000 }, 'timestamp in milliseconds'],
      ['nbf in milliseconds', { iat: t, nbf: (t - 10) * 1000, exp: t + 60 }, 'timestamp in milliseconds'],
    ];
    for (const [name, claims, want] of table)
      expect(detail(await capped.verify(await sign(es, claims))), name).toBe(want);
    const e = await capped.verify(await sign(es, { iat: t, exp: t + 90_000 }));
    expect(e!.data).toMatchObject({
      reason: 'jwt',
      detail: 'lifetime too long',
      maxLifetimeSec: 86_400,
      lifetimeSec: 90_000,
    });
    // No maximum: iat is not needed and a long token passes (exp still required)…
    expect(detail(await set.verify(await sign(es, { exp: Date.UTC(3000, 0, 1) / 1000 })))).toBe('valid');
    // … but never one in milliseconds (valid for millennia) or issued in the future.
    expect(detail(await set.verify(await sign(es, { exp: (t + 60) * 1000 })))).toBe('timestamp in milliseconds');
    expect(detail(await set.verify(await sign(es, { iat: t * 1000, exp: t + 60 })))).toBe('timestamp in milliseconds');
    expect(detail(await set.verify(await sign(es, { iat: t + 600, exp: t + 900 })))).toBe('issued in the future');
  });

  it('a key with an unusable PEM refuses its tokens', async () => {
    const bad = new JwtKeySet([
      { kid: 'kid_bad', alg: 'RS256', publicKeyPem: '-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----' },
    ]);
    expect(detail(await bad.verify(await sign({ ...rs, kid: 'kid_bad' })))).toBe('key unusable');
  });

  it('Bearer parsing', () => {
    expect(bearerToken('Bearer abc')).toBe('abc');
    expect(bearerToken('bearer  abc ')).toBe('abc');
    expect(bearerToken('Basic abc')).toBeUndefined();
    expect(bearerToken('Bearer ')).toBeUndefined();
    expect(bearerToken(undefined)).toBeUndefined();
  });

  it('request level: required → missing is 401; not required → a sent token must still be valid; no keys → ignored', async () => {
    const app = (requireJwt: boolean, jwt: JwtKeySet | undefined): AppPrincipal => ({
      kind: 'app',
      id: 'app_1',
      appId: 'app_1',
      userId: 'usr_1',
      name: 'a',
      chain: 'ethereum',
      networks: new Set(['mainnet']),
      allowlists: undefined,
      requireJwt,
      jwt,
      limitSubject: { kind: 'A', appId: 'app_1', userId: 'usr_1' },
    });
    const info = (authorization?: string) => ({ origin: undefined, ip: '127.0.0.1', authorization });
    const good = `Bearer ${await sign(rs)}`;
    const bad = `Bearer ${await sign(rs, { exp: now() - 3600 })}`;
    const table: [requireJwt: boolean, keys: boolean, auth: string | undefined, want: string][] = [
      [true, true, undefined, 'missing'],
      [true, true, 'Basic xyz', 'missing'],
      [true, true, good, 'valid'],
      [true, true, bad, 'expired'],
      [true, false, good, 'no keys'],
      [true, false, undefined, 'no keys'],
      [false, true, undefined, 'valid'],
      [false, true, good, 'valid'],
      [false, true, bad, 'expired'],
      [false, false, bad, 'valid'],
    ];
    for (const [req, keys, auth, want] of table) {
      const r = await checkRequest(app(req, keys ? set : undefined), info(auth));
      expect(detail(r), `${req} ${keys} ${auth?.slice(0, 12)}`).toBe(want);
    }
  });
});

// ---- key index -----------------------------------------------------------------------------------------------------

describe('key index over the store', () => {
  const secret = randomBytes(32);
  let dir: string;
  let store: Store;
  let index: AccessIndex;
  let userId: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'rpcgate-access-'));
    store = await openStore({ dataDir: dir });
    userId = (await createUser(store.db, { email: 'a@example.com', passwordHash: 'x' })).id;
    // Timers effectively off: the test applies events with sync() (deterministic, no timed waits).
    index = new AccessIndex({
      db: store.db,
      secret,
      chains: { ethereum: ['mainnet', 'testnet'], rootstock: ['mainnet'] },
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

  const appInput = { name: 'My app', useCase: 'Defi', chain: 'Ethereum', services: ['node-api'] };

  it('a created key resolves after the next sync, by its HMAC only', async () => {
    const app = await createApp(store.db, secret, userId, appInput);
    const nk = await createNetworkKey(store.db, secret, userId, { name: 'k', network: 'testnet' });
    expect(index.lookup(app.key)).toBeUndefined();
    await index.sync();
    const p = index.lookup(app.key) as AppPrincipal;
    expect(p).toMatchObject({
      kind: 'app',
      appId: app.id,
      userId,
      requireJwt: false,
      limitSubject: { kind: 'A', appId: app.id, userId },
    });
    expect([...p.networks]).toEqual(['mainnet', 'testnet']);
    expect(index.lookup(nk.key)).toMatchObject({
      kind: 'network-key',
      keyId: nk.id,
      network: 'testnet',
      limitSubject: { kind: 'B', userId },
    });
    expect(index.lookup(`${app.key}x`)).toBeUndefined();
    expect(index.lookup('x'.repeat(500))).toBeUndefined();
  });

  it('route check: A keys on every network of their chain (A URL only); B keys on their network (B URL only)', async () => {
    const app = await createApp(store.db, secret, userId, appInput);
    const rsk = await createApp(store.db, secret, userId, { ...appInput, chain: 'rootstock' });
    const other = await createApp(store.db, secret, userId, { ...appInput, chain: 'solana' });
    const nk = await createNetworkKey(store.db, secret, userId, { name: 'k2', network: 'mainnet' });
    await index.sync();
    const table: [key: string, network: string, ap: 'A' | 'B', want: string][] = [
      [app.key, 'mainnet', 'A', 'ok'],
      [app.key, 'testnet', 'A', 'ok'],
      [app.key, 'mainnet', 'B', 'url'],
      [rsk.key, 'mainnet', 'A', 'ok'],
      [rsk.key, 'testnet', 'A', 'network'],
      [other.key, 'mainnet', 'A', 'network'],
      [nk.key, 'mainnet', 'B', 'ok'],
      [nk.key, 'testnet', 'B', 'network'],
      [nk.key, 'mainnet', 'A', 'url'],
      ['unknown-key-123', 'mainnet', 'A', 'key'],
    ];
    for (const [key, network, ap, want] of table) {
      const r = checkKey(index, key, network, ap);
      const got = r instanceof RpcError ? (r.data as { reason: string }).reason : 'ok';
      expect(got, `${key.slice(0, 6)} ${network} ${ap}`).toBe(want);
      if (r instanceof RpcError) expect(r.httpStatus).toBe(want === 'key' ? 401 : 403);
    }
  });

  it('revoke, rotate and delete drop the key at the next sync; allowlist and JWT changes are picked up', async () => {
    const app = await createApp(store.db, secret, userId, appInput);
    const nk = await createNetworkKey(store.db, secret, userId, { name: 'k3', network: 'mainnet' });
    const doomed = await createApp(store.db, secret, userId, appInput);
    await index.sync();
    expect(index.lookup(app.key)).toBeDefined();

    await setAllowlist(store.db, userId, app.id, 'method', ['eth_blockNumber']);
    await addJwtKey(store.db, userId, app.id, { alg: 'ES256', publicKeyPem: (await keyPair('ES256', 'x')).pem });
    await updateApp(store.db, secret, userId, app.id, { requireJwt: true });
    await index.sync();
    const p = index.lookup(app.key) as AppPrincipal;
    expect(p.requireJwt).toBe(true);
    expect(p.jwt?.size).toBe(1);
    expect(p.allowlists?.method?.has('eth_blockNumber')).toBe(true);

    const rotated = await rotateAppKey(store.db, secret, userId, app.id);
    await deleteNetworkKey(store.db, userId, nk.id);
    await deleteApp(store.db, userId, doomed.id);
    await index.sync();
    expect(index.lookup(app.key)).toBeUndefined();
    expect(index.lookup(rotated!.key)).toMatchObject({ appId: app.id });
    expect(index.lookup(nk.key)).toBeUndefined();
    expect(index.lookup(doomed.key)).toBeUndefined();
  });

  it('deleting the user revokes all their keys; a full rebuild agrees with the synced state', async () => {
    const u2 = (await createUser(store.db, { email: 'b@example.com', passwordHash: 'x' })).id;
    const app = await createApp(store.db, secret, u2, appInput);
    const nk = await createNetworkKey(store.db, secret, u2, { name: 'k', network: 'testnet' });
    await index.sync();
    expect(index.lookup(app.key)).toBeDefined();
    await deleteUser(store.db, u2);
    await index.sync();
    expect(index.lookup(app.key)).toBeUndefined();
    expect(index.lookup(nk.key)).toBeUndefined();
    const before = index.size;
    await index.refresh();
    expect(index.size).toBe(before);
  });

  it('a second index on the same store (another replica) follows the same events', async () => {
    const replica = await openStore({ dataDir: dir });
    const other = new AccessIndex({
      db: replica.db,
      secret,
      chains: { ethereum: ['mainnet'] },
      pollMs: 3_600_000,
      rebuildMs: 3_600_000,
    });
    await other.start();
    try {
      const app = await createApp(store.db, secret, userId, appInput);
      await other.sync();
      expect(other.lookup(app.key)).toBeDefined();
      await deleteApp(store.db, userId, app.id);
      await other.sync();
      expect(other.lookup(app.key)).toBeUndefined();
    } finally {
      await other.stop();
      await replica.close();
    }
  });

  it('static keys come first and stay valid without accounts', () => {
    const s = new ConfigKeyStore([{ key: 'static-key-1', networks: ['mainnet'] }]);
    const dev = s.addDevelopmentKey('dev-key-12345678');
    const keys = new KeyStores([s, index]);
    expect(checkKey(keys, 'dev-key-12345678', 'testnet', 'B')).toBe(dev);
    expect((checkKey(keys, 'static-key-1', 'mainnet', 'A') as Principal).kind).toBe('static');
    expect(((checkKey(keys, 'static-key-1', 'testnet', 'A') as RpcError).data as { reason: string }).reason).toBe(
      'network',
    );
    expect((checkKey(keys, undefined, 'mainnet', 'A') as RpcError).httpStatus).toBe(401);
  });
});
