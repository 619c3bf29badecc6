// A least-recently-used map bounded by bytes (no lru-cache in node_modules; a Map keeps insertion order, so
// delete + set moves an entry to the young end and the first key is the oldest). Sizes are the caller's estimate.

export class ByteLru<V> {
  private readonly map = new Map<string, { v: V; size: number }>();
  private used = 0;

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
    this.map.delete(key);
    this.map.set(key, e);
    return e.v;
  }

  has(key: string): boolean {
    return this.map.has(key);
  }

  /** Stores `value`; false (and nothing stored) when it alone is larger than the bound. */
  set(key: string, value: V, size: number): boolean {
    if (size > this.maxBytes) return false;
    this.delete(key);
    this.map.set(key, { v: value, size });
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
