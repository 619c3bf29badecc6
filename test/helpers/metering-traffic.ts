// Known node API traffic for the metering tests (test/metering-e2e.test.ts, test/prometheus.test.ts), sent over HTTP
// to a running rpcgate whose `mainnet` is a stub node (test/helpers/stub-node.ts) and whose `testnet` upstream is
// dead, with limits { b: { dailyPerUser: 10 } }. Returns the principals it made and the exact outcomes expected.
import { randomUUID } from 'node:crypto';
import { exportSPKI, generateKeyPair, SignJWT } from 'jose';
import type { RunningService } from '../../src/gateway/server/index.js';
import {
  addJwtKey,
  createApp,
  createNetworkKey,
  createUser,
  setAllowlist,
  updateApp,
} from '../../src/gateway/store/index.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Json = any;
export interface Reply {
  status: number;
  headers: Headers;
  body: Json;
  text: string;
}

export const call = (method: string, params: unknown[] = [], id: number | string = 1) => ({
  jsonrpc: '2.0',
  id,
  method,
  params,
});
export const ADDR = `0x${'11'.repeat(20)}`;

export async function post(url: string, body: unknown, headers: Record<string, string> = {}): Promise<Reply> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await res.text();
  let parsed: Json;
  try {
    parsed = text === '' ? undefined : JSON.parse(text);
  } catch {
    parsed = text;
  }
  return { status: res.status, headers: res.headers, body: parsed, text };
}

export const LIMITS = { a: { perSecond: null, daily: 1000, monthly: null }, b: { dailyPerUser: 10 } };

/** Expected store usage of one principal: outcome → count, code → count, method → count. */
export interface ExpectedUsage {
  total: number;
  byOutcome: Record<string, number>;
  errorsByCode: Record<string, number>;
  methods: Record<string, number>;
  byNetwork: Record<string, number>;
}

export interface Traffic {
  userId: string;
  keyId: string;
  appId: string;
  jwtAppId: string;
  /** Raw secrets used (keys, JWTs): must never appear in logs or metrics. */
  secrets: string[];
  expected: { key: ExpectedUsage; app: ExpectedUsage; jwtApp: ExpectedUsage };
  /** rpcgate_requests_total: "network|method|outcome" → count, every call (attributed or not). */
  prometheus: Record<string, number>;
  /** Calls answered with a result (HTTP 200 items with `result`), as the clients saw them. */
  served: number;
}

const outcomes = (o: Partial<Record<string, number>>) => ({
  ok: 0,
  node_error: 0,
  auth: 0,
  allowlist: 0,
  limit: 0,
  validation: 0,
  upstream_error: 0,
  backend_unavailable: 0,
  ...o,
});

/** `userId`: an existing user (e.g. one signed up through the account API); default a new one made in the store. */
export async function runTraffic(
  svc: RunningService,
  expect: (cond: boolean, what: string) => void,
  userId?: string,
): Promise<Traffic> {
  const db = svc.store.db;
  userId ??= (await createUser(db, { email: `${randomUUID()}@example.com`, passwordHash: 'x' })).id;
  const key = await createNetworkKey(db, svc.secret, userId, { name: 'k', network: 'mainnet' });
  const app = await createApp(db, svc.secret, userId, {
    name: 'app',
    useCase: 'Defi',
    chain: 'ethereum',
    services: ['node-api'],
  });
  await setAllowlist(db, userId, app.id, 'method', ['eth_blockNumber', 'eth_chainId', 'eth_getBalance']);
  const jwtApp = await createApp(db, svc.secret, userId, {
    name: 'jwt app',
    useCase: 'Defi',
    chain: 'ethereum',
    services: ['node-api'],
  });
  const { publicKey, privateKey } = await generateKeyPair('ES256');
  const jwk = await addJwtKey(db, userId, jwtApp.id, { alg: 'ES256', publicKeyPem: await exportSPKI(publicKey) });
  await updateApp(db, svc.secret, userId, jwtApp.id, { requireJwt: true });
  await svc.access.sync();
  const jwt = await new SignJWT({})
    .setProtectedHeader({ alg: 'ES256', kid: jwk!.id })
    .setIssuedAt()
    .setExpirationTime('5m')
    .sign(privateKey);

  let served = 0;
  const count = (r: Reply) => {
    if (r.status !== 200) return r;
    for (const x of Array.isArray(r.body) ? r.body : [r.body])
      if (x && typeof x === 'object' && 'result' in x) served++;
    return r;
  };
  const is = (r: Reply, status: number, what: string) =>
    expect(r.status === status, `${what}: HTTP ${r.status} ${r.text}`);

  const KB = `${svc.url}/mainnet/${key.key}`;
  const A1m = `${svc.url}/mainnet/v2/${app.key}`;
  const A1t = `${svc.url}/testnet/v2/${app.key}`;
  const A2 = `${svc.url}/mainnet/v2/${jwtApp.key}`;

  // ---- B: the network key (daily quota 10 per user)
  for (let i = 0; i < 3; i++) is(count(await post(KB, call('eth_blockNumber'))), 200, 'b1');
  let r = count(
    await post(KB, [
      call('eth_blockNumber', [], 1),
      call('eth_chainId', [], 2),
      call('eth_getBalance', ['0x12', 'latest'], 3),
      call('eth_call', [{ to: ADDR, data: '0x' }, 'latest'], 4),
      { jsonrpc: '2.0', method: 'eth_blockNumber', params: [] },
    ]),
  );
  is(r, 200, 'b2');
  expect(
    JSON.stringify(r.body.map((x: Json) => x.error?.code ?? x.result)) ===
      JSON.stringify(['0x10', '0x1', -32602, -32000]),
    `b2 items ${r.text}`,
  );
  is(await post(KB, 'not json'), 400, 'b3 parse error');
  is(await post(KB, call('eth_foo')), 200, 'b4 unknown method');
  is(
    count(
      await post(KB, [call('eth_blockNumber', [], 1), call('eth_blockNumber', [], 2), call('eth_blockNumber', [], 3)]),
    ),
    200,
    'b5',
  );
  is(await post(KB, call('eth_blockNumber')), 402, 'b6 quota');
  is(await post(KB, [call('eth_blockNumber', [], 1), call('eth_chainId', [], 2)]), 402, 'b7 quota batch');
  is(await post(`${svc.url}/mainnet/v2/${key.key}`, call('eth_blockNumber')), 403, 'b8 wrong access point');
  is(await post(KB, call('eth_blockNumber'), { 'content-type': 'text/html' }), 415, 'b9 content type');

  // ---- A: the app (method allowlist), on mainnet and on testnet (dead upstream)
  for (let i = 0; i < 2; i++) is(count(await post(A1m, call('eth_blockNumber'))), 200, 'a1');
  is(await post(A1m, call('eth_call', [{ to: ADDR, data: '0x' }, 'latest'])), 403, 'a2 allowlist');
  r = count(
    await post(A1m, [
      call('eth_chainId', [], 1),
      call('eth_call', [{ to: ADDR, data: '0x' }, 'latest'], 2),
      call('eth_getBalance', [ADDR, 'latest'], 3),
    ]),
  );
  expect(
    JSON.stringify(r.body.map((x: Json) => x.error?.code ?? x.result)) === JSON.stringify(['0x1', -32601, '0x0']),
    `a3 items ${r.text}`,
  );
  for (let i = 0; i < 2; i++) {
    const t = await post(A1t, call('eth_blockNumber'));
    expect(
      (t.status === 502 || t.status === 503) &&
        t.body.error.code === -32042 &&
        t.body.error.data.source === 'rpcgate' &&
        t.body.error.data.reason === 'upstream',
      `a4 dead upstream: ${t.status} ${t.text}`,
    );
  }
  is(await post(A1m, call('eth_getBalance', ['0xzz', 'latest'])), 200, 'a5 invalid params');

  // ---- A2: JWT required
  is(await post(A2, call('eth_chainId')), 401, 'j1 no JWT');
  is(count(await post(A2, call('eth_chainId'), { authorization: `Bearer ${jwt}` })), 200, 'j2 JWT');

  // ---- nobody to attribute to (Prometheus only)
  is(await post(`${svc.url}/mainnet/${'x1'.repeat(16)}`, call('eth_blockNumber')), 401, 'u1 bad key');
  is(await post(`${svc.url}/mainnet/v2/`, call('eth_blockNumber')), 401, 'u2 no key');
  is(await post(`${svc.url}/nonet/${'x1'.repeat(16)}`, call('eth_blockNumber')), 404, 'u3 unknown network');

  const prometheus: Record<string, number> = {
    'mainnet|eth_blockNumber|ok': 8 + 2,
    'mainnet|eth_chainId|ok': 1 + 1 + 1,
    'mainnet|eth_getBalance|validation': 1 + 1,
    'mainnet|eth_getBalance|ok': 1,
    'mainnet|eth_call|node_error': 1,
    'mainnet|eth_call|allowlist': 2,
    'mainnet|other|validation': 3,
    'mainnet|eth_blockNumber|limit': 2,
    'mainnet|eth_chainId|limit': 1,
    'mainnet|other|allowlist': 1,
    'mainnet|other|auth': 3,
    'testnet|eth_blockNumber|upstream_error': 2,
    'other|other|validation': 1,
  };
  return {
    userId,
    keyId: key.id,
    appId: app.id,
    jwtAppId: jwtApp.id,
    secrets: [key.key, app.key, jwtApp.key, jwt],
    served,
    prometheus,
    expected: {
      key: {
        total: 18,
        byOutcome: outcomes({ ok: 9, node_error: 1, validation: 4, limit: 3, allowlist: 1 }),
        errorsByCode: { '-32005': 3, '-32000': 1, '-32041': 1, '-32600': 1, '-32601': 1, '-32602': 1, '-32700': 1 },
        methods: { eth_blockNumber: 10, eth_chainId: 2, eth_getBalance: 1, eth_call: 1, other: 4 },
        byNetwork: { mainnet: 18 },
      },
      app: {
        total: 9,
        byOutcome: outcomes({ ok: 4, allowlist: 2, upstream_error: 2, validation: 1 }),
        errorsByCode: { '-32601': 2, '-32042': 2, '-32602': 1 },
        methods: { eth_blockNumber: 4, eth_call: 2, eth_chainId: 1, eth_getBalance: 2 },
        byNetwork: { mainnet: 7, testnet: 2 },
      },
      jwtApp: {
        total: 2,
        byOutcome: outcomes({ ok: 1, auth: 1 }),
        errorsByCode: { '-32016': 1 },
        methods: { eth_chainId: 1, other: 1 },
        byNetwork: { mainnet: 2 },
      },
    },
  };
}
