// In-process filter store (one replica): a Map with idle expiry, swept lazily on access and by an unref'd timer.
import type { CreateResult, FilterState, FilterStore, Versioned } from './store.js';

interface Entry {
  state: FilterState;
  version: number;
  expiresAt: number;
}

export class MemoryFilterStore implements FilterStore {
  private readonly filters = new Map<string, Entry>();
  private readonly byOwner = new Map<string, Set<string>>();
  private readonly sweeper: NodeJS.Timeout;

  constructor(
    private readonly idleMs: number,
    private readonly now: () => number = Date.now,
  ) {
    this.sweeper = setInterval(() => this.sweep(), Math.min(60_000, Math.max(1000, idleMs)));
    this.sweeper.unref();
  }

  create(state: FilterState, cap: number): Promise<CreateResult> {
    const owned = this.byOwner.get(state.owner);
    if (owned) for (const id of owned) this.live(id);
    const count = this.byOwner.get(state.owner)?.size ?? 0;
    if (count >= cap) return Promise.resolve({ ok: false, count });
    this.filters.set(state.id, { state, version: 0, expiresAt: this.now() + this.idleMs });
    let set = this.byOwner.get(state.owner);
    if (!set) this.byOwner.set(state.owner, (set = new Set()));
    set.add(state.id);
    return Promise.resolve({ ok: true });
  }

  get(id: string): Promise<Versioned | undefined> {
    const e = this.live(id);
    // A copy: the caller changes it and hands it back through update().
    return Promise.resolve(e && { state: structuredClone(e.state), version: e.version });
  }

  update(state: FilterState, version: number): Promise<boolean> {
    const e = this.live(state.id);
    if (!e || e.version !== version || e.state.owner !== state.owner) return Promise.resolve(false);
    this.filters.set(state.id, { state, version: version + 1, expiresAt: this.now() + this.idleMs });
    return Promise.resolve(true);
  }

  delete(id: string, owner: string): Promise<boolean> {
    const e = this.live(id);
    if (!e || e.state.owner !== owner) return Promise.resolve(false);
    this.remove(id, owner);
    return Promise.resolve(true);
  }

  close(): Promise<void> {
    clearInterval(this.sweeper);
    this.filters.clear();
    this.byOwner.clear();
    return Promise.resolve();
  }

  /** The entry when it has not expired (an expired one is removed). */
  private live(id: string): Entry | undefined {
    const e = this.filters.get(id);
    if (e && e.expiresAt <= this.now()) {
      this.remove(id, e.state.owner);
      return undefined;
    }
    return e;
  }

  private remove(id: string, owner: string): void {
    this.filters.delete(id);
    const set = this.byOwner.get(owner);
    set?.delete(id);
    if (set?.size === 0) this.byOwner.delete(owner);
  }

  private sweep(): void {
    for (const id of this.filters.keys()) this.live(id);
  }
}
