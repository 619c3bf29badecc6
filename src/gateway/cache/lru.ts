// A least-recently-used map bounded by bytes (no lru-cache in node_modules; a Map keeps insertion order, so
// delete + set moves an entry to the young end and the first key is the oldest). Sizes are the caller's estimate.
// A hit moves its entry only when the entry is in the older half (placed more than size/2 placements ago): a hot
// entry is then moved once per size/2 placements instead of on every hit (the delete + set was the cache's largest
// cost per hit), and what is evicted is still never among the younger half of the entries.

interface Entry<V> {
  v: V;
  size: number;
  /** The placement (insert or move) that put the entry at the young end. */
  t: number;
}

export class ByteLru<V> {
  private readonly map = new Map<string, Entry<V>>();
  private used = 0;
  private tick = 0;

  constructor(
    readonly maxBytes: number,
    /** Called for every entry that leaves (evicted, deleted or cleared), e.g. to keep a side index in step. */
    private readonly onRemove?: (key: string, value: V) => void,
  ) {}

  get bytes(): number {
    return this.used;
  }

  get size(): number {
    return this.map.size;
  }

  get(key: string): V | undefined {
    const e = this.map.get(key);
    if (e === undefined) return undefined;
    if (this.tick - e.t > this.map.size >> 1) {
      this.map.delete(key);
      this.map.set(key, e);
      e.t = ++this.tick;
    }
    return e.v;
  }

  has(key: string): boolean {
    return this.map.has(key);
  }

  /** Stores `value`; false (and nothing stored) when it alone is larger than the bound. */
  set(key: string, value: V, size: number): boolean {
    if (size > this.maxBytes) return false;
    this.delete(key);
    this.map.set(key, { v: value, size, t: ++this.tick });
    this.used += size;
    while (this.used > this.maxBytes) {
      const oldest = this.map.keys().next().value as string;
      this.delete(oldest);
    }
    return true;
  }

  delete(key: string): boolean {
    const e = this.map.get(key);
    if (e === undefined) return false;
    this.map.delete(key);
    this.used -= e.size;
    this.onRemove?.(key, e.v);
    return true;
  }

  clear(): void {
    for (const k of [...this.map.keys()]) this.delete(k);
  }
}
