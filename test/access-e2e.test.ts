// Access on the node API end to end: startService on a temp SQLite store (users, apps and keys created with the store
// repositories — the account API comes later), called over HTTP. Both access points on both networks, allowlists,
// JWT, limits with their headers, and revocation seen within 2 s by this instance and by a second process sharing
// the store. The same revocation check runs on PostgreSQL + Redis when they are reachable (required under CI).
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { exportSPKI, generateKeyPair, SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startService, type RunningService } from '../src/gateway/server/index.js';
import { methods } from '../generated/node/methods.js';
import { addressParamsTable, meaningTable } from '../src/gateway/method-meaning.js';
import {
  deleteRedisKeys,
  pgReachable,
  redisReachable,
  REDIS_URL,
  scratchDatabase,
  scratchPrefix,
  skipUnless,
} from './helpers/services.js';
import {
  addJwtKey,
  createApp,
  createNetworkKey,
  createUser,
  deleteApp,
  deleteNetworkKey,
  rotateAppKey,
  setAllowlist,
  updateApp,
  type App,
} from '../src/gateway/store/index.js';

const root = resolve(import.meta.dirname, '..');

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

async function post(url: string, body: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: (text === '' ? undefined : JSON.parse(text)) as Json };
}

const call = (method: string, params: unknown[] = [], id: number | string = 1) => ({
  jsonrpc: '2.0',
  id,
  method,
  params,
});

/** Polls until `ok()` (each try is one HTTP call); returns the ms it took. Gives up after `maxMs`. */
async function msUntil(ok: () => Promise<boolean>, maxMs = 5000): Promise<number> {
  const t0 = performance.now();
  while (performance.now() - t0 < maxMs) {
    if (await ok()) return performance.now() - t0;
    await new Promise((r) => setTimeout(r, 50));
  }
  return Infinity;
}

const statusIs = (url: string, status: number) => async () => (await post(url, call('eth_chainId'))).status === status;

/** A second rpcgate process (the tsx loader, its own store connection, key index and limiter). */
async function startChild(input: object): Promise<{ url: string; proc: ChildProcess; stop(): Promise<void> }> {
  const dir = mkdtempSync(join(tmpdir(), 'rpcgate-child-'));
  const script = join(dir, 'child.mts');
  writeFileSync(
    script,
    `import { startService } from ${JSON.stringify(pathToFileURL(join(root, 'src/gateway/server/service.ts')).href)};
const svc = await startService(JSON.parse(process.argv[2]));
process.stdout.write('READY ' + svc.url + '\\n');
process.once('SIGTERM', () => void svc.stop().finally(() => process.exit(0)));
`,
  );
  const proc = spawn(process.execPath, ['--import', 'tsx', script, JSON.stringify(input)], {
    cwd: root,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  proc.stdout!.setEncoding('utf8').on('data', (d: string) => (out += d));
  proc.stderr!.setEncoding('utf8').on('data', (d: string) => (err += d));
  const url = await new Promise<string>((resolveUrl, reject) => {
    const t = setInterval(() => {
      const m = /READY (\S+)/.exec(out);
      if (m) {
        clearInterval(t);
        resolveUrl(m[1]);
      } else if (proc.exitCode !== null) {
        clearInterval(t);
        reject(new Error(`child exited: ${err}`));
      }
    }, 50);
  });
  return {
    url,
    proc,
    stop: async () => {
      if (proc.exitCode === null) {
        const exited = new Promise((r) => proc.once('exit', r));
        proc.kill('SIGTERM');
        await exited;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

let dataDir: string;
let svc: RunningService;
let userId: string;
const appInput = { name: 'e2e app', useCase: 'Defi', chain: 'ethereum', services: ['node-api'] };

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'rpcgate-access-e2e-'));
  svc = await startService({
    port: 0,
    logLevel: 'silent',
    dataDir,
    devKey: false,
    limits: { a: { perSecond: null, daily: 100_000, monthly: null }, b: { dailyPerUser: 60 } },
  });
  userId = (await createUser(svc.store.db, { email: 'e2e@example.com', passwordHash: 'x' })).id;
});

afterAll(async () => {
  await svc?.stop();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

const A = (network: string, key: string) => `${svc.url}/${network}/v2/${key}`;
const B = (network: string, key: string) => `${svc.url}/${network}/${key}`;

/** An app for this test, visible to the index right away (the tests of the 2 s bound below do not use sync). */
async function app(patch: Parameters<typeof createApp>[3] | object = {}): Promise<App> {
  const a = await createApp(svc.store.db, svc.secret, userId, { ...appInput, ...patch });
  await svc.access.sync();
  return a;
}

describe('keys from the store on both access points', () => {
  it('no development key in this deployment: an unknown key is 401', async () => {
    expect(svc.devKey).toBe(false);
    expect(svc.key).toBe('');
    const r = await post(A('mainnet', 'nosuchkey12345678'), call('eth_chainId'));
    expect([r.status, r.body.error.code, r.body.error.data]).toEqual([
      401,
      -32016,
      { source: 'rpcgate', reason: 'key' },
    ]);
  });

  it('an app key (A) works on both networks of its chain, on the A URL shape only', async () => {
    const a = await app();
    for (const [network, chainId] of [
      ['mainnet', '0x7a69'],
      ['testnet', '0x7a6a'],
    ]) {
      const r = await post(A(network, a.key), call('eth_chainId'));
      expect([r.status, r.body.result]).toEqual([200, chainId]);
      const wrong = await post(B(network, a.key), call('eth_chainId'));
      expect([wrong.status, wrong.body.error.code, wrong.body.error.data.source, wrong.body.error.data.reason]).toEqual(
        [403, -32041, 'rpcgate', 'url'],
      );
    }
  });

  it('an app on a chain this deployment does not serve: 403', async () => {
    const a = await app({ chain: 'solana' });
    const r = await post(A('mainnet', a.key), call('eth_chainId'));
    expect([r.status, r.body.error.code, r.body.error.data.source, r.body.error.data.reason]).toEqual([
      403,
      -32041,
      'rpcgate',
      'network',
    ]);
  });

  it('a network key (B) works only on its network and only on the B URL shape', async () => {
    const k = await createNetworkKey(svc.store.db, svc.secret, userId, { name: 'b', network: 'testnet' });
    await svc.access.sync();
    const ok = await post(B('testnet', k.key), call('eth_chainId'));
    expect([ok.status, ok.body.result]).toEqual([200, '0x7a6a']);
    const other = await post(B('mainnet', k.key), call('eth_chainId'));
    expect([other.status, other.body.error.code, other.body.error.data.reason]).toEqual([403, -32041, 'network']);
    expect(other.body.error.message).toMatch(/only for network testnet/);
    const shape = await post(A('testnet', k.key), call('eth_chainId'));
    expect([shape.status, shape.body.error.data.reason]).toEqual([403, 'url']);
    await deleteNetworkKey(svc.store.db, userId, k.id);
    await svc.access.sync();
  });
});

describe('allowlists over HTTP', () => {
  it('origin: wildcard subdomains allowed, others and a missing Origin refused', async () => {
    const a = await app();
    await setAllowlist(svc.store.db, userId, a.id, 'origin', ['https://*.example.com', 'http://localhost:3000']);
    await svc.access.sync();
    const url = A('mainnet', a.key);
    const table: [origin: string | undefined, status: number][] = [
      ['https://dapp.example.com', 200],
      ['https://a.b.example.com', 200],
      ['http://localhost:3000', 200],
      ['https://example.com', 403],
      ['https://badexample.com', 403],
      ['http://dapp.example.com', 403],
      [undefined, 403],
    ];
    for (const [origin, status] of table) {
      const r = await post(url, call('eth_chainId'), origin === undefined ? {} : { origin });
      expect(r.status, String(origin)).toBe(status);
      if (status === 403)
        expect([r.body.error.code, r.body.error.data.source, r.body.error.data.reason]).toEqual([
          -32041,
          'rpcgate',
          'origin',
        ]);
      else expect(r.headers.get('access-control-allow-origin')).toBe('*');
    }
  });

  it('IP: the socket peer against addresses and CIDRs', async () => {
    const a = await app();
    await setAllowlist(svc.store.db, userId, a.id, 'ip', ['10.0.0.0/8']);
    await svc.access.sync();
    const refused = await post(A('mainnet', a.key), call('eth_chainId'));
    expect([refused.status, refused.body.error.code, refused.body.error.data]).toEqual([
      403,
      -32041,
      { source: 'rpcgate', reason: 'ip', ip: '127.0.0.1' },
    ]);
    await setAllowlist(svc.store.db, userId, a.id, 'ip', ['10.0.0.0/8', '127.0.0.0/8', '::1']);
    await svc.access.sync();
    expect((await post(A('mainnet', a.key), call('eth_chainId'))).status).toBe(200);
  });

  it('contract addresses: eth_call, eth_getCode and eth_getLogs per call; per item inside a batch', async () => {
    const token = svc.seeded.mainnet.token.address;
    const other = svc.seeded.mainnet.accounts[1];
    const a = await app();
    await setAllowlist(svc.store.db, userId, a.id, 'address', [token.toUpperCase().replace('0X', '0x')]);
    await svc.access.sync();
    const url = A('mainnet', a.key);
    const totalSupply = '0x18160ddd';
    const ok = await post(url, call('eth_call', [{ to: token, data: totalSupply }, 'latest']));
    expect(ok.status).toBe(200);
    expect(ok.body.result).toMatch(/^0x[0-9a-f]{64}$/);
    const refused = await post(url, call('eth_call', [{ to: other, data: totalSupply }, 'latest']));
    expect([
      refused.status,
      refused.body.error.code,
      refused.body.error.data.source,
      refused.body.error.data.reason,
      refused.body.id,
    ]).toEqual([403, -32041, 'rpcgate', 'address', 1]);
    expect((await post(url, call('eth_getCode', [token, 'latest']))).status).toBe(200);
    expect((await post(url, call('eth_getCode', [other, 'latest']))).status).toBe(403);
    const { fromBlock, toBlock } = svc.seeded.mainnet;
    const logs = await post(url, call('eth_getLogs', [{ fromBlock, toBlock, address: token }]));
    expect(logs.status).toBe(200);
    expect(logs.body.result.length).toBeGreaterThan(0);
    expect((await post(url, call('eth_getLogs', [{ fromBlock, toBlock }]))).status).toBe(403);
    // A batch answers 200; only the refused item carries the error; unrestricted methods pass.
    const batch = await post(url, [
      call('eth_call', [{ to: token, data: totalSupply }, 'latest'], 1),
      call('eth_call', [{ to: other, data: '0x' }, 'latest'], 2),
      call('eth_blockNumber', [], 3),
    ]);
    expect(batch.status).toBe(200);
    expect(batch.body.map((x: Json) => (x.error ? x.error.data.reason : 'ok'))).toEqual(['ok', 'address', 'ok']);
    expect(batch.body[1].id).toBe(2);
  });

  // Driven from the contract: every method whose x-gateway names addressParams (a new one is covered as it is added),
  // with its own example's params and the address put where the contract says.
  it('contract addresses, for every method with x-gateway.addressParams: a listed address passes, an unlisted one is -32041', async () => {
    const table = addressParamsTable(meaningTable(methods));
    expect([...table.keys()].sort()).toEqual(
      expect.arrayContaining(['eth_call', 'eth_getLogs', 'eth_getProof', 'eth_newFilter', 'eth_subscribe']),
    );
    const token = svc.seeded.mainnet.token.address;
    const other = svc.seeded.mainnet.accounts[1];
    const a = await app();
    await setAllowlist(svc.store.db, userId, a.id, 'address', [token]);
    await svc.access.sync();
    const contract = JSON.parse(readFileSync(join(import.meta.dirname, '../openrpc.json'), 'utf8')) as {
      methods: { name: string; examples?: { params: { value: unknown }[] }[] }[];
    };
    for (const [method, spec] of table) {
      const example = contract.methods.find((m) => m.name === method)?.examples?.[0];
      expect(example, `${method} has an example in openrpc.json`).toBeDefined();
      const withAddress = (address: string): unknown[] => {
        const params = structuredClone(example!.params.map((p) => p.value));
        for (const e of spec) {
          if (e.when !== undefined) params[e.when.param] = e.when.equals;
          if (e.path === undefined) {
            params[e.param] = address;
            continue;
          }
          let o = (params[e.param] ??= {}) as Record<string, unknown>;
          const keys = e.path.split('.');
          for (const k of keys.slice(0, -1)) o = (o[k] ??= {}) as Record<string, unknown>;
          o[keys[keys.length - 1]] = address;
        }
        return params;
      };
      const listed = await post(A('mainnet', a.key), call(method, withAddress(token)));
      // Listed: past the allowlist (the node's answer, or -32601 for eth_subscribe over HTTP) — never -32041.
      expect(listed.body.error?.code, `${method} with a listed address: ${JSON.stringify(listed.body.error)}`).not.toBe(
        -32041,
      );
      expect(listed.body.error?.code, `${method} with a listed address: params valid`).not.toBe(-32602);
      const refused = await post(A('mainnet', a.key), call(method, withAddress(other)));
      expect(
        [refused.status, refused.body.error?.code, refused.body.error?.data?.reason],
        `${method} with an unlisted address`,
      ).toEqual([403, -32041, 'address']);
    }
  });

  it('methods: only listed methods; refused calls do not count against the quota', async () => {
    const a = await app();
    await setAllowlist(svc.store.db, userId, a.id, 'method', ['eth_chainId', 'eth_blockNumber']);
    await svc.access.sync();
    const url = A('testnet', a.key);
    const first = await post(url, call('eth_chainId'));
    expect(first.status).toBe(200);
    const remaining = Number(first.headers.get('x-ratelimit-remaining'));
    const refused = await post(url, call('eth_getBalance', [svc.seeded.testnet.accounts[0], 'latest']));
    expect([refused.status, refused.body.error.code, refused.body.error.data]).toEqual([
      403,
      -32601,
      { source: 'rpcgate', reason: 'method', method: 'eth_getBalance' },
    ]);
    expect(refused.body.error.message).toMatch(/not allowed for this key/);
    // A method that does not exist stays JSON-RPC's plain -32601: HTTP 200, no data.
    const unknown = await post(url, call('eth_noSuchMethod'));
    expect([unknown.status, unknown.body.error.code, unknown.body.error.data]).toEqual([200, -32601, undefined]);
    expect(Number(refused.headers.get('x-ratelimit-remaining'))).toBe(remaining);
    const batch = await post(url, [call('eth_gasPrice', [], 1), call('eth_blockNumber', [], 2)]);
    expect(batch.body.map((x: Json) => (x.error ? x.error.data.reason : 'ok'))).toEqual(['method', 'ok']);
    // the batch counted its one admitted item
    expect(Number(batch.headers.get('x-ratelimit-remaining'))).toBe(remaining - 1);
  });
});

describe('JWT over HTTP', () => {
  it('required: missing, expired and wrong-kid tokens are 401; a valid token passes', async () => {
    const { publicKey, privateKey } = await generateKeyPair('ES256');
    const a = await app();
    const key = await addJwtKey(svc.store.db, userId, a.id, {
      alg: 'ES256',
      publicKeyPem: await exportSPKI(publicKey),
    });
    await updateApp(svc.store.db, svc.secret, userId, a.id, { requireJwt: true });
    await svc.access.sync();
    const exp = Math.floor(Date.now() / 1000) + 300;
    const token = (claims: object, kid = key!.id) =>
      new SignJWT({ ...claims }).setProtectedHeader({ alg: 'ES256', kid }).sign(privateKey);
    const url = A('mainnet', a.key);
    const table: [auth: string | undefined, status: number, detail?: string][] = [
      [undefined, 401, 'missing'],
      [`Bearer ${await token({ iat: exp - 300, exp })}`, 200],
      [`Bearer ${await token({ iat: exp - 7200, exp: exp - 3600 })}`, 401, 'expired'],
      [`Bearer ${await token({ iat: exp - 300, exp }, 'kid_unknown')}`, 401, 'unknown kid'],
      [`Bearer ${await token({ iat: exp - 300 })}`, 401, 'missing exp'],
      // The app's maximum lifetime (default 24 h) needs iat (issue 14 item 8; more in test/account-security.test.ts).
      [`Bearer ${await token({ exp })}`, 401, 'missing iat'],
    ];
    for (const [auth, status, detail] of table) {
      const r = await post(url, call('eth_chainId'), auth === undefined ? {} : { authorization: auth });
      expect(r.status, detail).toBe(status);
      if (detail)
        expect([
          r.body.error.code,
          r.body.error.data.source,
          r.body.error.data.reason,
          r.body.error.data.detail,
        ]).toEqual([-32016, 'rpcgate', 'jwt', detail]);
    }
  });
});

describe('limits', () => {
  it('B: every response carries the headers; a batch counts each item; over the quota 402 (no Retry-After) and nothing counted', async () => {
    const u = (await createUser(svc.store.db, { email: 'quota@example.com', passwordHash: 'x' })).id;
    const k = await createNetworkKey(svc.store.db, svc.secret, u, { name: 'q', network: 'mainnet' });
    await svc.access.sync();
    const url = B('mainnet', k.key);
    const batch = (n: number) => Array.from({ length: n }, (_, i) => call('eth_chainId', [], i));
    const r1 = await post(url, batch(50));
    expect(r1.status).toBe(200);
    expect([r1.headers.get('x-ratelimit-limit'), r1.headers.get('x-ratelimit-remaining')]).toEqual(['60', '10']);
    expect(Number(r1.headers.get('x-ratelimit-reset'))).toBeGreaterThan(Date.now() / 1000);
    // 11 > 10 left: the whole batch is refused, and nothing is counted.
    const r2 = await post(url, batch(11));
    // A batch refused whole answers each item with its id (issue 21).
    expect([
      r2.status,
      r2.body.length,
      r2.body[0].error.code,
      r2.body[0].error.data.limit,
      r2.body[0].error.data.period,
      r2.body[10].id,
    ]).toEqual([402, 11, -32005, 60, 'day', 10]);
    expect(r2.headers.get('retry-after')).toBeNull();
    // Invalid items (params, unknown method) are answered but not counted: 10 valid + 2 invalid fit in the 10 left.
    const r3 = await post(url, [
      ...batch(10),
      call('eth_getBalance', ['0xnope', 'latest'], 'bad'),
      call('eth_nope', [], 'unknown'),
    ]);
    expect(r3.status).toBe(200);
    expect(r3.body.length).toBe(12);
    expect(r3.headers.get('x-ratelimit-remaining')).toBe('0');
    const r4 = await post(url, call('eth_chainId', [], 'last'));
    expect([r4.status, r4.body.id, r4.body.error.code]).toEqual([402, 'last', -32005]);
    expect(r4.headers.get('retry-after')).toBeNull();
    expect(r4.headers.get('x-ratelimit-remaining')).toBe('0');
    // Errors before the engine carry the headers too (here: wrong network for this key).
    const r5 = await post(B('testnet', k.key), call('eth_chainId'));
    expect([r5.status, r5.headers.get('x-ratelimit-limit'), r5.headers.get('x-ratelimit-remaining')]).toEqual([
      403,
      '60',
      '0',
    ]);
    expect(r5.headers.get('access-control-expose-headers')).toMatch(/x-ratelimit-remaining/);
  });

  it("A: the account's daily quota in the headers, shared by its apps; a parse error still carries them", async () => {
    const u = (
      await createUser(svc.store.db, {
        email: `a-quota-${randomBytes(4).toString('hex')}@example.com`,
        passwordHash: 'x',
      })
    ).id;
    const a = await createApp(svc.store.db, svc.secret, u, appInput);
    const b = await createApp(svc.store.db, svc.secret, u, appInput);
    await svc.access.sync();
    const r = await post(A('mainnet', a.key), call('eth_chainId'));
    expect([r.headers.get('x-ratelimit-limit'), r.headers.get('x-ratelimit-remaining')]).toEqual(['100000', '99999']);
    const bad = await fetch(A('mainnet', a.key), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{nope',
    });
    expect(bad.status).toBe(400);
    expect(bad.headers.get('x-ratelimit-remaining')).toBe('99999');
    // The account's other app counts against the same quota.
    const other = await post(A('mainnet', b.key), call('eth_chainId'));
    expect([other.headers.get('x-ratelimit-limit'), other.headers.get('x-ratelimit-remaining')]).toEqual([
      '100000',
      '99998',
    ]);
  });
});

describe('revocation within 2 s, here and in a second process sharing the store', () => {
  let child: Awaited<ReturnType<typeof startChild>>;

  beforeAll(async () => {
    // The second process: same data dir (SQLite file and server secret), the first one's anvils as upstreams.
    child = await startChild({
      port: 0,
      logLevel: 'silent',
      dataDir,
      devKey: false,
      networks: {
        mainnet: { upstreams: svc.networks.mainnet.upstreams },
        testnet: { upstreams: svc.networks.testnet.upstreams },
      },
    });
  });

  afterAll(async () => {
    await child?.stop();
  });

  const cases: [
    name: string,
    make: () => Promise<{ urls: (base: string) => string[]; revoke: () => Promise<void> }>,
  ][] = [
    [
      'deleteApp',
      async () => {
        const a = await createApp(svc.store.db, svc.secret, userId, appInput);
        return {
          urls: (base) => [`${base}/mainnet/v2/${a.key}`, `${base}/testnet/v2/${a.key}`],
          revoke: async () => void (await deleteApp(svc.store.db, userId, a.id)),
        };
      },
    ],
    [
      'rotateAppKey',
      async () => {
        const a = await createApp(svc.store.db, svc.secret, userId, appInput);
        return {
          urls: (base) => [`${base}/mainnet/v2/${a.key}`],
          revoke: async () => void (await rotateAppKey(svc.store.db, svc.secret, userId, a.id)),
        };
      },
    ],
    [
      'deleteNetworkKey',
      async () => {
        const u = (
          await createUser(svc.store.db, {
            email: `rev-${randomBytes(4).toString('hex')}@example.com`,
            passwordHash: 'x',
          })
        ).id;
        const k = await createNetworkKey(svc.store.db, svc.secret, u, { name: 'r', network: 'mainnet' });
        return {
          urls: (base) => [`${base}/mainnet/${k.key}`],
          revoke: async () => void (await deleteNetworkKey(svc.store.db, u, k.id)),
        };
      },
    ],
  ];

  it.each(cases)('%s: refused by both instances within 2 s', async (_name, make) => {
    const { urls, revoke } = await make();
    const all = [...urls(svc.url), ...urls(child.url)];
    // A new key shows up within a poll interval too (no sync() here: the timers do it).
    for (const u of all) expect(await msUntil(statusIs(u, 200)), u).toBeLessThan(2000);
    await revoke();
    const took = await Promise.all(all.map((u) => msUntil(statusIs(u, 401))));
    for (const t of took) expect(t).toBeLessThan(2000);
  });
});

// ---- PostgreSQL + Redis -------------------------------------------------------------------------------------------

const skipPg = skipUnless((await pgReachable()) && (await redisReachable()), 'access-e2e', 'PostgreSQL or Redis');

describe.skipIf(skipPg)('on PostgreSQL + Redis: two instances share keys and counters', () => {
  const db = scratchDatabase();
  const prefix = scratchPrefix();
  let one: RunningService;
  let two: RunningService;

  beforeAll(async () => {
    await db.create();
    const common = {
      port: 0,
      logLevel: 'silent' as const,
      dataDir: mkdtempSync(join(tmpdir(), 'rpcgate-pg-')),
      devKey: false,
      databaseUrl: db.url,
      redisUrl: REDIS_URL,
      redisPrefix: prefix,
      secret: randomBytes(32).toString('hex'),
      limits: { b: { dailyPerUser: 100 } },
      networks: {
        mainnet: { upstreams: svc.networks.mainnet.upstreams },
        testnet: { upstreams: svc.networks.testnet.upstreams },
      },
    };
    one = await startService(common);
    two = await startService(common);
  });

  afterAll(async () => {
    await one?.stop();
    await two?.stop();
    await deleteRedisKeys(prefix);
    await db.drop();
  });

  it('a key created on one works on both, counters are shared, and revocation reaches both within 2 s', async () => {
    const u = (await createUser(one.store.db, { email: 'pg@example.com', passwordHash: 'x' })).id;
    const k = await createNetworkKey(one.store.db, one.secret, u, { name: 'pg', network: 'testnet' });
    const urls = [`${one.url}/testnet/${k.key}`, `${two.url}/testnet/${k.key}`];
    for (const url of urls) expect(await msUntil(statusIs(url, 200))).toBeLessThan(2000);
    const a = await post(urls[0], call('eth_chainId'));
    const b = await post(urls[1], call('eth_chainId'));
    expect(Number(b.headers.get('x-ratelimit-remaining'))).toBe(Number(a.headers.get('x-ratelimit-remaining')) - 1);
    await deleteNetworkKey(one.store.db, u, k.id);
    const took = await Promise.all(urls.map((url) => msUntil(statusIs(url, 401))));
    for (const t of took) expect(t).toBeLessThan(2000);
  });
});
