// The toolkit's route table (packages/toolkit/src/http/router.ts) on a real server: patterns, captures, trailing slash, host
// constraints, table order, and the 404/405 fallbacks.
import { request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Router, type RouteHandler } from '../packages/toolkit/src/http/router.js';
import { createHttpServer } from '../packages/toolkit/src/http/server.js';
import { mimeType } from '../packages/toolkit/src/http/static.js';

const echo =
  (name: string): RouteHandler =>
  (req, res, rid, _t0, capture) => {
    req.resume();
    res.writeHead(200, { 'content-type': 'application/json', 'x-request-id': rid });
    res.end(JSON.stringify({ name, capture: capture ?? null }));
  };

const router = new Router()
  .add('GET', '/healthz', echo('health'))
  .add('POST', '/eth/v2/:key?', echo('A'), { trailingSlash: true })
  .add('POST', '/eth/:key', echo('B'), { trailingSlash: true })
  .add(['GET', 'HEAD'], '/docs/*', echo('docs'))
  .add('POST', '/v2/:key?', echo('mapped A'), { host: 'Rpc.Example.com' })
  .add('*', '/api', echo('api'), { trailingSlash: true })
  .add('POST', '/boom', () => {
    throw new Error('handler bug');
  });
const errors: unknown[] = [];
const server = createHttpServer(router, (e) => errors.push(e));
let base = '';

beforeAll(async () => {
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

/** node:http rather than fetch: fetch does not let a caller set the Host header. */
function call(path: string, method = 'POST', headers: Record<string, string> = {}) {
  const u = new URL(base);
  return new Promise<{ status: number; allow: string | undefined; rid: string | undefined; body: any }>(
    (resolve, reject) => {
      const req = request({ host: u.hostname, port: u.port, method, path, headers }, (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('end', () => {
          const h = (n: string) => res.headers[n] as string | undefined;
          resolve({
            status: res.statusCode!,
            allow: h('allow'),
            rid: h('x-request-id'),
            body: text.startsWith('{') ? JSON.parse(text) : text,
          });
        });
      });
      req.on('error', reject);
      req.end();
    },
  );
}

describe('Router', () => {
  it('matches exact paths, optional and required captures, and one trailing slash', async () => {
    expect((await call('/healthz', 'GET')).body).toEqual({ name: 'health', capture: null });
    expect((await call('/eth/v2/abc')).body).toEqual({ name: 'A', capture: 'abc' });
    expect((await call('/eth/v2/abc/')).body).toEqual({ name: 'A', capture: 'abc' });
    expect((await call('/eth/v2')).body).toEqual({ name: 'A', capture: null });
    expect((await call('/eth/v2/')).body).toEqual({ name: 'A', capture: null });
    expect((await call('/eth/xyz?x=1')).body).toEqual({ name: 'B', capture: 'xyz' });
    expect((await call('/api/')).body).toEqual({ name: 'api', capture: null });
  });

  it('a required capture must be there, and a segment capture takes no slash', async () => {
    expect((await call('/eth/')).status).toBe(404);
    expect((await call('/eth/a/b')).status).toBe(404);
    expect((await call('/eth/v2/a/b')).status).toBe(404);
  });

  it('a rest capture takes everything below the prefix', async () => {
    expect((await call('/docs/a/b.html', 'GET')).body).toEqual({ name: 'docs', capture: 'a/b.html' });
    expect((await call('/docs/', 'GET')).body).toEqual({ name: 'docs', capture: '' });
    expect((await call('/docs', 'GET')).status).toBe(404);
  });

  it('host routes answer only on their host (case-insensitive, port ignored)', async () => {
    expect((await call('/v2/k', 'POST', { host: 'rpc.example.COM:8545' })).body).toEqual({
      name: 'mapped A',
      capture: 'k',
    });
    expect((await call('/v2/k', 'POST')).status).toBe(404);
  });

  it('405 lists the methods the path has; 404 when it has none; every answer has a request id', async () => {
    const r = await call('/healthz', 'DELETE');
    expect(r.status).toBe(405);
    expect(r.allow).toBe('GET');
    expect((await call('/docs/x', 'POST')).allow).toBe('GET, HEAD');
    const nf = await call('/nothing', 'GET');
    expect(nf.status).toBe(404);
    expect(nf.rid).toMatch(/^[0-9a-f]{8}-[0-9a-z]+$/);
    expect((await call('/healthz', 'GET', { 'x-request-id': 'mine-1' })).rid).toBe('mine-1');
  });

  it('a handler that throws is answered 500 with a JSON-RPC error and reported', async () => {
    const r = await call('/boom');
    expect(r.status).toBe(500);
    expect(r.body.error.code).toBe(-32603);
    expect(errors).toHaveLength(1);
  });
});

describe('mimeType', () => {
  it('one table for every static file', () => {
    expect(mimeType('a/index.HTML')).toBe('text/html; charset=utf-8');
    expect(mimeType('x.js.map')).toBe('application/json; charset=utf-8');
    expect(mimeType('font.woff2')).toBe('font/woff2');
    expect(mimeType('blob.bin')).toBe('application/octet-stream');
  });
});
