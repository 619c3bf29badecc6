// Issue 21 item 1: every refusal names the request's id. Refusals before the engine (wrong or deleted key, key on
// another network, wrong URL shape, origin, IP, JWT, 413, 415, an unknown network) used to answer `"id": null` — web3.js
// v4 then showed `Returned error: ` with an empty message. Now the transport reads a bounded prefix of the body even
// when refusing early (at most 64 KiB, within 500 ms: packages/toolkit/src/http/body.ts peekBody) and answers with the id; a
// batch gets one error per item with an id (notifications none). The drain bounds of issue 14 hold: a large declared
// body is answered at once (id null) and its connection closed; a body that trickles in is not waited for.
import { mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { exportSPKI, generateKeyPair, SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startService, type RunningService } from '../src/gateway/server/index.js';
import {
  addJwtKey,
  createApp,
  createNetworkKey,
  createUser,
  deleteNetworkKey,
  setAllowlist,
  updateApp,
} from '../src/gateway/store/index.js';
import { startStubNode, type StubNode } from './helpers/stub-node.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

let dataDir: string;
let svc: RunningService;
let node: StubNode;
const url: Record<string, string> = {};
const jwtHeaders: Record<string, string> = {};

beforeAll(async () => {
  node = await startStubNode();
  dataDir = mkdtempSync(join(tmpdir(), 'rpcgate-refusal-ids-'));
  svc = await startService({
    port: 0,
    logLevel: 'silent',
    dataDir,
    devKey: false,
    maxBodyBytes: 1000,
    limits: { a: { perSecond: null, daily: null, monthly: null }, b: { dailyPerUser: 2 } },
    networks: { mainnet: { upstreams: [node.url] }, testnet: { upstreams: [node.url] } },
  });
  const db = svc.store.db;
  const userId = (await createUser(db, { email: 'ids@example.com', passwordHash: 'x' })).id;
  const app = () =>
    createApp(db, svc.secret, userId, { name: 'ids', useCase: 'Defi', chain: 'ethereum', services: ['node-api'] });
  const plain = await app();
  const origin = await app();
  await setAllowlist(db, userId, origin.id, 'origin', ['https://dapp.example.com']);
  const ip = await app();
  await setAllowlist(db, userId, ip.id, 'ip', ['10.0.0.0/8']);
  const jwt = await app();
  const { publicKey, privateKey } = await generateKeyPair('ES256');
  const k = await addJwtKey(db, userId, jwt.id, { alg: 'ES256', publicKeyPem: await exportSPKI(publicKey) });
  await updateApp(db, svc.secret, userId, jwt.id, { requireJwt: true });
  const now = Math.floor(Date.now() / 1000);
  jwtHeaders.authorization = `Bearer ${await new SignJWT({ iat: now - 7200, exp: now - 3600 }).setProtectedHeader({ alg: 'ES256', kid: k!.id }).sign(privateKey)}`;
  const testnet = await createNetworkKey(db, svc.secret, userId, { name: 't', network: 'testnet' });
  const gone = await createNetworkKey(db, svc.secret, userId, { name: 'g', network: 'mainnet' });
  await deleteNetworkKey(db, userId, gone.id);
  await svc.access.sync();
  Object.assign(url, {
    'wrong key': `${svc.url}/mainnet/v2/nosuchkey1234567890`,
    'deleted key': `${svc.url}/mainnet/${gone.key}`,
    'key on another network': `${svc.url}/mainnet/${testnet.key}`,
    'wrong URL shape': `${svc.url}/mainnet/${plain.key}`,
    'origin not allowed': `${svc.url}/mainnet/v2/${origin.key}`,
    'IP not allowed': `${svc.url}/mainnet/v2/${ip.key}`,
    'JWT missing': `${svc.url}/mainnet/v2/${jwt.key}`,
    'JWT expired (refused after the body was read)': `${svc.url}/mainnet/v2/${jwt.key}`,
    'unknown network (route-level 404)': `${svc.url}/nowhere/v2/${plain.key}`,
    plain: `${svc.url}/mainnet/v2/${plain.key}`,
  });
}, 60_000);

afterAll(async () => {
  await svc?.stop();
  await node?.close();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

async function post(to: string, body: string, headers: Record<string, string> = {}) {
  const res = await fetch(to, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });
  const text = await res.text();
  return { status: res.status, body: JSON.parse(text) as Json, connection: res.headers.get('connection') };
}

const call = (id: unknown, pad = '') =>
  JSON.stringify({ jsonrpc: '2.0', id, method: 'eth_chainId', params: [], ...(pad ? { pad } : {}) });

describe('refusals before the engine echo the request id', () => {
  const kinds: [name: string, status: number, code: number, headers?: () => Record<string, string>][] = [
    ['wrong key', 401, -32016],
    ['deleted key', 401, -32016],
    ['key on another network', 403, -32041],
    ['wrong URL shape', 403, -32041],
    ['origin not allowed', 403, -32041],
    ['IP not allowed', 403, -32041],
    ['JWT missing', 401, -32016],
    ['JWT expired (refused after the body was read)', 401, -32016, () => jwtHeaders],
    ['unknown network (route-level 404)', 404, -32600],
  ];
  for (const [name, status, code, headers] of kinds) {
    it(`${name}: a numeric and a string id, a batch per item`, async () => {
      for (const id of [42, 'req-7']) {
        const r = await post(url[name], call(id), headers?.());
        expect([r.status, r.body.id, r.body.error.code], JSON.stringify(r.body)).toEqual([status, id, code]);
      }
      const batch = `[${call(1)},{"jsonrpc":"2.0","method":"eth_chainId"},${call('two')},7]`;
      const b = await post(url[name], batch, headers?.());
      expect(b.status).toBe(status);
      // The notification gets no answer; an item that is no request object gets id null.
      expect(b.body.map((x: Json) => [x.id, x.error.code])).toEqual([
        [1, code],
        ['two', code],
        [null, code],
      ]);
    });
  }

  it('415 (wrong Content-Type) and 413 (body over maxBodyBytes, small enough to peek) name the id too', async () => {
    const u = await post(url.plain, call(5), { 'content-type': 'application/xml' });
    expect([u.status, u.body.id, u.body.error.code]).toEqual([415, 5, -32600]);
    const big = await post(url.plain, call('big', 'x'.repeat(5000)));
    expect([big.status, big.body.id, big.body.error.code, big.connection]).toEqual([413, 'big', -32600, 'close']);
  });

  it('a whole batch refused by the limiter (3 calls, 2 left of the daily quota): 402, one error per item with its id', async () => {
    const u = (await createUser(svc.store.db, { email: 'q@example.com', passwordHash: 'x' })).id;
    const k = await createNetworkKey(svc.store.db, svc.secret, u, { name: 'q', network: 'mainnet' });
    await svc.access.sync();
    const r = await post(
      `${svc.url}/mainnet/${k.key}`,
      `[${call(1)},${call('b')},{"jsonrpc":"2.0","method":"eth_chainId"}]`,
    );
    expect(r.status).toBe(402);
    expect(r.body.map((x: Json) => [x.id, x.error.code, x.error.data.reason])).toEqual([
      [1, -32005, 'quota'],
      ['b', -32005, 'quota'],
    ]);
  });

  it('a notification alone, a body that is not JSON, or no body: id null', async () => {
    for (const body of ['{"jsonrpc":"2.0","method":"eth_chainId"}', '{nope', '', '[{"jsonrpc":"2.0","method":"x"}]']) {
      const r = await post(url['wrong key'], body);
      expect([r.status, r.body.id], body).toEqual([401, null]);
    }
  });
});

/** A raw request: the head with `Content-Length: declared`, then `first`, then nothing more until the server answers. */
function raw(
  path: string,
  declared: number,
  first: string,
): Promise<{ response: string; closed: boolean; ms: number }> {
  const u = new URL(svc.url);
  return new Promise((resolve) => {
    const t0 = performance.now();
    const s = connect(Number(u.port), u.hostname);
    let response = '';
    const done = (closed: boolean) => {
      clearTimeout(timer);
      s.destroy();
      resolve({ response, closed, ms: performance.now() - t0 });
    };
    const timer = setTimeout(() => done(false), 5000);
    s.setEncoding('latin1');
    s.on('data', (d: string) => (response += d));
    s.on('error', () => {});
    s.on('end', () => done(true));
    s.on('connect', () =>
      s.write(
        `POST ${path} HTTP/1.1\r\nHost: ${u.host}\r\nContent-Type: application/json\r\nContent-Length: ${declared}\r\n\r\n${first}`,
      ),
    );
  });
}

describe('the drain bounds of issue 14 hold', () => {
  it('a 300 MB declared body to a bad key: answered at once with id null, `Connection: close`, the connection closed', async () => {
    const r = await raw('/mainnet/v2/nosuchkey1234567890', 300 * 1024 * 1024, call(9));
    expect(r.closed).toBe(true);
    expect(r.response).toMatch(/^HTTP\/1\.1 401/);
    expect(r.response.toLowerCase()).toContain('connection: close');
    expect(r.response).toContain('"id":null');
  });

  it('a small body that never arrives: answered after the peek deadline (id null), not held, connection closed', async () => {
    const r = await raw('/mainnet/v2/nosuchkey1234567890', 500, '{"jsonrpc":"2.0","id":3,');
    expect(r.closed).toBe(true);
    expect(r.response).toMatch(/^HTTP\/1\.1 401/);
    expect(r.response).toContain('"id":null');
    expect(r.ms).toBeLessThan(3000);
  });
});
