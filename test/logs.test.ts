// Logs: every line rpcgate writes during real traffic — network and app keys, a JWT app with Bearer tokens, bad
// keys, refusals, node and upstream errors, the account API (sign up, log in, session cookie) — is captured from the
// logger's destination and checked: JSON lines, no key / JWT / session token anywhere, request ids on request lines.
// At debug every node API request has a line; at info only failures (5xx) and slow requests do.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startService, type RunningService } from '../src/gateway/server/index.js';
import { LIMITS, call, post, runTraffic } from './helpers/metering-traffic.js';
import { deadUrl, startStubNode, type StubNode } from './helpers/stub-node.js';

let stub: StubNode;
let dead: string;
const services: RunningService[] = [];
const dirs: string[] = [];

/** An rpcgate whose log lines all land in `lines`. */
async function gate(logLevel: 'debug' | 'info'): Promise<{ svc: RunningService; lines: string[] }> {
  const dataDir = mkdtempSync(join(tmpdir(), 'rpcgate-logs-'));
  dirs.push(dataDir);
  const lines: string[] = [];
  const svc = await startService(
    {
      port: 0,
      logLevel,
      dataDir,
      devKey: false,
      limits: LIMITS,
      networks: { mainnet: { upstreams: [stub.url] }, testnet: { upstreams: [dead] } },
    },
    { logDestination: { write: (s: string) => void lines.push(...s.split('\n').filter(Boolean)) } },
  );
  services.push(svc);
  return { svc, lines };
}

beforeAll(async () => {
  stub = await startStubNode();
  dead = await deadUrl();
});

afterAll(async () => {
  await Promise.all(services.map((s) => s.stop()));
  await stub?.close();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe('log lines', () => {
  it('debug: no key or token in any line; every node API request has a line with its request id', async () => {
    const { svc, lines } = await gate('debug');
    const t = await runTraffic(svc, (c, w) => expect(c, w).toBe(true));
    const secrets = [...t.secrets];

    // The account API too: its session token must not be logged either.
    const email = `logs-${Date.now()}@example.com`;
    expect(
      (
        await post(`${svc.url}/api`, {
          jsonrpc: '2.0',
          id: 1,
          method: 'account_signUp',
          params: [{ email, password: 'correct horse battery staple' }],
        })
      ).status,
    ).toBe(200);
    const signUp = await post(`${svc.url}/api`, {
      jsonrpc: '2.0',
      id: 1,
      method: 'account_logIn',
      params: [{ email, password: 'correct horse battery staple' }],
    });
    expect(signUp.status, signUp.text).toBe(200);
    const cookie = signUp.headers.get('set-cookie');
    if (cookie) secrets.push(/=([^;]+)/.exec(cookie)![1]);
    const token = signUp.body.result?.token ?? signUp.body.result?.session?.token;
    if (typeof token === 'string') secrets.push(token);
    secrets.push('correct horse battery staple');

    // Request ids: ours (given) and generated ones, from the responses.
    const bad = `${svc.url}/mainnet/${'z9'.repeat(16)}`;
    const given = await post(bad, call('eth_blockNumber'), { 'x-request-id': 'logs-test-rid-1' });
    expect(given.headers.get('x-request-id')).toBe('logs-test-rid-1');
    const rids = ['logs-test-rid-1'];
    for (const url of [bad, `${svc.url}/testnet/v2/${'q8'.repeat(16)}`])
      rids.push((await post(url, call('eth_chainId'))).headers.get('x-request-id')!);
    await svc.stop(); // flushes the logger too

    if (process.env.DUMP_LOGS) console.log(lines.join('\n'));
    expect(lines.length).toBeGreaterThan(25);
    const parsed = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    for (const l of lines) for (const s of secrets) expect(l.includes(s), `secret in log line: ${l}`).toBe(false);
    for (const l of lines) expect(l).not.toMatch(/eyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\./);

    const requestLines = parsed.filter(
      (p) => p.msg === 'node API request' || p.msg === 'node API request failed' || p.msg === 'slow node API request',
    );
    for (const p of requestLines)
      expect(typeof p.rid === 'string' && (p.rid as string).length > 0, JSON.stringify(p)).toBe(true);
    for (const rid of rids)
      expect(
        requestLines.some((p) => p.rid === rid),
        rid,
      ).toBe(true);
    // One line per node API request of the traffic (23 requests) plus the three above.
    expect(requestLines.length).toBe(23 + 3);
    // URLs are logged with the key segment redacted.
    for (const p of requestLines) expect(p.url, JSON.stringify(p)).toMatch(/^\/\w+\/(?:v2\/)?(?:\[redacted\])?$/);
    // The two dead-upstream calls are 5xx: logged at warn.
    expect(requestLines.filter((p) => p.msg === 'node API request failed' && p.level === 40).length).toBe(2);
  });

  it('info (the default): no line for a good request; failures (5xx) are logged with their request id', async () => {
    const { svc, lines } = await gate('info');
    const t = await runTraffic(svc, (c, w) => expect(c, w).toBe(true));
    await svc.stop();
    for (const l of lines) for (const s of t.secrets) expect(l.includes(s)).toBe(false);
    const parsed = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(parsed.filter((p) => p.msg === 'node API request')).toEqual([]);
    const failed = parsed.filter((p) => p.msg === 'node API request failed');
    expect(failed.map((p) => [p.network, p.status])).toEqual([
      ['testnet', expect.any(Number)],
      ['testnet', expect.any(Number)],
    ]);
    for (const p of failed) expect(p.rid).toMatch(/^[0-9a-f]{8}-/);
  });
});
