// Filters (eth_newFilter & co.) kept by the gateway, not by a node: a filter is state in a FilterStore (kind, criteria,
// a cursor = the last block delivered, its owner), and a poll turns into eth_getLogs / eth_getBlockByNumber calls
// through the network's upstream pool. So a filter created through one replica is polled through another (Redis
// store), and it survives the failover of an upstream (any node can answer "logs of blocks n..m"). eRPC refuses
// filter methods behind several upstreams and web3-proxy does not serve them; routing by an id that names the node
// would lose the filter with the node.
//
// Semantics (as geth's, where a choice exists):
// - eth_newFilter: changes are the logs of blocks after the head at creation, within the filter's numeric
//   fromBlock/toBlock when given; eth_getFilterLogs is eth_getLogs with the filter's own criteria.
// - eth_newBlockFilter: changes are the hashes of the blocks after the cursor.
// - eth_newPendingTransactionFilter: installed (clients that create one do not fail), changes always `[]`: a mempool
//   is one node's, and a filter that reads it would be lost with that node — the opposite of what these filters are for.
// - A poll covers at most `maxBlocksPerPoll` blocks (logs) or `maxHashesPerPoll` blocks (block hashes); a filter that
//   fell further behind catches up over the next polls.
// - Reorgs: the cursor keeps the hash of the last delivered block. When the node's block at that height has another
//   hash (or the chain got shorter), the last `reorgWindow` blocks are read again: logs delivered from blocks no longer
//   in the chain are sent again with `removed: true`, the new chain's logs are sent, and a block filter sends the
//   hashes of the new chain from the fork point. A reorg deeper than the window is not repaired (documented limit).
// - Ownership: a filter id of another key, of another network, unknown or expired is one answer, geth's -32000
//   "filter not found", so an id's existence never leaks.
// - Concurrent polls of one filter: one wins the compare-and-set of the cursor and returns the changes; the others `[]`.
// - Upstreams at different heights: a poll's eth_getLogs goes out in one batch with the block it ends at; a node
//   without that block yet moves nothing (no logs skipped because one node lagged).
// - Cost per poll: one batch (latest + the cursor's block), then one batch (eth_getLogs + its last block), and one
//   store read + one compare-and-set write (Redis: one round trip each). No database query.
import { randomBytes } from 'node:crypto';
import { RawResult, type Handler } from '@rpcgate/toolkit/engine';
import type { AccessContext } from '../access/index.js';
import { type RpcError, internalError, invalidParams } from '@rpcgate/toolkit/errors';
import { gatewayError, upstreamUnavailable } from '../errors.js';
import type { FilterKind, FilterState, FilterStore, LogCriteria, LogObject } from './store.js';

export interface FilterOptions {
  store: FilterStore;
  /** The upstream pool of each network (ctx.network selects one). */
  pools: ReadonlyMap<string, { call(method: string, params?: readonly unknown[]): Promise<unknown> }>;
  /** Live filters one key may have. */
  maxPerKey: number;
  /** Most blocks one log-filter poll reads (one eth_getLogs range). */
  maxBlocksPerPoll?: number;
  /** Most block hashes one block-filter poll returns (one eth_getBlockByNumber each, sent as one batch). */
  maxHashesPerPoll?: number;
  /** Blocks kept for reorg repair. */
  reorgWindow?: number;
  now?: () => number;
  /** Whether the caller may see this log now (the app's contract-address allowlist): polls never hand out others,
   *  even if the allowlist changed since eth_newFilter was checked. Absent: every log. */
  logVisible?: (ctx: AccessContext, log: LogObject) => boolean;
}

export const FILTER_METHODS = [
  'eth_newFilter',
  'eth_newBlockFilter',
  'eth_newPendingTransactionFilter',
  'eth_getFilterChanges',
  'eth_getFilterLogs',
  'eth_uninstallFilter',
] as const;
export type FilterMethod = (typeof FILTER_METHODS)[number];

/** Logs kept per filter for reorg repair (beyond it the oldest go: their removal would not be re-sent). */
const MAX_DELIVERED = 1000;

/** geth's answer for an unknown filter id (ethers and web3 recognise the code and message), with rpcgate's data. */
export function filterNotFound(): RpcError {
  return gatewayError('filter not found', { reason: 'filter-not-found' });
}

export function tooManyFilters(limit: number): RpcError {
  return gatewayError(
    `too many filters: at most ${limit} per key (uninstall one with eth_uninstallFilter, or let an idle one expire)`,
    { reason: 'filters', limit },
  );
}

/** A new filter id: 128 random bits as a QUANTITY (no leading zeros: the contract's uint). */
export function newFilterId(): string {
  return `0x${BigInt(`0x${randomBytes(16).toString('hex')}`).toString(16)}`;
}

interface BlockHead {
  number: number;
  hash: string;
}

const hex = (n: number) => `0x${n.toString(16)}`;

/** A block tag or number of the criteria as a number, undefined for tags (latest, safe, …). */
function numeric(tag: string | undefined): number | undefined {
  return tag?.startsWith('0x') ? Number.parseInt(tag, 16) : undefined;
}

/** A handler the engine calls with validated by-position params (the contract's types are checked before it). */
const handler = (fn: (params: unknown[], ctx: AccessContext) => Promise<unknown>): Handler<unknown, AccessContext> =>
  fn as unknown as Handler<unknown, AccessContext>;

const logKey = (l: LogObject) => `${l.blockHash}:${l.logIndex}`;

/** The store failed (Redis unreachable): a 503 that says so, never a filter answer made up without it. */
async function stored<T>(op: Promise<T>): Promise<T> {
  try {
    return await op;
  } catch {
    throw gatewayError(
      'Internal error',
      { reason: 'filter-store', detail: 'the filter store (Redis) is unreachable; retry later' },
      503,
    );
  }
}

export function createFilterHandlers(opts: FilterOptions): Record<FilterMethod, Handler<unknown, AccessContext>> {
  const { pools } = opts;
  const store = {
    get: (id: string) => stored(opts.store.get(id)),
    create: (s: FilterState, cap: number) => stored(opts.store.create(s, cap)),
    update: (s: FilterState, version: number) => stored(opts.store.update(s, version)),
    delete: (id: string, owner: string) => stored(opts.store.delete(id, owner)),
  };
  const maxBlocks = opts.maxBlocksPerPoll ?? 1000;
  const maxHashes = opts.maxHashesPerPoll ?? 100;
  const window = opts.reorgWindow ?? 16;
  const now = opts.now ?? Date.now;

  const poolOf = (ctx: AccessContext) => {
    const pool = pools.get(ctx.network);
    if (pool === undefined) throw internalError({ reason: `no upstream pool for network ${ctx.network}` });
    return pool;
  };
  const ownerOf = (ctx: AccessContext): string => {
    const p = ctx.principal as { kind?: string; id?: string } | undefined;
    if (p?.id === undefined) throw internalError({ reason: 'filter call without a principal' });
    return `${p.kind ?? 'key'}:${p.id}`;
  };
  const call = async (ctx: AccessContext, method: string, params: unknown[]): Promise<unknown> => {
    const r = await poolOf(ctx).call(method, params);
    return r instanceof RawResult ? JSON.parse(r.json) : r;
  };
  const block = async (ctx: AccessContext, tag: number | 'latest'): Promise<BlockHead | undefined> => {
    const b = (await call(ctx, 'eth_getBlockByNumber', [typeof tag === 'number' ? hex(tag) : tag, false])) as {
      number?: string;
      hash?: string;
    } | null;
    if (b?.number === undefined || typeof b.hash !== 'string') return undefined;
    return { number: Number.parseInt(b.number, 16), hash: b.hash };
  };
  const head = async (ctx: AccessContext): Promise<BlockHead> => {
    const b = await block(ctx, 'latest');
    if (b === undefined) throw upstreamUnavailable(ctx.network, 'the node has no latest block', 502);
    return b;
  };
  /** The caller's filter, or "filter not found" (missing, expired, another key's, another network's). */
  const own = async (id: unknown, ctx: AccessContext) => {
    const key = String(id).toLowerCase();
    const v = await store.get(key);
    if (v === undefined || v.state.owner !== ownerOf(ctx) || v.state.network !== ctx.network) throw filterNotFound();
    return v;
  };

  const install = async (kind: FilterKind, ctx: AccessContext, criteria?: LogCriteria): Promise<string> => {
    const owner = ownerOf(ctx);
    const h = await head(ctx);
    const t = now();
    const state: FilterState = {
      id: newFilterId(),
      kind,
      network: ctx.network,
      owner,
      cursor: h,
      start: h.number + 1,
      createdAt: t,
      polledAt: t,
    };
    if (criteria) state.criteria = criteria;
    if (kind === 'logs') state.delivered = [];
    if (kind === 'blocks') state.recent = [h];
    const r = await store.create(state, opts.maxPerKey);
    if (!r.ok) throw tooManyFilters(opts.maxPerKey);
    return state.id;
  };

  /** The node's head, and whether the cursor's block is still the node's block at that height (false: a reorg).
   *  Both asked at once: the pool sends the two calls as one batch, and dedupes 'latest' across concurrent polls. */
  const headAndCursor = async (ctx: AccessContext, s: FilterState): Promise<{ h: BlockHead; valid: boolean }> => {
    const [h, at] = await Promise.all([head(ctx), block(ctx, s.cursor.number)]);
    return { h, valid: h.number >= s.cursor.number && at?.hash === s.cursor.hash };
  };

  const logChanges = async (ctx: AccessContext, s: FilterState): Promise<LogObject[]> => {
    const c = s.criteria ?? {};
    // A filter on one block hash never has new logs (eth_getFilterLogs reads that block).
    if (c.blockHash !== undefined) return [];
    const { h, valid } = await headAndCursor(ctx, s);
    const delivered = s.delivered ?? [];
    // Read from the block after the cursor, or (reorg) again from the start of the window.
    const from = valid ? s.cursor.number + 1 : Math.max(s.start, s.cursor.number - window + 1);
    const to = Math.min(h.number, Math.max(from, s.cursor.number + 1) + maxBlocks - 1);
    if (to < from && valid) return [];
    const lo = Math.max(from, numeric(c.fromBlock) ?? 0);
    const hi = Math.min(to, numeric(c.toBlock) ?? Number.MAX_SAFE_INTEGER);
    // The logs and the block they end at, asked together: the pool sends them as one batch to one node, so the
    // cursor's hash is that node's block the logs came from (several upstreams may stand at different heights).
    // A node that does not have block `to` yet: nothing moves, the next poll asks again.
    const [fresh, cursorBlock] = await Promise.all([
      lo <= hi
        ? (call(ctx, 'eth_getLogs', [
            {
              fromBlock: hex(lo),
              toBlock: hex(hi),
              ...(c.address != null ? { address: c.address } : {}),
              ...(c.topics != null ? { topics: c.topics } : {}),
            },
          ]) as Promise<LogObject[]>)
        : Promise.resolve([] as LogObject[]),
      block(ctx, to),
    ]);
    if (cursorBlock === undefined) return [];
    let out: LogObject[];
    let kept: LogObject[];
    if (valid) {
      out = fresh;
      kept = delivered;
    } else {
      // Reorg: what was delivered from the re-read blocks and is not in the node's chain now goes out removed.
      const current = new Set(fresh.map(logKey));
      const before = delivered.filter((l) => Number.parseInt(l.blockNumber, 16) >= from);
      const had = new Set(before.map(logKey));
      out = [
        ...before.filter((l) => !current.has(logKey(l))).map((l) => ({ ...l, removed: true })),
        ...fresh.filter((l) => !had.has(logKey(l))),
      ];
      kept = delivered.filter((l) => Number.parseInt(l.blockNumber, 16) < from);
    }
    const oldest = cursorBlock.number - window + 1;
    s.delivered = [...kept, ...fresh].filter((l) => Number.parseInt(l.blockNumber, 16) >= oldest).slice(-MAX_DELIVERED);
    s.cursor = { number: cursorBlock.number, hash: cursorBlock.hash };
    return out;
  };

  const blockChanges = async (ctx: AccessContext, s: FilterState): Promise<string[]> => {
    const { h, valid } = await headAndCursor(ctx, s);
    let recent = s.recent ?? [s.cursor];
    let fork = s.cursor.number;
    if (!valid) {
      // Walk back through the delivered blocks to the newest one the node still has; send the new chain from there.
      fork = Math.max(s.start - 1, (recent[0]?.number ?? s.cursor.number) - 1);
      for (let i = recent.length - 1; i >= 0; i--) {
        const r = recent[i];
        if (r.number > h.number) continue;
        const b = await block(ctx, r.number);
        if (b?.hash === r.hash) {
          fork = r.number;
          break;
        }
      }
      recent = recent.filter((r) => r.number <= fork);
    }
    const to = Math.min(h.number, fork + maxHashes);
    const numbers: number[] = [];
    for (let n = fork + 1; n <= to; n++) numbers.push(n);
    // Issued together: the pool sends them as one batch.
    const blocks = await Promise.all(numbers.map((n) => (n === h.number ? h : block(ctx, n))));
    const got: BlockHead[] = [];
    for (const b of blocks) {
      if (b === undefined) break;
      got.push(b);
    }
    if (got.length === 0) {
      if (fork !== s.cursor.number && recent.length > 0) {
        s.recent = recent;
        s.cursor = recent[recent.length - 1];
      }
      return [];
    }
    s.recent = [...recent, ...got].slice(-window);
    s.cursor = got[got.length - 1];
    return got.map((b) => b.hash);
  };

  const visible = (ctx: AccessContext, logs: LogObject[]): LogObject[] => {
    const ok = opts.logVisible;
    return ok === undefined || !Array.isArray(logs) ? logs : logs.filter((l) => ok(ctx, l));
  };

  return {
    eth_newFilter: handler(async (params: unknown[], ctx: AccessContext) => {
      const c = (params[0] ?? {}) as LogCriteria;
      const from = numeric(c.fromBlock);
      const to = numeric(c.toBlock);
      if (from !== undefined && to !== undefined && from > to) {
        throw invalidParams(`fromBlock ${c.fromBlock} is after toBlock ${c.toBlock}`, {
          param: 'filter',
          path: '/0',
          reason: 'range',
        });
      }
      const criteria: LogCriteria = {};
      for (const k of ['fromBlock', 'toBlock', 'blockHash', 'address', 'topics'] as const)
        if (c[k] !== undefined) (criteria as Record<string, unknown>)[k] = c[k];
      return install('logs', ctx, criteria);
    }),
    eth_newBlockFilter: handler((_p, ctx) => install('blocks', ctx)),
    eth_newPendingTransactionFilter: handler((_p, ctx) => install('pending', ctx)),
    eth_getFilterChanges: handler(async (params: unknown[], ctx: AccessContext) => {
      const { state, version } = await own(params[0], ctx);
      const changes =
        state.kind === 'logs'
          ? visible(ctx, await logChanges(ctx, state))
          : state.kind === 'blocks'
            ? await blockChanges(ctx, state)
            : [];
      state.polledAt = now();
      // Another poll of the same filter moved the cursor first: it returned these changes.
      if (!(await store.update(state, version))) return [];
      return changes;
    }),
    eth_getFilterLogs: handler(async (params: unknown[], ctx: AccessContext) => {
      const { state } = await own(params[0], ctx);
      if (state.kind !== 'logs') throw filterNotFound();
      return visible(ctx, (await call(ctx, 'eth_getLogs', [state.criteria ?? {}])) as LogObject[]);
    }),
    eth_uninstallFilter: handler(async (params: unknown[], ctx: AccessContext) =>
      store.delete(String(params[0]).toLowerCase(), ownerOf(ctx)),
    ),
  };
}
