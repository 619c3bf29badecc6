// The eth_getLogs block-range cap (upstream.getLogsMaxBlockRange): a query spanning more blocks than the cap is
// refused before it reaches the node (-32005, data.reason "block-range"), as providers do — one 0x0..0xffffffffffff
// query must not occupy a node for everyone. Tags: `earliest` is block 0; `latest`, `pending`, `safe` and
// `finalized` (and an absent bound) are the head — when the other bound is a number: the network's head tracker's
// recent head (cache on or off), else the pool's eth_blockNumber (deduped with concurrent ones). The blockHash form
// names one block and is exempt.
import { RawResult } from '@rpcgate/toolkit/engine';
import type { Handler } from '@rpcgate/toolkit/engine';
import type { AccessContext } from '../access/index.js';
import { blockRangeTooLarge } from '../errors.js';

type Caller = { call(method: string, params?: readonly unknown[]): Promise<unknown> };

/** A block bound: a number, or 'head' for the tags that mean the chain head. */
function bound(v: unknown): number | 'head' {
  if (v === undefined || v === null || v === 'latest' || v === 'pending' || v === 'safe' || v === 'finalized')
    return 'head';
  if (v === 'earliest') return 0;
  if (typeof v === 'string' && /^0x[0-9a-fA-F]+$/.test(v)) return Number(v);
  return 'head'; // anything else fails the contract's param validation before this runs
}

async function headOf(pool: Caller): Promise<number> {
  const r = await pool.call('eth_blockNumber', []);
  const v = r instanceof RawResult ? (JSON.parse(r.json) as unknown) : r;
  return typeof v === 'string' ? Number(v) : Number.NaN;
}

/** Refuses (throws) an eth_getLogs filter wider than `max` blocks; resolves when it may be sent. `knownHead`: a head
 *  seen within the last poll intervals (the response cache's tracker), used instead of asking the node — a node round
 *  trip before every `fromBlock..latest` query would double its latency; being a block or two behind only widens the
 *  cap by as much. */
export async function checkLogsRange(
  filter: unknown,
  max: number,
  pool: Caller,
  knownHead?: () => number | undefined,
): Promise<void> {
  if (max <= 0 || filter === null || typeof filter !== 'object') return;
  const f = filter as { fromBlock?: unknown; toBlock?: unknown; blockHash?: unknown };
  if (f.blockHash !== undefined) return;
  const from = bound(f.fromBlock);
  const to = bound(f.toBlock);
  if (from === 'head' && to === 'head') return;
  let head = Number.NaN;
  // Only now, when a bound is the head: asking the tracker starts its poll.
  if (from === 'head' || to === 'head') head = knownHead?.() ?? (await headOf(pool));
  const lo = from === 'head' ? head : from;
  const hi = to === 'head' ? head : to;
  if (Number.isNaN(lo) || Number.isNaN(hi)) return; // no head known: the node decides
  const range = hi - lo + 1;
  if (range > max) throw blockRangeTooLarge(max, range);
}

/** The pools with eth_getLogs range-checked (for the forwarder and the filter methods, which query logs too);
 *  `knownHeadOf` as in rangeChecked. */
export function guardLogsRange<P extends Caller>(
  pools: ReadonlyMap<string, P>,
  max: number,
  knownHeadOf?: (network: string) => number | undefined,
): ReadonlyMap<string, Caller> {
  if (max <= 0) return pools;
  const out = new Map<string, Caller>();
  for (const [network, pool] of pools) {
    out.set(network, {
      call(method, params) {
        if (method !== 'eth_getLogs') return pool.call(method, params);
        return checkLogsRange(params?.[0], max, pool, knownHeadOf && (() => knownHeadOf(network))).then(() =>
          pool.call(method, params),
        );
      },
    });
  }
  return out;
}

/** An eth_getLogs handler (forwarded, perhaps through the cache) behind the range check; the head is a recent one of
 *  the call's network (`knownHeadOf`, src/gateway/cache/heads.ts) or else asked of its pool. */
export function rangeChecked(
  handler: Handler<unknown, AccessContext>,
  max: number,
  pools: ReadonlyMap<string, Caller>,
  knownHeadOf?: (network: string) => number | undefined,
): Handler<unknown, AccessContext> {
  return (params, ctx) => {
    const network = ctx.network;
    const pool = network === undefined ? undefined : pools.get(network);
    if (pool === undefined || network === undefined) return handler(params, ctx);
    return checkLogsRange(
      (params as readonly unknown[] | undefined)?.[0],
      max,
      pool,
      knownHeadOf && (() => knownHeadOf(network)),
    ).then(() => handler(params, ctx));
  };
}
