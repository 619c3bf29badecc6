// One head per network and replica: the chain position every part of the gateway reads (the response cache's
// invalidation, the eth_getLogs range cap, the subscription feeds), built once instead of each part polling on its own.
//
// Sources: every upstream that can push (a PushTransport: a WebSocket) is subscribed to newHeads, and their headers are
// merged into one chain — the first arrival of a block wins, later copies of the same hash are dropped (dshackle's
// merged head, dRPC's nodecore). Only while no push source is up does the head poll the pool for "latest" (HTTP, with
// the pool's failover), every `pollMs` while someone holds the head, or on demand (`touch`) for traffic-driven users.
//
// The chain: the head keeps the last HISTORY canonical blocks (number, hash, parent hash, the header). A header that
// extends the head (its parent is the head) is emitted at once, synchronously in the notification's own turn — the
// fast path that sets the lag. Anything else is connected first:
//   - higher than head + 1 (a missed block: a reconnect, a failover to an upstream that is ahead, a poll interval): the
//     missing blocks are fetched (by number in one parallel burst the pool coalesces, checked link by link by parent
//     hash; by hash, walking down from the new block, where a link does not hold) and emitted in order — no hole;
//   - a block whose parent is not our head (a reorg): walk down its parents (by hash) to a block we hold; our blocks
//     above it are emitted as removed (newest first), the new branch as added (oldest first) — the head may move back
//     (anvil_rollback / evm_revert: the next block is lower than ours) or sideways (anvil_reorg);
//   - a block lower than or as high as the head on another branch is taken only from the source that gave it while that
//     source's previous block was ours (that upstream reorged), never from one that merely lags or sits on a losing
//     branch — consensus across upstreams is issue 24's, on top of this module.
// A gap or a reorg deeper than MAX_WALK blocks cannot be connected: the head restarts from the new block and emits a
// reset (listeners drop what depends on the old chain; logged).
// After a push source's reconnect (PushSink.gap) the head asks the pool for "latest" at once — again, backing off,
// until a read succeeds (the upstream's circuit may not have closed yet) — so the gap is filled now rather than at the
// next block. Duplicates never pass: a hash we hold is never emitted twice while canonical.
//
// Finality: the finalized block is read (eth_getBlockByNumber "finalized", else head − finalityDepth) with each poll,
// and in push mode at most every `pollMs` on a new head — only while a listener wants it (the cache).
// Idle: with no holder and no `touch` for `idleMs`, the push subscriptions are dropped and the position forgotten.
import type { Logger } from 'pino';
import { RawResult } from '@rpcgate/toolkit/engine';
import type { PushTransport } from '../upstream/transport.js';

/** A block as the head knows it. `header` is the newHeads object (as an upstream pushed it, or a fetched block without
 *  its transactions, uncles and withdrawals) and `json` its serialisation, made once for every subscriber. */
export interface HeadBlock {
  readonly number: number;
  readonly hash: string;
  readonly parentHash: string;
  readonly header: Record<string, unknown>;
  /** JSON of `header`, made lazily once (fan-out to N subscribers serialises it once). */
  json(): string;
}

export interface ChainUpdate {
  /** Blocks that left the canonical chain, newest first. */
  readonly removed: readonly HeadBlock[];
  /** Blocks that joined it, oldest first; the last is the new head. */
  readonly added: readonly HeadBlock[];
  /** What brought it: a block an upstream pushed ('push'; the last added block arrived just now), or a read of
   *  "latest" ('poll': the position as it stands, which may be older than whoever started listening). */
  readonly via: 'push' | 'poll';
}

export interface HeadListener {
  /** The chain moved. Called synchronously; must not throw and must be cheap (queue work). */
  onUpdate(u: ChainUpdate): void;
  /** The position was forgotten (idle, a failed poll, a gap or reorg too deep to connect): anything tied to the old
   *  chain is void. A new position follows with the next update (its `removed` is empty). */
  onReset?(reason: string): void;
  /** The finalized block moved up. A listener with this asks the head to read finality. */
  onFinalized?(finalized: number): void;
  /** A poll or a fetch failed (the owner logs it, throttled). */
  onError?(err: unknown): void;
}

/** What the head needs of the network's pool: a call with failover (HTTP, or a socket behind the transport seam). */
export interface HeadUpstream {
  call(method: string, params?: readonly unknown[]): Promise<unknown>;
}

export interface PushSource {
  readonly label: string | number;
  readonly push: PushTransport;
}

export interface ChainHeadOptions {
  network: string;
  upstream: HeadUpstream;
  /** The network's push-capable upstreams (read when the head goes live). */
  push?: () => readonly PushSource[];
  pollMs: number;
  /** With no holder and no touch for this long, the head stops and forgets its position. */
  idleMs: number;
  finalityDepth: number;
  logger?: Logger;
}

/** Canonical blocks kept (reorg detection, removed logs, the cache's per-height answers). */
export const HISTORY = 256;
/** Deepest gap or reorg that is connected block by block; beyond it the head restarts (reset). */
export const MAX_WALK = 256;

const hex = (n: number) => `0x${n.toString(16)}`;

/** A header/block object (or its RawResult) as a HeadBlock; null when it is not one. */
export function toHeadBlock(r: unknown): HeadBlock | null {
  const v = r instanceof RawResult ? (JSON.parse(r.json) as unknown) : r;
  if (v === null || typeof v !== 'object') return null;
  const b = v as Record<string, unknown>;
  const number = typeof b.number === 'string' ? Number(b.number) : Number.NaN;
  if (!Number.isSafeInteger(number) || typeof b.hash !== 'string' || typeof b.parentHash !== 'string') return null;
  // geth's newHeads carries the header: a full block read over HTTP loses its body here.
  const { transactions: _t, uncles: _u, withdrawals: _w, size: _s, totalDifficulty: _d, ...header } = b;
  let json: string | undefined;
  return {
    number,
    hash: b.hash.toLowerCase(),
    parentHash: b.parentHash.toLowerCase(),
    header,
    json: () => (json ??= JSON.stringify(header)),
  };
}

type Source = PushSource | 'poll';

interface PushState {
  src: PushSource;
  up: boolean;
  unsubscribe?: () => Promise<void>;
  subscribing: boolean;
  unlisten: () => void;
}

export class ChainHead {
  /** Canonical blocks, oldest first, contiguous by parent hash; the last is the head. */
  private chain: HeadBlock[] = [];
  private readonly byHash = new Map<string, HeadBlock>();
  private readonly hints = new Map<number, string>();
  /** Per source, the hash it reported last (the "did that upstream reorg" rule). */
  private readonly lastOf = new Map<Source, string>();
  private readonly listeners = new Set<HeadListener>();
  finalized: number | undefined;
  private finalizedAt = -Infinity;
  private holds = 0;
  private lastTouch = -Infinity;
  private live = false;
  private stopped = false;
  private pushes: PushState[] = [];
  /** Work that needs fetches, one at a time, in arrival order. */
  private queue: Array<{ b: HeadBlock; via: ChainUpdate['via'] }> = [];
  private busy = false;
  private waiters: Array<() => void> = [];
  private pollTimer: NodeJS.Timeout | undefined;
  private idleTimer: NodeJS.Timeout | undefined;
  private polling: Promise<void> | undefined;
  private pollStarted = -Infinity;
  private catchingUp = false;
  /** performance.now() at the start of the last successful poll. */
  private polledAt = -Infinity;
  /** Bumped on reset/stop: work started before must not emit. */
  private generation = 0;

  constructor(readonly o: ChainHeadOptions) {}

  get head(): HeadBlock | undefined {
    return this.chain[this.chain.length - 1];
  }

  /** Whether some push source is up and subscribed (then no polling is needed). */
  get pushing(): boolean {
    return this.pushes.some((p) => p.up && p.unsubscribe !== undefined);
  }

  /** The head when it is known to be current: a push source is following the chain, or a poll saw it within two
   *  intervals. Undefined otherwise (callers then ask the node). */
  get recentHead(): number | undefined {
    if (this.head === undefined) return undefined;
    if (this.pushing) return this.head.number;
    return performance.now() - this.polledAt <= 2 * this.o.pollMs ? this.head.number : undefined;
  }

  /** The block held at `n` on the canonical chain (undefined: not held). */
  at(n: number): HeadBlock | undefined {
    const h = this.head;
    if (h === undefined) return undefined;
    const i = this.chain.length - 1 - (h.number - n);
    return i >= 0 && i < this.chain.length ? this.chain[i] : undefined;
  }

  /** A block hash a listener learnt at height `n` (a block read through the cache) outside the held chain: a reorg
   *  walk that reaches below the held blocks goes on down while these differ from the new branch. */
  hint(n: number, hash: string): void {
    const h = this.head;
    if (h === undefined || n > h.number || n <= h.number - HISTORY) return;
    this.hints.set(n, hash.toLowerCase());
  }

  /** Whether `hash` is on the canonical chain as held. */
  isCanonical(hash: string): boolean {
    return this.byHash.has(hash);
  }

  listen(l: HeadListener): () => void {
    this.listeners.add(l);
    return () => void this.listeners.delete(l);
  }

  /** Keeps the head live (followed by push, or polled every pollMs) until the returned release. */
  hold(): () => void {
    this.holds++;
    this.goLive();
    this.schedulePoll(0);
    let held = true;
    return () => {
      if (!held) return;
      held = false;
      this.holds--;
      this.lastTouch = performance.now();
    };
  }

  /** Traffic that needs the head (a cacheable call, a range check): keeps the head live for idleMs, and without push
   *  starts a poll when the last one is pollMs old. Hot path: a clock read and comparisons. */
  touch(): void {
    if (this.stopped) return;
    const now = performance.now();
    this.lastTouch = now;
    if (!this.live) this.goLive();
    if (this.pushing) return;
    if (now - this.pollStarted < this.o.pollMs || this.polling !== undefined) return;
    void this.tick();
  }

  /** One poll of "latest" (and finality) now through the pool; waits for one already running. Never rejects. */
  async tick(): Promise<void> {
    while (this.polling !== undefined) await this.polling;
    if (this.stopped) return;
    const p = this.pollOnce();
    this.polling = p;
    try {
      await p;
    } finally {
      this.polling = undefined;
    }
  }

  /** Resolves when the work queued so far (gap fills, reorg walks) is done. */
  settled(): Promise<void> {
    if (!this.busy) return Promise.resolve();
    return new Promise((r) => this.waiters.push(r));
  }

  stop(): void {
    this.stopped = true;
    this.goIdle();
    this.listeners.clear();
  }

  // --- live / idle -------------------------------------------------------------------------------------------------

  private goLive(): void {
    if (this.live || this.stopped) return;
    this.live = true;
    this.lastTouch = performance.now();
    for (const src of this.o.push?.() ?? []) {
      const st: PushState = { src, up: src.push.up, subscribing: false, unlisten: () => undefined };
      st.unlisten = src.push.onState((up) => {
        st.up = up;
        if (up) this.subscribePush(st);
        else this.schedulePoll(0); // polling takes over while no push source is up
      });
      this.pushes.push(st);
      this.subscribePush(st);
    }
    this.idleTimer = setInterval(() => this.checkIdle(), Math.max(50, Math.min(this.o.idleMs / 2, 5000)));
    this.idleTimer.unref();
  }

  private checkIdle(): void {
    if (this.holds > 0 || performance.now() - this.lastTouch < this.o.idleMs) return;
    this.goIdle();
    this.reset('idle');
  }

  private goIdle(): void {
    if (!this.live) return;
    this.live = false;
    clearInterval(this.idleTimer);
    clearTimeout(this.pollTimer);
    this.pollTimer = undefined;
    for (const st of this.pushes) {
      st.unlisten();
      st.unsubscribe?.().catch(() => undefined);
      st.unsubscribe = undefined;
    }
    this.pushes = [];
  }

  private subscribePush(st: PushState): void {
    if (st.unsubscribe !== undefined || st.subscribing || !this.live) return;
    st.subscribing = true;
    st.src.push
      .subscribe(['newHeads'], {
        notify: (r) => {
          const b = toHeadBlock(r);
          if (b !== null) this.offer(b, st.src);
        },
        gap: (reason) => {
          this.o.logger?.info(
            { network: this.o.network, upstream: st.src.label, reason },
            'head: upstream newHeads resumed after a gap; filling it',
          );
          void this.catchUp();
        },
      })
      .then(
        (unsub) => {
          st.subscribing = false;
          if (!this.pushes.includes(st)) return void unsub().catch(() => undefined);
          st.unsubscribe = unsub;
          st.up = true;
          // The head may have moved while nobody pushed: read it now.
          void this.catchUp();
        },
        (err: unknown) => {
          // Socket down: subscribed again when it comes up (onState); polling meanwhile.
          st.subscribing = false;
          this.emitError(err);
          this.schedulePoll(this.o.pollMs);
        },
      );
  }

  /** Reads "latest" until a read succeeds: after a reconnect the upstream's circuit may still be open for a moment,
   *  and while a push source is up nothing else polls — the gap would wait for the next block. */
  private async catchUp(): Promise<void> {
    if (this.catchingUp) return;
    this.catchingUp = true;
    try {
      for (let wait = 50; this.live && !this.stopped; wait = Math.min(1000, wait * 2)) {
        const before = this.polledAt;
        await this.tick();
        if (this.polledAt > before) return;
        await new Promise((r) => setTimeout(r, wait).unref());
      }
    } finally {
      this.catchingUp = false;
    }
  }

  private schedulePoll(ms: number): void {
    if (this.pollTimer !== undefined || this.stopped || this.holds === 0) return;
    this.pollTimer = setTimeout(() => {
      this.pollTimer = undefined;
      if (this.holds === 0 || this.stopped) return;
      if (this.pushing && this.head !== undefined) return; // push carries the head; no poll
      void this.tick().finally(() => this.schedulePoll(this.o.pollMs));
    }, ms);
    this.pollTimer.unref();
  }

  // --- polling -----------------------------------------------------------------------------------------------------

  private wantsFinality(): boolean {
    for (const l of this.listeners) if (l.onFinalized !== undefined) return true;
    return false;
  }

  private async pollOnce(): Promise<void> {
    const t = performance.now();
    this.pollStarted = t;
    const gen = this.generation;
    try {
      const fin = this.wantsFinality();
      const [latest, f] = await Promise.all([
        this.o.upstream.call('eth_getBlockByNumber', ['latest', false]),
        fin ? this.o.upstream.call('eth_getBlockByNumber', ['finalized', false]).catch(() => null) : null,
      ]);
      const b = toHeadBlock(latest);
      if (b === null) throw new Error('eth_getBlockByNumber("latest") answered no block');
      if (gen !== this.generation) return;
      this.offer(b, 'poll');
      await this.settled();
      if (fin) this.setFinalized(toHeadBlock(f)?.number, t);
      this.polledAt = t;
    } catch (e) {
      // The position is kept (the next poll connects from it: no hole for the feeds); it is no longer recent, so
      // nothing head-dependent is served from it (recentHead) until a poll succeeds.
      this.polledAt = -Infinity;
      this.emitError(e);
    }
  }

  private setFinalized(n: number | undefined, at: number): void {
    const head = this.head;
    if (head === undefined) return;
    this.finalizedAt = at;
    // Finality never goes back; it is never above the head.
    const f = Math.min(head.number, n ?? Math.max(0, head.number - this.o.finalityDepth));
    if (this.finalized !== undefined && f <= this.finalized) return;
    this.finalized = f;
    for (const l of this.listeners) l.onFinalized?.(f);
  }

  /** Push mode: finality read at most every pollMs, on a new head. */
  private refreshFinality(): void {
    const now = performance.now();
    if (now - this.finalizedAt < this.o.pollMs || !this.wantsFinality()) return;
    this.finalizedAt = now;
    const gen = this.generation;
    this.o.upstream.call('eth_getBlockByNumber', ['finalized', false]).then(
      (r) => gen === this.generation && this.setFinalized(toHeadBlock(r)?.number, now),
      () => gen === this.generation && this.setFinalized(undefined, now),
    );
  }

  // --- the chain ---------------------------------------------------------------------------------------------------

  /** A header from a source. The fast path (extends the head, nothing queued) emits in this turn. */
  offer(b: HeadBlock, src: Source): void {
    if (this.stopped) return;
    const prev = this.lastOf.get(src);
    this.lastOf.set(src, b.hash);
    if (this.byHash.has(b.hash)) return; // already ours: a later copy from another upstream, or a lagging poll
    const via = src === 'poll' ? 'poll' : 'push';
    if (!this.busy && (this.head === undefined || b.parentHash === this.head.hash)) {
      this.apply([], [b], via);
      return;
    }
    if (!this.takes(b, prev)) return;
    this.queue.push({ b, via });
    if (!this.busy) void this.drain();
  }

  /** Whether a header that does not extend the head moves it: higher always; as high or lower only when its source's
   *  previous block was ours (that upstream reorged), never when it lags or sits on another branch. */
  private takes(b: HeadBlock, prev: string | undefined): boolean {
    const head = this.head;
    if (head === undefined || b.number > head.number) return true;
    return prev !== undefined && this.byHash.has(prev) && this.byHash.get(prev)!.number >= b.number;
  }

  private async drain(): Promise<void> {
    this.busy = true;
    try {
      while (this.queue.length > 0) {
        const { b, via } = this.queue.shift()!;
        const gen = this.generation;
        if (this.byHash.has(b.hash)) continue;
        const head = this.head;
        if (head === undefined || b.parentHash === head.hash) {
          this.apply([], [b], via);
          continue;
        }
        try {
          await this.connect(b, gen, via);
        } catch (e) {
          this.emitError(e);
        }
      }
    } finally {
      this.busy = false;
      for (const w of this.waiters.splice(0)) w();
    }
  }

  private async block(n: number | string): Promise<HeadBlock | null> {
    return toHeadBlock(await this.o.upstream.call('eth_getBlockByNumber', [typeof n === 'number' ? hex(n) : n, false]));
  }

  private async byHashFetch(hash: string): Promise<HeadBlock | null> {
    return toHeadBlock(await this.o.upstream.call('eth_getBlockByHash', [hash, false]));
  }

  /** Connects `b` to the held chain: fetches what is missing below it, down to a block we hold. */
  private async connect(b: HeadBlock, gen: number, via: ChainUpdate['via']): Promise<void> {
    const head = this.head!;
    const branch: HeadBlock[] = [b];
    // A gap on what is probably the same chain: the heights in between by number, in parallel (the pool batches).
    const lo = head.number + 1;
    if (b.number - lo > 0 && b.number - lo <= MAX_WALK) {
      const mids = await Promise.all(
        Array.from({ length: b.number - lo }, (_, i) => this.block(lo + i).catch(() => null)),
      );
      for (let i = mids.length - 1; i >= 0; i--) {
        const m = mids[i];
        if (m === null || m.hash !== branch[0].parentHash) break;
        branch.unshift(m);
      }
    }
    // Walk down by parent hash (a reorg, or a link the by-number reads did not make) to a block we hold.
    while (!this.byHash.has(branch[0].parentHash)) {
      if (gen !== this.generation) return;
      if (this.chain.length > 0 && branch[0].number <= this.chain[0].number) {
        // Below the oldest block held: nothing held is on the new branch (the walk would have met it). All of it is
        // replaced; the walk goes on while a hint (a hash a listener learnt there) says that height changed too, so
        // the branch covers every height someone knew of the old chain.
        const below = branch[0].number - 1;
        const hint = this.hints.get(below);
        if (hint !== undefined && hint !== branch[0].parentHash && branch.length <= MAX_WALK) {
          const p = await this.byHashFetch(branch[0].parentHash);
          if (p === null) throw new Error(`block ${branch[0].parentHash} not found upstream (lagging)`);
          branch.unshift(p);
          continue;
        }
        const removed = this.chain.reverse();
        this.chain = [];
        this.byHash.clear();
        this.apply(removed, branch, via);
        return;
      }
      if (branch.length > MAX_WALK || this.chain.length === 0) {
        this.o.logger?.warn(
          { network: this.o.network, block: b.number, held: head.number },
          'head: gap or reorg deeper than the history; restarting from the new block',
        );
        this.reset('gap or reorg deeper than the history');
        this.apply([], [b], via);
        return;
      }
      const p = await this.byHashFetch(branch[0].parentHash);
      if (p === null) throw new Error(`block ${branch[0].parentHash} not found upstream (lagging); retried next head`);
      branch.unshift(p);
    }
    if (gen !== this.generation) return;
    const fork = this.byHash.get(branch[0].parentHash)!;
    const removed: HeadBlock[] = [];
    while (this.head !== undefined && this.head.hash !== fork.hash) removed.push(this.chain.pop()!);
    for (const r of removed) this.byHash.delete(r.hash);
    // Blocks of the branch already held would be duplicates: none can be (the walk stopped at the first held one).
    this.apply(removed, branch, via);
  }

  private apply(removed: HeadBlock[], added: HeadBlock[], via: ChainUpdate['via']): void {
    for (const a of added) {
      this.chain.push(a);
      this.byHash.set(a.hash, a);
    }
    while (this.chain.length > HISTORY) this.byHash.delete(this.chain.shift()!.hash);
    if (this.hints.size > 0) {
      const top = added[added.length - 1].number;
      for (const [n, h] of this.hints)
        if (n <= top - HISTORY || this.at(n)?.hash === h || n > top) this.hints.delete(n);
    }
    const u: ChainUpdate = { removed, added, via };
    for (const l of this.listeners) l.onUpdate(u);
    if (this.pushing) this.refreshFinality();
  }

  private reset(reason: string): void {
    this.generation++;
    this.chain = [];
    this.byHash.clear();
    this.hints.clear();
    this.lastOf.clear();
    this.queue = [];
    this.finalized = undefined;
    this.finalizedAt = -Infinity;
    this.polledAt = -Infinity;
    for (const l of this.listeners) l.onReset?.(reason);
  }

  private emitError(e: unknown): void {
    for (const l of this.listeners) l.onError?.(e);
  }
}
