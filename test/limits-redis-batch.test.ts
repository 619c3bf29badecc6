// src/gateway/limits/redis.ts batches the consumes of one subject that arrive in the same event-loop turn into ONE script
// call (CONSUME_BATCH_LUA). Concurrent mixed-size consumes must give the same decisions, in arrival order, as the
// same consumes made one after the other (CONSUME_LUA semantics), and the counters must end exactly at the limit —
// for a B subject (one counter) and an A subject (per-second, daily and monthly counters), with two subjects
// interleaved in the same turn. Needs Redis (REDIS_URL or 127.0.0.1:6379): skipped with a message when unreachable,
// unless CI is set.
import { connect, createServer, type AddressInfo, type Socket } from 'node:net';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RedisLimiter, type LimitDecision, type LimitSubject, type LimitsConfig } from '../src/gateway/limits/index.js';
import { deleteRedisKeys, redisReachable, REDIS_URL, scratchPrefix, skipUnless } from './helpers/services.js';

const skip = skipUnless(await redisReachable(), 'limits-redis-batch', 'Redis');

const PREFIX = scratchPrefix();
// A fixed instant in the future (keys expire at their window's end; all consumes in the same second window).
const Y = new Date().getUTCFullYear() + 1;
const T = Date.UTC(Y, 5, 10, 8, 30, 15, 100);

const B = (userId: string): LimitSubject => ({ kind: 'B', userId });
const A = (appId: string): LimitSubject => ({ kind: 'A', appId, userId: 'u' });
const shape = (d: LimitDecision) => ({
  allowed: d.allowed,
  limit: d.limit,
  remaining: d.remaining,
  period: d.period,
  resetAt: d.resetAt,
});

describe.skipIf(skip)('Redis limiter: same-turn consumes batched into one script call', () => {
  let redis: Redis;
  const limiters: RedisLimiter[] = [];
  const make = (cfg: LimitsConfig, tag: string) => {
    const l = new RedisLimiter({ ...cfg, url: REDIS_URL, prefix: `${PREFIX}:${tag}` });
    limiters.push(l);
    return l;
  };
  /**
   * Counts the script calls (EVAL/EVALSHA) Redis executes on a limiter's keys, seen through MONITOR. `done()` waits
   * until the monitor has seen a marker sent after the calls (so every earlier command has been seen) and returns
   * the count.
   */
  async function scriptCalls(l: RedisLimiter): Promise<{ done(): Promise<number> }> {
    // The limiter's connect-time TIME calls (its clock offset, for script deadlines) answered before MONITOR starts.
    await new Promise<void>((r) => (l.redis.status === 'ready' ? r() : l.redis.once('ready', () => r())));
    await l.clockSynced;
    const mon = await redis.monitor();
    let n = 0;
    let marker = '';
    let seen: (() => void) | undefined;
    mon.on('monitor', (_time: string, args: string[]) => {
      const cmd = String(args[0]).toLowerCase();
      if ((cmd === 'evalsha' || cmd === 'eval') && args.some((a) => String(a).startsWith(`${l.prefix}:`))) n++;
      if (cmd === 'echo' && args[1] === marker) seen?.();
    });
    return {
      async done() {
        marker = `rpcgate-test-marker-${Math.random()}`;
        const got = new Promise<void>((r) => (seen = r));
        await redis.echo(marker);
        await got;
        mon.disconnect();
        return n;
      },
    };
  }

  beforeAll(() => {
    redis = new Redis(REDIS_URL);
  });
  afterAll(async () => {
    await Promise.all(limiters.map((l) => l.close()));
    await redis?.quit();
    await deleteRedisKeys(PREFIX);
  });

  // Sizes chosen so that some are refused mid-way and later smaller ones still fit: the order matters.
  const SIZES = [3, 5, 1, 7, 2, 4, 6, 1, 1, 3, 2, 1];

  it('B (one counter, limit 20): concurrent = sequential decisions; one script call; the counter ends at exactly 20', async () => {
    const cfg = { b: { dailyPerUser: 20 } };
    const seq = make(cfg, 'b-seq');
    const con = make(cfg, 'b-con');
    const sequential: LimitDecision[] = [];
    for (const n of SIZES) sequential.push(await seq.consume(B('u1'), n, T));
    const calls = await scriptCalls(con);
    const concurrent = await Promise.all(SIZES.map((n) => con.consume(B('u1'), n, T)));
    expect(concurrent.map(shape)).toEqual(sequential.map(shape));
    expect(await calls.done()).toBe(1);
    // 3+5+1+7+2 = 18, 4 and 6 refused, 1+1 = 20, then everything refused.
    expect(concurrent.map((d) => d.allowed)).toEqual([
      true,
      true,
      true,
      true,
      true,
      false,
      false,
      true,
      true,
      false,
      false,
      false,
    ]);
    for (const l of [seq, con]) {
      const keys = await redis.keys(`${l.prefix}:*`);
      expect(keys).toHaveLength(1);
      expect(await redis.get(keys[0])).toBe('20');
    }
  });

  it('A (second, day and month counters) interleaved with a B subject in the same turn: same decisions, one call per subject', async () => {
    const cfg: LimitsConfig = { a: { perSecond: 12, daily: 15, monthly: 100 }, b: { dailyPerUser: 9 } };
    const seq = make(cfg, 'ab-seq');
    const con = make(cfg, 'ab-con');
    const plan = SIZES.flatMap((n, i) => [
      { s: A('app1'), n },
      { s: B(`user${i % 1}`), n: (n % 3) + 1 },
    ]);
    // Load the scripts on the server first (the sequential limiter's calls do), so each call is one EVALSHA.
    const sequential: LimitDecision[] = [];
    for (const { s, n } of plan) sequential.push(await seq.consume(s, n, T));
    const calls = await scriptCalls(con);
    const concurrent = await Promise.all(plan.map(({ s, n }) => con.consume(s, n, T)));
    expect(concurrent.map(shape)).toEqual(sequential.map(shape));
    expect(await calls.done()).toBe(2);
    // The per-second limit (12) is the tightest for A: it ends exactly at 12, day and month at the same admitted total.
    for (const l of [seq, con]) {
      const get = async (pattern: string) => {
        const keys = await redis.keys(`${l.prefix}:${pattern}`);
        expect(keys, pattern).toHaveLength(1);
        return Number(await redis.get(keys[0]));
      };
      expect(await get('a:app1:s:*')).toBe(12);
      expect(await get('au:u:d:*')).toBe(12);
      expect(await get('au:u:m:*')).toBe(12);
      expect(await get('b:user0:d:*')).toBe(9);
    }
    // Both subjects saw refusals (the comparison above covered their periods and remaining counts).
    expect(concurrent.some((d, i) => !d.allowed && i % 2 === 0)).toBe(true);
    expect(concurrent.some((d, i) => !d.allowed && i % 2 === 1)).toBe(true);
  });

  it('consumes in different turns are separate calls, and the batch continues from the counts Redis holds', async () => {
    const l = make({ b: { dailyPerUser: 10 } }, 'turns');
    const calls = await scriptCalls(l);
    expect((await l.consume(B('u2'), 4, T)).remaining).toBe(6);
    const [a, b, c] = await Promise.all([l.consume(B('u2'), 5, T), l.consume(B('u2'), 2, T), l.consume(B('u2'), 1, T)]);
    expect([a.allowed, a.remaining, b.allowed, b.remaining, c.allowed, c.remaining]).toEqual([
      true,
      1,
      false,
      1,
      true,
      0,
    ]);
    expect(await calls.done()).toBe(2);
    expect(await redis.get((await redis.keys(`${l.prefix}:*`))[0])).toBe('10');
  });

  it('consumes arriving in later turns while a call is in flight wait for it and go together in the next call', async () => {
    // Through a TCP relay that holds Redis's answers back 100 ms: the first call is surely still in flight while the
    // later turns run.
    const relay = await slowRelay(new URL(REDIS_URL), 100);
    // A plain client without a command timeout: no clock measurements (script deadlines) through the slow relay.
    const client = new Redis(relay.url);
    const l = new RedisLimiter({ b: { dailyPerUser: 10 }, client, prefix: `${PREFIX}:inflight` });
    const calls = await scriptCalls(l);
    const first = l.consume(B('u3'), 3, T);
    // Three more, each in its own later turn, all before the first call's answer can have been read.
    const later: Promise<LimitDecision>[] = [];
    for (const n of [4, 5, 2]) {
      await new Promise((r) => setImmediate(r));
      later.push(l.consume(B('u3'), n, T));
    }
    const [a, b, c, d] = await Promise.all([first, ...later]);
    expect([a, b, c, d].map((x) => [x.allowed, x.remaining])).toEqual([
      [true, 7],
      [true, 3],
      [false, 3],
      [true, 1],
    ]);
    expect(await calls.done()).toBe(2);
    expect(await redis.get((await redis.keys(`${l.prefix}:*`))[0])).toBe('9');
    await l.close();
    client.disconnect();
    relay.close();
  });
});

/** A TCP relay to `target` that delays every chunk Redis sends back by `delayMs`. */
function slowRelay(target: URL, delayMs: number): Promise<{ url: string; close(): void }> {
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    const upstream = connect(Number(target.port || 6379), target.hostname);
    sockets.add(client).add(upstream);
    client.on('data', (b) => upstream.write(b));
    upstream.on('data', (b) => setTimeout(() => client.writable && client.write(b), delayMs));
    const end = () => (client.destroy(), upstream.destroy());
    client.on('close', end).on('error', end);
    upstream.on('close', end).on('error', end);
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve({
        url: `redis://127.0.0.1:${(server.address() as AddressInfo).port}`,
        close: () => {
          for (const s of sockets) s.destroy();
          server.close();
        },
      }),
    ),
  );
}
