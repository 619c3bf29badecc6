// The shared stand-in node (test/helpers/standin-node.ts): its own process, a chain every stand-in of the same origin
// agrees on, and the behaviours of a fleet's nodes (pruned, lagging, getLogs limits, missing methods, 429).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Standin, balanceAt, logsOf, startStandin } from './helpers/standin-node.js';

const ADDR = `0x${'11'.repeat(20)}`;
const t0 = Date.now();
const chain = { t0, h0: 1000, blockMs: 0 };
let archive: Standin;
let pruned: Standin;
let limited: Standin;

async function rpc(url: string, body: unknown): Promise<{ status: number; json: unknown }> {
  const res = await fetch(url, { method: 'POST', body: JSON.stringify(body) });
  return { status: res.status, json: res.status === 200 ? await res.json() : await res.text() };
}
const call = (url: string, method: string, params: unknown[]) =>
  rpc(url, { jsonrpc: '2.0', id: 1, method, params }).then(
    (r) => r.json as { result?: unknown; error?: { code: number; message: string } },
  );

beforeAll(async () => {
  [archive, pruned, limited] = await Promise.all([
    startStandin(chain),
    startStandin({ ...chain, stateDepth: 128, lag: 20, missing: ['eth_getCode'] }),
    startStandin({ ...chain, logsMaxRange: 500, logsMaxResults: 200, rps: 5 }),
  ]);
});
afterAll(async () => {
  await Promise.all([archive, pruned, limited].map((s) => s?.stop()));
});

describe('stand-in node', () => {
  it('runs in its own process and serves a deterministic chain the stand-ins agree on', async () => {
    expect(new Set([archive.pid, pruned.pid, limited.pid, process.pid]).size).toBe(4);
    expect((await call(archive.url, 'eth_blockNumber', [])).result).toBe('0x3e8');
    expect((await call(archive.url, 'eth_getBalance', [ADDR, '0x10'])).result).toBe(balanceAt(ADDR, 16));
    expect(balanceAt(ADDR, 16)).not.toBe(balanceAt(ADDR, 17));
    const a = await call(archive.url, 'eth_getLogs', [{ fromBlock: '0x1', toBlock: '0x5' }]);
    expect(a.result).toEqual([1, 2, 3, 4, 5].flatMap(logsOf));
    const b = await call(limited.url, 'eth_getLogs', [{ fromBlock: '0x1', toBlock: '0x5' }]);
    expect(b.result).toEqual(a.result);
  });

  it('batches: one answer per call, notifications dropped', async () => {
    const r = await rpc(archive.url, [
      { jsonrpc: '2.0', id: 1, method: 'eth_chainId', params: [] },
      { jsonrpc: '2.0', method: 'eth_chainId', params: [] },
      { jsonrpc: '2.0', id: 2, method: 'eth_blockNumber', params: [] },
    ]);
    expect((r.json as { id: number }[]).map((x) => x.id)).toEqual([1, 2]);
  });

  it('pruned and lagging: missing trie node below head − depth, header not found above its head, -32601', async () => {
    expect((await call(pruned.url, 'eth_blockNumber', [])).result).toBe('0x3d4'); // 1000 − 20
    const old = await call(pruned.url, 'eth_getBalance', [ADDR, '0x10']);
    expect(old.error?.code).toBe(-32000);
    expect(old.error?.message).toMatch(/missing trie node/);
    expect((await call(pruned.url, 'eth_getBalance', [ADDR, '0x3d4'])).result).toBe(balanceAt(ADDR, 980));
    expect((await call(pruned.url, 'eth_getBalance', [ADDR, '0x3e0'])).error?.message).toBe('header not found');
    expect((await call(pruned.url, 'eth_getCode', [ADDR, 'latest'])).error?.code).toBe(-32601);
  });

  it('getLogs limits: range and result count refused with -32005; over rps: 429', async () => {
    const wide = await call(limited.url, 'eth_getLogs', [{ fromBlock: '0x0', toBlock: '0x1f4' }]);
    expect(wide.error).toEqual({ code: -32005, message: 'exceed maximum block range: 500' });
    const many = await call(limited.url, 'eth_getLogs', [{ fromBlock: '0x0', toBlock: '0x1f3' }]);
    expect(many.error?.message).toBe('query returned more than 10000 results');
    // 5 per second: of 12 back to back some are refused with 429 (the calls above used 2 of this second's or the last)
    const statuses = await Promise.all(
      Array.from({ length: 12 }, () => rpc(limited.url, { jsonrpc: '2.0', id: 1, method: 'eth_chainId' })),
    );
    expect(statuses.filter((s) => s.status === 429).length).toBeGreaterThanOrEqual(5);
    expect(await limited.stats()).toMatchObject({ eth_getLogs: 3 });
  });
});
