// Subscriptions through a running rpcgate process (issue 23 item 5), with the upstreams real anvil processes the test
// starts, freezes and kills by PID. A client subscribes on rpcgate (newHeads and logs) — never on the upstream — and
// must get every block of the chain and every block's log exactly once, in order:
//   - across an upstream SIGKILLed and started again: the restarted anvil replays the same chain (every anvil here is
//     deterministic: a fixed genesis timestamp, the same transaction and an explicit timestamp per block, so block n
//     has the same hash on every run and every process) and is ahead when rpcgate's socket comes back; the gap is
//     filled;
//   - across a failover: two anvils serve the same chain; one is killed, the other carries on;
//   - across a reorg (evm_revert, then other blocks): newHeads sends the new branch, and the logs of the dropped
//     blocks come again with removed: true (newest first), as geth does;
//   - a half-open upstream (SIGSTOP: its socket stays open and says nothing): detected within the pong deadline, the
//     head falls back to the HTTP upstream and the next block reaches the client.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { type AddressInfo, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { anvilBinary } from '../src/gateway/chain/anvil.js';
import { startRpcgateChild } from './helpers/rpcgate-child.js';
import { Raw, until } from './helpers/ws-client.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

const cleanups: (() => Promise<unknown> | unknown)[] = [];
afterEach(async () => {
  for (const f of cleanups.splice(0).reverse()) await f();
});

const KEY = 'wsE2eKey0123456789abcdefghij';
const FROM = '0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266';
/** Creation code that emits one LOG0 and deploys nothing: one log per block. */
const EMIT_LOG = '0x60006000a0';
const GENESIS_TS = 1_700_000_000;

async function freePort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const port = (srv.address() as AddressInfo).port;
  await new Promise((r) => srv.close(r));
  return port;
}

async function rpc(port: number, method: string, params: unknown[] = []): Promise<Json> {
  const res = await fetch(`http://127.0.0.1:${port}/`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
  const m = (await res.json()) as { result?: Json; error?: Json };
  if (m.error) throw new Error(`${method}: ${JSON.stringify(m.error)}`);
  return m.result;
}

interface Anvil {
  port: number;
  pid: number;
  /** Blocks mined so far (this process's view). */
  height: number;
  /** Mines block height+1 of the deterministic chain (its log-emitting transaction, its timestamp). */
  mine(salt?: number): Promise<void>;
  kill(): Promise<void>;
}

/** A deterministic anvil on `port` (no automine: blocks only when the test mines them). */
async function anvil(port: number): Promise<Anvil> {
  const child: ChildProcess = spawn(
    anvilBinary(),
    ['--host', '127.0.0.1', '--port', String(port), '--timestamp', String(GENESIS_TS), '--no-mining', '--silent'],
    { stdio: 'ignore' },
  );
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  const a: Anvil = {
    port,
    pid: child.pid!,
    height: 0,
    async mine(salt = 0) {
      await rpc(port, 'eth_sendTransaction', [{ from: FROM, data: EMIT_LOG, gas: '0x10000' }]);
      // The timestamp makes block n the same everywhere; a salt makes another branch.
      await rpc(port, 'evm_mine', [{ timestamp: GENESIS_TS + 12 * (a.height + 1) + salt }]);
      a.height++;
    },
    async kill() {
      if (child.exitCode === null && child.signalCode === null) {
        try {
          process.kill(child.pid!, 'SIGCONT');
        } catch {
          // gone
        }
        process.kill(child.pid!, 'SIGKILL');
      }
      await exited;
    },
  };
  cleanups.push(() => a.kill());
  const deadline = Date.now() + 15_000;
  for (;;) {
    try {
      await rpc(port, 'eth_chainId');
      return a;
    } catch {
      if (Date.now() > deadline) throw new Error(`anvil on ${port} did not start`);
      await sleep(50);
    }
  }
}

async function gate(
  upstreams: unknown[],
  ws = { pingIntervalMs: 200, pongTimeoutMs: 300, reconnectMinMs: 50, reconnectMaxMs: 300 },
) {
  const g = await startRpcgateChild({
    port: 0,
    host: '127.0.0.1',
    logLevel: 'info',
    devKey: false,
    keys: [KEY],
    dataDir: mkdtempSync(join(tmpdir(), 'rpcgate-ws-e2e-')),
    networks: { testnet: { upstreams, chainId: 31337, blockTime: 1 } },
    websocket: { pollIntervalMs: 200 },
    upstream: { probeIntervalMs: 200, ws },
  });
  cleanups.push(() => g.stop());
  return g;
}

/** A client of rpcgate subscribed to newHeads and to every log. */
async function client(url: string) {
  const c = await Raw.open(`${url.replace(/^http/, 'ws')}/testnet/${KEY}`);
  cleanups.push(() => c.socket.terminate());
  const heads = (await c.call('eth_subscribe', ['newHeads'])).result as string;
  const logs = (await c.call('eth_subscribe', ['logs', {}])).result as string;
  return {
    heads: () => c.notifications(heads).map((m: Json) => m.params.result.hash as string),
    logs: () =>
      c
        .notifications(logs)
        .map((m: Json) => `${m.params.result.blockHash}${m.params.result.removed ? ':removed' : ''}`),
  };
}

/** Hashes of blocks 1..n on an upstream. */
async function chainHashes(port: number, n: number): Promise<string[]> {
  return Promise.all(
    Array.from(
      { length: n },
      async (_, i) => (await rpc(port, 'eth_getBlockByNumber', [`0x${(i + 1).toString(16)}`, false])).hash,
    ),
  );
}

describe('subscriptions through rpcgate across upstream faults (real processes)', () => {
  it('an upstream SIGKILLed and restarted (ahead, same chain): every block and log once, in order', async () => {
    const port = await freePort();
    let a = await anvil(port);
    // Reconnects 1.5–3 s after the drop: the restarted anvil is ahead by then (a gap to fill, not blocks pushed one by
    // one as they are replayed).
    const g = await gate([`ws://127.0.0.1:${port}`], {
      pingIntervalMs: 200,
      pongTimeoutMs: 300,
      reconnectMinMs: 3000,
      reconnectMaxMs: 3000,
    });
    const c = await client(g.url);
    await sleep(300);
    for (let i = 0; i < 5; i++) await a.mine();
    await until('5 heads', () => c.heads().length >= 5);
    await a.kill();
    // Back on the same port: the chain replayed (blocks 1..5 the same) and 4 more the client has not seen.
    a = await anvil(port);
    for (let i = 0; i < 9; i++) await a.mine();
    await until('9 heads', () => c.heads().length >= 9, 20_000);
    for (let i = 0; i < 3; i++) await a.mine();
    await until('12 heads', () => c.heads().length >= 12);
    await until('12 logs', () => c.logs().length >= 12);
    await sleep(500); // anything late (a duplicate) shows
    const hashes = await chainHashes(port, 12);
    expect(c.heads()).toEqual(hashes);
    expect(c.logs()).toEqual(hashes);
  }, 60_000);

  it('a failover between two upstreams on the same chain: one killed, the other carries on; nothing missed or twice', async () => {
    const a = await anvil(await freePort());
    const b = await anvil(await freePort());
    const g = await gate([`ws://127.0.0.1:${a.port}`, `ws://127.0.0.1:${b.port}`]);
    const c = await client(g.url);
    await sleep(300);
    const both = async () => {
      await a.mine();
      await b.mine();
    };
    for (let i = 0; i < 4; i++) await both();
    await until('4 heads', () => c.heads().length >= 4);
    // A dies between the blocks; B mines three at once (a burst) and then more.
    await a.kill();
    for (let i = 0; i < 6; i++) await b.mine();
    await until('10 heads', () => c.heads().length >= 10, 20_000);
    await until('10 logs', () => c.logs().length >= 10);
    await sleep(500);
    const hashes = await chainHashes(b.port, 10);
    expect(c.heads()).toEqual(hashes);
    expect(c.logs()).toEqual(hashes);
  }, 60_000);

  it('a reorg (evm_revert, a longer other branch): newHeads sends the new branch; the dropped blocks’ logs come again with removed: true', async () => {
    const a = await anvil(await freePort());
    const g = await gate([`ws://127.0.0.1:${a.port}`]);
    const c = await client(g.url);
    await sleep(300);
    for (let i = 0; i < 3; i++) await a.mine();
    const snap = await rpc(a.port, 'evm_snapshot');
    const height = a.height;
    for (let i = 0; i < 2; i++) await a.mine();
    await until('5 heads', () => c.heads().length >= 5);
    await until('5 logs', () => c.logs().length >= 5);
    const old = await chainHashes(a.port, 5);
    expect(await rpc(a.port, 'evm_revert', [snap])).toBe(true);
    a.height = height;
    // The other branch: blocks 4', 5', 6' (other timestamps: other hashes), each with its log.
    for (let i = 0; i < 3; i++) await a.mine(5);
    const now = await chainHashes(a.port, 6);
    expect(now[3]).not.toBe(old[3]);
    await until('8 heads', () => c.heads().length >= 8, 20_000);
    await until('10 logs', () => c.logs().length >= 10);
    await sleep(500);
    expect(c.heads()).toEqual([...old, ...now.slice(3)]);
    expect(c.logs()).toEqual([...old, `${old[4]}:removed`, `${old[3]}:removed`, ...now.slice(3)]);
  }, 60_000);

  it('a half-open upstream (SIGSTOP: the socket stays open, nothing answers) is detected within the pong deadline; the next block comes over the HTTP upstream', async () => {
    // A (WebSocket) is the push source; B (its twin, HTTP only) is polled once A is known to be gone.
    const a = await anvil(await freePort());
    const b = await anvil(await freePort());
    const g = await gate([`ws://127.0.0.1:${a.port}`, `http://127.0.0.1:${b.port}/`], {
      pingIntervalMs: 200,
      pongTimeoutMs: 300,
      reconnectMinMs: 50,
      reconnectMaxMs: 300,
    });
    const c = await client(g.url);
    await sleep(300);
    for (let i = 0; i < 3; i++) {
      await a.mine();
      await b.mine();
    }
    await until('3 heads', () => c.heads().length >= 3);
    process.kill(a.pid, 'SIGSTOP');
    const stoppedAt = performance.now();
    await b.mine();
    // Undetected, the head would wait on A's silent socket for ever (it is pushed to: no polling). Detected within
    // ping + pong deadline (500 ms), then a poll of B (every 200 ms): well under 2 s with scheduling slack.
    await until('head 4', () => c.heads().length >= 4, 5000);
    const tookMs = performance.now() - stoppedAt;
    expect(tookMs).toBeLessThan(2000);
    await b.mine();
    await until('5 heads and logs', () => c.heads().length >= 5 && c.logs().length >= 5, 5000);
    await sleep(500);
    const hashes = await chainHashes(b.port, 5);
    expect(c.heads()).toEqual(hashes);
    expect(c.logs()).toEqual(hashes);
    // A was marked down for its socket's close — which SIGSTOP never does: rpcgate closed it (no pong).
    expect(g.log()).toMatch(/upstream marked down/);
    expect(g.log()).toMatch(/circuit open: upstream socket closed/);
  }, 60_000);
});
