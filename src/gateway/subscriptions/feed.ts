// One feed per network on a replica: a single poll loop against the network's upstream pool serves every
// eth_subscribe of every connection on this replica (newHeads, logs and newPendingTransactions are kinds of the same
// loop; a kind's upstream calls are only made while it has subscribers). It starts with the first subscriber and stops
// with the last.
//
// Polling, not upstream WebSockets: the pool speaks HTTP (with failover), so this works with any node. Each tick:
//   eth_blockNumber → eth_getBlockByNumber for every block after the last delivered one (at most MAX_CATCH_UP per tick)
//   → per block, with logs subscribers: one eth_getLogs({blockHash}) (the union of the subscribers' addresses when
//   they all name one, else every log of the block), matched per subscriber.
// No gaps, no duplicates: the feed keeps the last delivered block (number, hash) and always continues from number+1,
// whichever upstream answers (after a failure or a failover, the next tick fills the missed blocks in order).
// Reorgs: a block whose parentHash is not the last delivered hash means the chain changed under us. The feed walks
// back its history (the last HISTORY blocks), re-sending for each dropped block the logs it delivered with
// `removed: true`, until the new block's parent is a block it still has, and delivers the new branch from there
// (newHeads then sees the new blocks of the replaced heights again, as nodes do). A reorg deeper than the history
// restarts from the new block without removals (logged).
// newPendingTransactions: an upstream pending-transaction filter (eth_newPendingTransactionFilter polled with
// eth_getFilterChanges); when the upstream forgets it (failover, node restart), a new one is made: hashes that entered
// the pool in between are missed (a pending pool is not a sequence one could resume; documented best effort).
import type { Logger } from 'pino';
import { RawResult } from '@rpcgate/toolkit/engine';

/** What the feed needs of an upstream pool. */
export interface FeedUpstream {
  call(method: string, params?: readonly unknown[]): Promise<unknown>;
}

export type Hex = `0x${string}`;

export interface LogFilter {
  /** Lower-case addresses; undefined = any. */
  address?: readonly string[];
  /** By position: null = any, a list = any of (lower-case). */
  topics?: ReadonlyArray<readonly string[] | null>;
}

/** A subscriber of the feed (one eth_subscribe). Delivery must not throw and must be cheap (it queues). */
export interface FeedSubscriber {
  kind: 'newHeads' | 'logs' | 'newPendingTransactions';
  filter?: LogFilter;
  deliver(result: unknown): void;
}

interface Log {
  address: string;
  topics: string[];
  removed?: boolean;
  [k: string]: unknown;
}

interface Delivered {
  number: number;
  hash: string;
  /** The logs fetched for this block (with the subscribers of that moment), for removal on a reorg. */
  logs: Log[] | undefined;
}

/** Blocks remembered for reorg detection and removed logs. */
const HISTORY = 64;
/** Blocks delivered per tick at most (a long outage is filled over several ticks, in order). */
const MAX_CATCH_UP = 32;

const parse = (r: unknown): unknown => (r instanceof RawResult ? JSON.parse(r.json) : r);
const hex = (n: number): Hex => `0x${n.toString(16)}`;

/** Whether a log matches a subscription's filter (geth's rules: address any-of, topics by position). */
export function matchLog(log: Log, f: LogFilter | undefined): boolean {
  if (f === undefined) return true;
  if (f.address !== undefined && !f.address.includes(log.address.toLowerCase())) return false;
  if (f.topics !== undefined) {
    for (let i = 0; i < f.topics.length; i++) {
      const want = f.topics[i];
      if (want === null) continue;
      const t = log.topics[i];
      if (t === undefined || !want.includes(t.toLowerCase())) return false;
    }
  }
  return true;
}

/** The newHeads notification of a block: its header (geth sends the header, without transactions or uncles). */
function header(block: Record<string, unknown>): Record<string, unknown> {
  const { transactions: _t, uncles: _u, withdrawals: _w, size: _s, ...h } = block;
  return h;
}

export class NetworkFeed {
  private readonly subs = new Set<FeedSubscriber>();
  private timer: NodeJS.Timeout | undefined;
  private running = false;
  private history: Delivered[] = [];
  private pendingFilter: string | undefined;
  private stopped = false;
  /** Bumped when the last subscriber leaves: a poll still running from before must not write its blocks back. */
  private epoch = 0;

  constructor(
    readonly network: string,
    private readonly upstream: FeedUpstream,
    private readonly intervalMs: number,
    private readonly logger: Logger,
  ) {}

  get size(): number {
    return this.subs.size;
  }

  /** Subscribers by kind (read-only, for metrics at scrape time). */
  sizeByKind(): Record<FeedSubscriber['kind'], number> {
    const n = { newHeads: 0, logs: 0, newPendingTransactions: 0 };
    for (const s of this.subs) n[s.kind]++;
    return n;
  }

  add(s: FeedSubscriber): void {
    this.subs.add(s);
    if (this.subs.size === 1 && !this.stopped) this.schedule(0);
  }

  remove(s: FeedSubscriber): void {
    if (!this.subs.delete(s) || this.subs.size > 0) return;
    // Last subscriber gone: stop polling, forget the chain position (the next first subscriber starts at the head).
    clearTimeout(this.timer);
    this.timer = undefined;
    this.history = [];
    this.epoch++;
    this.dropPendingFilter();
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
    this.timer = undefined;
    this.subs.clear();
  }

  private schedule(ms: number): void {
    if (this.timer !== undefined || this.running) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.tick();
    }, ms);
    this.timer.unref();
  }

  private has(kind: FeedSubscriber['kind']): boolean {
    for (const s of this.subs) if (s.kind === kind) return true;
    return false;
  }

  /** One poll; never rejects (a failed upstream call is retried next tick from where the feed stands). */
  async tick(): Promise<void> {
    if (this.running) return;
    this.running = true;
    try {
      if (this.has('newHeads') || this.has('logs')) await this.pollBlocks();
      if (this.has('newPendingTransactions')) await this.pollPending();
    } catch (e) {
      this.logger.warn(
        { err: e, network: this.network },
        'subscription feed: upstream poll failed; resuming from the last delivered block',
      );
    } finally {
      this.running = false;
      if (this.subs.size > 0 && !this.stopped) this.schedule(this.intervalMs);
    }
  }

  private async block(n: number): Promise<Record<string, unknown> | null> {
    return parse(await this.upstream.call('eth_getBlockByNumber', [hex(n), false])) as Record<string, unknown> | null;
  }

  private async pollBlocks(): Promise<void> {
    const epoch = this.epoch;
    const head = Number(parse(await this.upstream.call('eth_blockNumber', [])));
    if (!Number.isSafeInteger(head)) throw new Error('eth_blockNumber: not a number');
    let last = this.history[this.history.length - 1];
    let n = last === undefined ? head : last.number + 1;
    const to = Math.min(head, n + MAX_CATCH_UP - 1);
    while (n <= to && this.subs.size > 0 && epoch === this.epoch) {
      let b = await this.block(n);
      if (b === null) return; // this upstream is behind the one that answered eth_blockNumber: next tick
      while (last !== undefined && b.parentHash !== last.hash) {
        // Reorg: drop our tip and retry the height after the block below it.
        this.history.pop();
        this.removeLogs(last);
        last = this.history[this.history.length - 1];
        if (last === undefined) {
          this.logger.warn(
            { network: this.network, block: n },
            'subscription feed: reorg deeper than the history; continuing from the new chain',
          );
          break;
        }
        n = last.number + 1;
        const again = await this.block(n);
        if (again === null) return;
        b = again;
      }
      const d: Delivered = { number: n, hash: String(b.hash), logs: undefined };
      if (this.has('logs')) d.logs = await this.logsOf(d.hash);
      if (epoch !== this.epoch) return;
      this.deliverBlock(b, d);
      // A delivery may end the last subscriber (its connection's queue overflowed): nothing to remember then.
      if (epoch !== this.epoch) return;
      this.history.push(d);
      if (this.history.length > HISTORY) this.history.shift();
      last = d;
      n++;
    }
  }

  /** The logs of one block the logs subscribers may want: one call, by block hash (exact even across reorgs). */
  private async logsOf(blockHash: string): Promise<Log[]> {
    let union: Set<string> | undefined = new Set();
    for (const s of this.subs) {
      if (s.kind !== 'logs') continue;
      if (s.filter?.address === undefined) {
        union = undefined;
        break;
      }
      for (const a of s.filter.address) union.add(a);
    }
    const filter: Record<string, unknown> = { blockHash };
    if (union !== undefined) filter.address = [...union];
    return parse(await this.upstream.call('eth_getLogs', [filter])) as Log[];
  }

  private deliverBlock(b: Record<string, unknown>, d: Delivered): void {
    let h: Record<string, unknown> | undefined;
    for (const s of this.subs) {
      if (s.kind === 'newHeads') s.deliver((h ??= header(b)));
      else if (s.kind === 'logs' && d.logs !== undefined)
        for (const log of d.logs) if (matchLog(log, s.filter)) s.deliver(log);
    }
  }

  private removeLogs(d: Delivered): void {
    if (d.logs === undefined || d.logs.length === 0) return;
    for (const s of this.subs) {
      if (s.kind !== 'logs') continue;
      for (const log of d.logs) if (matchLog(log, s.filter)) s.deliver({ ...log, removed: true });
    }
  }

  private async pollPending(): Promise<void> {
    if (this.pendingFilter === undefined) {
      this.pendingFilter = String(parse(await this.upstream.call('eth_newPendingTransactionFilter', [])));
      return;
    }
    let hashes: unknown;
    try {
      hashes = parse(await this.upstream.call('eth_getFilterChanges', [this.pendingFilter]));
    } catch (e) {
      // The upstream forgot the filter (failover, restart): a new one next tick.
      this.pendingFilter = undefined;
      throw e;
    }
    if (!Array.isArray(hashes)) return;
    for (const s of this.subs) if (s.kind === 'newPendingTransactions') for (const h of hashes) s.deliver(h);
  }

  private dropPendingFilter(): void {
    const id = this.pendingFilter;
    this.pendingFilter = undefined;
    if (id !== undefined) this.upstream.call('eth_uninstallFilter', [id]).catch(() => undefined);
  }
}
