// The response cache of one network, in front of its upstream pool (the node API's forwarding handler calls it; the
// engine's admission hook — access, limits — and call observer — metering — run around it, so a hit is a counted,
// metered call like any other). What an answer may be cached as: ./policy.ts; the head, finality and reorgs it is
// judged by: ./heads.ts.
//
// Values are the node's bytes as a CachedResult (a RawResult): a hit hands out the same object, spliced into the
// response unparsed; a miss answers the pool's own result. So the call observer (metering) tells a hit by the class of
// the result it sees — no per-call flag or allocation.
// Key: method + JSON of the params (the contract's validators already require canonical quantities and tags).
// Where answers live:
//   final  → the byte-bounded LRU (./lru.ts), and Redis when configured (shared by replicas);
//   block  → the LRU, indexed by height, only at heights whose hash the tracker knows (a head it saw, or a block read
//            through the cache): a reorg drops the heights it replaced, finality moves them out of the index, an idle
//            stop of the tracker drops them all; and Redis keyed by height + block hash when the hash was known
//            before the call (a read by block number at a height the tracker saw), so a reorg is a new key there;
//   head   → a map cleared on every new head (at most a quarter of maxBytes), and Redis keyed by head number+hash.
// Never stored: errors (the pool rejects: nothing to store), `null` (a block or transaction that does not exist yet
// must not stick), answers of a call during which the head moved (head) or a reorg happened (block).
import { RawResult } from '@rpcgate/toolkit/engine';
import type { GatewayMeaning } from '../method-meaning.js';
import type { ChainHead } from '../heads/head.js';
import { HeadTracker } from './heads.js';
import { ByteLru } from './lru.js';
import { blockNumberOf, decide, decideByResult, type Decision } from './policy.js';
import type { RedisTier } from './redis.js';

export interface CacheUpstream {
  call(method: string, params?: readonly unknown[]): Promise<unknown>;
}

/** Where hits and misses are counted (src/gateway/metering Metrics fits). */
export interface CacheMetrics {
  cacheLookup(network: string, method: string, hit: boolean): void;
}

export interface NetworkCacheOptions {
  network: string;
  upstream: CacheUpstream;
  /** Per method: its meaning (only forwarded methods whose class is not `never` are looked at). */
  meanings: ReadonlyMap<string, GatewayMeaning>;
  /** Methods never cached here. */
  disabled?: ReadonlySet<string>;
  maxBytes: number;
  finalityDepth: number;
  pollMs: number;
  idleMs: number;
  redis?: RedisTier;
  metrics?: CacheMetrics;
  onPollError?: (err: unknown) => void;
  /** The network's head (src/gateway/heads); without it the cache polls a head of its own (pollMs, idleMs). */
  head?: ChainHead;
}

/** An answer held by the cache (what a hit answers). A miss answers the pool's result, never one of these. */
export class CachedResult extends RawResult {}

/** Whether a call's result was answered from a response cache (memory or Redis). */
export function isCacheHit(result: unknown): boolean {
  return result instanceof CachedResult;
}

const EMPTY: readonly unknown[] = Object.freeze([]);
/** Per-entry bookkeeping beyond the key and value text (Map entry, objects). */
const OVERHEAD = 96;

function isNull(json: string): boolean {
  return json.length < 8 && json.trim() === 'null';
}

export class NetworkCache {
  readonly network: string;
  readonly tracker: HeadTracker;
  /** Counters for tests and the bench. */
  readonly stats = { hits: 0, misses: 0, stored: 0, dropped: 0 };
  private readonly rules = new Map<string, GatewayMeaning>();
  private readonly lru: ByteLru<CachedResult>;
  private readonly heightOf = new Map<string, number>();
  private readonly atHeight = new Map<number, Set<string>>();
  private headEntries = new Map<string, CachedResult>();
  private headBytes = 0;
  private readonly headMaxBytes: number;
  private readonly upstream: CacheUpstream;
  private readonly redis: RedisTier | undefined;
  private readonly metrics: CacheMetrics | undefined;

  constructor(o: NetworkCacheOptions) {
    this.network = o.network;
    this.upstream = o.upstream;
    this.redis = o.redis;
    this.metrics = o.metrics;
    for (const [name, m] of o.meanings)
      if (m.route === 'forward' && m.cache !== 'never' && !o.disabled?.has(name)) this.rules.set(name, m);
    this.lru = new ByteLru<CachedResult>(o.maxBytes, (key) => this.unindex(key));
    this.headMaxBytes = Math.floor(o.maxBytes / 4);
    const source =
      o.head !== undefined
        ? { head: o.head }
        : { upstream: o.upstream, pollMs: o.pollMs, idleMs: o.idleMs, finalityDepth: o.finalityDepth };
    this.tracker = new HeadTracker({
      ...source,
      events: {
        onHead: () => this.clearHead(),
        onReorg: (h) => this.dropFrom(h),
        onFinalized: (f) => this.finalize(f),
        onReset: () => {
          this.dropFrom(-1);
          this.clearHead();
        },
        onError: o.onPollError,
      },
    });
  }

  /** Bytes held in memory (LRU + head answers). */
  get bytes(): number {
    return this.lru.bytes + this.headBytes;
  }

  /** Whether `method` is looked up in the cache at all. */
  caches(method: string): boolean {
    return this.rules.has(method);
  }

  /** The answer to a call: from the cache, or from the upstream (and then stored when it may be). */
  call(method: string, params: readonly unknown[] | undefined): unknown {
    const m = this.rules.get(method);
    if (m === undefined) return this.upstream.call(method, params);
    this.tracker.touch();
    const p = params ?? EMPTY;
    const key = method + JSON.stringify(p);
    const v = this.lru.get(key) ?? this.headEntries.get(key);
    if (v !== undefined) {
      this.hit(method);
      return v;
    }
    const d = decide(m, p, this.tracker);
    if (d.kind === 'none') {
      this.miss(method);
      return this.upstream.call(method, p);
    }
    return this.fetch(method, p, key, d);
  }

  private hit(method: string): void {
    this.stats.hits++;
    this.metrics?.cacheLookup(this.network, method, true);
  }

  private miss(method: string): void {
    this.stats.misses++;
    this.metrics?.cacheLookup(this.network, method, false);
  }

  private async fetch(method: string, p: readonly unknown[], key: string, d: Decision): Promise<unknown> {
    const t = this.tracker;
    const epoch = t.epoch;
    const generation = t.generation;
    const head = t.head;
    const headHash = t.headHash;
    const redis = this.redis;
    let rkey: string | undefined;
    // An unfinalized block's answers are shared under the block hash this replica knows at that height (none known:
    // memory only, after the node's answer taught it).
    const blockHash = d.kind === 'block' ? t.hashAt(d.height) : undefined;
    if (redis !== undefined) {
      if (d.kind === 'block')
        rkey = blockHash === undefined ? undefined : redis.blockKey(this.network, d.height, blockHash, key);
      else
        rkey =
          d.kind === 'head' ? redis.headKey(this.network, head!, headHash!, key) : redis.finalKey(this.network, key);
      const s = rkey === undefined ? null : await redis.get(rkey);
      if (s !== null) {
        const r = new CachedResult(s);
        if (d.kind === 'head') {
          if (t.epoch === epoch) this.putHead(key, r);
        } else if (d.kind === 'block') {
          if (t.generation === generation && t.hashAt(d.height) === blockHash) this.putBlock(key, r, d.height);
        } else this.putFinal(key, r);
        this.hit(method);
        return r;
      }
    }
    this.miss(method);
    const res = await this.upstream.call(method, p);
    const json = res instanceof RawResult ? res.json : JSON.stringify(res ?? null);
    if (isNull(json)) return res;
    // What is stored (and a later hit answers) is a CachedResult made here; this call answers `res` (a miss).
    const e = d.kind === 'result' ? decideByResult(blockNumberOf(json), t) : d;
    switch (e.kind) {
      case 'final':
        this.putFinal(key, new CachedResult(json));
        if (redis !== undefined) redis.setFinal(rkey ?? redis.finalKey(this.network, key), json);
        break;
      case 'block':
        if (t.generation !== generation) break;
        if (t.finalized !== undefined && e.height <= t.finalized) {
          this.putFinal(key, new CachedResult(json));
          if (redis !== undefined) redis.setFinal(redis.finalKey(this.network, key), json);
        } else if (this.onChain(method, e.height, json)) {
          this.putBlock(key, new CachedResult(json), e.height);
          // Shared only when looked up by height (a receipt's height is known only from its answer).
          const h = d.kind === 'block' ? t.hashAt(e.height) : undefined;
          if (redis !== undefined && h !== undefined)
            redis.setFinal(redis.blockKey(this.network, e.height, h, key), json);
        }
        break;
      case 'head':
        if (t.epoch !== epoch) break;
        this.putHead(key, new CachedResult(json));
        if (redis !== undefined && rkey !== undefined) redis.setHead(rkey, json);
        break;
    }
    return res;
  }

  /** Whether an answer for unfinalized `height` can be watched for reorgs: the tracker knows the hash there (a block
   *  answer teaches it; one on another fork than the tracker's is not kept). */
  private onChain(method: string, height: number, json: string): boolean {
    const t = this.tracker;
    if (method === 'eth_getBlockByNumber') {
      const b = JSON.parse(json) as { hash?: unknown; number?: unknown };
      return typeof b.hash === 'string' && b.number === `0x${height.toString(16)}` && t.learn(height, b.hash);
    }
    return t.hashAt(height) !== undefined;
  }

  private putFinal(key: string, r: CachedResult): void {
    if (this.lru.set(key, r, key.length + r.json.length + OVERHEAD)) this.stats.stored++;
  }

  private putBlock(key: string, r: CachedResult, height: number): void {
    if (!this.lru.set(key, r, key.length + r.json.length + OVERHEAD)) return;
    this.stats.stored++;
    this.heightOf.set(key, height);
    let keys = this.atHeight.get(height);
    if (keys === undefined) this.atHeight.set(height, (keys = new Set()));
    keys.add(key);
  }

  private putHead(key: string, r: CachedResult): void {
    const size = key.length + r.json.length + OVERHEAD;
    if (this.headBytes + size > this.headMaxBytes || this.headEntries.has(key)) return;
    this.headEntries.set(key, r);
    this.headBytes += size;
    this.stats.stored++;
  }

  /** An LRU entry left: forget its height. */
  private unindex(key: string): void {
    const h = this.heightOf.get(key);
    if (h === undefined) return;
    this.heightOf.delete(key);
    const keys = this.atHeight.get(h);
    keys?.delete(key);
    if (keys?.size === 0) this.atHeight.delete(h);
  }

  /** Drops every answer for a block at `height` or above (a reorg replaced them; -1: all unfinalized answers). */
  private dropFrom(height: number): void {
    for (const [h, keys] of [...this.atHeight]) {
      if (h < height) continue;
      for (const k of [...keys]) if (this.lru.delete(k)) this.stats.dropped++;
    }
    this.clearHead();
  }

  /** Answers for blocks at or below `finalized` are final now: out of the reorg index, kept in the LRU. */
  private finalize(finalized: number): void {
    for (const [h, keys] of [...this.atHeight]) {
      if (h > finalized) continue;
      for (const k of keys) this.heightOf.delete(k);
      this.atHeight.delete(h);
    }
  }

  private clearHead(): void {
    if (this.headEntries.size === 0) return;
    this.headEntries = new Map();
    this.headBytes = 0;
  }

  stop(): void {
    this.tracker.stop();
  }
}
