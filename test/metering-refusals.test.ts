// Issue 26 item 9 (audit finding 15): rpcgate's own refusals are metered as refusals with their reason — never as the
// node's error or an upstream failure. Against a real service (stand-in node, its own SQLite store) with a network
// key: an eth_getLogs over the block-range cap (-32005, HTTP 200, data.reason block-range) and the subscription cap on
// a WebSocket (-32005, data.reason subscriptions). /metrics: rpcgate_requests_total{outcome="limit"} and
// rpcgate_refusals_total{outcome,reason}; the usage rows after a flush: outcome limit, code -32005.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startService, type RunningService } from '../src/gateway/server/index.js';
import { usageSeries } from '../src/gateway/store/index.js';
import { account, signUpAndLogIn } from './helpers/account.js';
import { byLabels, strictParse } from './helpers/prometheus.js';
import { startStubNode, type StubNode } from './helpers/stub-node.js';
import { Raw } from './helpers/ws-client.js';

let stub: StubNode;
let svc: RunningService;
let dir: string;

beforeAll(async () => {
  stub = await startStubNode();
  dir = mkdtempSync(join(tmpdir(), 'rpcgate-metering-refusals-'));
  svc = await startService(
    {
      port: 0,
      logLevel: 'silent',
      dataDir: dir,
      devKey: false,
      networks: { mainnet: { upstreams: [stub.url] } },
      upstream: { getLogsMaxBlockRange: 10 },
      websocket: { maxSubscriptionsPerConnection: 1 },
    },
    { meter: { flushIntervalMs: 3_600_000 } }, // explicit flushes only
  );
}, 60_000);

afterAll(async () => {
  await svc?.stop();
  await stub?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe("rpcgate's own refusals in the metering", () => {
  it('block-range and subscription-cap refusals: outcome limit with their reason in /metrics, outcome limit in the usage rows', async () => {
    const api = account(svc);
    await signUpAndLogIn(api, {
      email: `refusals-${Date.now()}@example.com`,
      password: 'correct horse battery staple',
    });
    const me = await api.request('account_me', []);
    const key = await api.request('keys_create', [{ name: 'refusals', network: 'mainnet' }]);
    const from = Date.now() - 60_000;

    const r = await fetch(key.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'eth_getLogs',
        params: [{ fromBlock: '0x0', toBlock: '0x100' }],
      }),
    });
    const body = (await r.json()) as { error: { code: number; data: { source: string; reason: string } } };
    expect([r.status, body.error.code, body.error.data.source, body.error.data.reason]).toEqual([
      200,
      -32005,
      'rpcgate',
      'block-range',
    ]);

    const c = await Raw.open(key.url.replace(/^http/, 'ws'));
    try {
      expect((await c.call('eth_subscribe', ['newHeads'])).result).toMatch(/^0x/);
      const second = await c.call('eth_subscribe', ['newHeads']);
      expect([second.error.code, second.error.data.source, second.error.data.reason]).toEqual([
        -32005,
        'rpcgate',
        'subscriptions',
      ]);
    } finally {
      c.socket.close();
    }

    const { samples } = strictParse(await (await fetch(`${svc.url}/metrics`)).text());
    const requests = byLabels(samples, 'rpcgate_requests_total');
    const refusals = byLabels(samples, 'rpcgate_refusals_total');
    console.log(
      `[issue 26 item 9d] rpcgate_requests_total: ${JSON.stringify(requests)}; rpcgate_refusals_total: ${JSON.stringify(refusals)}`,
    );
    expect(requests['method=eth_getLogs,network=mainnet,outcome=limit']).toBe(1);
    expect(requests['method=eth_subscribe,network=mainnet,outcome=limit']).toBe(1);
    for (const k of Object.keys(requests)) expect(k).not.toMatch(/outcome=(node_error|upstream_error)/);
    expect(refusals).toEqual({
      'network=mainnet,outcome=limit,reason=block-range': 1,
      'network=mainnet,outcome=limit,reason=subscriptions': 1,
    });

    await svc.meter!.flush();
    const s = await usageSeries(svc.store.db, {
      userId: me.id,
      keyId: key.id,
      from,
      to: Date.now() + 60_000,
      granularity: 'minute',
    });
    expect([s.summary.byOutcome.limit, s.summary.byOutcome.node_error, s.summary.byOutcome.upstream_error]).toEqual([
      2, 0, 0,
    ]);
    expect(s.summary.errorsByCode).toEqual({ '-32005': 2 });
  }, 60_000);
});
