// The node API's conformance run (`rpcgate conformance <url>` without --spec): the toolkit's generic run
// (packages/toolkit/src/conformance) over openrpc.json with the EVM profile — the chain's real data discovered first
// (./discover.ts) and every example adapted to it (./adapt.ts), plus protocol checks that name EVM methods.
import { readFileSync } from 'node:fs';
import {
  batchCheck,
  expectCode,
  runConformance,
  type ConformanceContract,
  type ConformanceProfile,
  type ConformanceReport,
  type OpenRpcDoc,
} from '@rpcgate/toolkit/conformance';
import type { MethodTable, ValidatorTable } from '@rpcgate/client';
import { PATHS } from '../../paths.js';
import { adaptParams } from './adapt.js';
import { discoverChain, type ChainFacts } from './discover.js';

export { adaptParams, INVALID_RAW_TX, KECCAK_VECTORS, TOTAL_SUPPLY, type Adaptation } from './adapt.js';
export { discoverChain, OPTIONAL_METHODS, type ChainFacts } from './discover.js';

export interface EvmProfileOptions {
  /** Blocks scanned back from the head for a real log (default 100000, in growing eth_getLogs windows). */
  scanBlocks?: number;
  /** First eth_getLogs window (default 16 blocks). */
  logWindow?: number;
  /** Recent blocks read one by one for a transaction when no log exists (default 256). */
  txScanBlocks?: number;
}

/** JSON-RPC checks phrased with EVM methods every node has. */
export const EVM_PROTOCOL_CHECKS = [
  expectCode('protocol:invalid-params', 'eth_getBalance', ['0xnot-an-address', 'latest'], -32602, 'malformed address'),
  expectCode('protocol:missing-params', 'eth_getBlockByNumber', [], -32602, 'required params missing'),
  batchCheck([
    { method: 'eth_chainId', params: [] },
    { method: 'eth_blockNumber', params: [] },
  ]),
];

export function evmProfile(opts: EvmProfileOptions = {}): ConformanceProfile<ChainFacts> {
  return {
    discover: (rpc) =>
      discoverChain(rpc, {
        scanBlocks: opts.scanBlocks ?? 100_000,
        logWindow: opts.logWindow ?? 16,
        txScanBlocks: opts.txScanBlocks ?? 256,
      }),
    summarize: (c) => [
      `chain ${c.chainId ?? '?'}, head ${BigInt(c.latest.number)} ${c.latest.hash}`,
      `real tx: ${c.tx ? `${c.tx.hash} (block ${BigInt(c.tx.blockNumber)}, index ${BigInt(c.tx.index)})` : 'none found'}`,
      `real log: ${c.log ? `${c.log.address} block ${BigInt(c.log.blockNumber)}` : 'none found'}`,
      ...(c.unsupported.length ? [`not implemented by the node: ${c.unsupported.join(', ')}`] : []),
    ],
    plan: (method, paramNames, example, facts) => adaptParams(method, paramNames, example, facts),
    protocolChecks: EVM_PROTOCOL_CHECKS,
  };
}

const NODE_CONTRACT = PATHS.openrpc;

/** openrpc.json with its generated descriptor and validators (loaded on first use). */
export async function loadNodeContract(): Promise<ConformanceContract> {
  const [{ methods }, { validators }] = await Promise.all([
    import('../../../../generated/node/methods.js'),
    import('../../../../generated/node/validators.js'),
  ]);
  const document = JSON.parse(readFileSync(NODE_CONTRACT, 'utf8')) as OpenRpcDoc;
  return { document, methods: methods as unknown as MethodTable, validators: validators as unknown as ValidatorTable };
}

export interface NodeConformanceOptions extends EvmProfileOptions {
  only?: string[];
  timeoutMs?: number;
  headers?: Record<string, string>;
  /** Another EVM contract to check against (default openrpc.json + generated/node). */
  contract?: ConformanceContract;
}

/** Checks an EVM JSON-RPC endpoint (a node, another provider, rpcgate) against the node contract. */
export async function runNodeConformance(
  url: string,
  opts: NodeConformanceOptions = {},
): Promise<ConformanceReport<ChainFacts>> {
  return runConformance(url, {
    contract: opts.contract ?? (await loadNodeContract()),
    profile: evmProfile(opts),
    only: opts.only,
    timeoutMs: opts.timeoutMs,
    headers: opts.headers,
  });
}
