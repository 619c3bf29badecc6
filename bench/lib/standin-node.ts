// A stand-in EVM node for latency benchmarks: every HTTP request (single or batch) is answered after `latencyMs`, like a
// remote provider. Its chain moves with the clock: head = HEAD0 + floor((now - t0) / blockMs), finalized = head - 64;
// answers are shaped like a node's (blocks with hash/parentHash, receipts with blockNumber, logs, 32-byte eth_call
// words) and derived from (method, params, block), so the same question gets the same answer. Counts the calls it gets.
// Request parsing and the batch answer are the shared stand-in's (test/helpers/standin-node.ts).
// Run: node --import tsx bench/lib/standin-node.ts <latencyMs> <blockMs>; prints `STANDIN_READY <url> <t0> <head0>`;
// SIGUSR2 prints `STANDIN_STATS {"calls":n,"requests":n}`.
import { createHash } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readBody, rpcReply, sendJson } from '../../test/helpers/standin-node.js';

const LATENCY = Number(process.argv[2] ?? 20);
const BLOCK_MS = Number(process.argv[3] ?? 2000);
const HEAD0 = 20_000_000;
const t0 = Date.now();
const head = () => HEAD0 + Math.floor((Date.now() - t0) / BLOCK_MS);
const hex = (n: number) => `0x${n.toString(16)}`;
const h32 = (s: string) => `0x${createHash('sha1').update(s).digest('hex').padEnd(64, '0')}`;
let calls = 0;
let requests = 0;

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

function blockNo(tag: unknown): number {
  if (tag === undefined || tag === 'latest' || tag === 'pending') return head();
  if (tag === 'finalized') return head() - 64;
  if (tag === 'safe') return head() - 32;
  if (tag === 'earliest') return 0;
  return Number(tag);
}

function block(n: number, full: boolean): Json {
  if (n > head()) return null;
  const txs = Array.from({ length: 8 }, (_, i) => h32(`tx:${n}:${i}`));
  return {
    number: hex(n),
    hash: h32(`b:${n}`),
    parentHash: h32(`b:${n - 1}`),
    timestamp: hex(1_700_000_000 + n * 12),
    miner: `0x${'11'.repeat(20)}`,
    gasLimit: '0x1c9c380',
    gasUsed: '0x9a7e2c',
    baseFeePerGas: '0x3b9aca00',
    logsBloom: `0x${'00'.repeat(256)}`,
    extraData: '0x',
    transactions: full
      ? txs.map((h, i) => ({
          hash: h,
          blockNumber: hex(n),
          transactionIndex: hex(i),
          from: `0x${'22'.repeat(20)}`,
          to: `0x${'33'.repeat(20)}`,
          value: '0x0',
          input: '0x',
        }))
      : txs,
    uncles: [],
  };
}

function answer(m: Json): Json {
  calls++;
  const p = m.params ?? [];
  const ok = (result: unknown) => ({ jsonrpc: '2.0', id: m.id, result });
  switch (m.method) {
    case 'eth_chainId':
      return ok('0x1');
    case 'eth_blockNumber':
      return ok(hex(head()));
    case 'eth_gasPrice':
      return ok(hex(30_000_000_000 + head()));
    case 'eth_getBlockByNumber':
      return ok(block(blockNo(p[0]), p[1] === true));
    case 'eth_getTransactionReceipt':
    case 'eth_getTransactionByHash': {
      // tx hashes of the trace are `0x<block in hex, padded>`: included in that block
      const n = parseInt(String(p[0]).slice(2, 18), 16);
      if (!(n <= head())) return ok(null);
      return ok({
        transactionHash: p[0],
        blockNumber: hex(n),
        blockHash: h32(`b:${n}`),
        transactionIndex: '0x0',
        status: '0x1',
        gasUsed: '0x5208',
        logs: [{ address: `0x${'44'.repeat(20)}`, topics: [h32('t')], data: '0x', blockNumber: hex(n) }],
      });
    }
    case 'eth_getLogs': {
      const f = p[0] ?? {};
      const to = blockNo(f.toBlock);
      return ok(
        Array.from({ length: 3 }, (_, i) => ({
          address: `0x${'44'.repeat(20)}`,
          topics: [h32('t'), h32(`x${i}`)],
          data: `0x${'00'.repeat(32)}`,
          blockNumber: hex(to),
          logIndex: hex(i),
        })),
      );
    }
    case 'eth_call':
      return ok(h32(`call:${JSON.stringify(p[0])}:${blockNo(p[1])}`));
    case 'eth_getBalance':
    case 'eth_getTransactionCount':
    case 'eth_getCode':
      return ok(hex(blockNo(p[1]) % 997));
    default:
      return { jsonrpc: '2.0', id: m.id, error: { code: -32601, message: 'not supported' } };
  }
}

const server = createServer(async (req, res) => {
  const text = await readBody(req);
  requests++;
  setTimeout(() => sendJson(res, rpcReply(text, answer)), LATENCY);
});
server.keepAliveTimeout = 60_000;
process.on('SIGUSR2', () => process.stdout.write(`STANDIN_STATS ${JSON.stringify({ calls, requests })}\n`));
process.once('SIGTERM', () => process.exit(0));
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`STANDIN_READY http://127.0.0.1:${(server.address() as AddressInfo).port}/ ${t0} ${HEAD0}\n`);
});
