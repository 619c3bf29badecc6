// The response cache's view of the network head (src/gateway/heads): the head (number + hash), the finalized block and
// the hashes of the heights it may keep per-height answers for. It has no poll of its own: the one ChainHead per
// network (merged newHeads from the upstreams that push, a poll of the pool only where none does) drives it, and
// the eth_getLogs range cap and the subscription feeds read that same head.
//
// Events it turns the head's chain updates into: a new head (answers for "latest" are stale), a reorg (`onReorg(h)`:
// the blocks from height h up were replaced — the lowest removed height), finality moving up, and a reset (the
// position was forgotten: idle, a failed poll without push, a gap too deep to connect).
// Traffic keeps the head live: a cacheable call `touch`es it (without push, that starts a poll when one is due — no
// calls, no polls). A call that finds the head not recent (no push, no poll within two intervals) first invalidates
// the head answers: the head may have moved meanwhile.
// Heights also learnt from block answers (`learn`) are remembered while above the finalized block: a reorg that the
// head reports below them drops them.
import { ChainHead, HISTORY, type HeadUpstream } from '../heads/head.js';

export { HISTORY, type HeadUpstream };

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

export type HeadTrackerOptions = { events: HeadEvents } & (
  | { head: ChainHead }
  /** A head of its own over this upstream (tests, a cache built alone). */
  | { upstream: HeadUpstream; pollMs: number; idleMs: number; finalityDepth: number }
);

export class HeadTracker {
  /** Current head; undefined while unknown (not started, idle, first poll pending or failed). */
  head: number | undefined;
  headHash: string | undefined;
  finalized: number | undefined;
  /** Bumped on every head change (answers cached for the head are keyed by it). */
  epoch = 0;
  /** Bumped on every reorg and reset (a call that started before must not store a per-height answer). */
  generation = 0;
  /** The network head this view follows. */
  readonly chain: ChainHead;
  private readonly own: boolean;
  private readonly hashes = new Map<number, string>();
  private readonly unlisten: () => void;
  private stale = false;
  private readonly events: HeadEvents;

  constructor(o: HeadTrackerOptions) {
    this.own = !('head' in o);
    this.chain =
      'head' in o
        ? o.head
        : new ChainHead({
            network: '',
            upstream: o.upstream,
            pollMs: o.pollMs,
            idleMs: o.idleMs,
            finalityDepth: o.finalityDepth,
          });
    const ev = o.events;
    this.events = ev;
    this.unlisten = this.chain.listen({
      onUpdate: (u) => {
        // Replaced: the removed heights, and any added height where another hash was seen (a branch that starts
        // below the blocks the head held; heights learnt from block answers).
        let fork = u.removed.length > 0 ? u.removed[u.removed.length - 1].number : Infinity;
        for (const a of u.added) {
          const seen = this.hashes.get(a.number);
          if (seen !== undefined && seen !== a.hash && a.number < fork) fork = a.number;
        }
        if (fork !== Infinity) {
          for (const h of [...this.hashes.keys()]) if (h >= fork) this.hashes.delete(h);
          this.generation++;
          ev.onReorg(fork);
        }
        const last = u.added[u.added.length - 1];
        for (const a of u.added) this.hashes.set(a.number, a.hash);
        for (const h of this.hashes.keys()) if (h > last.number || h <= last.number - HISTORY) this.hashes.delete(h);
        this.head = last.number;
        this.headHash = last.hash;
        this.stale = false;
        this.epoch++;
        ev.onHead(last.number);
      },
      onReset: () => {
        this.head = undefined;
        this.headHash = undefined;
        this.finalized = undefined;
        this.hashes.clear();
        this.epoch++;
        this.generation++;
        ev.onReset();
      },
      onFinalized: (f) => {
        this.finalized = f;
        for (const h of this.hashes.keys()) if (h < f) this.hashes.delete(h);
        ev.onFinalized(f);
      },
      onError: ev.onError,
    });
  }

  /** The head if it is known to be current (pushed, or polled within the last two intervals), else undefined. */
  get recentHead(): number | undefined {
    return this.chain.recentHead;
  }

  /** The recent head for a caller that needs one (e.g. the eth_getLogs range cap): counts as traffic, so the head
   *  stays fresh while such calls come; undefined until the first head is in (the caller then asks the node). */
  knownHead(): number | undefined {
    this.touch();
    return this.recentHead;
  }

  /** A cacheable call. Hot path: a clock read and a comparison. */
  touch(): void {
    this.chain.touch();
    // Not recent (no push, no poll for two intervals): head answers may be stale — invalidated once.
    if (this.head !== undefined && !this.stale && this.chain.recentHead === undefined) {
      this.stale = true;
      this.epoch++;
      this.events.onHead(this.head);
    }
  }

  stop(): void {
    this.unlisten();
    if (this.own) this.chain.stop();
  }

  /** One poll of the head now (tests drive the tracker with it). Never rejects. */
  async tick(): Promise<void> {
    await this.chain.tick();
    await this.chain.settled();
  }

  /** The hash this tracker saw at height `n` (undefined: not seen; the cache keeps no per-height answer there). */
  hashAt(n: number): string | undefined {
    return this.hashes.get(n);
  }

  /** A block hash the node answered for height `n` (a block read through the cache): remembered when the height is
   *  above the finalized block and not above the head. false when it contradicts the hash already seen there. */
  learn(n: number, hash: string): boolean {
    const seen = this.hashes.get(n);
    if (seen !== undefined) return seen === hash.toLowerCase();
    if (this.head === undefined || n > this.head || n <= (this.finalized ?? -1) || n <= this.head - HISTORY)
      return false;
    this.hashes.set(n, hash.toLowerCase());
    this.chain.hint(n, hash);
    return true;
  }
}
