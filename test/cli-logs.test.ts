// `rpcgate apps logs` / `rpcgate keys logs` against a running service (stand-in node): the filters as flags, the
// exact --json shape `{ entries: [ { time, network, method, httpStatus, code, latencyMs, requestId, cacheHit } ], next }`,
// paging with --cursor, bad flags refused before any call, and another account's id "not found".
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startService, type RunningService } from '../src/gateway/server/index.js';
import { startStubNode, type StubNode } from './helpers/stub-node.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

const root = resolve(import.meta.dirname, '..');
const cliArgs = ['--import', 'tsx', join(root, 'src', 'cli', 'main.ts')];

function cli(
  configDir: string,
  args: string[],
  env: Record<string, string> = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((done) => {
    const childEnv: NodeJS.ProcessEnv = { ...process.env, RPCGATE_CONFIG_DIR: configDir, ...env };
    delete childEnv.RPCGATE_SERVER;
    execFile(
      process.execPath,
      [...cliArgs, ...args],
      { cwd: root, env: childEnv, timeout: 30_000 },
      (err, stdout, stderr) => done({ code: err ? (typeof err.code === 'number' ? err.code : -1) : 0, stdout, stderr }),
    );
  });
}

describe('rpcgate apps logs / keys logs', () => {
  let svc: RunningService;
  let stub: StubNode;
  let dataDir: string;
  const dirs: string[] = [];
  let server: string[];
  let a: string;
  let b: string;
  const run = async (dir: string, args: string[]) => {
    const r = await cli(dir, [...args, ...server, '--json']);
    return { code: r.code, out: JSON.parse(r.stdout) as Json, stderr: r.stderr };
  };

  beforeAll(async () => {
    stub = await startStubNode();
    dataDir = mkdtempSync(join(tmpdir(), 'rpcgate-cli-logs-'));
    svc = await startService({
      port: 0,
      dataDir,
      logLevel: 'silent',
      devKey: false,
      networks: { mainnet: { upstreams: [stub.url] } },
    });
    server = ['--server', svc.url];
    a = mkdtempSync(join(tmpdir(), 'rpcgate-cli-logs-a-'));
    b = mkdtempSync(join(tmpdir(), 'rpcgate-cli-logs-b-'));
    dirs.push(a, b);
    for (const dir of [a, b]) {
      const email = `cli-logs-${randomBytes(4).toString('hex')}@example.com`;
      const password = 'a long enough password';
      expect((await cli(dir, ['signup', ...server, '--email', email], { RPCGATE_PASSWORD: password })).code).toBe(0);
      expect((await cli(dir, ['login', ...server, '--email', email], { RPCGATE_PASSWORD: password })).code).toBe(0);
    }
  }, 120_000);

  afterAll(async () => {
    await svc?.stop();
    await stub?.close();
    for (const d of [dataDir, ...dirs]) if (d) rmSync(d, { recursive: true, force: true });
  });

  it('filters, the --json shape and paging', async () => {
    const app = (await run(a, ['apps', 'create', '--name', 'cli logs', '--use-case', 'Defi', '--chain', 'ethereum']))
      .out;
    const key = (await run(a, ['keys', 'create', '--name', 'k'])).out;
    const call = (url: string, method: string) =>
      fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method,
          params: method === 'eth_call' ? [{ to: `0x${'11'.repeat(20)}` }, 'latest'] : [],
        }),
      });
    const rid = (await call(app.urls.mainnet, 'eth_blockNumber')).headers.get('x-request-id');
    await call(app.urls.mainnet, 'eth_call');
    await call(app.urls.mainnet, 'eth_chainId');
    await call(key.url, 'eth_blockNumber');
    await svc.requestLog!.flush();

    const all = await run(a, ['apps', 'logs', app.id]);
    expect(all.code, all.stderr).toBe(0);
    expect(Object.keys(all.out)).toEqual(['entries', 'next']);
    expect(all.out.next).toBeNull();
    expect(all.out.entries.map((e: Json) => e.method)).toEqual(['eth_chainId', 'eth_call', 'eth_blockNumber']);
    for (const e of all.out.entries)
      expect(Object.keys(e)).toEqual([
        'time',
        'network',
        'method',
        'httpStatus',
        'code',
        'latencyMs',
        'requestId',
        'cacheHit',
      ]);
    expect(all.out.entries[2]).toMatchObject({
      network: 'mainnet',
      httpStatus: 200,
      code: null,
      requestId: rid,
      cacheHit: false,
    });

    const failed = await run(a, [
      'apps',
      'logs',
      app.id,
      '--status',
      'error',
      '--code',
      '-32000',
      '--http-status',
      '200',
    ]);
    expect(failed.out.entries.map((e: Json) => e.method)).toEqual(['eth_call']);
    expect((await run(a, ['apps', 'logs', app.id, '--request-id', rid!])).out.entries).toHaveLength(1);
    expect((await run(a, ['apps', 'logs', app.id, '--min-latency', '100000'])).out.entries).toHaveLength(0);
    expect(
      (await run(a, ['apps', 'logs', app.id, '--method', 'eth_chainId', '--since', '2020-01-01T00:00:00Z'])).out
        .entries,
    ).toHaveLength(1);
    const p1 = await run(a, ['apps', 'logs', app.id, '--limit', '2']);
    expect(p1.out.entries).toHaveLength(2);
    const p2 = await run(a, ['apps', 'logs', app.id, '--limit', '2', '--cursor', p1.out.next]);
    expect(p2.out.entries.map((e: Json) => e.method)).toEqual(['eth_blockNumber']);
    expect(p2.out.next).toBeNull();
    const k = await run(a, ['keys', 'logs', key.id]);
    expect(k.out.entries.map((e: Json) => e.method)).toEqual(['eth_blockNumber']);

    // Bad flags: refused by the CLI (before any call) or by the server, naming the field; exit 1.
    const badCode = await run(a, ['apps', 'logs', app.id, '--code', 'x']);
    expect(badCode.code).toBe(1);
    expect(badCode.out.error.code).toBe(-32602);
    const badStatus = await run(a, ['apps', 'logs', app.id, '--status', 'failed']);
    expect(badStatus.out.error.message).toMatch(/--status/);
    const badSince = await run(a, ['apps', 'logs', app.id, '--since', 'yesterday']);
    expect(badSince.out.error.data.path).toBe('/1/since');

    // Another account: not found, for both.
    expect((await run(b, ['apps', 'logs', app.id])).out.error.code).toBe(-32010);
    expect((await run(b, ['keys', 'logs', key.id])).out.error.code).toBe(-32010);
  }, 120_000);
});
