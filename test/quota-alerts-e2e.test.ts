// Quota alerts through a running service (SQLite): a user sets a webhook through the account API, calls the node API
// with a network key until 75 % of the per-user daily quota, the meter flushes — the banner's alerts_list shows the
// alert to that account only, and the receiver (started here) gets one signed delivery.
import { createHmac } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SIGNATURE_HEADER, TIMESTAMP_HEADER } from '../src/gateway/alerts/quota-alerts.js';
import { type RunningService, startService } from '../src/gateway/server/index.js';
import { account, signUpAndLogIn } from './helpers/account.js';
import { startStubNode, type StubNode } from './helpers/stub-node.js';

let stub: StubNode;
let svc: RunningService;
let dataDir: string;
let hookServer: Server;
let hookUrl: string;
const received: { body: string; ts: string; sig: string }[] = [];

beforeAll(async () => {
  stub = await startStubNode();
  hookServer = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push({
        body: Buffer.concat(chunks).toString('utf8'),
        ts: String(req.headers[TIMESTAMP_HEADER]),
        sig: String(req.headers[SIGNATURE_HEADER]),
      });
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((ok) => hookServer.listen(0, '127.0.0.1', ok));
  hookUrl = `http://127.0.0.1:${(hookServer.address() as AddressInfo).port}/rpcgate`;
  dataDir = mkdtempSync(join(tmpdir(), 'rpcgate-alerts-e2e-'));
  svc = await startService(
    {
      port: 0,
      logLevel: 'silent',
      dataDir,
      devKey: false,
      limits: { b: { dailyPerUser: 8 } },
      alerts: { allowPrivateWebhooks: true }, // the receiver listens on 127.0.0.1
      networks: { testnet: { upstreams: [stub.url] } },
    },
    { meter: { flushIntervalMs: 3_600_000 } }, // explicit flushes only
  );
});

afterAll(async () => {
  await svc?.stop();
  await stub?.close();
  await new Promise((ok) => hookServer?.close(ok));
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

describe('quota alerts end to end', () => {
  it('75 % of the daily key quota: alerts_list shows it to its account only, the webhook gets it signed, once', async () => {
    const alice = account(svc);
    const bob = account(svc);
    await signUpAndLogIn(alice, { email: 'alice-alerts@example.com', password: 'correct horse battery staple 42' });
    await signUpAndLogIn(bob, { email: 'bob-alerts@example.com', password: 'another long passphrase for bob 7' });
    const hook = await alice.request('account_setAlertWebhook', [hookUrl]);
    expect(hook.url).toBe(hookUrl);
    expect(hook.secret).toMatch(/^whsec_/);
    expect(await alice.request('account_alertWebhook', [])).toEqual({ url: hookUrl }); // the secret never again
    const key = await alice.request('keys_create', [{ name: 'backend', network: 'Testnet' }]);
    for (let i = 0; i < 6; i++) {
      const res = await fetch(key.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ jsonrpc: '2.0', id: i, method: 'eth_blockNumber', params: [] }),
      });
      expect(res.status).toBe(200);
      await res.arrayBuffer();
    }
    expect(await alice.request('alerts_list', [])).toEqual([]);
    await svc.meter!.flush();
    await svc.alerts!.idle();
    const alerts = await alice.request('alerts_list', []);
    expect(alerts).toMatchObject([{ subject: 'keys', app: null, window: 'day', threshold: 75, used: 6, limit: 8 }]);
    expect(await bob.request('alerts_list', [])).toEqual([]);
    expect(received).toHaveLength(1);
    const { body, ts, sig } = received[0];
    expect(sig).toBe(`sha256=${createHmac('sha256', hook.secret!).update(`${ts}.${body}`).digest('hex')}`);
    expect(JSON.parse(body)).toMatchObject({ subject: 'keys', threshold: 75, used: 6, limitValue: 8, limit: 'daily' });
    // A later flush in the same period (7 of 8: still under 90 %) sends nothing again.
    const more = await fetch(key.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'eth_blockNumber', params: [] }),
    });
    expect(more.status).toBe(200);
    await more.arrayBuffer();
    expect((await svc.meter!.flush()).rows).toBeGreaterThan(0);
    await svc.alerts!.idle();
    expect(received).toHaveLength(1);
  });
});
