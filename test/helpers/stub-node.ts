// A stand-in node for tests of rpcgate's own paths (metering, metrics, logs): answers at once (or after `delayMs`),
// single or batch; notifications get no answer. eth_blockNumber 0x10, eth_chainId 0x1, eth_getBalance 0x0, and
// eth_call always fails with the node error {code: -32000, message: "execution reverted"}, eth_getTransactionByHash
// with EIP-1474's {code: -32001, message: "resource not found"} (the code rpcgate itself must not use). `items()`
// counts calls; `traceparents()` lists the W3C trace header of each request. The JSON-RPC plumbing is the shared
// stand-in's (./standin-node.ts).
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { serveJsonRpc } from './standin-node.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

export interface StubNode {
  url: string;
  items(): number;
  /** The `traceparent` header of each request received, in order (absent: undefined). */
  traceparents(): (string | undefined)[];
  close(): Promise<void>;
}

export const NODE_ERROR = { code: -32000, message: 'execution reverted' };
export const NODE_NOT_FOUND = { code: -32001, message: 'resource not found' };

export function startStubNode(opts: { delayMs?: number } = {}): Promise<StubNode> {
  let items = 0;
  const traceparents: (string | undefined)[] = [];
  const answer = (m: Json) => {
    items++;
    if (m.id === undefined) return undefined;
    if (m.method === 'eth_call') return { jsonrpc: '2.0', id: m.id, error: NODE_ERROR };
    if (m.method === 'eth_getTransactionByHash') return { jsonrpc: '2.0', id: m.id, error: NODE_NOT_FOUND };
    const result = m.method === 'eth_chainId' ? '0x1' : m.method === 'eth_blockNumber' ? '0x10' : '0x0';
    return { jsonrpc: '2.0', id: m.id, result };
  };
  return serveJsonRpc(answer, {
    delayMs: opts.delayMs,
    // Sees every request first (the W3C trace header), then lets the shared plumbing answer it.
    route: (req) => {
      const tp = req.headers.traceparent;
      traceparents.push(Array.isArray(tp) ? tp.join(',') : tp);
      return false;
    },
  }).then((s) => ({
    url: s.url,
    items: () => items,
    traceparents: () => traceparents,
    close: s.close,
  }));
}

/** A local URL nothing listens on (a port bound and released). */
export async function deadUrl(): Promise<string> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', () => r()));
  const port = (s.address() as AddressInfo).port;
  await new Promise<void>((r) => s.close(() => r()));
  return `http://127.0.0.1:${port}`;
}
