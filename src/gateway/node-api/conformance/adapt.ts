// Adapting the contract's first example of each method to the live chain. Each positional param gets a
// role (what kind of real value it stands for); the example's value decides the form (a tag stays a tag,
// a number becomes a real number, a hash a real hash), so the call keeps the shape the contract shows.
import { brief, type ParamPlan, type PlannedCall } from '@rpcgate/toolkit/conformance';
import type { ChainFacts } from './discover.js';

export type Role =
  | 'keep' // use the example value as it is (flags, counts, slots, percentiles)
  | 'block' // block number / tag / hash of the real transaction's block
  | 'stateBlock' // block for state reads: the head (non-archive nodes keep recent state only)
  | 'blockHash' // the real transaction's block hash
  | 'blockNumber' // the real transaction's block number
  | 'txHash'
  | 'txIndex'
  | 'account' // an address with history: the real transaction's sender
  | 'contract' // an address with code: the real log's emitter
  | 'filter'
  | 'call'
  | 'estimate'
  | 'rawTx';

/** Roles of the contract's methods, by position. Methods not listed fall back to `roleByName`. */
export const ROLES: Record<string, Role[]> = {
  eth_getBlockByNumber: ['block', 'keep'],
  eth_getBlockByHash: ['blockHash', 'keep'],
  eth_feeHistory: ['keep', 'stateBlock', 'keep'],
  eth_getBalance: ['account', 'stateBlock'],
  eth_getTransactionCount: ['account', 'stateBlock'],
  eth_getCode: ['contract', 'stateBlock'],
  eth_getStorageAt: ['contract', 'keep', 'stateBlock'],
  eth_call: ['call', 'stateBlock'],
  eth_estimateGas: ['estimate', 'stateBlock'],
  eth_getLogs: ['filter'],
  eth_getTransactionByHash: ['txHash'],
  eth_getTransactionReceipt: ['txHash'],
  eth_getTransactionByBlockHashAndIndex: ['blockHash', 'txIndex'],
  eth_getTransactionByBlockNumberAndIndex: ['blockNumber', 'txIndex'],
  eth_getBlockTransactionCountByHash: ['blockHash'],
  eth_getBlockTransactionCountByNumber: ['block'],
  eth_getBlockReceipts: ['block'],
  eth_sendRawTransaction: ['rawTx'],
  // Filters: eth_newFilter takes a real filter; an id is the example's (unknown on a live endpoint, so the conformant
  // answer is the node's -32000 "filter not found", or false for eth_uninstallFilter).
  eth_newFilter: ['filter'],
  eth_getFilterChanges: ['keep'],
  eth_getFilterLogs: ['keep'],
  eth_uninstallFilter: ['keep'],
  eth_subscribe: ['keep', 'keep'],
  eth_unsubscribe: ['keep'],
  eth_getProof: ['contract', 'keep', 'stateBlock'],
  eth_createAccessList: ['call', 'stateBlock'],
  eth_getUncleByBlockHashAndIndex: ['blockHash', 'keep'],
  eth_getUncleByBlockNumberAndIndex: ['block', 'keep'],
  eth_getUncleCountByBlockHash: ['blockHash'],
  eth_getUncleCountByBlockNumber: ['block'],
  web3_sha3: ['keep'],
};

/** Methods that only work over a WebSocket: over HTTP (what conformance speaks) -32601 is the conformant answer. */
const SOCKET_ONLY = new Set(['eth_subscribe', 'eth_unsubscribe']);

/** For methods a future contract adds: guess from the param name. */
export function roleByName(method: string, name: string, example: unknown): Role {
  const n = name.toLowerCase();
  if (/filter/.test(n)) return 'filter';
  if (/block/.test(n) && /hash/.test(n)) return 'blockHash';
  if (/block/.test(n)) return 'block';
  if (/hash/.test(n)) return /block/i.test(method) ? 'blockHash' : 'txHash';
  if (/index/.test(n)) return 'txIndex';
  if (/address|account/.test(n)) return 'account';
  if (typeof example === 'object' && example !== null && /transaction|call|tx/.test(n)) return 'call';
  return 'keep';
}

/** `totalSupply()` — a view every ERC-20 has; on another contract it simply reverts or returns 0x. */
export const TOTAL_SUPPLY = '0x18160ddd';
/** Keccak-256 test vectors: web3_sha3 of a known input must give exactly this digest. */
export const KECCAK_VECTORS: Readonly<Record<string, string>> = {
  '0x': '0xc5d2460186f7233c927e7db2dcc703c0e500b653ca82273b7bfad8045d85a470',
  '0x68656c6c6f20776f726c64': '0x47173285a8d7341e5e972fc677286384f802f8ef42a5ec5f03bbfa254cb01fad', // "hello world"
};
/** keccak256 of empty code: the code hash of an account without code. */
const EMPTY_CODE_HASH = KECCAK_VECTORS['0x'];
/** Deliberately undecodable: no node can accept it, so the node's error is the conformant answer. */
export const INVALID_RAW_TX = '0x00';

const TAGS = new Set(['latest', 'earliest', 'pending', 'safe', 'finalized']);
const isHash = (v: unknown): v is string => typeof v === 'string' && /^0x[0-9a-fA-F]{64}$/.test(v);
const isQuantity = (v: unknown): v is string => typeof v === 'string' && /^0x[0-9a-fA-F]+$/.test(v) && !isHash(v);
const dec = (h: string) => BigInt(h);
const hex = (n: bigint) => `0x${n.toString(16)}`;

/** A call planned for the live chain (the toolkit's PlannedCall). */
export type Adapted = PlannedCall;

export type Adaptation = ParamPlan;

class NeedsFact extends Error {}

export function adaptParams(
  method: string,
  paramNames: readonly string[],
  example: readonly unknown[],
  facts: ChainFacts,
): Adaptation {
  if (facts.unsupported?.includes(method))
    return {
      skip: `the node does not implement ${method} (-32601 at discovery; an optional method some nodes leave out)`,
    };
  const roles = ROLES[method] ?? paramNames.map((n, i) => roleByName(method, n, example[i]));
  const notes: string[] = [];
  const params: unknown[] = [];
  try {
    // Trailing optional params the example leaves out stay out.
    for (let i = 0; i < example.length; i++) params.push(adaptOne(roles[i] ?? 'keep', example[i], facts, notes));
  } catch (err) {
    if (err instanceof NeedsFact) return { skip: err.message };
    throw err;
  }
  const out: Adapted = { params, note: notes.join('; ') || undefined };
  out.expect = expectation(method, params, facts);
  if (method === 'eth_sendRawTransaction') {
    out.expectError = true;
    out.note = 'invalid raw tx 0x00 sent on purpose: a node error is the conformant answer';
  }
  if (method === 'eth_getFilterChanges' || method === 'eth_getFilterLogs') {
    // The example's filter id exists on no live endpoint: geth's, anvil's and rpcgate's answer is -32000 "filter not found".
    out.expectErrorCode = -32000;
    out.note = 'the contract example\'s filter id is unknown here: -32000 "filter not found" is the conformant answer';
  }
  if (SOCKET_ONLY.has(method)) {
    out.expectErrorCode = -32601;
    out.note = 'WebSocket only: over HTTP, -32601 (notifications not supported) is the conformant answer';
  }
  return out;
}

function needTx(facts: ChainFacts): NonNullable<ChainFacts['tx']> {
  if (!facts.tx)
    throw new NeedsFact(
      `no transaction on the chain near the head (looked for logs in ${facts.scanned.logs} blocks, for transactions in ${facts.scanned.blocks})`,
    );
  return facts.tx;
}

/** The block a block-valued param should point at: the real tx's block when there is one, else the head. */
function blockRef(example: unknown, facts: ChainFacts, state: boolean): unknown {
  const at = !state && facts.tx ? { number: facts.tx.blockNumber, hash: facts.tx.blockHash } : facts.latest;
  if (typeof example === 'string' && TAGS.has(example)) return example;
  if (isHash(example)) return at.hash;
  if (isQuantity(example)) return at.number;
  if (typeof example === 'object' && example !== null) {
    // EIP-1898 block object
    const o = example as Record<string, unknown>;
    if ('blockHash' in o) return { ...o, blockHash: at.hash };
    if ('blockNumber' in o) return { ...o, blockNumber: at.number };
  }
  return example;
}

function adaptOne(role: Role, example: unknown, facts: ChainFacts, notes: string[]): unknown {
  switch (role) {
    case 'keep':
      return example;
    case 'block':
      return blockRef(example, facts, false);
    case 'stateBlock':
      return blockRef(example, facts, true);
    case 'blockHash':
      return needTx(facts).blockHash;
    case 'blockNumber':
      return needTx(facts).blockNumber;
    case 'txHash':
      return needTx(facts).hash;
    case 'txIndex':
      return needTx(facts).index;
    case 'account':
      return needTx(facts).from;
    case 'contract':
      if (facts.log) return facts.log.address;
      notes.push('no log found: used the tx recipient, may have no code');
      return needTx(facts).to ?? needTx(facts).from;
    case 'filter': {
      const o = (typeof example === 'object' && example !== null ? example : {}) as Record<string, unknown>;
      if (facts.log) {
        const l = facts.log;
        const topics = l.topics.length ? [l.topics[0]] : undefined;
        if ('blockHash' in o) return { blockHash: l.blockHash, address: l.address, ...(topics && { topics }) };
        const n = dec(l.blockNumber);
        return {
          fromBlock: hex(n > 0n ? n - 1n : 0n),
          toBlock: l.blockNumber,
          address: l.address,
          ...(topics && { topics }),
        };
      }
      notes.push('no log found in the scanned range: filter over the head block only');
      return { fromBlock: facts.latest.number, toBlock: facts.latest.number };
    }
    case 'call': {
      const o = (typeof example === 'object' && example !== null ? example : {}) as Record<string, unknown>;
      const dataKey = 'input' in o && !('data' in o) ? 'input' : 'data';
      if (facts.log) {
        notes.push(`totalSupply() on ${facts.log.address}`);
        return { to: facts.log.address, [dataKey]: TOTAL_SUPPLY };
      }
      const tx = needTx(facts);
      notes.push('no contract found: empty call to the tx recipient');
      return { to: tx.to ?? tx.from, [dataKey]: '0x' };
    }
    case 'estimate': {
      const tx = needTx(facts);
      notes.push('estimate of a 1 wei transfer');
      return { from: tx.from, to: tx.to ?? tx.from, value: '0x1' };
    }
    case 'rawTx':
      return INVALID_RAW_TX;
  }
}

const lower = (v: unknown) => (typeof v === 'string' ? v.toLowerCase() : v);

/** What the result must say about the real data asked for (beyond the schema). */
function expectation(method: string, params: unknown[], facts: ChainFacts): Adapted['expect'] {
  const obj = (r: unknown) => (typeof r === 'object' && r !== null ? (r as Record<string, unknown>) : undefined);
  const tx = facts.tx;
  switch (method) {
    case 'eth_getBlockByHash':
      return (r) =>
        lower(obj(r)?.hash) === lower(params[0]) ? undefined : `expected block ${params[0]}, got ${brief(r)}`;
    case 'eth_getBlockByNumber':
      return isQuantity(params[0])
        ? (r) =>
            lower(obj(r)?.number) === lower(params[0]) ? undefined : `expected block ${params[0]}, got ${brief(r)}`
        : (r) => (obj(r) ? undefined : `expected a block, got ${brief(r)}`);
    case 'eth_getTransactionByHash':
    case 'eth_getTransactionByBlockHashAndIndex':
    case 'eth_getTransactionByBlockNumberAndIndex':
      return (r) =>
        tx && lower(obj(r)?.hash) === lower(tx.hash) ? undefined : `expected tx ${tx?.hash}, got ${brief(r)}`;
    case 'eth_getTransactionReceipt':
      return (r) =>
        tx && lower(obj(r)?.transactionHash) === lower(tx.hash)
          ? undefined
          : `expected receipt of ${tx?.hash}, got ${brief(r)}`;
    case 'eth_getBlockTransactionCountByHash':
    case 'eth_getBlockTransactionCountByNumber':
      if (isHash(params[0]) || (isQuantity(params[0]) && tx && lower(params[0]) === lower(tx.blockNumber)))
        return (r) =>
          typeof r === 'string' && tx && BigInt(r) > BigInt(tx.index)
            ? undefined
            : `expected more than ${tx?.index} txs, got ${brief(r)}`;
      return undefined;
    case 'eth_getBlockReceipts':
      if (tx && (lower(params[0]) === lower(tx.blockNumber) || lower(params[0]) === lower(tx.blockHash)))
        return (r) =>
          Array.isArray(r) && r.some((x) => lower(obj(x)?.transactionHash) === lower(tx.hash))
            ? undefined
            : `expected the receipt of ${tx.hash} among ${brief(r)}`;
      return (r) => (Array.isArray(r) ? undefined : `expected receipts, got ${brief(r)}`);
    case 'eth_getLogs':
      if (facts.log) {
        const want = facts.log;
        return (r) =>
          Array.isArray(r) &&
          r.some(
            (x) => lower(obj(x)?.transactionHash) === lower(want.transactionHash) && obj(x)?.logIndex === want.logIndex,
          )
            ? undefined
            : `expected the log ${want.transactionHash}#${want.logIndex} among ${brief(r)}`;
      }
      return undefined;
    case 'eth_getCode':
      return facts.log
        ? (r) => (typeof r === 'string' && r.length > 2 ? undefined : `expected code at ${params[0]}, got ${brief(r)}`)
        : undefined;
    case 'eth_getProof': {
      const keys = (params[1] as string[]).map((k) => BigInt(k));
      return (r) => {
        const p = obj(r);
        if (lower(p?.address) !== lower(params[0])) return `expected the proof of ${params[0]}, got ${brief(r)}`;
        if (!Array.isArray(p?.accountProof) || p.accountProof.length === 0)
          return `expected a non-empty account proof, got ${brief(r)}`;
        const got = Array.isArray(p?.storageProof) ? p.storageProof.map((s) => String(obj(s)?.key)) : [];
        if (got.length !== keys.length || got.some((k, i) => BigInt(k) !== keys[i]))
          return `expected storage proofs of ${brief(params[1])}, got keys ${brief(got)}`;
        if (facts.log && lower(params[0]) === lower(facts.log.address) && p?.codeHash === EMPTY_CODE_HASH)
          return `expected the code hash of a contract at ${params[0]}, got the empty-code hash`;
        return undefined;
      };
    }
    case 'eth_createAccessList': {
      const to = lower(obj(params[0])?.to);
      return (r) => {
        const a = obj(r);
        if (typeof a?.gasUsed !== 'string' || BigInt(a.gasUsed) === 0n) return `expected the gas used, got ${brief(r)}`;
        // A call that reads the contract's storage lists the contract; a failing call says why in \`error\` instead.
        if (typeof a.error === 'string') return undefined;
        const list = Array.isArray(a.accessList) ? a.accessList : [];
        return facts.log && !list.some((e) => lower(obj(e)?.address) === to)
          ? `expected ${to} in the access list, got ${brief(r)}`
          : undefined;
      };
    }
    case 'web3_sha3': {
      const want = KECCAK_VECTORS[String(lower(params[0]))];
      return want ? (r) => (r === want ? undefined : `expected keccak256 ${want}, got ${brief(r)}`) : undefined;
    }
    case 'eth_chainId':
      return facts.chainId
        ? (r) => (r === facts.chainId ? undefined : `chain id changed: ${facts.chainId} then ${brief(r)}`)
        : undefined;
    default:
      return undefined;
  }
}
