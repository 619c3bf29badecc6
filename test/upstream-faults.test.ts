// Upstream faults against the real service (startService: HTTP server, engine, pools) and a stand-in node in its own
// process (test/helpers/fault-node.ts) that is switched between faults, killed by PID and restarted on the same
// port. Each fault: the client gets a clear JSON-RPC error (data.source "rpcgate") within its deadline; a second
// network with a healthy node, called all along with two keys, never fails; and the service recovers by itself once
// the node is fine again (the circuit breaker's probe), with no restart or operator action.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startService, type RunningService } from '../src/gateway/server/index.js';
import { startFaultNode, type FaultNode } from './helpers/fault-node.js';
import { deadUrl, startStubNode, type StubNode } from './helpers/stub-node.js';

const KEY_A = 'faults-key-a-0001';
const KEY_B = 'faults-key-b-0002';
/** Each call's deadline (upstream.requestTimeoutMs); errors must come within it (plus scheduling slack). */
const DEADLINE_MS = 1000;
const SLACK_MS = 1500;

let svc: RunningService;
let node: FaultNode;
let late: FaultNode | undefined;
let lateUrl: string;
let healthy: StubNode;
let dataDir: string;

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

async function rpc(
  network: string,
  key: string,
  body: object | object[],
): Promise<{ status: number; body: Json; ms: number }> {
  const t0 = performance.now();
  const res = await fetch(`${svc.url}/${network}/v2/${key}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: await res.json(), ms: performance.now() - t0 };
}
const call = (method: string, params: unknown[] = [], id: number | string = 1) => ({
  jsonrpc: '2.0',
  id,
  method,
  params,
});

/** A clear gateway error for `network`, answered within the deadline. */
function expectClearError(r: { status: number; body: Json; ms: number }, codes: number[]): void {
  expect(r.body.error, JSON.stringify(r.body)).toBeDefined();
  expect(codes).toContain(r.body.error.code);
  expect(r.body.error.data).toMatchObject({ source: 'rpcgate', network: 'faulty' });
  expect(r.ms).toBeLessThan(DEADLINE_MS + SLACK_MS);
}

async function until<T>(what: string, fn: () => Promise<T | undefined>, timeoutMs = 10_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn().catch(() => undefined);
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`not within ${timeoutMs} ms: ${what}`);
    await sleep(50);
  }
}

/** The faulty network answers eth_blockNumber again (the service recovered by itself). */
const recovered = () =>
  until('faulty network recovers', async () =>
    (await rpc('faulty', KEY_A, call('eth_blockNumber'))).body.result === '0x100' ? true : undefined,
  );

/** Calls the healthy network with both keys (and the faulty one's key) all along; counts failures. */
function healthyTraffic() {
  let on = true;
  let ok = 0;
  const failures: string[] = [];
  const loop = (async () => {
    while (on) {
      for (const key of [KEY_A, KEY_B]) {
        const r = await rpc('healthy', key, call('eth_blockNumber'));
        if (r.body.result === '0x10') ok++;
        else failures.push(JSON.stringify(r.body));
      }
      await sleep(5);
    }
  })();
  return {
    async stop() {
      on = false;
      await loop;
      return { ok, failures };
    },
  };
}
let traffic: ReturnType<typeof healthyTraffic>;

beforeAll(async () => {
  node = await startFaultNode();
  healthy = await startStubNode();
  lateUrl = await deadUrl();
  dataDir = mkdtempSync(join(tmpdir(), 'rpcgate-faults-'));
  svc = await startService({
    port: 0,
    logLevel: 'silent',
    dataDir,
    devKey: false,
    keys: [
      { key: KEY_A, name: 'a' },
      { key: KEY_B, name: 'b' },
    ],
    networks: {
      faulty: { upstreams: [node.url] },
      healthy: { upstreams: [healthy.url] },
      late: { upstreams: [lateUrl] },
    },
    upstream: {
      requestTimeoutMs: DEADLINE_MS,
      probeIntervalMs: 200,
      circuitBreaker: { failureThreshold: 3 },
      maxResponseBytes: 256 * 1024,
      getLogsMaxBlockRange: 200,
    },
  });
}, 60_000);

afterAll(async () => {
  await svc?.stop();
  await node?.kill();
  await late?.kill();
  await healthy?.close();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

afterEach(async () => {
  await node.mode('ok', 0, {});
});

/** Runs `fault` with the healthy traffic going; then: no healthy call failed, and the faulty network recovered. */
async function underFault(fault: () => Promise<void>): Promise<void> {
  traffic = healthyTraffic();
  try {
    await fault();
  } finally {
    const { ok, failures } = await traffic.stop();
    expect(failures).toEqual([]);
    expect(ok).toBeGreaterThan(0);
  }
}

describe('node down', () => {
  it('down at start: clear error at once; recovers by itself once a node listens on its port', async () => {
    await underFault(async () => {
      const r = await rpc('late', KEY_A, call('eth_blockNumber'));
      expect(r.body.error?.code).toBe(-32042);
      expect(r.body.error.data).toMatchObject({ source: 'rpcgate', reason: 'upstream', network: 'late' });
      expect([502, 503]).toContain(r.status);
      expect(r.ms).toBeLessThan(DEADLINE_MS + SLACK_MS);
      late = await startFaultNode(Number(new URL(lateUrl).port));
      await until('late network recovers', async () =>
        (await rpc('late', KEY_A, call('eth_blockNumber'))).body.result === '0x100' ? true : undefined,
      );
    });
  });

  it('killed (SIGKILL by PID) mid-traffic: clear errors, the circuit opens (metrics), restarted on the same port: recovers by itself', async () => {
    await underFault(async () => {
      const errors: Json[] = [];
      let on = true;
      const faultyLoop = (async () => {
        while (on) {
          const r = await rpc('faulty', KEY_A, call('eth_blockNumber'));
          if (r.body.error) {
            expectClearError(r, [-32042, -32043]);
            errors.push(r.body.error);
          }
          await sleep(5);
        }
      })();
      await sleep(100);
      const pid = node.pid();
      await node.kill();
      expect(() => process.kill(pid, 0)).toThrow();
      await until('errors while the node is down', async () => (errors.length >= 10 ? true : undefined));
      // Once the breaker opened, calls are refused at once with 503 and /metrics says so.
      expect(errors.some((e) => /every circuit is open/.test(e.data.detail))).toBe(true);
      const metrics = await (await fetch(`${svc.url}/metrics`)).text();
      expect(metrics).toMatch(
        new RegExp(`rpcgate_upstream_circuit_state\\{network="faulty",upstream="127.0.0.1:${node.port}"\\} [12]`),
      );
      await node.restart();
      await recovered();
      on = false;
      await faultyLoop;
      expect(await (await fetch(`${svc.url}/metrics`)).text()).toMatch(
        new RegExp(`rpcgate_upstream_circuit_state\\{network="faulty",upstream="127.0.0.1:${node.port}"\\} 0`),
      );
    });
  });
});

describe('node misbehaves', () => {
  it('slow (30 s): -32043 within the deadline, every call on its own; recovers once the node is fast', async () => {
    await underFault(async () => {
      await node.mode('slow', 30_000);
      const rs = await Promise.all(
        [1, 2, 3].map((i) => rpc('faulty', KEY_A, call('eth_getBalance', [`0x${'0'.repeat(39)}${i}`, 'latest']))),
      );
      for (const r of rs) {
        expectClearError(r, [-32043]);
        expect(r.status).toBe(504);
        expect(r.body.error.data).toMatchObject({ reason: 'timeout', timeoutMs: DEADLINE_MS });
      }
      await node.mode('ok');
      await recovered();
    });
  });

  it('one slow method (eth_getLogs 30 s): only those calls time out; eth_blockNumber meanwhile is answered and the node stays in service', async () => {
    await underFault(async () => {
      await node.mode('ok', 0, { eth_getLogs: 30_000 });
      const logs = rpc('faulty', KEY_A, call('eth_getLogs', [{ fromBlock: '0xf0', toBlock: 'latest' }]));
      const during: Json[] = [];
      const t0 = Date.now();
      while (Date.now() - t0 < DEADLINE_MS + 300) {
        during.push((await rpc('faulty', KEY_B, call('eth_blockNumber'))).body);
        await sleep(20);
      }
      const r = await logs;
      expectClearError(r, [-32043]);
      expect(during.length).toBeGreaterThan(5);
      expect(during.filter((b) => b.result !== '0x100')).toEqual([]);
      expect(svc.pools.get('faulty')!.status()[0]).toMatchObject({ circuit: 'closed' });
    });
  });

  it('flaky (3 of every 5 requests fail, never 3 in a row): the circuit opens by error rate (metrics), recovers once the node is fine', async () => {
    await underFault(async () => {
      const pool = svc.pools.get('faulty')!;
      expect(pool.status()[0].circuit).toBe('closed');
      await node.mode('flaky');
      // upstream.circuitBreaker.failureThreshold is 3 here and the node never fails 3 requests in a row (in the order
      // they reach it): the error-rate rule (default 0.5 over the last 20 requests, from 10 on) is what opens it.
      const errors: Json[] = [];
      let sawOpen = false;
      for (let i = 0; i < 200 && !sawOpen; i++) {
        const r = await rpc(
          'faulty',
          KEY_A,
          call('eth_getBalance', [`0x${i.toString(16).padStart(40, '0')}`, 'latest']),
        );
        if (r.body.error) {
          expectClearError(r, [-32042]);
          errors.push(r.body.error);
        }
        sawOpen = pool.status()[0].circuit !== 'closed';
      }
      expect(sawOpen).toBe(true);
      const metrics = await (await fetch(`${svc.url}/metrics`)).text();
      expect(metrics).toMatch(
        new RegExp(`rpcgate_upstream_circuit_state\\{network="faulty",upstream="127.0.0.1:${node.port}"\\} [12]`),
      );
      await node.mode('ok');
      await recovered();
    });
  });

  for (const mode of ['garbage', 'http500', 'html', 'truncated'] as const) {
    it(`${mode}: -32042 (502) within the deadline; recovers once the node answers properly`, async () => {
      await underFault(async () => {
        await node.mode(mode);
        const r = await rpc('faulty', KEY_A, call('eth_chainId'));
        expectClearError(r, [-32042]);
        expect(r.status).toBe(502);
        expect(r.body.error.data.reason).toBe('upstream');
        await node.mode('ok');
        await recovered();
      });
    });
  }

  for (const mode of ['batch-error', 'batch-413'] as const) {
    it(`batch refused (${mode === 'batch-error' ? 'one error object for the batch' : 'HTTP 413'}): the batch is split and every call answered`, async () => {
      await underFault(async () => {
        await node.mode(mode);
        const batch = Array.from({ length: 6 }, (_, i) => call(i % 2 ? 'eth_chainId' : 'eth_blockNumber', [], i));
        const r = await rpc('faulty', KEY_A, batch);
        expect(r.status).toBe(200);
        expect(r.body.map((x: Json) => [x.id, x.result])).toEqual(
          batch.map((c) => [c.id, c.method === 'eth_chainId' ? '0x1' : '0x100']),
        );
      });
    });
  }
});

describe('isolation caps', () => {
  it('eth_getLogs over the block-range cap: -32005 block-range, never sent to the node', async () => {
    const before = (await node.seen()).eth_getLogs ?? 0;
    const r = await rpc('faulty', KEY_A, call('eth_getLogs', [{ fromBlock: '0x0', toBlock: '0xffffffffffff' }]));
    expect(r.status).toBe(200);
    expect(r.body.error).toMatchObject({
      code: -32005,
      data: { source: 'rpcgate', reason: 'block-range', limit: 200, range: 0xffffffffffff + 1 },
    });
    // The node's head is 0x100: earliest..latest spans 0x101 blocks.
    const tagged = await rpc('faulty', KEY_A, call('eth_getLogs', [{ fromBlock: 'earliest' }]));
    expect(tagged.body.error).toMatchObject({ code: -32005, data: { reason: 'block-range', range: 0x101 } });
    expect((await node.seen()).eth_getLogs ?? 0).toBe(before);
    const ok = await rpc('faulty', KEY_A, call('eth_getLogs', [{ fromBlock: '0xf0', toBlock: 'latest' }]));
    expect(ok.body.result).toEqual([]);
  });

  it('an answer over maxResponseBytes: -32005 response-size for that call; the others in the same client batch are answered', async () => {
    await node.mode('huge');
    const r = await rpc('faulty', KEY_A, [
      call('eth_getLogs', [{ blockHash: `0x${'ab'.repeat(32)}` }], 'logs'),
      call('eth_blockNumber', [], 'head'),
    ]);
    const byId = Object.fromEntries(r.body.map((x: Json) => [x.id, x]));
    expect(byId.logs.error).toMatchObject({
      code: -32005,
      data: { source: 'rpcgate', reason: 'response-size', limit: 256 * 1024 },
    });
    expect(byId.head.result).toBe('0x100');
  });
});
