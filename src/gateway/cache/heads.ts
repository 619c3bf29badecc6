// The chain position the response cache decides by, per network and replica: the head (number + hash) and the
// finalized block number, from one cheap poll — eth_getBlockByNumber("latest") and ("finalized") sent together (the
// upstream pool coalesces them into one HTTP batch). A node without the "finalized" tag (an error or null) gets
// `head - finalityDepth` instead (eRPC's fallback; anvil answers "finalized" as head - 64, "safe" as head - 32).
//
// Why its own poll and not the subscription feed's (src/gateway/subscriptions/feed.ts): the feed runs only while
// someone is subscribed and fetches every block in full (plus logs); the cache needs two headers per interval while
// there is cacheable traffic. The poll is driven by that traffic, with no timer: a cacheable call (`touch`) starts one
// when the last started `pollMs` ago or more (at most one in flight) — no calls, no polls. A call that finds the last
// good poll older than 2 × pollMs first invalidates the head answers (the head may have moved meanwhile); older than
// `idleMs`, it forgets the position altogether (reorgs went unseen: the cache drops its unfinalized answers).
//
// Reorgs: the tracker remembers the hash of each head it saw (and of blocks it walked). A new head whose parent is
// not the remembered hash below it, or a remembered height whose hash changed, starts a walk down the new chain (one
// block by number per step) to the highest remembered height that still matches; every height above it is reported
// as replaced (`onReorg(fromHeight)`). Heights never seen on the way down count as replaced (conservative). A walk
// deeper than HISTORY reports everything above the finalized block.
// A lower head whose hash matches what was seen (a lagging upstream of the pool) is ignored: the head never goes back
// without a reorg.
import { RawResult } from '@rpcgate/toolkit/engine';

export interface HeadUpstream {
  call(method: string, params?: readonly unknown[]): Promise<unknown>;
}

export interface HeadEvents {
  /** The head changed (number or hash): answers that depend on the head are stale. */
  onHead(head: number): void;
  /** The blocks from `height` up were replaced. */
  onReorg(height: number): void;
  /** The finalized block number moved up to `finalized`. */
  onFinalized(finalized: number): void;
  /** The tracker forgot its position (idle, or a failed poll). */
  onReset(): void;
  /** A poll failed (upstream down): logged by the owner. */
  onError?(err: unknown): void;
}

export interface HeadTrackerOptions {
  upstream: HeadUpstream;
  pollMs: number;
  /** After this long without a successful poll (no traffic), the position is forgotten. */
  idleMs: number;
  finalityDepth: number;
  events: HeadEvents;
}

/** Heights remembered for reorg detection (and the deepest walk). */
export const HISTORY = 256;

interface BlockRef {
  number: number;
  hash: string;
  parentHash: string;
}

const hex = (n: number) => `0x${n.toString(16)}`;

function toBlock(r: unknown): BlockRef | null {
  const v = r instanceof RawResult ? (JSON.parse(r.json) as unknown) : r;
  if (v === null || typeof v !== 'object') return null;
  const b = v as { number?: unknown; hash?: unknown; parentHash?: unknown };
  const number = typeof b.number === 'string' ? Number(b.number) : NaN;
  if (!Number.isSafeInteger(number) || typeof b.hash !== 'string' || typeof b.parentHash !== 'string') return null;
  return { number, hash: b.hash, parentHash: b.parentHash };
}

export class HeadTracker {
  /** Current head; undefined while unknown (not started, idle, first poll pending or failed). */
  head: number | undefined;
  headHash: string | undefined;
  finalized: number | undefined;
  /** Bumped on every head change (answers cached for the head are keyed by it). */
  epoch = 0;
  /** Bumped on every reorg and reset (a call that started before must not store a per-height answer). */
  generation = 0;
  private readonly hashes = new Map<number, string>();
  private current: Promise<void> | undefined;
  private stopped = false;
  /** performance.now() when the last poll started, and when the last successful one started. */
  private pollStarted = -Infinity;
  private polledAt = -Infinity;

  constructor(private readonly o: HeadTrackerOptions) {}

  /** The head if a poll saw it within the last two intervals (what head answers are served by), else undefined. */
  get recentHead(): number | undefined {
    return performance.now() - this.polledAt <= 2 * this.o.pollMs ? this.head : undefined;
  }

  /** The recent head for a caller that needs one (e.g. the eth_getLogs range cap): counts as traffic, so the poll
   *  keeps it fresh while such calls come; undefined until the first poll is in (the caller then asks the node). */
  knownHead(): number | undefined {
    this.touch();
    return this.recentHead;
  }

  /** A cacheable call: starts a poll when one is due. Hot path: a clock read and a comparison. */
  touch(): void {
    const now = performance.now();
    if (now - this.pollStarted < this.o.pollMs || this.current !== undefined || this.stopped) return;
    if (this.head !== undefined && now - this.polledAt > 2 * this.o.pollMs) {
      if (now - this.polledAt > this.o.idleMs) this.reset();
      else {
        this.epoch++;
        this.o.events.onHead(this.head);
      }
    }
    this.pollStarted = now;
    void this.tick();
  }

  stop(): void {
    this.stopped = true;
  }

  /** One poll now (tests drive the tracker with it); waits for a poll already running first. Never rejects. */
  async tick(): Promise<void> {
    while (this.current !== undefined) await this.current;
    if (this.stopped) return;
    const p = this.pollOnce();
    this.current = p;
    try {
      await p;
    } finally {
      this.current = undefined;
    }
  }

  private async pollOnce(): Promise<void> {
    const t = performance.now();
    try {
      await this.poll();
      this.polledAt = t;
    } catch (e) {
      // A position that cannot be checked is no position: nothing head-dependent is cached until a poll succeeds.
      if (this.head !== undefined) this.reset();
      this.o.events.onError?.(e);
    }
  }

  /** Forget the position (idle stop, or a poll that cannot be trusted). */
  private reset(): void {
    this.head = undefined;
    this.headHash = undefined;
    this.finalized = undefined;
    this.hashes.clear();
    this.epoch++;
    this.generation++;
    this.o.events.onReset();
  }

  private async block(n: number | string): Promise<BlockRef | null> {
    return toBlock(await this.o.upstream.call('eth_getBlockByNumber', [typeof n === 'number' ? hex(n) : n, false]));
  }

  private async poll(): Promise<void> {
    const [latest, fin] = await Promise.all([this.block('latest'), this.block('finalized').catch(() => null)]);
    if (latest === null) throw new Error('eth_getBlockByNumber("latest") answered no block');
    await this.advance(latest);
    if (this.head === undefined) return;
    // Finality never goes back; it is never above the head this tracker knows.
    const f = Math.min(this.head, fin !== null ? fin.number : Math.max(0, this.head - this.o.finalityDepth));
    if (this.finalized === undefined || f > this.finalized) {
      this.finalized = f;
      for (const h of this.hashes.keys()) if (h < f) this.hashes.delete(h);
      this.o.events.onFinalized(f);
    }
  }

  private async advance(l: BlockRef): Promise<void> {
    const head = this.head;
    if (head === undefined) {
      this.setHead(l);
      return;
    }
    if (l.number === head && l.hash === this.headHash) return;
    const seen = this.hashes.get(l.number);
    if (l.number < head && (seen === l.hash || seen === undefined)) return; // a lagging upstream
    // Find the first height whose remembered hash differs from the chain that `l` heads.
    let fork: number | undefined;
    let cur = l;
    if (seen !== undefined && seen !== l.hash) fork = l.number;
    if (l.number > head + 1 && fork === undefined) {
      // Blocks were missed: is the remembered head still on the chain?
      const b = await this.block(head);
      if (b === null) return; // this upstream is behind: next tick
      if (b.hash !== this.headHash) {
        fork = head;
        cur = b;
      }
    } else if (
      fork === undefined &&
      this.hashes.get(l.number - 1) !== undefined &&
      this.hashes.get(l.number - 1) !== l.parentHash
    ) {
      fork = l.number - 1;
      const b = await this.block(l.number - 1);
      if (b === null) return;
      cur = b;
    }
    if (fork !== undefined) {
      // Walk down the new chain until a remembered hash matches (heights never seen count as replaced; below the
      // lowest remembered height nothing is cached per height, so the walk ends there).
      let lowest = Infinity;
      for (const h of this.hashes.keys()) if (h < lowest) lowest = h;
      const floor = Math.max(this.finalized ?? -1, lowest - 1);
      let steps = 0;
      for (;;) {
        const h = cur.number - 1;
        if (h <= floor) break;
        if (this.hashes.get(h) === cur.parentHash) break;
        if (++steps > HISTORY) {
          fork = floor + 1;
          break;
        }
        fork = h;
        const b = await this.block(h);
        if (b === null) return;
        this.hashes.set(h + 1, cur.hash);
        cur = b;
      }
      this.hashes.set(cur.number, cur.hash);
      for (const h of [...this.hashes.keys()]) if (h >= fork && h > cur.number) this.hashes.delete(h);
      this.generation++;
      this.o.events.onReorg(fork);
    }
    this.setHead(l);
  }

  /** The hash this tracker saw at height `n` (undefined: not seen; the cache keeps no per-height answer there). */
  hashAt(n: number): string | undefined {
    return this.hashes.get(n);
  }

  /** A block hash the node answered for height `n` (a block read through the cache): remembered when the height is
   *  above the finalized block and not above the head. false when it contradicts the hash already seen there. */
  learn(n: number, hash: string): boolean {
    const seen = this.hashes.get(n);
    if (seen !== undefined) return seen === hash;
    if (this.head === undefined || n > this.head || n <= (this.finalized ?? -1) || n <= this.head - HISTORY)
      return false;
    this.hashes.set(n, hash);
    return true;
  }

  private setHead(l: BlockRef): void {
    for (const h of this.hashes.keys()) if (h > l.number || h <= l.number - HISTORY) this.hashes.delete(h);
    this.hashes.set(l.number, l.hash);
    this.head = l.number;
    this.headHash = l.hash;
    this.epoch++;
    this.o.events.onHead(l.number);
  }
}
