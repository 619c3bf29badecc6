// ByteLru (src/gateway/cache/lru.ts), the response cache's memory tier: bounded by bytes, the least recently used
// leave first (a hit in the older half moves its entry to the young end), onRemove hears of every entry that leaves.
import { describe, expect, it } from 'vitest';
import { ByteLru } from '../src/gateway/cache/lru.js';

describe('ByteLru', () => {
  it('stays within its bytes, evicting the oldest; refuses an entry larger than the bound', () => {
    const removed: string[] = [];
    const l = new ByteLru<number>(100, (k) => removed.push(k));
    for (let i = 0; i < 10; i++) expect(l.set(`k${i}`, i, 30)).toBe(true);
    expect([l.size, l.bytes]).toEqual([3, 90]);
    expect(removed).toEqual(['k0', 'k1', 'k2', 'k3', 'k4', 'k5', 'k6']);
    expect([l.get('k7'), l.get('k9'), l.get('k0')]).toEqual([7, 9, undefined]);
    expect(l.set('huge', -1, 101)).toBe(false);
    expect(l.has('huge')).toBe(false);
    expect(l.size).toBe(3);
  });

  it('a hit on an old entry keeps it; replacing a key frees its old size; clear() reports every entry', () => {
    const removed: string[] = [];
    const l = new ByteLru<string>(40, (k) => removed.push(k));
    for (const k of ['a', 'b', 'c', 'd']) l.set(k, k, 10);
    expect(l.get('a')).toBe('a'); // the oldest, in the older half: now the youngest
    l.set('e', 'e', 10);
    expect(removed).toEqual(['b']);
    l.set('c', 'C', 20); // replaced: its 10 bytes go, 20 come, and the oldest make room
    expect(l.bytes).toBeLessThanOrEqual(40);
    expect(l.get('c')).toBe('C');
    expect(l.get('a')).toBe('a');
    l.clear();
    expect([l.size, l.bytes]).toEqual([0, 0]);
    expect(new Set(removed)).toEqual(new Set(['a', 'b', 'c', 'd', 'e']));
  });

  it('a hot set survives a stream of one-off entries (entries in use are never the ones evicted)', () => {
    const l = new ByteLru<number>(1000);
    const hot = Array.from({ length: 10 }, (_, i) => `hot${i}`);
    for (const k of hot) l.set(k, 1, 10);
    for (let i = 0; i < 10_000; i++) {
      l.set(`cold${i}`, i, 10);
      for (const k of hot) if (l.get(k) === undefined) throw new Error(`${k} evicted after ${i} cold entries`);
    }
    expect(l.size).toBe(100);
  });
});
