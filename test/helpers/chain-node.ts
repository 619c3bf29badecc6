// A stand-in node with a chain the test moves by hand (mine, reorg, finality on/off), for the response cache's tests:
// real HTTP, single and batch (the shared stand-in's plumbing, ./standin-node.ts), calls counted per method. Blocks have hashes derived from (height, fork salt), so a
// reorg changes every hash from its height up; eth_getBalance answers from the block hash (a reorg changes it too);
// a transaction becomes visible (receipt, transaction) once the chain reaches its block. Optional latency.
import { createHash } from 'node:crypto';
import { serveJsonRpc } from './standin-node.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

const hex = (n: number) => `0x${n.toString(16)}`;
const h32 = (s: string) => `0x${createHash('sha256').update(s).digest('hex')}`;

export interface ChainNode {
  url: string;
  /** Calls per method (batch items one by one; eth_getBlockByNumber by tag as `eth_getBlockByNumber:<tag>`). */
  calls: Map<string, number>;
  count(method: string): number;
  head: number;
  /** Blocks below the head that count as finalized; null = the node refuses the "finalized" tag. */
  finalityDepth: number | null;
  hashAt(n: number): string;
  mine(n?: number): void;
  /** Replaces every block from `height` up (same head number, new hashes). */
  reorg(height: number): void;
  /** A transaction included at block `n` (visible once the head reaches it). */
  addTx(hash: string, n: number): void;
  blockJson(n: number): Json;
  close(): Promise<void>;
}

export function startChainNode(
  opts: { head?: number; finalityDepth?: number | null; delayMs?: number } = {},
): Promise<ChainNode> {
  const salts = new Map<number, number>(); // height → fork salt (absent = 0)
  const txs = new Map<string, number>();
  const calls = new Map<string, number>();
  const node = {
    head: opts.head ?? 100,
    finalityDepth: opts.finalityDepth === undefined ? 8 : opts.finalityDepth,
  } as ChainNode;
  const hashAt = (n: number) => h32(`${n}:${salts.get(n) ?? 0}`);
  const block = (n: number) =>
    n < 0 || n > node.head
      ? null
      : {
          number: hex(n),
          hash: hashAt(n),
          parentHash: n === 0 ? `0x${'00'.repeat(32)}` : hashAt(n - 1),
          timestamp: hex(1_700_000_000 + n),
          transactions: [],
        };
  const byTag = (t: string): number | undefined => {
    if (t === 'latest' || t === 'pending') return node.head;
    if (t === 'earliest') return 0;
    if (t === 'finalized' || t === 'safe')
      return node.finalityDepth === null ? undefined : Math.max(0, node.head - node.finalityDepth);
    return Number(t);
  };
  const answer = (m: Json): Json => {
    // Reads by tag (the cache's head poll) are counted apart: `eth_getBlockByNumber:latest`.
    const tag =
      m.method === 'eth_getBlockByNumber' && typeof m.params?.[0] === 'string' && !m.params[0].startsWith('0x')
        ? `:${m.params[0]}`
        : '';
    calls.set(m.method + tag, (calls.get(m.method + tag) ?? 0) + 1);
    const ok = (result: unknown) => ({ jsonrpc: '2.0', id: m.id, result });
    const err = (code: number, message: string) => ({ jsonrpc: '2.0', id: m.id, error: { code, message } });
    const p = m.params ?? [];
    switch (m.method) {
      case 'eth_chainId':
        return ok('0x7a69');
      case 'eth_blockNumber':
        return ok(hex(node.head));
      case 'eth_gasPrice':
        return ok(hex(1000 + node.head));
      case 'eth_getBlockByNumber': {
        const n = byTag(p[0]);
        if (n === undefined) return err(-32602, `unknown block tag ${p[0]}`);
        return ok(block(n));
      }
      case 'eth_getBlockByHash': {
        for (let n = node.head; n >= 0; n--) if (hashAt(n) === p[0]) return ok(block(n));
        return ok(null);
      }
      case 'eth_getBalance': {
        const n = byTag(p[1] ?? 'latest');
        if (n === undefined || n > node.head) return err(-32000, 'header not found');
        return ok(`0x${hashAt(n).slice(2, 12).replace(/^0+/, '')}`);
      }
      case 'eth_getTransactionReceipt':
      case 'eth_getTransactionByHash': {
        const n = txs.get(p[0]);
        if (n === undefined || n > node.head) return ok(null);
        return ok({ transactionHash: p[0], blockNumber: hex(n), blockHash: hashAt(n), status: '0x1', logs: [] });
      }
      default:
        return err(-32601, `method ${m.method} not supported`);
    }
  };
  Object.assign(node, {
    calls,
    count: (m: string) => calls.get(m) ?? 0,
    hashAt,
    mine: (n = 1) => void (node.head += n),
    reorg: (height: number) => {
      for (let n = height; n <= node.head; n++) salts.set(n, (salts.get(n) ?? 0) + 1);
    },
    addTx: (hash: string, n: number) => void txs.set(hash, n),
    blockJson: block,
  });
  return serveJsonRpc(answer, { delayMs: opts.delayMs }).then((s) => {
    node.url = s.url;
    node.close = s.close;
    return node;
  });
}
