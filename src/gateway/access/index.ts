// The key index: API key → principal, in memory, kept in sync with the account store.
//
//   start:        feed.start() (remember the end of the key-event feed), then loadAllActiveKeys() → Map<keyHash, principal>
//   every 0.5 s:  feed.poll() → 'revoke' drops the hash; 'upsert' re-reads that one key (loadAccessEntry) and replaces it
//   every 5 min:  a full rebuild from a fresh snapshot (safety net), after pruning key events older than a day
// Poll and rebuild run one at a time (a rebuild's snapshot can never overwrite a newer revoke), so a revoked key, a
// deleted app or a rotated key stops working within poll interval + one query (< 2 s) in every process sharing the
// store. Per request: a lookup in a small cache of recently used keys (raw key → principal); on a miss
// hashKey(secret, key) (one HMAC-SHA256) and a Map lookup — never a query. The cache is emptied synchronously
// whenever the index changes (any key event applied, any rebuild), so it never answers with a state the index no
// longer has: a revoked key is refused as soon as the index drops it.
// If the store is unreachable the index keeps serving its last state and logs; the next poll catches up.
// After every change (events applied, a rebuild) the index tells its onChange listeners, so that what outlives one
// request — an open WebSocket (src/gateway/server/ws-route.ts) — re-checks its key within the same bound.
//
// Principals are built once per key version: allowlists compiled (./allowlist.ts), JWT keys imported (./jwt.ts), the
// app's chain resolved to networks, the limiter subject allocated.
import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { PlanCatalog, ResolvedPlans } from '../limits/plans.js';
import { appSubject, userSubject } from '../limits/types.js';
import { hashKey } from '../secrets/keys.js';
import {
  KeyEventFeed,
  loadAccessEntry,
  loadAllActiveKeys,
  pruneKeyEvents,
  type AccessEntry,
  type Database,
} from '../store/index.js';
import { compileAllowlists } from './allowlist.js';
import { JwtKeySet, pruneJwtKeyCache } from './jwt.js';
import type { AppPrincipal, KeyStore, NetworkKeyPrincipal, Principal } from './keys.js';

export * from './keys.js';
export { routeRefusal } from './route.js';
export {
  Denied,
  identify,
  checkKey,
  checkRequest,
  checkCall,
  hasCallChecks,
  clientIp,
  type AccessContext,
  type RequestInfo,
} from './pipeline.js';
export { compileAllowlists, type CompiledAllowlists } from './allowlist.js';
export { JwtKeySet, bearerToken, type JwtKeySpec } from './jwt.js';

export interface AccessIndexOptions {
  db: Kysely<Database>;
  /** The server secret (keys are found by HMAC). */
  secret: Uint8Array;
  /** Chain (lower-case) → networks of this deployment an app on that chain may use (see config `chains`). */
  chains: Readonly<Record<string, readonly string[]>>;
  /** Key-event poll interval (ms). */
  pollMs?: number;
  /** Full rebuild interval (ms). */
  rebuildMs?: number;
  logger?: Logger;
  /** The deployment's plans: an account with a plan or override gets its own limits in its principals' subjects. */
  plans?: PlanCatalog;
}

/** Longest key the index hashes: anything longer is not a key we issued (no HMAC for junk). */
const MAX_KEY_LENGTH = 128;
/** Keys remembered by the lookup cache (oldest dropped first). Only keys that were found are cached. */
const CACHE_SIZE = 4096;

export class AccessIndex implements KeyStore {
  private map = new Map<string, Principal>();
  /** Raw key → principal for keys found recently: skips the HMAC for hot keys. Cleared on every index change. */
  private readonly cache = new Map<string, Principal>();
  private readonly feed: KeyEventFeed;
  private readonly db: Kysely<Database>;
  private readonly secret: Uint8Array;
  private readonly chainNets = new Map<string, ReadonlySet<string>>();
  private readonly noNetworks: ReadonlySet<string> = new Set();
  private readonly pollMs: number;
  private readonly rebuildMs: number;
  private readonly logger: Logger | undefined;
  private timers: NodeJS.Timeout[] = [];
  /** Poll and rebuild run one after the other through this chain. */
  private queue: Promise<void> = Promise.resolve();
  private stopped = false;
  private lastSync = 0;
  private readonly listeners = new Set<() => void>();
  private readonly plans: PlanCatalog | undefined;

  constructor(opts: AccessIndexOptions) {
    this.db = opts.db;
    this.plans = opts.plans;
    this.secret = opts.secret;
    this.feed = new KeyEventFeed(opts.db);
    for (const [chain, nets] of Object.entries(opts.chains)) this.chainNets.set(chain.toLowerCase(), new Set(nets));
    // Half a second: a revoked key must stop working on every replica within 2 s, with room for a slow poll.
    this.pollMs = opts.pollMs ?? 500;
    this.rebuildMs = opts.rebuildMs ?? 300_000;
    this.logger = opts.logger;
  }

  /** Loads the snapshot and starts the timers. */
  async start(): Promise<void> {
    await this.feed.start();
    await this.rebuild();
    const poll = setInterval(() => void this.enqueue(() => this.poll(), 'poll'), this.pollMs);
    const rebuild = setInterval(() => void this.enqueue(() => this.rebuild(true), 'rebuild'), this.rebuildMs);
    poll.unref();
    rebuild.unref();
    this.timers = [poll, rebuild];
  }

  /** Stops the timers and waits for a running sync. */
  async stop(): Promise<void> {
    this.stopped = true;
    for (const t of this.timers) clearInterval(t);
    this.timers = [];
    await this.queue;
  }

  lookup(key: string): Principal | undefined {
    const hit = this.cache.get(key);
    if (hit !== undefined) return hit;
    if (key.length > MAX_KEY_LENGTH || this.map.size === 0) return undefined;
    const p = this.map.get(hashKey(this.secret, key));
    if (p !== undefined) {
      if (this.cache.size >= CACHE_SIZE) this.cache.delete(this.cache.keys().next().value!);
      this.cache.set(key, p);
    }
    return p;
  }

  onChange(fn: () => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  private changed(): void {
    for (const fn of this.listeners) {
      try {
        fn();
      } catch (e) {
        this.logger?.error({ err: e }, 'access index change listener failed');
      }
    }
  }

  /** The principal of a key hash (tests, tools). */
  byHash(keyHash: string): Principal | undefined {
    return this.map.get(keyHash);
  }

  get size(): number {
    return this.map.size;
  }

  /** Epoch ms of the last successful poll or rebuild. */
  get syncedAt(): number {
    return this.lastSync;
  }

  /** Applies pending key events now (also what the timer does); resolves when applied. */
  sync(): Promise<void> {
    return this.enqueue(() => this.poll(), 'poll');
  }

  /** A full rebuild now. */
  refresh(): Promise<void> {
    return this.enqueue(() => this.rebuild(), 'rebuild');
  }

  private enqueue(job: () => Promise<void>, what: string): Promise<void> {
    const run = this.queue.then(async () => {
      if (this.stopped) return;
      try {
        await job();
        this.lastSync = Date.now();
      } catch (e) {
        this.logger?.warn({ err: e }, `access index ${what} failed; serving the last state`);
      }
    });
    this.queue = run;
    return run;
  }

  private async poll(): Promise<void> {
    const events = await this.feed.poll();
    if (events.length === 0) return;
    const upserts = new Set<string>();
    this.cache.clear();
    for (const e of events) {
      if (e.kind === 'revoke') {
        this.map.delete(e.keyHash);
        upserts.delete(e.keyHash);
      } else upserts.add(e.keyHash);
    }
    for (const h of upserts) {
      const entry = await loadAccessEntry(this.db, h);
      // Cleared with each change (lookups ran during the await and may have cached the old principal).
      this.cache.clear();
      if (entry === undefined) this.map.delete(h);
      else this.map.set(h, this.principal(entry));
    }
    this.changed();
  }

  private async rebuild(prune = false): Promise<void> {
    // Any replica may prune the feed (events older than a day); the periodic rebuild covers a replica away longer.
    if (prune) await pruneKeyEvents(this.db);
    const entries = await loadAllActiveKeys(this.db);
    const next = new Map<string, Principal>();
    const kids = new Set<string>();
    for (const e of entries) {
      next.set(e.keyHash, this.principal(e));
      if (e.accessPoint === 'A') for (const k of e.jwtKeys) kids.add(k.kid);
    }
    this.map = next;
    this.cache.clear();
    pruneJwtKeyCache(kids);
    this.changed();
  }

  /** The account's own limiter plans (its plan and override resolved), or undefined for the deployment's own. */
  private plansOf(e: AccessEntry): ResolvedPlans | undefined {
    const a = e.account;
    if (
      this.plans === undefined ||
      (a.plan === null && a.planOverride === null && this.plans.defaultPlan === undefined)
    )
      return undefined;
    const l = this.plans.resolve(a.plan, a.planOverride);
    return l === this.plans.base ? undefined : l.plans;
  }

  /** An entry from the store → the principal the request path uses (everything precomputed). */
  principal(e: AccessEntry): Principal {
    const plans = this.plansOf(e);
    // A suspended account's keys stay in the index (nothing is deleted): identify() refuses them with `suspended`.
    const suspended = e.account.suspended ? { suspended: true as const } : {};
    if (e.accessPoint === 'B') {
      const p: NetworkKeyPrincipal = {
        kind: 'network-key',
        id: e.keyId,
        keyId: e.keyId,
        userId: e.userId,
        name: e.name,
        network: e.network,
        limitSubject: userSubject(e.userId, plans),
        ...suspended,
      };
      return p;
    }
    const p: AppPrincipal = {
      kind: 'app',
      id: e.appId,
      appId: e.appId,
      userId: e.userId,
      name: e.name,
      chain: e.chain,
      networks: this.chainNets.get(e.chain.toLowerCase()) ?? this.noNetworks,
      allowlists: compileAllowlists(e.allowlists),
      requireJwt: e.requireJwt,
      jwt: e.jwtKeys.length > 0 ? new JwtKeySet(e.jwtKeys, e.jwtMaxLifetimeSec) : undefined,
      limitSubject: appSubject(e.appId, e.userId, plans),
      logBodies: e.logBodies,
      ...suspended,
    };
    return p;
  }
}

/** Starts an index over the store (snapshot loaded, timers running). */
export async function startAccessIndex(opts: AccessIndexOptions): Promise<AccessIndex> {
  const index = new AccessIndex(opts);
  await index.start();
  return index;
}
