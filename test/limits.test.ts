// In-process limiter: exact quotas, UTC windows, all-or-nothing batches, headers and the -32005 error.
import { describe, expect, it } from 'vitest';
import {
  DEFAULT_APP_PLAN,
  DEFAULT_B_DAILY_PER_USER,
  MemoryLimiter,
  createLimiter,
  limitError,
  limitHeaders,
  resolvePlans,
  type LimitSubject,
} from '../src/gateway/limits/index.js';
import { RpcError } from '../packages/toolkit/src/rpc/errors.js';
import { GatewayErrorCode } from '../src/gateway/errors.js';

const user = (userId: string): LimitSubject => ({ kind: 'B', userId });
const app = (appId: string, userId = 'u1'): LimitSubject => ({ kind: 'A', appId, userId });
// 2025-03-14 12:00:00.250 UTC
const T = Date.UTC(2025, 2, 14, 12, 0, 0, 250);
const DAY_END = Date.UTC(2025, 2, 15);
const MONTH_END = Date.UTC(2025, 3, 1);

describe('plans', () => {
  it('documents defaults and applies overrides; null switches a limit off', () => {
    expect(DEFAULT_B_DAILY_PER_USER).toBe(25_000);
    expect(DEFAULT_APP_PLAN).toEqual({ perSecond: 100, daily: 100_000, monthly: 3_000_000 });
    // Unit limits (compute units) are off unless configured.
    const noUnits = { unitsPerSecond: null, dailyUnits: null, monthlyUnits: null };
    expect(resolvePlans()).toEqual({
      a: { perSecond: 100, daily: 100_000, monthly: 3_000_000, ...noUnits },
      b: { daily: 25_000, dailyUnits: null },
    });
    expect(resolvePlans({ a: { monthly: null, perSecond: 5 }, b: { dailyPerUser: 20 } })).toEqual({
      a: { perSecond: 5, daily: 100_000, monthly: null, ...noUnits },
      b: { daily: 20, dailyUnits: null },
    });
    expect(resolvePlans({ a: { dailyUnits: 500 }, b: { dailyUnitsPerUser: 90 } })).toMatchObject({
      a: { dailyUnits: 500, unitsPerSecond: null },
      b: { dailyUnits: 90 },
    });
    expect(() => resolvePlans({ a: { unitsPerSecond: -1 } })).toThrow(RangeError);
    expect(() => resolvePlans({ a: { daily: -1 } })).toThrow(RangeError);
    expect(() => resolvePlans({ b: { dailyPerUser: 1.5 } })).toThrow(RangeError);
  });

  it('createLimiter without a Redis URL is in-process', async () => {
    const l = createLimiter({ b: { dailyPerUser: 20 } });
    expect(l).toBeInstanceOf(MemoryLimiter);
    await l.close();
  });

  it('rejects a non-positive or fractional n', async () => {
    const l = new MemoryLimiter();
    await expect(l.consume(user('u'), 0, T)).rejects.toThrow(RangeError);
    await expect(l.consume(user('u'), 1.5, T)).rejects.toThrow(RangeError);
  });
});

describe('B: daily per user (limit 20)', () => {
  it('20 single consumes accepted, the 21st refused; remaining/limit/resetAt right', async () => {
    const l = new MemoryLimiter({ b: { dailyPerUser: 20 } });
    for (let i = 1; i <= 20; i++) {
      const d = await l.consume(user('alice'), 1, T + i);
      expect(d).toEqual({ allowed: true, limit: 20, remaining: 20 - i, resetAt: DAY_END, period: 'day' });
    }
    const refused = await l.consume(user('alice'), 1, T + 100);
    expect(refused.allowed).toBe(false);
    expect(refused).toMatchObject({ limit: 20, remaining: 0, resetAt: DAY_END, period: 'day' });
    expect(refused.retryAfterSec).toBe(Math.ceil((DAY_END - (T + 100)) / 1000));
    // another user is untouched
    expect(await l.consume(user('bob'), 1, T)).toMatchObject({ allowed: true, remaining: 19 });
  });

  it('a batch that does not fit is refused whole and consumes nothing', async () => {
    const l = new MemoryLimiter({ b: { dailyPerUser: 20 } });
    expect(await l.consume(user('u'), 17, T)).toMatchObject({ allowed: true, remaining: 3 });
    const refused = await l.consume(user('u'), 5, T);
    expect(refused).toMatchObject({ allowed: false, limit: 20, remaining: 3, period: 'day' });
    expect(await l.peek(user('u'), T)).toMatchObject({ allowed: true, remaining: 3 });
    // exactly the rest fits
    expect(await l.consume(user('u'), 3, T)).toMatchObject({ allowed: true, remaining: 0 });
    expect(await l.peek(user('u'), T)).toMatchObject({
      allowed: false,
      remaining: 0,
      retryAfterSec: Math.ceil((DAY_END - T) / 1000),
    });
    // refused calls never count: many refusals leave the counter at the limit, not above
    for (let i = 0; i < 10; i++) expect((await l.consume(user('u'), 1, T)).allowed).toBe(false);
    expect((await l.peekAll(user('u'), T))[0]).toMatchObject({ remaining: 0, limit: 20 });
  });

  it("counts per user: the subject is the user, so all of a user's B keys share one quota", async () => {
    // The access layer maps each of a user's B keys to the same subject { kind: 'B', userId }.
    const l = new MemoryLimiter({ b: { dailyPerUser: 20 } });
    const ownerOfKey: Record<string, string> = {
      key1: 'carol',
      key2: 'carol',
      key3: 'carol',
      key4: 'carol',
      key5: 'dave',
    };
    const keys = ['key1', 'key2', 'key3', 'key4'];
    let accepted = 0;
    for (let i = 0; i < 40; i++) if ((await l.consume(user(ownerOfKey[keys[i % 4]]), 1, T)).allowed) accepted++;
    expect(accepted).toBe(20);
    expect((await l.consume(user(ownerOfKey.key5), 1, T)).allowed).toBe(true);
  });

  it('the day rolls over at 00:00 UTC', async () => {
    const l = new MemoryLimiter({ b: { dailyPerUser: 20 } });
    const lastMs = DAY_END - 1;
    expect(await l.consume(user('u'), 20, lastMs)).toMatchObject({ allowed: true, remaining: 0, resetAt: DAY_END });
    const r = await l.consume(user('u'), 1, lastMs);
    expect(r).toMatchObject({ allowed: false, retryAfterSec: 1 });
    const next = await l.consume(user('u'), 1, DAY_END);
    expect(next).toEqual({ allowed: true, limit: 20, remaining: 19, resetAt: DAY_END + 86_400_000, period: 'day' });
  });

  it('the real 25,000: 25,000 consumes accepted, the next refused', async () => {
    const l = new MemoryLimiter();
    let accepted = 0;
    for (let i = 0; i < 25_000; i++) if ((await l.consume(user('big'), 1, T)).allowed) accepted++;
    expect(accepted).toBe(25_000);
    const next = await l.consume(user('big'), 1, T);
    expect(next).toMatchObject({ allowed: false, limit: 25_000, remaining: 0, period: 'day' });
  });
});

describe('A: operator plan per app', () => {
  it('per-second window: fixed one-second UTC window, resets at the next second', async () => {
    const l = new MemoryLimiter({ a: { perSecond: 5, daily: 1000, monthly: 10_000 } });
    const sec = T - (T % 1000);
    for (let i = 0; i < 5; i++) {
      const d = await l.consume(app('app1'), 1, sec + i * 100);
      expect(d).toMatchObject({ allowed: true, period: 'second', limit: 5, remaining: 4 - i, resetAt: sec + 1000 });
    }
    const r = await l.consume(app('app1'), 1, sec + 999);
    expect(r).toEqual({
      allowed: false,
      limit: 5,
      remaining: 0,
      resetAt: sec + 1000,
      period: 'second',
      retryAfterSec: 1,
    });
    // next second: allowed again; the day counter kept the 5
    const d = await l.consume(app('app1'), 1, sec + 1000);
    expect(d).toMatchObject({ allowed: true, period: 'second', remaining: 4 });
    const all = await l.peekAll(app('app1'), sec + 1000);
    expect(all.map((x) => [x.period, x.remaining])).toEqual([
      ['second', 4],
      ['day', 994],
      ['month', 9994],
    ]);
  });

  it('the tightest limit is described on success; a refusal names the limit that refused', async () => {
    const l = new MemoryLimiter({ a: { perSecond: 50, daily: 10, monthly: 1000 } });
    expect(await l.consume(app('a'), 4, T)).toMatchObject({
      allowed: true,
      period: 'day',
      limit: 10,
      remaining: 6,
      resetAt: DAY_END,
    });
    const r = await l.consume(app('a'), 7, T);
    expect(r).toMatchObject({ allowed: false, period: 'day', limit: 10, remaining: 6 });
    // refused consumed nothing in ANY counter (all-or-nothing across second/day/month)
    expect((await l.peekAll(app('a'), T)).map((x) => x.remaining)).toEqual([46, 6, 996]);
    // a batch bigger than the per-second limit is refused by the per-second limit
    const l2 = new MemoryLimiter({ a: { perSecond: 3, daily: 100, monthly: null } });
    expect(await l2.consume(app('b'), 4, T)).toMatchObject({
      allowed: false,
      period: 'second',
      limit: 3,
      remaining: 3,
    });
    expect((await l2.peekAll(app('b'), T)).map((x) => x.period)).toEqual(['second', 'day']);
  });

  it('when several limits refuse, the one that resets last is named (retrying earlier would fail)', async () => {
    const l = new MemoryLimiter({ a: { perSecond: 2, daily: 2, monthly: null } });
    await l.consume(app('a'), 2, T);
    const r = await l.consume(app('a'), 1, T);
    expect(r).toMatchObject({ allowed: false, period: 'day', resetAt: DAY_END });
  });

  it("an account's apps share its daily and monthly quotas (more apps do not multiply them); the rate stays per app", async () => {
    const l = new MemoryLimiter({ a: { perSecond: 2, daily: 5, monthly: 8 } });
    // Per second: each app has its own 2/s.
    expect(await l.consume(app('x', 'u1'), 2, T)).toMatchObject({ allowed: true });
    expect(await l.consume(app('x', 'u1'), 1, T)).toMatchObject({ allowed: false, period: 'second', limit: 2 });
    expect(await l.consume(app('y', 'u1'), 2, T)).toMatchObject({ allowed: true, period: 'second', remaining: 0 });
    // The day is the account's: 4 used by x and y together, 1 left for any of its apps, a third app included.
    expect(await l.consume(app('z', 'u1'), 2, T + 1000)).toMatchObject({
      allowed: false,
      period: 'day',
      limit: 5,
      remaining: 1,
      resetAt: DAY_END,
    });
    expect(await l.consume(app('z', 'u1'), 1, T + 1000)).toMatchObject({ allowed: true, period: 'day', remaining: 0 });
    expect(await l.consume(app('x', 'u1'), 1, T + 2000)).toMatchObject({ allowed: false, period: 'day', remaining: 0 });
    expect((await l.peekAll(app('w', 'u1'), T + 2000)).map((d) => [d.period, d.remaining])).toEqual([
      ['second', 2],
      ['day', 0],
      ['month', 3],
    ]);
    // Another account is untouched; the user's B quota is separate from their apps.
    expect(await l.consume(app('x', 'u2'), 2, T + 2000)).toMatchObject({
      allowed: true,
      period: 'second',
      remaining: 0,
    });
    expect((await l.consume(user('u1'), 1, T + 2000)).allowed).toBe(true);
    // The month too: the next day, 3 more across the account, then refused by the month.
    expect(await l.consume(app('x', 'u1'), 2, DAY_END)).toMatchObject({ allowed: true });
    expect(await l.consume(app('y', 'u1'), 2, DAY_END)).toMatchObject({
      allowed: false,
      period: 'month',
      limit: 8,
      remaining: 1,
    });
  });

  it('the month rolls over at the first of the month 00:00 UTC', async () => {
    const l = new MemoryLimiter({ a: { perSecond: null, daily: null, monthly: 30 } });
    const start = Date.UTC(2025, 2, 1);
    expect(await l.consume(app('m'), 10, start)).toMatchObject({
      allowed: true,
      remaining: 20,
      resetAt: MONTH_END,
      period: 'month',
    });
    expect(await l.consume(app('m'), 20, MONTH_END - 1)).toMatchObject({ allowed: true, remaining: 0 });
    expect(await l.consume(app('m'), 1, MONTH_END - 1)).toMatchObject({
      allowed: false,
      resetAt: MONTH_END,
      retryAfterSec: 1,
    });
    expect(await l.consume(app('m'), 1, MONTH_END)).toEqual({
      allowed: true,
      limit: 30,
      remaining: 29,
      resetAt: Date.UTC(2025, 4, 1),
      period: 'month',
    });
    // December → January
    const dec = Date.UTC(2025, 11, 31, 23, 59, 59, 999);
    expect((await l.consume(app('m'), 30, dec)).resetAt).toBe(Date.UTC(2026, 0, 1));
    expect((await l.consume(app('m'), 1, dec)).allowed).toBe(false);
    expect(await l.consume(app('m'), 1, Date.UTC(2026, 0, 1))).toMatchObject({
      allowed: true,
      remaining: 29,
      resetAt: Date.UTC(2026, 1, 1),
    });
  });

  it('a plan with every limit off allows and emits no headers', async () => {
    const l = new MemoryLimiter({ a: { perSecond: null, daily: null, monthly: null } });
    const d = await l.consume(app('free'), 1000, T);
    expect(d.allowed).toBe(true);
    expect(limitHeaders(d)).toEqual({});
  });
});

describe('headers and the -32005 error', () => {
  it('limitHeaders: limit, remaining, reset (epoch s); retry-after only when a per-second rate refused (not a used-up quota)', async () => {
    const l = new MemoryLimiter({ b: { dailyPerUser: 2 } });
    const ok = await l.consume(user('h'), 1, T);
    expect(limitHeaders(ok)).toEqual({
      'x-ratelimit-limit': '2',
      'x-ratelimit-remaining': '1',
      'x-ratelimit-reset': String(DAY_END / 1000),
    });
    await l.consume(user('h'), 1, T);
    const no = await l.consume(user('h'), 1, T);
    expect(limitHeaders(no)).toEqual({
      'x-ratelimit-limit': '2',
      'x-ratelimit-remaining': '0',
      'x-ratelimit-reset': String(DAY_END / 1000),
    });
    const r = new MemoryLimiter({ a: { perSecond: 1, daily: null, monthly: null } });
    await r.consume(app('h'), 1, T);
    expect(limitHeaders(await r.consume(app('h'), 1, T))['retry-after']).toBe('1');
  });

  it('limitError: code -32005, data {source, reason, limit, period, resetAt ISO}; a rate 429 with Retry-After 1, a quota 402 without', async () => {
    const l = new MemoryLimiter({ a: { perSecond: 1, daily: 100, monthly: null } });
    await l.consume(app('e'), 1, T);
    const no = await l.consume(app('e'), 1, T);
    expect(no.allowed).toBe(false);
    const err = limitError(no, T);
    expect(err).toBeInstanceOf(RpcError);
    expect(err.code).toBe(GatewayErrorCode.LimitExceeded);
    expect(err.code).toBe(-32005);
    expect(err.httpStatus).toBe(429);
    const resetAt = T - (T % 1000) + 1000;
    expect(err.data).toEqual({
      source: 'rpcgate',
      reason: 'rate',
      limit: 1,
      period: 'second',
      resetAt: new Date(resetAt).toISOString(),
    });
    expect(err.headers?.['Retry-After']).toBe('1');
    expect(err.headers?.['x-ratelimit-remaining']).toBe('0');
    expect(err.message).toMatch(/1 requests per second/);

    const lb = new MemoryLimiter({ b: { dailyPerUser: 1 } });
    await lb.consume(user('e'), 1, T);
    const nb = await lb.consume(user('e'), 1, T);
    const eb = limitError(nb, T);
    expect(eb.data).toEqual({
      source: 'rpcgate',
      reason: 'quota',
      limit: 1,
      period: 'day',
      resetAt: '2025-03-15T00:00:00.000Z',
    });
    // A used-up quota is 402 (no client library retries it) and invites no retry: no Retry-After (issue 21).
    expect(eb.httpStatus).toBe(402);
    expect(eb.headers?.['Retry-After']).toBeUndefined();
    expect(eb.headers?.['x-ratelimit-reset']).toBe(String(DAY_END / 1000));
    expect(eb.message).toMatch(/daily quota of 1 requests used up/);
  });
});

describe('compute-unit limits (beside request limits)', () => {
  it('a call counts its units against unit windows and 1 per request against request windows, all or nothing', async () => {
    const l = new MemoryLimiter({ a: { perSecond: 100, daily: 1000, unitsPerSecond: 100, dailyUnits: 150 } });
    const s = app('cu-app', 'cu-user');
    // eth_getLogs (60) + eth_call (26): 86 units, 2 requests. The tightest limit is the per-second units (14 left).
    const d1 = await l.consume(s, 2, T, 86);
    expect(d1).toMatchObject({ allowed: true, units: true, period: 'second', limit: 100, remaining: 14 });
    // 60 more units in the same second: over the units rate (not the request rate), nothing counted.
    const d2 = await l.consume(s, 1, T, 60);
    expect(d2).toMatchObject({ allowed: false, units: true, period: 'second', limit: 100, remaining: 14 });
    const e = limitError(d2, T);
    expect(e.httpStatus).toBe(429);
    expect(e.message).toMatch(/100 compute units per second/);
    expect(e.headers).toMatchObject({ 'x-ratelimit-limit': '100', 'x-ratelimit-remaining': '14' });
    // Next second: the daily units (150) refuse 70 more (86 + 70 > 150) as a quota, 402.
    const d3 = await l.consume(s, 1, T + 1000, 70);
    expect(d3).toMatchObject({ allowed: false, units: true, period: 'day', limit: 150, remaining: 64 });
    expect(limitError(d3, T + 1000).httpStatus).toBe(402);
    // Eth_chainId weighs 0 units: request limits only.
    expect(await l.consume(s, 1, T + 1000, 0)).toMatchObject({ allowed: true });
    const all = await l.peekAll(s, T + 1000);
    expect(all.map((d) => [d.period, d.units === true, d.limit, d.remaining])).toEqual([
      ['second', false, 100, 99],
      ['second', true, 100, 100],
      ['day', false, 1000, 997],
      ['day', true, 150, 64],
      ['month', false, 3_000_000, 2_999_997],
    ]);
  });

  it('network keys (B): a daily unit quota per user beside the request quota', async () => {
    const l = new MemoryLimiter({ b: { dailyPerUser: 100, dailyUnitsPerUser: 50 } });
    expect(await l.consume(user('cu-b'), 2, T, 40)).toMatchObject({ allowed: true, units: true, remaining: 10 });
    expect(await l.consume(user('cu-b'), 1, T, 20)).toMatchObject({ allowed: false, units: true, period: 'day' });
    expect(await l.consume(user('cu-b'), 1, T, 10)).toMatchObject({ allowed: true, remaining: 0 });
  });
});

describe('stale periods are dropped', () => {
  it('old windows do not keep entries', async () => {
    const l = new MemoryLimiter({ b: { dailyPerUser: 20 }, a: { perSecond: 10 } });
    for (let i = 0; i < 50; i++) await l.consume(user(`u${i}`), 1, T);
    for (let i = 0; i < 50; i++) await l.consume(app(`a${i}`, `u${i}`), 1, T);
    await l.consume(user('later'), 1, DAY_END + 5);
    await l.consume(app('later', 'later'), 1, DAY_END + 5);
    // One store per kind of window (windows.ts), named here by scope and period letter.
    const stores = (l as unknown as { stores: Map<{ scope: string; letter: string }, { counts: Map<string, number> }> })
      .stores;
    const size = (name: string) =>
      [...stores].find(([kind]) => `${kind.scope}:${kind.letter}` === name)?.[1].counts.size;
    expect(size('b:d')).toBe(1);
    expect(size('a:s')).toBe(1);
    expect(size('au:d')).toBe(1);
    expect(size('au:m')).toBe(51); // same month: kept
  });
});
