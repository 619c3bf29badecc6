// What each upstream can answer (issue 24 item 1), learned from the upstream itself — no operator config needed:
//   - its head (the fleet's poll of eth_blockNumber, and every eth_blockNumber it answers: ./consensus.ts);
//   - how far back it holds state: probed at start (./consensus.ts) and learned from refusals such as geth's "missing
//     trie node", erigon/reth's "state … is not available", "historical state … is not available", "header not found"
//     for a block above its head;
//   - its eth_getLogs block range limit, learned from its refusal ("exceed maximum block range: 500", "block range is
//     too wide", "up to a 10000 block range" …), and whether it refuses too many results ("query returned more than
//     10000 results"): ./logs-split.ts splits around both;
//   - the methods it lacks (-32601): that method is banned on that upstream.
// A refusal that means "not here" (refusalOf) is never a verdict on the call: the pool sends the call to another
// upstream that can answer it, and passes the refusal on only when none is left (dRPC's nodecore bans methods and
// detects archive nodes the same way; eRPC's evm state poller and block availability routing).
import type { RpcError } from '@rpcgate/toolkit/errors';

/** Why an upstream could not answer a call it is otherwise fit for. */
export type Refusal =
  | { readonly kind: 'method' }
  | { readonly kind: 'state' }
  | { readonly kind: 'block' }
  | { readonly kind: 'logs-range'; readonly max?: number }
  | { readonly kind: 'logs-results' };

/** Methods that read the state at a block: a pruned node answers them only for recent blocks. */
export const STATE_METHODS: ReadonlySet<string> = new Set([
  'eth_getBalance',
  'eth_getTransactionCount',
  'eth_getCode',
  'eth_getStorageAt',
  'eth_call',
  'eth_estimateGas',
  'eth_getProof',
  'eth_createAccessList',
  'debug_traceCall',
]);

const STATE_GONE =
  /missing trie node|state (?:\S+ )?(?:is )?not available|historical state|state (?:is )?pruned|state unavailable|required historical state|pruned history unavailable/i;
const BLOCK_GONE =
  /header not found|unknown block|block not found|block #?\d+ not found|cannot query unfinalized data/i;
const LOGS_RESULTS =
  /query returned more than|too many (?:results|logs)|log response size exceeded|response size (?:is )?(?:too large|exceeded)|max results/i;
const LOGS_RANGE =
  /block range|range (?:is )?too (?:large|wide|big)|exceed(?:s|ed)? (?:the )?max(?:imum)? (?:block )?range|max(?:imum)? (?:is )?\d[\d,]* blocks|limited to (?:a )?\d[\d,]* block|range limit/i;
const METHOD_GONE =
  /^(?:the )?method \S+ (?:does not exist|is not available|not found|not supported)|method not found/i;

/** A range refusal that is the query's own fault, the same on every node (geth's "block range extends beyond current
 *  head block", "invalid block range params", a reversed range): the client's answer, not a node's limit. */
const QUERY_FAULT =
  /beyond (?:the )?current head|invalid block range|reversed|fromBlock (?:is )?(?:greater|after|>)|toBlock (?:is )?(?:less|before|<)/i;

/** A number of blocks the message names as the limit ("… range: 500", "up to a 10000 block range", "limited to 1024
 *  block range", "max is 1k blocks"). */
function rangeIn(message: string): number | undefined {
  const m = /(\d[\d,]*)\s*(k?)\s*-?\s*blocks?\b/i.exec(message) ?? /range[^\d\n]{0,24}(\d[\d,]*)\s*(k?)/i.exec(message);
  if (m === null) return undefined;
  const n = Number(m[1].replace(/,/g, '')) * (m[2] ? 1000 : 1);
  return Number.isFinite(n) && n > 0 ? n : undefined;
}

/** The kind of "not here" a node error means for `method`, or undefined when it is the call's own answer (a revert,
 *  an invalid argument, a rate limit). */
export function refusalOf(method: string, err: Pick<RpcError, 'code' | 'message'>): Refusal | undefined {
  const msg = err.message ?? '';
  if (err.code === -32601 || METHOD_GONE.test(msg)) return { kind: 'method' };
  if (method === 'eth_getLogs') {
    if (LOGS_RESULTS.test(msg)) return { kind: 'logs-results' };
    if (LOGS_RANGE.test(msg) && !QUERY_FAULT.test(msg)) return { kind: 'logs-range', max: rangeIn(msg) };
  }
  if (STATE_GONE.test(msg)) return { kind: 'state' };
  if (BLOCK_GONE.test(msg)) return { kind: 'block' };
  return undefined;
}

/** What a call needs of an upstream: the block it reads ('head' = head-relative: `latest`, eth_blockNumber…), whether
 *  it reads state there, and (eth_getLogs) how many blocks it spans. */
export interface Need {
  readonly block?: number | 'head';
  readonly state: boolean;
  readonly logsRange?: number;
}

const HEAD_TAGS = new Set(['latest', 'pending', 'safe', 'finalized']);

/** A block reference (a param) as a number, 'head', or undefined (a hash: any upstream may hold it). */
export function blockRef(v: unknown): number | 'head' | undefined {
  if (v === undefined || v === null) return 'head';
  if (typeof v === 'string') {
    if (HEAD_TAGS.has(v)) return 'head';
    if (v === 'earliest') return 0;
    if (/^0x[0-9a-fA-F]{1,16}$/.test(v)) return Number(v);
    return undefined;
  }
  if (typeof v === 'object' && 'blockNumber' in v) return blockRef((v as { blockNumber: unknown }).blockNumber);
  return undefined;
}

/** What one upstream has shown it can and cannot answer. */
export class Capabilities {
  /** Its last known head (0: not known yet). */
  head = 0;
  /** Smallest depth below its head (head − block) at which it was found without state; Infinity: none found. */
  stateMissingDepth = Number.POSITIVE_INFINITY;
  /** Largest eth_getLogs range it takes; Infinity: no refusal seen. */
  logsMaxRange = Number.POSITIVE_INFINITY;
  /** Methods it answered -32601 for. */
  readonly lacks = new Set<string>();

  /** Records a refusal of a call that needed `need`. */
  learn(method: string, r: Refusal, need: Need | undefined): void {
    switch (r.kind) {
      case 'method':
        this.lacks.add(method);
        return;
      case 'state': {
        const b = need?.block;
        if (typeof b === 'number' && this.head > 0)
          this.stateMissingDepth = Math.min(this.stateMissingDepth, Math.max(0, this.head - b));
        return;
      }
      case 'block': {
        // It has no block `b` yet: its head is below it.
        const b = need?.block;
        if (typeof b === 'number' && this.head >= b) this.head = b - 1;
        return;
      }
      case 'logs-range': {
        const span = need?.logsRange;
        const max = r.max ?? (span === undefined ? undefined : Math.max(1, Math.floor(span / 2)));
        if (max !== undefined) this.logsMaxRange = Math.min(this.logsMaxRange, max);
        return;
      }
      case 'logs-results':
        return; // a matter of the query, not of the node's range: the splitter bisects
    }
  }

  /** Can it answer a call of `method` needing `need`, as far as is known? `inRotation`: for head-relative calls. */
  can(method: string, need: Need | undefined, inRotation: boolean): boolean {
    if (this.lacks.has(method)) return false;
    if (need === undefined) return true;
    if (need.logsRange !== undefined && need.logsRange > this.logsMaxRange) return false;
    const b = need.block;
    if (b === 'head') return inRotation;
    if (b === undefined || this.head === 0) return true;
    if (this.head < b) return false;
    return !(need.state && this.head - b >= this.stateMissingDepth);
  }
}
