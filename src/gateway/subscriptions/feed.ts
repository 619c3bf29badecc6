// One feed per network on a replica serves every eth_subscribe of every connection on it, from one upstream source
// per kind, shared and refcounted: a kind's source starts with its first subscriber and stops with its last.
//
// newHeads and logs follow the network head (src/gateway/heads: newHeads pushed by every upstream that has a socket,
// merged; a poll of the pool only where none has). The head hands over a contiguous chain — gaps after a reconnect or a
// failover already filled, reorgs as removed blocks then the new branch — so the feed only fans out:
//   - newHeads: each added block's header, serialised once for every subscriber, in the head's own turn;
//   - logs (dshackle's way): per added block, one eth_getLogs({blockHash}) for all logs subscribers together (the
//     union of their addresses when they all name some, else every log of the block), matched per subscriber;
//     fetched at once, delivered in chain order; a block that left the chain before its logs came is skipped, and the
//     logs delivered for a removed block are sent again with `removed: true` (newest block first). A failed fetch is
//     retried (the block stays canonical: skipping it would be a hole); by block hash, EIP-234 makes a node that has
//     not got the block answer an error, never an empty list.
// A subscriber gets what arrives after it subscribed, as on a node: blocks (and their logs) from the first one the
// head takes after the subscription. When the head was not following the chain at that moment (the first subscriber
// starts it), the head's first move is its catch-up read of "latest" — the block that was already there — and is not
// sent to whoever subscribed before it; a pushed block is (it arrived after them). Such a subscriber is told when it
// has its place (`add`'s promise) and eth_subscribe is answered only then: a block mined while that read was on its
// way would come back as "latest" and not be sent, so a client must not have its id before (./manager.ts bounds the
// wait for a head that cannot read). Subscribers that were already there stay on through any outage: the blocks of a
// gap the head fills after a reconnect reach them (no hole).
// So there is one upstream subscription (newHeads, per push upstream: the head's) however many clients subscribe to
// newHeads or logs, and one eth_getLogs per block however many logs subscribers.
// newPendingTransactions: one upstream eth_subscribe("newPendingTransactions") on one push upstream that is up (moved
// to another one when its socket drops); without any, an upstream pending-transaction filter polled with
// eth_getFilterChanges. Hashes are deduplicated over the last PENDING_SEEN (a move between upstreams may repeat
// some). A pending pool is no sequence to resume: hashes that arrive while no source is up are missed (best effort,
// as every provider's).
import type { Logger } from 'pino';
import { RawResult } from '@rpcgate/toolkit/engine';
import type { ChainHead, ChainUpdate, HeadBlock, PushSource } from '../heads/head.js';

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

/** A subscriber of the feed (one eth_subscribe). Delivery must not throw and must be cheap (it queues). `json` is
 *  `result` serialised, made once for every subscriber. */
export interface FeedSubscriber {
  kind: 'newHeads' | 'logs' | 'newPendingTransactions';
  filter?: LogFilter;
  deliver(result: unknown, json: string): void;
}

interface Log {
  address: string;
  topics: string[];
  removed?: boolean;
  [k: string]: unknown;
}

export interface NetworkFeedOptions {
  /** The network's head (src/gateway/heads). */
  head: ChainHead;
  /** The pool (eth_getLogs per block, the pending filter when polling). */
  upstream: FeedUpstream;
  /** Push upstreams (newPendingTransactions). */
  push?: () => readonly PushSource[];
  /** Poll interval of the pending filter when no upstream pushes. */
  pollMs: number;
  logger: Logger;
}

/** Blocks whose delivered logs are remembered (for `removed: true`). */
const HISTORY = 256;
/** Pending hashes remembered against repeats. */
const PENDING_SEEN = 8192;
/** Retry delay of a failed per-block eth_getLogs (doubling up to 2 s). */
const RETRY_MS = 50;

const parse = (r: unknown): unknown => (r instanceof RawResult ? JSON.parse(r.json) : r);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms).unref());

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

type LogsOp = { remove: HeadBlock } | { add: HeadBlock; seq: number; logs: Promise<Log[] | undefined> };

/** A subscriber's start while the head has no current position: set by the head's next move. */
const WAITING = Number.POSITIVE_INFINITY;

export class NetworkFeed {
  /** Subscriber → the sequence number of the first block it gets (blocks are numbered as the head adds them). */
  private readonly subs = new Map<FeedSubscriber, number>();
  /** Sequence number of the next block the head adds. */
  private seq = 0;
  /** Subscribers at WAITING → told when they have their place (the head's next move, or their removal). */
  private readonly placing = new Map<FeedSubscriber, () => void>();
  private readonly count = { newHeads: 0, logs: 0, newPendingTransactions: 0 };
  private stopped = false;
  // blocks (newHeads + logs)
  private release: (() => void) | undefined;
  private unlisten: (() => void) | undefined;
  private ops: LogsOp[] = [];
  private draining: Promise<void> | undefined;
  private readonly delivered = new Map<string, { logs: Log[]; seq: number }>();
  /** Bumped when logs stop or the head resets: work from before is dropped. */
  private logsEpoch = 0;
  // pending
  private pending: PendingSource | undefined;

  constructor(
    readonly network: string,
    private readonly o: NetworkFeedOptions,
  ) {}

  get size(): number {
    return this.subs.size;
  }

  /** Subscribers by kind (read-only, for metrics at scrape time). */
  sizeByKind(): Record<FeedSubscriber['kind'], number> {
    return { ...this.count };
  }

  /**
   * Adds a subscriber. Undefined: it has its place now (the next block the head takes is its first). A promise: the
   * head is not following the chain yet, its next move places the subscriber; resolves then (or on its removal).
   */
  add(s: FeedSubscriber): Promise<void> | undefined {
    if (this.stopped || this.subs.has(s)) return undefined;
    // The head is current (pushed to, or polled just now): the next block it takes is the first this one gets.
    // Otherwise the head's next move decides (onUpdate).
    const current = s.kind === 'newPendingTransactions' || this.o.head.recentHead !== undefined;
    this.subs.set(s, current ? this.seq : WAITING);
    this.count[s.kind]++;
    let placed: Promise<void> | undefined;
    if (!current) placed = new Promise((r) => this.placing.set(s, r));
    if (s.kind === 'newPendingTransactions') {
      if (this.pending === undefined) this.pending = new PendingSource(this);
      return placed;
    }
    if (this.release === undefined) {
      this.unlisten = this.o.head.listen({
        onUpdate: (u) => this.onUpdate(u),
        onReset: () => this.onReset(),
      });
      this.release = this.o.head.hold();
    }
    return placed;
  }

  remove(s: FeedSubscriber): void {
    const since = this.subs.get(s);
    if (since === undefined) return;
    this.subs.delete(s);
    if (since === WAITING) this.placed(s);
    this.count[s.kind]--;
    if (this.count.newPendingTransactions === 0 && this.pending !== undefined) {
      this.pending.stop();
      this.pending = undefined;
    }
    if (this.count.newHeads + this.count.logs === 0 && this.release !== undefined) {
      this.release();
      this.unlisten?.();
      this.release = this.unlisten = undefined;
    }
    if (this.count.logs === 0) this.dropLogs();
  }

  stop(): void {
    this.stopped = true;
    for (const s of [...this.subs.keys()]) this.remove(s);
  }

  /** Tests: one poll of the head (and of the pending filter), then the logs of what it brought. */
  async tick(): Promise<void> {
    await this.o.head.tick();
    await this.o.head.settled();
    await this.pending?.tick();
    while (this.draining !== undefined) await this.draining;
  }

  /** @internal */
  get opts(): NetworkFeedOptions {
    return this.o;
  }

  /** @internal each subscriber of `kind`, in this notification's turn (`inTurn`). */
  *of(kind: FeedSubscriber['kind']): Iterable<FeedSubscriber> {
    for (const [s] of this.inTurn()) if (s.kind === kind) yield s;
  }

  /**
   * The subscriptions (with the seq they joined at), from a random one on and wrapping round, for one notification.
   * Each socket's write costs ~10 µs on loopback (bench/ws-lag.ts), so reaching 1,000 subscribers takes ~10 ms: in a
   * fixed order whoever subscribed last would wait all of it on every block, from a random start each one waits half
   * of it on average and none always the most.
   */
  private inTurn(): Array<[FeedSubscriber, number]> {
    const all = [...this.subs];
    if (all.length < 2) return all;
    const k = Math.floor(Math.random() * all.length);
    return k === 0 ? all : all.slice(k).concat(all.slice(0, k));
  }

  private onUpdate(u: ChainUpdate): void {
    const first = this.seq;
    this.seq += u.added.length;
    if (this.placing.size > 0) {
      // Those who subscribed while the head had no current position: a pushed block arrived after them (theirs);
      // a read of "latest" was there before them (not theirs), nor are the blocks filled in below either.
      const start = u.via === 'push' ? this.seq - 1 : this.seq;
      for (const [s, since] of this.subs)
        if (since === WAITING) {
          this.subs.set(s, start);
          this.placed(s);
        }
    }
    if (this.count.newHeads > 0)
      for (let i = 0; i < u.added.length; i++) {
        const b = u.added[i];
        const seq = first + i;
        let json: string | undefined;
        for (const [s, since] of this.inTurn())
          if (s.kind === 'newHeads' && since <= seq) s.deliver(b.header, (json ??= b.json()));
      }
    if (this.count.logs === 0) return;
    for (const r of u.removed) this.ops.push({ remove: r });
    // Fetched at once (in parallel, the pool batches them), delivered in order.
    for (let i = 0; i < u.added.length; i++) {
      const a = u.added[i];
      const seq = first + i;
      // Nobody is to get this block's logs (subscribed after it): no read.
      let wanted = false;
      for (const [s, since] of this.subs) if (s.kind === 'logs' && since <= seq) wanted = true;
      if (wanted) this.ops.push({ add: a, seq, logs: this.logsOf(a, this.logsEpoch) });
    }
    this.draining ??= this.drain().finally(() => (this.draining = undefined));
  }

  private placed(s: FeedSubscriber): void {
    const tell = this.placing.get(s);
    if (tell === undefined) return;
    this.placing.delete(s);
    tell();
  }

  private onReset(): void {
    // The old chain is void: what was delivered of it cannot be removed by block any more.
    this.dropLogs();
  }

  private dropLogs(): void {
    this.logsEpoch++;
    this.ops = [];
    this.delivered.clear();
  }

  /** The logs of one block the logs subscribers may want: one call by block hash, retried while the block is
   *  canonical and someone listens (undefined: given up, the block left the chain or the logs subscribers did). */
  private async logsOf(b: HeadBlock, epoch: number): Promise<Log[] | undefined> {
    for (let wait = RETRY_MS; ; wait = Math.min(2000, wait * 2)) {
      if (epoch !== this.logsEpoch || !this.o.head.isCanonical(b.hash)) return undefined;
      let union: Set<string> | undefined = new Set();
      for (const s of this.subs.keys()) {
        if (s.kind !== 'logs') continue;
        if (s.filter?.address === undefined) {
          union = undefined;
          break;
        }
        for (const a of s.filter.address) union.add(a);
      }
      const filter: Record<string, unknown> = { blockHash: b.hash };
      if (union !== undefined) filter.address = [...union];
      try {
        const logs = parse(await this.o.upstream.call('eth_getLogs', [filter]));
        if (Array.isArray(logs)) return logs as Log[];
        throw new Error('eth_getLogs answered no list');
      } catch (e) {
        this.o.logger.warn(
          { err: e, network: this.network, block: b.number },
          'subscription feed: eth_getLogs of a new block failed; retrying',
        );
      }
      await sleep(wait);
    }
  }

  private async drain(): Promise<void> {
    while (this.ops.length > 0) {
      const op = this.ops.shift()!;
      const epoch = this.logsEpoch;
      if ('remove' in op) {
        const had = this.delivered.get(op.remove.hash);
        if (had === undefined) continue;
        this.delivered.delete(op.remove.hash);
        const turn = this.inTurn(); // one order for all the block's logs (a block may have hundreds)
        for (const log of had.logs) {
          const r = { ...log, removed: true };
          let json: string | undefined;
          // Only to those who were sent the block's logs.
          for (const [s, since] of turn)
            if (s.kind === 'logs' && since <= had.seq && matchLog(log, s.filter))
              s.deliver(r, (json ??= JSON.stringify(r)));
        }
        continue;
      }
      const logs = await op.logs;
      if (logs === undefined || epoch !== this.logsEpoch || !this.o.head.isCanonical(op.add.hash)) continue;
      this.delivered.set(op.add.hash, { logs, seq: op.seq });
      if (this.delivered.size > HISTORY) this.delivered.delete(this.delivered.keys().next().value!);
      const turn = this.inTurn();
      for (const log of logs) {
        let json: string | undefined;
        for (const [s, since] of turn)
          if (s.kind === 'logs' && since <= op.seq && matchLog(log, s.filter))
            s.deliver(log, (json ??= JSON.stringify(log)));
      }
    }
  }
}

/** newPendingTransactions: one upstream subscription on a push upstream that is up, else a polled filter. */
class PendingSource {
  private readonly seen = new Set<string>();
  private unsubscribe: (() => Promise<void>) | undefined;
  private on: PushSource | undefined;
  private readonly unlisten: Array<() => void> = [];
  private filter: string | undefined;
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  private polling = false;

  constructor(private readonly feed: NetworkFeed) {
    const sources = feed.opts.push?.() ?? [];
    for (const src of sources) this.unlisten.push(src.push.onState(() => this.choose()));
    this.choose();
  }

  private deliver(hash: unknown): void {
    if (typeof hash !== 'string' || this.seen.has(hash)) return;
    this.seen.add(hash);
    if (this.seen.size > PENDING_SEEN) this.seen.delete(this.seen.values().next().value!);
    const json = JSON.stringify(hash);
    for (const s of this.feed.of('newPendingTransactions')) s.deliver(hash, json);
  }

  /** Subscribes on the first push upstream that is up (keeps the current one while it is), else polls. */
  private choose(): void {
    if (this.stopped) return;
    if (this.on?.push.up) return;
    this.unsubscribe?.().catch(() => undefined);
    this.unsubscribe = this.on = undefined;
    const src = (this.feed.opts.push?.() ?? []).find((s) => s.push.up);
    if (src === undefined) return this.schedule(0);
    this.on = src;
    clearTimeout(this.timer);
    this.timer = undefined;
    this.dropFilter();
    src.push.subscribe(['newPendingTransactions'], { notify: (h) => this.deliver(h), gap: () => undefined }).then(
      (unsub) => {
        if (this.on !== src || this.stopped) return void unsub().catch(() => undefined);
        this.unsubscribe = unsub;
      },
      () => {
        if (this.on === src) this.on = undefined;
        this.schedule(this.feed.opts.pollMs);
      },
    );
  }

  private schedule(ms: number): void {
    if (this.timer !== undefined || this.stopped || this.on !== undefined) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.tick().finally(() => this.schedule(this.feed.opts.pollMs));
    }, ms);
    this.timer.unref();
  }

  /** One poll of the pending filter (only while no push upstream carries the subscription). */
  async tick(): Promise<void> {
    if (this.on !== undefined || this.stopped || this.polling) return;
    this.polling = true;
    const up = this.feed.opts.upstream;
    try {
      if (this.filter === undefined) {
        this.filter = String(parse(await up.call('eth_newPendingTransactionFilter', [])));
        return;
      }
      let hashes: unknown;
      try {
        hashes = parse(await up.call('eth_getFilterChanges', [this.filter]));
      } catch (e) {
        // The upstream forgot the filter (failover, restart): a new one next tick.
        this.filter = undefined;
        throw e;
      }
      if (Array.isArray(hashes)) for (const h of hashes) this.deliver(h);
    } catch (e) {
      this.feed.opts.logger.warn(
        { err: e, network: this.feed.network },
        'subscription feed: pending-transaction poll failed; a new filter next time',
      );
    } finally {
      this.polling = false;
    }
  }

  private dropFilter(): void {
    const id = this.filter;
    this.filter = undefined;
    if (id !== undefined) this.feed.opts.upstream.call('eth_uninstallFilter', [id]).catch(() => undefined);
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
    for (const u of this.unlisten) u();
    this.unsubscribe?.().catch(() => undefined);
    this.unsubscribe = this.on = undefined;
    this.dropFilter();
  }
}
