// The two filter stores behind one interface (src/gateway/filters): the per-owner cap, compare-and-set of a poll,
// owner-bound delete, idle expiry restarted by an update. The in-process store always; Redis when reachable.
import { randomBytes } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import {
  MemoryFilterStore,
  RedisFilterStore,
  newFilterId,
  type FilterState,
  type FilterStore,
} from '../src/gateway/filters/index.js';
import { deleteRedisKeys, redisReachable, REDIS_URL, skipUnless } from './helpers/services.js';

const skipRedis = skipUnless(await redisReachable(), 'filter-store', 'Redis');
const prefix = `rpcgate-test-${randomBytes(6).toString('hex')}`;
const IDLE = 400;

const state = (owner: string): FilterState => ({
  id: newFilterId(),
  kind: 'blocks',
  network: 'mainnet',
  owner,
  cursor: { number: 1, hash: `0x${'11'.repeat(32)}` },
  start: 2,
  createdAt: 0,
  polledAt: 0,
});
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const stores: [string, () => FilterStore, boolean][] = [
  ['memory', () => new MemoryFilterStore(IDLE), false],
  ['redis', () => new RedisFilterStore({ url: REDIS_URL, prefix, idleMs: IDLE }), skipRedis],
];

afterAll(async () => {
  if (!skipRedis) await deleteRedisKeys(prefix);
});

describe.each(stores)('%s filter store', (_name, make, skip) => {
  it.skipIf(skip)(
    'ids are 128-bit quantities; cap per owner; compare-and-set; owner-bound delete; idle expiry',
    async () => {
      const ids = new Set(Array.from({ length: 1000 }, newFilterId));
      expect(ids.size).toBe(1000);
      for (const id of ids) expect(id).toMatch(/^0x[1-9a-f][0-9a-f]{0,31}$/);

      const store = make();
      try {
        const owner = `static:o-${randomBytes(4).toString('hex')}`;
        const [f1, f2, f3] = [state(owner), state(owner), state(owner)];
        expect(await store.create(f1, 2)).toEqual({ ok: true });
        expect(await store.create(f2, 2)).toEqual({ ok: true });
        expect(await store.create(f3, 2)).toEqual({ ok: false, count: 2 });
        // Another owner has its own count.
        expect(await store.create(state('static:other'), 2)).toEqual({ ok: true });

        const got = (await store.get(f1.id))!;
        expect(got).toEqual({ state: f1, version: 0 });
        // Two polls read version 0; the first update wins, the second (stale) changes nothing.
        expect(await store.update({ ...got.state, cursor: { number: 5, hash: '0x5' } }, 0)).toBe(true);
        expect(await store.update({ ...got.state, cursor: { number: 9, hash: '0x9' } }, 0)).toBe(false);
        expect(await store.get(f1.id)).toMatchObject({ state: { cursor: { number: 5 } }, version: 1 });
        // Another owner can neither update nor delete it.
        expect(await store.update({ ...got.state, owner: 'static:other' }, 1)).toBe(false);
        expect(await store.delete(f1.id, 'static:other')).toBe(false);
        expect(await store.delete(f1.id, owner)).toBe(true);
        expect(await store.get(f1.id)).toBeUndefined();
        expect(await store.delete(f1.id, owner)).toBe(false);
        // Room again under the cap.
        expect(await store.create(f3, 2)).toEqual({ ok: true });

        // Idle expiry: kept alive by updates, gone IDLE ms after the last one; an expired filter frees its cap slot.
        for (let i = 0; i < 3; i++) {
          await sleep(IDLE / 2);
          const v = (await store.get(f2.id))!;
          expect(await store.update(v.state, v.version)).toBe(true);
        }
        await sleep(IDLE + 150);
        expect(await store.get(f2.id)).toBeUndefined();
        expect(await store.get(f3.id)).toBeUndefined();
        expect(await store.create(state(owner), 2)).toEqual({ ok: true });
        expect(await store.create(state(owner), 2)).toEqual({ ok: true });
      } finally {
        await store.close();
      }
    },
  );
});

// Issue 26 item 3: the cap under a race, as an attacker would try it — hundreds of creates of one owner at once. The
// in-process store decides each create synchronously; the Redis store in one script, so two stores (two replicas,
// each with its own connection) sharing Redis still hold the cap exactly.
describe.each(stores)('%s filter store: the cap under concurrent creates', (name, make, skip) => {
  it.skipIf(skip)(
    '300 creates at once through two stores (two replicas): exactly the cap of 50 stored, the rest refused',
    async () => {
      const a = make();
      const b = name === 'memory' ? a : make();
      try {
        const owner = `app:race-${randomBytes(4).toString('hex')}`;
        const results = await Promise.all(
          Array.from({ length: 300 }, (_, i) => (i % 2 ? b : a).create(state(owner), 50)),
        );
        expect(results.filter((r) => r.ok)).toHaveLength(50);
        expect(results.filter((r) => !r.ok).every((r) => !r.ok && r.count === 50)).toBe(true);
        expect(await a.create(state(owner), 50)).toEqual({ ok: false, count: 50 });
      } finally {
        await a.close();
        if (b !== a) await b.close();
      }
    },
  );
});

describe.skipIf(skipRedis)('redis filter store: replicas whose clocks disagree', () => {
  it("a replica whose clock runs ahead by more than the idle timeout cannot drop another's live filters from the count (the cap is kept on Redis's clock)", async () => {
    const a = new RedisFilterStore({ url: REDIS_URL, prefix, idleMs: 60_000 });
    // Replica b's clock is 10 minutes ahead (no NTP): it is made while Date.now says so.
    const real = Date.now;
    Date.now = () => real() + 600_000;
    let b: RedisFilterStore;
    try {
      b = new RedisFilterStore({ url: REDIS_URL, prefix, idleMs: 60_000 });
    } finally {
      Date.now = real;
    }
    try {
      const owner = `network-key:skew-${randomBytes(4).toString('hex')}`;
      for (let i = 0; i < 5; i++) expect(await a.create(state(owner), 5)).toEqual({ ok: true });
      // b's creates must still count a's five live filters.
      const results = await Promise.all(Array.from({ length: 20 }, () => b.create(state(owner), 5)));
      expect(results.filter((r) => r.ok)).toHaveLength(0);
      expect(await a.create(state(owner), 5)).toEqual({ ok: false, count: 5 });
    } finally {
      await a.close();
      await b.close();
    }
  });
});
