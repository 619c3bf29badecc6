// Chain discovery: before any method is checked, find real data on the live chain (latest block, a real
// transaction, a real log) so that the contract's examples can be adapted to it. The examples were written
// for some other chain; sent as they are, most would answer `null` and prove little.
import type { RpcTransport } from '@rpcgate/toolkit/conformance';

export interface ChainFacts {
  chainId?: string;
  latest: { number: string; hash: string };
  /** A real transaction — the one that emitted `log` when a log was found. */
  tx?: { hash: string; blockHash: string; blockNumber: string; index: string; from: string; to: string | null };
  /** A real log, preferably one with topics (e.g. an ERC-20 Transfer). */
  log?: {
    address: string;
    topics: string[];
    blockNumber: string;
    blockHash: string;
    transactionHash: string;
    logIndex: string;
  };
  /** Blocks looked at (for the report). */
  scanned: { logs: number; blocks: number };
  /** Methods of OPTIONAL_METHODS the node answered "method not found" (-32601) at discovery. */
  unsupported: string[];
}

/** Standard methods that well-known nodes leave out: anvil has no net_peerCount, geth dropped eth_protocolVersion.
 *  Only these may be missing (their check is skipped, saying so); any other method answering -32601 fails. */
export const OPTIONAL_METHODS: readonly string[] = ['net_peerCount', 'eth_protocolVersion'];

export interface DiscoverOptions {
  /** How far back from the head to look for a log (eth_getLogs windows are cheap on a quiet chain). */
  scanBlocks: number;
  /** Size of the first eth_getLogs window; windows double up to 2048 blocks (small first: a busy chain has many logs per block). */
  logWindow: number;
  /** How many recent blocks to read one by one for a transaction when no log was found. */
  txScanBlocks: number;
}

const hex = (n: number | bigint) => `0x${n.toString(16)}`;

export class DiscoveryError extends Error {}

async function must(rpc: RpcTransport, method: string, params: unknown[]): Promise<unknown> {
  const out = await rpc.call(method, params);
  if (out.transport) throw new DiscoveryError(`${method}: ${out.transport}`);
  if (out.error) throw new DiscoveryError(`${method}: node error ${out.error.code} ${out.error.message}`);
  if (out.envelope.length) throw new DiscoveryError(`${method}: ${out.envelope.join('; ')}`);
  return out.result;
}

function asRecord(v: unknown, what: string): Record<string, unknown> {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw new DiscoveryError(`${what} is not an object`);
  return v as Record<string, unknown>;
}

export async function discoverChain(rpc: RpcTransport, opts: DiscoverOptions): Promise<ChainFacts> {
  const headHex = await must(rpc, 'eth_blockNumber', []);
  if (typeof headHex !== 'string' || !/^0x[0-9a-f]+$/i.test(headHex))
    throw new DiscoveryError(`eth_blockNumber returned ${JSON.stringify(headHex)}`);
  const head = BigInt(headHex);
  // Pin the head by number (not "latest") so number and hash belong together.
  const headBlock = asRecord(await must(rpc, 'eth_getBlockByNumber', [hex(head), false]), `block ${hex(head)}`);
  const facts: ChainFacts = {
    latest: { number: hex(head), hash: String(headBlock.hash) },
    scanned: { logs: 0, blocks: 0 },
    unsupported: [],
  };
  const chainId = await rpc.call('eth_chainId', []);
  if (typeof chainId.result === 'string') facts.chainId = chainId.result;

  const floor = head - BigInt(opts.scanBlocks) + 1n > 0n ? head - BigInt(opts.scanBlocks) + 1n : 0n;

  // 1. A log, walking back in growing windows; its transaction becomes the real transaction.
  let window = BigInt(opts.logWindow);
  for (let to = head; to >= floor && !facts.log; to -= window, window = window * 2n > 2048n ? 2048n : window * 2n) {
    const from = to - window + 1n > floor ? to - window + 1n : floor;
    const out = await rpc.call('eth_getLogs', [{ fromBlock: hex(from), toBlock: hex(to) }]);
    facts.scanned.logs += Number(to - from + 1n);
    if (Array.isArray(out.result)) {
      // A node that limits ranges answers an error: keep walking, the block scan below is the fallback.
      const logs = out.result as Record<string, unknown>[];
      const pick = logs.find((l) => Array.isArray(l.topics) && l.topics.length > 0) ?? logs[0];
      if (pick && typeof pick.transactionHash === 'string') {
        facts.log = {
          address: String(pick.address),
          topics: (pick.topics as string[]) ?? [],
          blockNumber: String(pick.blockNumber),
          blockHash: String(pick.blockHash),
          transactionHash: pick.transactionHash,
          logIndex: String(pick.logIndex),
        };
      }
    }
    if (from === floor) break;
  }

  if (facts.log) {
    const tx = await rpc.call('eth_getTransactionByHash', [facts.log.transactionHash]);
    if (tx.result && typeof tx.result === 'object') facts.tx = txFacts(tx.result as Record<string, unknown>);
  }

  // Ask each optional method once: "method not found" here marks it unsupported by this node, not a failure.
  for (const m of OPTIONAL_METHODS) {
    const out = await rpc.call(m, []);
    if (out.error?.code === -32601) facts.unsupported.push(m);
  }

  // 2. No log (or its tx was not readable): any transaction in a recent block.
  const txFloor = head - BigInt(opts.txScanBlocks) + 1n > 0n ? head - BigInt(opts.txScanBlocks) + 1n : 0n;
  for (let n = head; n >= txFloor && !facts.tx; n--) {
    const block = await rpc.call('eth_getBlockByNumber', [hex(n), true]);
    facts.scanned.blocks++;
    const txs = (block.result as { transactions?: unknown[] } | null)?.transactions;
    const first = Array.isArray(txs) ? txs.find((t) => typeof t === 'object' && t !== null) : undefined;
    if (first) facts.tx = txFacts(first as Record<string, unknown>);
    if (n === 0n) break;
  }
  return facts;
}

function txFacts(t: Record<string, unknown>): ChainFacts['tx'] {
  return {
    hash: String(t.hash),
    blockHash: String(t.blockHash),
    blockNumber: String(t.blockNumber),
    index: String(t.transactionIndex),
    from: String(t.from),
    to: typeof t.to === 'string' ? t.to : null,
  };
}
