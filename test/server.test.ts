// The service end to end on its embedded anvils: URL shapes, networks, keys, body limits, content types, CORS,
// rpc.discover, docs, hostMap, health, an unreachable upstream, and the CLI's Ctrl-C taking its anvils down.
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createServer } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startService, type RunningService } from '../src/gateway/server/index.js';
import { ConfigError, defaults, loadConfig } from '../src/gateway/config/config.js';

const root = resolve(import.meta.dirname, '..');
const dataDir = resolve(root, 'test-output/server');

let svc: RunningService;
let docsDir: string;
let deadUrl: string;

interface Raw {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  json: () => any; // eslint-disable-line @typescript-eslint/no-explicit-any
}

/** A request with full control over path, Host header and body chunks (fetch normalises paths and hosts). */
function raw(opts: {
  method?: string;
  path: string;
  headers?: Record<string, string>;
  body?: string | Buffer[];
}): Promise<Raw> {
  const u = new URL(svc.url);
  return new Promise((resolveRes, reject) => {
    const req = request(
      { host: u.hostname, port: u.port, method: opts.method ?? 'POST', path: opts.path, headers: opts.headers },
      (res) => {
        let text = '';
        res.setEncoding('utf8').on('data', (d: string) => (text += d));
        res.on('end', () =>
          resolveRes({ status: res.statusCode!, headers: res.headers, text, json: () => JSON.parse(text) }),
        );
      },
    );
    req.on('error', reject);
    if (Array.isArray(opts.body)) {
      for (const c of opts.body) req.write(c);
      req.end();
    } else req.end(opts.body);
  });
}

const call = (method: string, params: unknown[] = [], id: unknown = 1) =>
  JSON.stringify({ jsonrpc: '2.0', id, method, params });

async function post(
  url: string,
  body: string,
  headers: Record<string, string> = { 'content-type': 'application/json' },
) {
  const res = await fetch(url, { method: 'POST', headers, body });
  return { status: res.status, headers: res.headers, body: (await res.json()) as any }; // eslint-disable-line @typescript-eslint/no-explicit-any
}

beforeAll(async () => {
  mkdirSync(dataDir, { recursive: true });
  docsDir = mkdtempSync(join(tmpdir(), 'rpcgate-docs-'));
  mkdirSync(join(docsDir, 'api'));
  writeFileSync(join(docsDir, 'index.html'), '<h1>rpcgate docs</h1>');
  writeFileSync(join(docsDir, 'api', 'eth_chainId.html'), '<h1>eth_chainId</h1>');
  const probe = createServer();
  await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r));
  deadUrl = `http://127.0.0.1:${(probe.address() as { port: number }).port}/`;
  await new Promise<void>((r) => probe.close(() => r()));
  svc = await startService({
    port: 0,
    logLevel: 'silent',
    devKey: true,
    dataDir,
    docsDir,
    maxBodyBytes: 64 * 1024,
    hostMap: { 'rpc-main.example': 'mainnet', 'rpc-test.example': 'testnet' },
    networks: { mainnet: {}, testnet: {}, broken: { upstreams: [deadUrl] } },
  });
});

afterAll(async () => {
  await svc?.stop();
});

describe('routing and networks', () => {
  it('both URL shapes answer on both networks, each with its own chain id', async () => {
    for (const [network, chainId] of [
      ['mainnet', '0x7a69'],
      ['testnet', '0x7a6a'],
    ] as const) {
      for (const url of [svc.urls[network].A, svc.urls[network].B]) {
        const r = await post(url, call('eth_chainId'));
        expect(r.status).toBe(200);
        expect(r.body).toEqual({ jsonrpc: '2.0', id: 1, result: chainId });
      }
    }
    expect(svc.urls.mainnet.A).toBe(`${svc.url}/mainnet/v2/${svc.key}`);
    expect(svc.urls.mainnet.B).toBe(`${svc.url}/mainnet/${svc.key}`);
  });

  it('forwards reads of the seeded chain (receipt with Transfer logs) and batches', async () => {
    const s = svc.seeded.mainnet;
    const r = await post(
      svc.urls.mainnet.A,
      JSON.stringify([
        { jsonrpc: '2.0', id: 'a', method: 'eth_getTransactionReceipt', params: [s.txHash] },
        { jsonrpc: '2.0', id: 'b', method: 'eth_getBalance', params: [s.accounts[4], 'latest'] },
        {
          jsonrpc: '2.0',
          id: 'c',
          method: 'eth_getLogs',
          params: [{ address: s.token.address, fromBlock: s.fromBlock, toBlock: s.toBlock }],
        },
      ]),
    );
    expect(r.status).toBe(200);
    expect(r.body.map((x: { id: string }) => x.id)).toEqual(['a', 'b', 'c']);
    expect(r.body[0].result.logs.length).toBeGreaterThan(0);
    expect(BigInt(r.body[1].result)).toBe(10001n * 10n ** 18n);
    expect(r.body[2].result.length).toBeGreaterThanOrEqual(5);
  });

  it('host names mapped to networks drop the network segment', async () => {
    const a = await raw({
      path: `/v2/${svc.key}`,
      headers: { host: 'rpc-main.example:8080', 'content-type': 'application/json' },
      body: call('eth_chainId'),
    });
    expect(a.json().result).toBe('0x7a69');
    const b = await raw({
      path: `/${svc.key}`,
      headers: { host: 'RPC-TEST.example', 'content-type': 'application/json' },
      body: call('eth_chainId'),
    });
    expect(b.json().result).toBe('0x7a6a');
  });

  it('unknown network → 404', async () => {
    const r = await post(`${svc.url}/nosuchnet/v2/${svc.key}`, call('eth_chainId'));
    expect(r.status).toBe(404);
    expect(r.body.error.code).toBe(-32600);
  });

  it('rpc.discover answers with the contract', async () => {
    const r = await post(svc.urls.testnet.B, call('rpc.discover'));
    expect(r.status).toBe(200);
    expect(r.body.result.openrpc).toMatch(/^1\./);
    expect(r.body.result.methods.some((m: { name: string }) => m.name === 'eth_getLogs')).toBe(true);
  });

  it('every response carries an x-request-id; a sane incoming one is echoed', async () => {
    const r = await post(svc.urls.mainnet.A, call('eth_blockNumber'));
    expect(r.headers.get('x-request-id')).toMatch(/\S+/);
    const r2 = await post(svc.urls.mainnet.A, call('eth_blockNumber'), {
      'content-type': 'application/json',
      'x-request-id': 'trace-42',
    });
    expect(r2.headers.get('x-request-id')).toBe('trace-42');
  });
});

describe('keys', () => {
  it('wrong key → 401 -32016, naming the request id (issue 21)', async () => {
    for (const url of [`${svc.url}/mainnet/v2/wrongkey123456`, `${svc.url}/testnet/wrongkey123456`]) {
      const r = await post(url, call('eth_chainId'));
      expect(r.status).toBe(401);
      expect(r.body.error.code).toBe(-32016);
      expect(r.body.id).toBe(1);
    }
  });

  it('missing key → 401 -32016', async () => {
    for (const path of ['/mainnet/v2', '/mainnet/v2/', '/mainnet', '/testnet/']) {
      const r = await raw({ path, headers: { 'content-type': 'application/json' }, body: call('eth_chainId') });
      expect(r.status, path).toBe(401);
      expect(r.json().error.code).toBe(-32016);
    }
  });
});

describe('body and content type', () => {
  it('Content-Length over the limit → 413 -32600 before reading', async () => {
    const big = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_chainId', params: ['x'.repeat(70 * 1024)] });
    const r = await raw({
      path: `/mainnet/v2/${svc.key}`,
      headers: { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(big)) },
      body: big,
    });
    expect(r.status).toBe(413);
    expect(r.json().error.code).toBe(-32600);
  });

  it('a chunked body crossing the limit → 413 -32600', async () => {
    const chunk = Buffer.alloc(16 * 1024, 0x20);
    const r = await raw({
      path: `/mainnet/${svc.key}`,
      headers: { 'content-type': 'application/json', 'transfer-encoding': 'chunked' },
      body: Array(8).fill(chunk),
    });
    expect(r.status).toBe(413);
    expect(r.json().error.code).toBe(-32600);
  });

  it('accepts application/json with charset and a missing content type; refuses clearly wrong types with 415', async () => {
    expect(
      (await post(svc.urls.mainnet.A, call('eth_chainId'), { 'content-type': 'application/json; charset=utf-8' }))
        .status,
    ).toBe(200);
    const none = await raw({ path: `/mainnet/v2/${svc.key}`, body: call('eth_chainId') });
    expect(none.status).toBe(200);
    const wrong = await post(svc.urls.mainnet.A, call('eth_chainId'), {
      'content-type': 'application/x-www-form-urlencoded',
    });
    expect(wrong.status).toBe(415);
    expect(wrong.body.error.code).toBe(-32600);
  });

  it('invalid JSON → 400 -32700 (engine envelope)', async () => {
    const r = await post(svc.urls.mainnet.A, '{"jsonrpc":');
    expect(r.status).toBe(400);
    expect(r.body.error.code).toBe(-32700);
  });
});

describe('CORS', () => {
  it('answers the preflight and allows any origin on node API responses', async () => {
    const pre = await raw({
      method: 'OPTIONS',
      path: `/mainnet/v2/${svc.key}`,
      headers: {
        origin: 'https://dapp.example',
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'content-type',
      },
    });
    expect(pre.status).toBe(204);
    expect(pre.headers['access-control-allow-origin']).toBe('*');
    expect(String(pre.headers['access-control-allow-methods'])).toContain('POST');
    expect(String(pre.headers['access-control-allow-headers'])).toContain('content-type');
    const r = await post(svc.urls.mainnet.A, call('eth_chainId'), {
      'content-type': 'application/json',
      origin: 'https://dapp.example',
    });
    expect(r.headers.get('access-control-allow-origin')).toBe('*');
  });
});

describe('upstream failures through the server', () => {
  it('an unreachable upstream → 502/503 -32042 naming the network', async () => {
    const r = await post(`${svc.url}/broken/v2/${svc.key}`, call('eth_blockNumber'));
    expect([502, 503]).toContain(r.status);
    expect(r.body.error.code).toBe(-32042);
    expect(r.body.error.data).toMatchObject({ source: 'rpcgate', reason: 'upstream', network: 'broken' });
  });

  it('/healthz is liveness: 200 while the process serves, even with a network down (a liveness probe must not restart a healthy replica)', async () => {
    const r = await fetch(`${svc.url}/healthz`);
    expect(r.status).toBe(200);
    expect(await r.json()).toEqual({ status: 'ok' });
  });

  it('/readyz is readiness: per network and per upstream (URL without credentials), the store; ready while a network can be served', async () => {
    const r = await fetch(`${svc.url}/readyz`);
    type Up = { url: string; healthy: boolean; circuit: string };
    const body = (await r.json()) as {
      status: string;
      store: { ok: boolean };
      networks: Record<string, { healthy: number; embedded: boolean; upstreams: Up[] }>;
    };
    expect(body.networks.mainnet).toMatchObject({ healthy: 1, embedded: true });
    expect(body.networks.mainnet.upstreams).toEqual([expect.objectContaining({ healthy: true, circuit: 'closed' })]);
    expect(body.networks.broken).toMatchObject({ healthy: 0, embedded: false });
    expect(body.networks.broken.upstreams[0]).toMatchObject({ url: new URL(deadUrl).origin, healthy: false });
    expect(body.store.ok).toBe(true);
    expect(r.status).toBe(200);
    expect(body.status).toBe('ready');
  });
});

describe('pages', () => {
  it('GET / gives a landing text', async () => {
    const r = await fetch(`${svc.url}/`);
    expect(r.status).toBe(200);
    expect(await r.text()).toContain('/mainnet/v2/<API_KEY>');
  });

  it('serves the docs folder, with no way out of it', async () => {
    const index = await fetch(`${svc.url}/docs/`);
    expect(index.status).toBe(200);
    expect(index.headers.get('content-type')).toContain('text/html');
    expect(await index.text()).toContain('rpcgate docs');
    expect(await (await fetch(`${svc.url}/docs/api/eth_chainId.html`)).text()).toContain('eth_chainId');
    for (const path of [
      '/docs/../package.json',
      '/docs/..%2fpackage.json',
      '/docs/%2e%2e/%2e%2e/etc/passwd',
      '/docs/api/..%2f..%2fpackage.json',
      '/docs/%00',
    ]) {
      const r = await raw({ method: 'GET', path });
      expect([400, 404], path).toContain(r.status);
      expect(r.text).not.toContain('"name"');
    }
  });

  it('GET on an RPC URL → 405', async () => {
    const r = await fetch(svc.urls.mainnet.A);
    expect(r.status).toBe(405);
  });
});

describe('rpcgate start (CLI)', () => {
  it('prints the key and four URLs; SIGINT stops the server and its anvils, exit 0', async () => {
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', 'src/cli/main.ts', 'start', '--port', '0', '--dev-key', '--data-dir', dataDir],
      {
        cwd: root,
        stdio: ['ignore', 'pipe', 'pipe'],
        // The CLI reads DATABASE_URL/REDIS_URL (CI exports them): this run is about the embedded defaults.
        env: { ...process.env, RPCGATE_LOG_LEVEL: 'silent', DATABASE_URL: '', REDIS_URL: '' },
      },
    );
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
    let err = '';
    child.stderr.setEncoding('utf8').on('data', (d: string) => (err += d));
    const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
    await new Promise<void>((r, reject) => {
      const t = setInterval(() => {
        if (out.includes('Ctrl-C')) {
          clearInterval(t);
          r();
        }
        if (child.exitCode !== null) {
          clearInterval(t);
          reject(new Error(`start exited early: ${err}`));
        }
      }, 50);
    });
    const pids = [...out.matchAll(/pid (\d+)/g)].map((m) => Number(m[1]));
    expect(pids.length).toBe(2);
    const urls = [...out.matchAll(/ (http:\/\/127\.0\.0\.1:\d+\/(mainnet|testnet)\/\S+)/g)].map((m) => m[1]);
    expect(urls.length).toBe(4);
    const key = /development key \(generated at start\): ([0-9a-f]{32})/.exec(out)?.[1];
    expect(key).toBeDefined();
    expect(out).toMatch(/docs: http:\/\/127\.0\.0\.1:\d+\/docs\//);
    const r = await post(urls[0], call('eth_chainId'));
    expect(r.body.result).toBe('0x7a69');
    for (const pid of pids) expect(() => process.kill(pid, 0)).not.toThrow();

    child.kill('SIGINT');
    expect(await exited).toBe(0);
    for (const pid of pids) expect(() => process.kill(pid, 0), `anvil ${pid} still running`).toThrow();
  });
});

describe('config', () => {
  it('embedded defaults: 127.0.0.1:8080, mainnet 31337 and testnet 31338 on embedded anvil', () => {
    const c = loadConfig({ env: {} });
    expect([c.host, c.port, c.maxBodyBytes, c.maxBatchSize, c.upstream.coalesce]).toEqual([
      '127.0.0.1',
      8080,
      1048576,
      100,
      true,
    ]);
    expect(c.networks.mainnet).toEqual({ upstreams: [], chainId: 31337, blockTime: 2 });
    expect(c.networks.testnet.chainId).toBe(31338);
  });

  it('layers: file ← env ← flags', () => {
    const dir = mkdtempSync(join(tmpdir(), 'rpcgate-cfg-'));
    const file = join(dir, 'c.json');
    writeFileSync(
      file,
      JSON.stringify({
        port: 9000,
        host: '0.0.0.0',
        networks: { testnet: { upstreams: ['http://node.example:8545'] } },
        upstream: { requestTimeoutMs: 5000 },
      }),
    );
    const c = loadConfig({
      configFile: file,
      env: {
        RPCGATE_PORT: '9100',
        RPCGATE_MAINNET_UPSTREAMS: 'http://a.example, http://b.example',
        RPCGATE_HOST_MAP: 'Main.Example=mainnet',
      },
      overrides: { port: 9200 },
    });
    expect(c.port).toBe(9200);
    expect(c.host).toBe('0.0.0.0');
    expect(c.networks.mainnet.upstreams).toEqual(['http://a.example', 'http://b.example']);
    expect(c.networks.testnet).toEqual({ upstreams: ['http://node.example:8545'], chainId: 31338, blockTime: 2 });
    expect(c.upstream).toEqual({ ...defaults.upstream, requestTimeoutMs: 5000 });
    expect(c.hostMap).toEqual({ 'main.example': 'mainnet' });
  });

  it('fails with a message naming the bad fields', () => {
    expect(() =>
      loadConfig({
        env: {},
        overrides: { port: -1, maxBodyBytes: 1.5, networks: { mainnet: { upstreams: ['ftp://x'] } } },
      }),
    ).toThrow(ConfigError);
    try {
      loadConfig({
        env: {},
        overrides: { port: -1, networks: { mainnet: { upstreams: ['ftp://x'] } }, hostMap: { h: 'nope' } },
      });
    } catch (e) {
      expect((e as Error).message).toMatch(/\/port/);
      expect((e as Error).message).toMatch(/\/networks\/mainnet\/upstreams\/0/);
    }
    expect(() => loadConfig({ env: { RPCGATE_PORT: 'eighty' } })).toThrow(/RPCGATE_PORT/);
    expect(() => loadConfig({ env: {}, overrides: { hostMap: { h: 'nope' } } })).toThrow(/unknown network "nope"/);
  });
});
