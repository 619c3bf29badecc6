// What a call's answer may be cached as, from the method's cache class (x-gateway `cache`, `blockParam`,
// `blockFromResult`: src/gateway/method-meaning.ts) and the block its params name, judged against the tracker's head
// and finalized block at the time:
//   final  — never changes: immutable methods, anything named by block hash, a block number at or below the finalized
//            block, `earliest`; kept until evicted (and in Redis, when configured).
//   block  — a block number above the finalized block but not above the head: kept until a reorg replaces that height
//            (in memory only: each replica's tracker sees its own reorgs).
//   head   — depends on the head (`latest`, `safe`, `finalized`, an absent optional block, eth_blockNumber, gas price…):
//            kept until the head changes.
//   result — decided by the answer's own blockNumber (transactions and receipts by hash).
//   none   — not cached: `pending` (wallets read their next nonce with it), EIP-1898 `requireCanonical`, a block above
//            the known head (it does not exist yet), anything while the head is unknown but final answers.
import type { GatewayMeaning } from '../method-meaning.js';

export type Decision =
  | { readonly kind: 'final' }
  | { readonly kind: 'block'; readonly height: number }
  | { readonly kind: 'head' }
  | { readonly kind: 'result' }
  | { readonly kind: 'none' };

export const FINAL: Decision = Object.freeze({ kind: 'final' });
export const HEAD: Decision = Object.freeze({ kind: 'head' });
export const RESULT: Decision = Object.freeze({ kind: 'result' });
export const NONE: Decision = Object.freeze({ kind: 'none' });

/** The chain position decisions are made against. */
export interface Position {
  readonly head: number | undefined;
  readonly finalized: number | undefined;
}

/** A block a param names: a number, the head (a tag that moves with it), a hash, or nothing cacheable. */
type BlockRef = number | 'head' | 'hash' | 'none';

const QUANTITY = /^0x(0|[1-9a-f][0-9a-f]*)$/i;
const HASH = /^0x[0-9a-fA-F]{64}$/;

function ref(v: unknown): BlockRef {
  if (v === undefined || v === null) return 'head'; // an absent optional block param means `latest`
  if (typeof v === 'string') {
    switch (v) {
      case 'latest':
      case 'safe':
      case 'finalized':
        return 'head';
      case 'earliest':
        return 0;
      case 'pending':
        return 'none';
    }
    if (v.length === 66 && HASH.test(v)) return 'hash';
    if (QUANTITY.test(v)) {
      const n = Number(v);
      return Number.isSafeInteger(n) ? n : 'none';
    }
    return 'none';
  }
  if (typeof v === 'object' && !Array.isArray(v)) {
    // EIP-1898 objects, and eth_getLogs' filter (its toBlock / blockHash decide).
    const o = v as {
      blockHash?: unknown;
      blockNumber?: unknown;
      requireCanonical?: unknown;
      fromBlock?: unknown;
      toBlock?: unknown;
    };
    if (o.blockHash !== undefined)
      return o.requireCanonical === true
        ? 'none'
        : typeof o.blockHash === 'string' && HASH.test(o.blockHash)
          ? 'hash'
          : 'none';
    if (o.blockNumber !== undefined) return ref(o.blockNumber);
    const from = ref(o.fromBlock);
    const to = ref(o.toBlock);
    if (from === 'none' || to === 'none') return 'none';
    if (from === 'head' || to === 'head') return 'head';
    if (from === 'hash' || to === 'hash') return 'none';
    return Math.max(from, to);
  }
  return 'none';
}

/** The decision for a call before it is made (`result` for blockFromResult methods: decided on the answer). */
export function decide(m: GatewayMeaning, params: readonly unknown[], pos: Position): Decision {
  switch (m.cache) {
    case 'immutable':
      return FINAL;
    case 'head':
      return pos.head === undefined ? NONE : HEAD;
    case 'by-block': {
      if (m.blockFromResult === true) return RESULT;
      if (m.blockParam === undefined) return NONE;
      return byHeight(ref(params[m.blockParam]), pos);
    }
    default:
      return NONE;
  }
}

function byHeight(r: BlockRef, pos: Position): Decision {
  if (r === 'hash') return FINAL;
  if (r === 'none') return NONE;
  if (r === 'head') return pos.head === undefined ? NONE : HEAD;
  if (pos.finalized !== undefined && r <= pos.finalized) return FINAL;
  if (pos.head !== undefined && r <= pos.head) return { kind: 'block', height: r };
  return NONE;
}

/** The decision for a `result` call from the answer's `blockNumber` (null: a pending transaction, not cached). */
export function decideByResult(blockNumber: number | undefined, pos: Position): Decision {
  return blockNumber === undefined ? NONE : byHeight(blockNumber, pos);
}

/** The `"blockNumber":"0x…"` of an answer's JSON text without parsing it (receipts repeat it in their logs). */
export function blockNumberOf(json: string): number | undefined {
  const i = json.indexOf('"blockNumber"');
  if (i === -1) return undefined;
  const m = /^"blockNumber"\s*:\s*"(0x[0-9a-fA-F]+)"/.exec(json.slice(i, i + 48));
  if (m === null) return undefined;
  const n = Number(m[1]);
  return Number.isSafeInteger(n) ? n : undefined;
}
