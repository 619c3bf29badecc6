// WebSocket upstreams (issue 23 item 2) against real processes: anvil serves WebSocket on its HTTP port. One socket
// per upstream carries calls and subscriptions; ids are rewritten per socket and restored; an anvil SIGKILLed by PID
// mid-calls fails its calls in flight over to a second upstream, and once restarted on the same port the socket
// reconnects by itself and the subscription resumes (with a gap reported); a half-open socket (a proxy that stops
// forwarding without closing) is detected within the pong deadline, retryable calls in flight go to the other
// upstream and eth_sendRawTransaction is not resent; credentials in upstream URLs never reach status, metrics
// labels, health callbacks or errors. Through the running service, 30 clients on newHeads and logs make one upstream
// newHeads subscription and one eth_getLogs per block (counted at a WebSocket proxy in front of anvil).
import { type ChildProcess, spawn } from 'node:child_process';
import { type Server, createServer as createHttpServer } from 'node:http';
import { type AddressInfo, type Socket, connect, createServer } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { type UpstreamConfig, defaults, loadConfig } from '../src/gateway/config/config.js';
import { anvilBinary } from '../src/gateway/chain/anvil.js';
import { RawResult } from '../packages/toolkit/src/rpc/engine.js';
import { UpstreamPool, type UpstreamMethodPolicy } from '../src/gateway/upstream/index.js';
import { WsTransport } from '../src/gateway/upstream/transports/ws.js';
import { startService } from '../src/gateway/server/index.js';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { redactIn, redactUrl } from '../src/gateway/upstream/redact.js';

const cleanups: (() => Promise<unknown> | unknown)[] = [];
afterEach(async () => {
  for (const f of cleanups.splice(0).reverse()) await f();
});

const cfg = (over: Partial<UpstreamConfig> = {}): UpstreamConfig => ({
  ...defaults.upstream,
  hedge: { ...defaults.upstream.hedge, enabled: false },
  probeIntervalMs: 100,
  ws: { pingIntervalMs: 100, pongTimeoutMs: 200, reconnectMinMs: 50, reconnectMaxMs: 400 },
  ...over,
});

const METHODS = new Map<string, UpstreamMethodPolicy>([
  ['eth_getBalance', { idempotent: true, retryable: true, cost: 'light' }],
  ['eth_chainId', { idempotent: true, retryable: true, cost: 'light' }],
  ['web3_sha3', { idempotent: true, retryable: true, cost: 'light' }],
  ['eth_blockNumber', { idempotent: true, retryable: true, cost: 'light' }],
  ['eth_sendRawTransaction', { idempotent: false, retryable: false, cost: 'heavy' }],
]);

const DEV0 = '0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266';

async function freePort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const port = (srv.address() as AddressInfo).port;
  await new Promise((r) => srv.close(r));
  return port;
}

interface AnvilProc {
  port: number;
  pid: number;
  kill(): Promise<void>;
}

/** anvil on a given port (restartable there), answering once eth_chainId does. */
async function anvil(port: number): Promise<AnvilProc> {
  const child: ChildProcess = spawn(anvilBinary(), ['--host', '127.0.0.1', '--port', String(port), '--quiet'], {
    stdio: 'ignore',
  });
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  const proc: AnvilProc = {
    port,
    pid: child.pid!,
    kill: async () => {
      if (child.exitCode === null && child.signalCode === null) process.kill(child.pid!, 'SIGKILL');
      await exited;
    },
  };
  cleanups.push(() => proc.kill());
  const deadline = Date.now() + 15_000;
  for (;;) {
    try {
      const res = await fetch(`http://127.0.0.1:${port}/`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[]}',
        signal: AbortSignal.timeout(500),
      });
      if (res.ok) return proc;
    } catch {
      // not up yet
    }
    if (Date.now() > deadline) throw new Error(`anvil on ${port} did not start`);
    await sleep(50);
  }
}

async function rpc(port: number, method: string, params: unknown[] = []): Promise<unknown> {
  const res = await fetch(`http://127.0.0.1:${port}/`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
  return ((await res.json()) as { result: unknown }).result;
}

const value = (v: unknown) => (v instanceof RawResult ? JSON.parse(v.json) : v);

/** A TCP proxy the test can stall: it keeps both sockets open but forwards nothing (a half-open upstream). */
async function stallableProxy(targetPort: number) {
  let stalled = false;
  const conns = new Set<Socket>();
  const server = createServer((client) => {
    const out = connect(targetPort, '127.0.0.1');
    conns.add(client).add(out);
    client.on('data', (d) => {
      if (!stalled) out.write(d);
    });
    out.on('data', (d) => {
      if (!stalled) client.write(d);
    });
    const end = () => {
      client.destroy();
      out.destroy();
    };
    client.on('error', end).on('close', end);
    out.on('error', end).on('close', end);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const p = {
    port: (server.address() as AddressInfo).port,
    stall: () => {
      stalled = true;
    },
    close: async () => {
      for (const c of conns) c.destroy();
      await new Promise((r) => server.close(r));
    },
  };
  cleanups.push(() => p.close());
  return p;
}

/** An HTTP node that records every method it is sent (the failover target whose traffic the test checks). */
async function recordingNode() {
  const methods: string[] = [];
  const server: Server = createHttpServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const msg = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      const one = (m: { id: unknown; method: string }) => {
        methods.push(m.method);
        return { jsonrpc: '2.0', id: m.id, result: m.method === 'eth_blockNumber' ? '0x1' : '0x1234' };
      };
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify(Array.isArray(msg) ? msg.map(one) : one(msg)));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  cleanups.push(() => new Promise((r) => server.close(r)));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`, methods };
}

function pool(urls: ConstructorParameters<typeof UpstreamPool>[0]['urls'], over: Partial<UpstreamConfig> = {}) {
  const p = new UpstreamPool({ network: 'test', urls, config: cfg(over), methods: METHODS });
  cleanups.push(() => p.close());
  return p;
}

const until = async (f: () => boolean, ms: number, what: string) => {
  const deadline = Date.now() + ms;
  while (!f()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(10);
  }
};

describe('WebSocket upstreams', () => {
  it('calls and batches over one socket, ids rewritten under concurrency and the callers’ ids restored', async () => {
    const a = await anvil(await freePort());
    const relaxed = cfg({ ws: { pingIntervalMs: 1000, pongTimeoutMs: 5000, reconnectMinMs: 50, reconnectMaxMs: 400 } });
    const t = new WsTransport(`ws://127.0.0.1:${a.port}`, relaxed, { safetyTimeoutMs: 5000, maxResponseBytes: 0 });
    cleanups.push(() => t.close());
    await until(() => t.push.up, 5000, 'socket up');
    // 200 callers, all with the same ids (1, "x", null, and a batch of [1, 2]): each gets its own answer.
    const words = Array.from({ length: 200 }, (_, i) => `0x${Buffer.from(`word-${i}`).toString('hex')}`);
    const expected = await Promise.all(words.map((w) => rpc(a.port, 'web3_sha3', [w])));
    const ids = [1, 'x', null];
    const answers = await Promise.all(
      words.map((w, i) =>
        i % 4 === 3
          ? t.send(
              JSON.stringify([
                { jsonrpc: '2.0', id: 1, method: 'web3_sha3', params: [w] },
                { jsonrpc: '2.0', id: 2, method: 'web3_sha3', params: [words[(i + 1) % 200]] },
              ]),
              { cls: 'light', deadlineMs: performance.now() + 5000 },
            )
          : t.send(JSON.stringify({ jsonrpc: '2.0', id: ids[i % 4], method: 'web3_sha3', params: [w] }), {
              cls: 'light',
              deadlineMs: performance.now() + 5000,
            }),
      ),
    );
    answers.forEach((text, i) => {
      const got = JSON.parse(text);
      if (i % 4 === 3) {
        expect(got).toEqual([
          { jsonrpc: '2.0', id: 1, result: expected[i] },
          { jsonrpc: '2.0', id: 2, result: expected[(i + 1) % 200] },
        ]);
      } else expect(got).toEqual({ jsonrpc: '2.0', id: ids[i % 4], result: expected[i] });
    });
    // Through the pool: coalesced batches over the socket, results as the node's bytes.
    const p = pool([`ws://127.0.0.1:${a.port}`], { ws: relaxed.ws });
    await until(() => p.pushTransports()[0]?.push.up === true, 5000, 'pool socket up');
    const viaPool = await Promise.all(words.slice(0, 50).map((w) => p.call('web3_sha3', [w])));
    expect(viaPool.map(value)).toEqual(expected.slice(0, 50));
    expect(p.stats.requests).toBeLessThan(50); // batched
    expect(p.status()[0]).toMatchObject({ kind: 'ws', healthy: true, url: `ws://127.0.0.1:${a.port}` });
  });

  it('anvil SIGKILLed mid-calls: calls fail over to the second upstream; restarted on the same port: the socket reconnects and the subscription resumes after a gap', async () => {
    const portA = await freePort();
    let a = await anvil(portA);
    const b = await anvil(await freePort());
    const p = pool([`ws://127.0.0.1:${portA}`, `http://127.0.0.1:${b.port}/`]);
    const [{ push }] = p.pushTransports();
    await until(() => push.up, 5000, 'socket up');
    const states: boolean[] = [];
    push.onState((up) => states.push(up));
    const heads: string[] = [];
    const gaps: string[] = [];
    const unsubscribe = await push.subscribe(['newHeads'], {
      notify: (r) => heads.push((r as { number: string }).number),
      gap: (why) => gaps.push(why),
    });
    await rpc(portA, 'evm_mine');
    await until(() => heads.length === 1, 5000, 'first head');
    // Calls in flight when the node dies: every read is answered (by B when A's socket dropped under it).
    const balance = await rpc(b.port, 'eth_getBalance', [DEV0, 'latest']);
    // Distinct addresses (identical calls would share one request): 600 calls in 6 batches, half on the socket. anvil
    // answers faster than the test can kill it, so it is frozen first (SIGSTOP): the calls are surely in flight.
    const addr = (i: number) => `0x${(i + 1).toString(16).padStart(40, '0')}`;
    process.kill(a.pid, 'SIGSTOP');
    const calls = Array.from({ length: 600 }, (_, i) => p.call('eth_getBalance', [i === 0 ? DEV0 : addr(i), 'latest']));
    await sleep(20);
    process.kill(a.pid, 'SIGKILL');
    const out = await Promise.all(calls);
    expect(out.map(value)).toEqual(out.map((_, i) => (i === 0 ? balance : '0x0')));
    // Some were on the socket when it dropped: failed over to B (none lost, none failed).
    expect(p.stats.failovers).toBeGreaterThan(0);
    await a.kill();
    await until(() => states.includes(false), 2000, 'socket down');
    expect(p.status()[0]).toMatchObject({ healthy: false, circuit: expect.stringMatching(/open|halfOpen/) });
    // While A is down, calls go to B at once (A's circuit opens on the refused reconnect).
    expect(value(await p.call('eth_chainId'))).toBe('0x7a69');
    // Back on the same port: the socket comes back by itself, the subscription is made again, the gap reported.
    a = await anvil(portA);
    await until(() => push.up, 5000, 'socket reconnected');
    await until(() => gaps.length === 1, 5000, 'gap reported');
    expect(gaps[0]).toMatch(/dropped/);
    const before = heads.length;
    await rpc(portA, 'evm_mine');
    await until(() => heads.length === before + 1, 5000, 'head after the restart');
    expect(heads.at(-1)).toBe('0x1'); // a fresh anvil: its first mined block
    await until(() => p.status()[0].healthy, 3000, 'circuit closed again');
    await unsubscribe();
    await rpc(portA, 'evm_mine');
    await sleep(100);
    expect(heads.length).toBe(before + 1);
  }, 30_000);

  it('half-open socket (stops answering without closing): torn down within the pong deadline; reads fail over, eth_sendRawTransaction is not resent', async () => {
    const a = await anvil(await freePort());
    const proxy = await stallableProxy(a.port);
    const other = await recordingNode();
    const p = pool([`ws://127.0.0.1:${proxy.port}`, other.url]);
    const [{ push }] = p.pushTransports();
    await until(() => push.up, 5000, 'socket up');
    let downAt = 0;
    push.onState((up) => {
      if (!up && downAt === 0) downAt = performance.now();
    });
    // Make sure calls go to the socket first (round robin starts there for the first call).
    proxy.stall();
    const stalledAt = performance.now();
    const read = p.call('eth_getBalance', [DEV0, 'latest']);
    const send = p.call('eth_sendRawTransaction', ['0x02f8']);
    const settled = await Promise.allSettled([read, send]);
    // ping every 100 ms, pong deadline 200 ms: torn down within 300 ms of the stall (plus scheduling slack).
    expect(downAt).toBeGreaterThan(0);
    expect(downAt - stalledAt).toBeLessThan(300 + 250);
    const [r, s] = settled;
    // Whichever upstream each call went to first, a read is answered and a raw transaction is never sent twice.
    expect(r.status).toBe('fulfilled');
    expect(other.methods.filter((m) => m === 'eth_sendRawTransaction').length).toBeLessThanOrEqual(1);
    if (s.status === 'rejected') {
      // It went to the stalled socket: failed with the socket, not resent to the other node.
      expect(other.methods).not.toContain('eth_sendRawTransaction');
      expect(JSON.stringify((s.reason as { data?: unknown }).data)).toMatch(/half-open/);
    }
  }, 20_000);

  it('a raw transaction in flight on a socket that drops is failed, never resent; a read in flight is resent', async () => {
    const a = await anvil(await freePort());
    const proxy = await stallableProxy(a.port);
    const other = await recordingNode();
    // The socket only: the pool's first pick; the recording node is the failover target.
    const p = pool([`ws://127.0.0.1:${proxy.port}`, other.url]);
    const [{ push }] = p.pushTransports();
    await until(() => push.up, 5000, 'socket up');
    proxy.stall();
    // Round robin: call 1 → socket, call 2 → other, call 3 → socket, … keep only those that went to the socket.
    const sends = Array.from({ length: 4 }, () => p.call('eth_sendRawTransaction', ['0x02f8']));
    const reads = Array.from({ length: 4 }, () => p.call('eth_getBalance', [DEV0, 'latest']));
    const s = await Promise.allSettled(sends);
    const r = await Promise.allSettled(reads);
    expect(r.every((x) => x.status === 'fulfilled')).toBe(true);
    const sentToOther = other.methods.filter((m) => m === 'eth_sendRawTransaction').length;
    const failed = s.filter((x) => x.status === 'rejected').length;
    // Every raw transaction was sent exactly once: either answered by the other node or failed with the socket.
    expect(sentToOther + failed).toBe(4);
    expect(failed).toBeGreaterThan(0);
  }, 20_000);

  it('upstream credentials (user:pass@, keys in path and query) never reach status, health logs, metrics labels or errors', async () => {
    const dead = await freePort();
    const secretWs = `ws://alice:s3cr3tpass@127.0.0.1:${dead}/v3/0123456789abcdef0123?apikey=TOPSECRETKEY`;
    const secretHttp = `http://bob:an0therpass@127.0.0.1:${await freePort()}/v2/fedcba9876543210fedc`;
    const labels: unknown[] = [];
    const health: unknown[] = [];
    const p = new UpstreamPool({
      network: 'test',
      urls: [secretWs, { http: secretHttp, ws: secretWs }],
      config: cfg(),
      methods: METHODS,
      onHealth: (...args) => health.push(args),
      metrics: {
        observeUpstream: (_n, u) => labels.push(u),
        setUpstreamHealth: (_n, u) => labels.push(u),
        setUpstreamCircuit: (_n, u) => labels.push(u),
      },
    });
    cleanups.push(() => p.close());
    const err = await p.call('eth_chainId').catch((e: Error) => e);
    expect(err).toBeInstanceOf(Error);
    await sleep(300);
    const seen = JSON.stringify({
      status: p.status(),
      err: (err as Error).message,
      data: (err as { data?: unknown }).data,
      labels,
      health,
    });
    for (const secret of [
      'alice',
      's3cr3tpass',
      '0123456789abcdef0123',
      'TOPSECRETKEY',
      'bob',
      'an0therpass',
      'fedcba9876543210fedc',
    ])
      expect(seen).not.toContain(secret);
    expect(p.status()[0].url).toBe(`ws://127.0.0.1:${dead}`);
    expect(p.status()[1].url).toMatch(/^http:\/\/127\.0\.0\.1:\d+ \+ ws:\/\/127\.0\.0\.1:\d+$/);
    expect(redactUrl('wss://mainnet.infura.io/ws/v3/abc123')).toBe('wss://mainnet.infura.io:443');
    expect(
      redactIn('failed: https://eth-mainnet.g.alchemy.com/v2/KEY123456 down', [
        'https://eth-mainnet.g.alchemy.com/v2/KEY123456',
      ]),
    ).toBe('failed: https://eth-mainnet.g.alchemy.com:443 down');
  });

  it('the running service: /readyz, /metrics and the log show upstreams with credentials as scheme://host:port only', async () => {
    const dead = await freePort();
    const deadHttp = await freePort();
    const secrets = ['alice', 's3cr3tpass', '0123456789abcdef0123', 'TOPSECRETKEY', 'bob', 'an0therpass', 'fedcba98'];
    const wsUrl = `ws://alice:s3cr3tpass@127.0.0.1:${dead}/v3/0123456789abcdef0123?apikey=TOPSECRETKEY`;
    const httpUrl = `http://bob:an0therpass@127.0.0.1:${deadHttp}/v2/fedcba9876543210fedc`;
    const lines: string[] = [];
    const svc = await startService(
      {
        port: 0,
        logLevel: 'info',
        devKey: true,
        dataDir: mkdtempSync(join(tmpdir(), 'rpcgate-ws-redact-')),
        networks: { secretnet: { upstreams: [wsUrl, { http: httpUrl, ws: wsUrl }], chainId: 5, blockTime: 2 } },
      },
      { logDestination: { write: (s: string) => void lines.push(s) } },
    );
    cleanups.push(() => svc.stop());
    // A call fails (both upstreams down): the error, the health log, the metrics and /readyz are all looked at.
    const res = await fetch(svc.urls.secretnet.B, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[]}',
    });
    const answer = await res.text();
    await sleep(300);
    const readyz = await (await fetch(`${svc.url}/readyz`)).text();
    const metrics = await (await fetch(`${svc.url}/metrics`)).text();
    expect(readyz).toContain(`ws://127.0.0.1:${dead}`);
    expect(lines.join('\n')).toContain('upstream marked down');
    for (const text of [answer, readyz, metrics, lines.join('\n')])
      for (const secret of secrets) expect(text).not.toContain(secret);
  }, 30_000);

  it('config: ws(s):// URLs and {http, ws} pairs are accepted; anything else is refused with one clear line', () => {
    const ok = loadConfig({
      env: {
        RPCGATE_NETWORKS_MAINNET_UPSTREAMS: JSON.stringify([
          'wss://node.example/ws',
          { http: 'https://node.example', ws: 'wss://node.example/ws' },
        ]),
      },
    });
    expect(ok.networks.mainnet.upstreams).toEqual([
      'wss://node.example/ws',
      { http: 'https://node.example', ws: 'wss://node.example/ws' },
    ]);
    expect(() => loadConfig({ env: { RPCGATE_NETWORKS_MAINNET_UPSTREAMS: 'ftp://node.example' } })).toThrow(
      /\/networks\/mainnet\/upstreams\/0: must match pattern "\^\(https\?\|wss\?\):\/\/"/,
    );
    expect(() =>
      loadConfig({
        env: { RPCGATE_NETWORKS_MAINNET_UPSTREAMS: JSON.stringify([{ http: 'https://a', ws: 'https://b' }]) },
      }),
    ).toThrow(/\/networks\/mainnet\/upstreams\/0\/ws: must match pattern/);
  });
});

/** A WebSocket proxy in front of `targetPort` that counts, by method (and eth_subscribe by kind), what it forwards. */
async function countingWsProxy(targetPort: number) {
  const { WebSocketServer, WebSocket: Ws } = await import('ws');
  const counts = new Map<string, number>();
  const wss = new WebSocketServer({ host: '127.0.0.1', port: 0 });
  wss.on('connection', (client) => {
    const out = new Ws(`ws://127.0.0.1:${targetPort}/`);
    const queued: string[] = [];
    out.on('open', () => {
      for (const m of queued.splice(0)) out.send(m);
    });
    out.on('message', (d) => client.send(d.toString()));
    client.on('message', (d) => {
      const text = d.toString();
      const parsed = JSON.parse(text);
      for (const m of Array.isArray(parsed) ? parsed : [parsed]) {
        const name = m.method === 'eth_subscribe' ? `eth_subscribe:${JSON.stringify(m.params)}` : m.method;
        counts.set(name, (counts.get(name) ?? 0) + 1);
      }
      if (out.readyState === Ws.OPEN) out.send(text);
      else queued.push(text);
    });
    const end = () => {
      client.terminate();
      out.terminate();
    };
    client.on('close', end).on('error', end);
    out.on('close', end).on('error', end);
  });
  await new Promise<void>((r) => wss.once('listening', () => r()));
  const p = {
    port: (wss.address() as AddressInfo).port,
    counts,
    close: async () => {
      for (const c of wss.clients) c.terminate();
      await new Promise((r) => wss.close(r));
    },
  };
  cleanups.push(() => p.close());
  return p;
}

describe('subscriptions shared upstream', () => {
  it('30 clients on newHeads and logs (two filter shapes): one upstream newHeads subscription, logs read once per block', async () => {
    const a = await anvil(await freePort());
    const proxy = await countingWsProxy(a.port);
    const key = 'sharedSubsKey0123456789abcdef';
    const svc = await startService({
      port: 0,
      logLevel: 'silent',
      devKey: false,
      keys: [key],
      dataDir: mkdtempSync(join(tmpdir(), 'rpcgate-ws-shared-')),
      networks: { testnet: { upstreams: [`ws://127.0.0.1:${proxy.port}`], chainId: 31337 } },
    });
    cleanups.push(() => svc.stop());
    const { WebSocket: Ws } = await import('ws');
    const url = `${svc.url.replace(/^http/, 'ws')}/testnet/${key}`;
    const heads = new Map<string, string[]>();
    const sockets = await Promise.all(
      Array.from(
        { length: 30 },
        () =>
          new Promise<InstanceType<typeof Ws>>((res, rej) => {
            const s = new Ws(url);
            s.once('open', () => res(s));
            s.once('error', rej);
          }),
      ),
    );
    cleanups.push(() => {
      for (const s of sockets) s.terminate();
    });
    await Promise.all(
      sockets.map(
        (s, i) =>
          new Promise<void>((res) => {
            let answered = 0;
            const mine: string[] = [];
            heads.set(String(i), mine);
            s.on('message', (d) => {
              const m = JSON.parse(d.toString());
              if (m.id !== undefined && ++answered === 2) res();
              if (m.method === 'eth_subscription' && m.params.result?.parentHash) mine.push(m.params.result.hash);
            });
            s.send(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_subscribe', params: ['newHeads'] }));
            const filter = i % 2 === 0 ? {} : { address: DEV0 };
            s.send(JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'eth_subscribe', params: ['logs', filter] }));
          }),
      ),
    );
    const blocks = 5;
    for (let i = 0; i < blocks; i++) {
      await rpc(a.port, 'evm_mine');
      await sleep(100);
    }
    await sleep(1000);
    const numbers = await Promise.all(
      Array.from({ length: blocks + 1 }, (_, n) => rpc(a.port, 'eth_getBlockByNumber', [`0x${n.toString(16)}`, false])),
    );
    const hashes = numbers.map((b) => (b as { hash: string }).hash);
    // Every client: blocks 1..5 in order, each once — and not block 0, the head when it subscribed (a node's own
    // newHeads sends only blocks that arrive after the subscription; so does rpcgate's, though its shared upstream
    // subscription starts with a read of the current head).
    for (const got of heads.values()) expect(got).toEqual(hashes.slice(1));
    const subscribes = [...proxy.counts].filter(([k]) => k.startsWith('eth_subscribe'));
    expect(Object.fromEntries(subscribes)).toEqual({ 'eth_subscribe:["newHeads"]': 1 });
    // Logs: one read per block delivered for all 30 clients and both filter shapes, not one per client or per shape
    // (none for block 0: nobody is to get its logs).
    expect(proxy.counts.get('eth_getLogs') ?? 0).toBeLessThanOrEqual(blocks);
  }, 60_000);
});
