// Redis backend: replicas share counters exactly. One Lua script checks and increments all of a subject's
// counters atomically (Redis runs a script alone), so concurrent requests from any number of processes
// can never push a counter past its limit, and a refused call changes nothing. One round trip per call.
//
// Hot path: the consumes of one subject (same counter keys) that arrive in the same event-loop turn — or, while a
// call is in flight, until its answer — go to Redis as ONE script call (CONSUME_BATCH_LUA), which decides them one
// after the other exactly as that many CONSUME_LUA calls in a row would — each all-or-nothing, in arrival order — and
// answers each its own decision. Same counters and same answers, one command instead of many (the per-command client
// cost dominated the gateway's CPU per request with Redis limits).
//
// Leased budgets (config `limits.lease`): while every counter of a subject has at least `minRemaining` left, the same
// script call also reserves a lease — min(maxUnits, 1/64 of what is left) more on each counter — and the replica
// admits that subject's next calls from it without a round trip (the hot path then costs what in-process limits
// cost). Still exact: an admitted call was either decided by Redis or drawn from units Redis already counted, so no
// window ever admits more than its limit. The price is on the other side and bounded: units a replica holds but has
// not used count as spent for the others — given back (DECRBY) after `idleReturnMs` without a call of that subject
// and at close(); a replica killed while holding some loses them for that window. Near the limit (under
// minRemaining, or a small limit such as an app's per-second one) every call is decided by Redis as before.
//
// Redis slow or gone: the client (src/gateway/redis) fails a command at once when disconnected and after its command
// timeout otherwise; the caller answers 503 -32044. The script carries a deadline on Redis's clock (3/4 of the timeout,
// from a measured clock offset), so a script that reaches a resumed Redis after its caller gave up counts nothing.
//
// Why not rate-limiter-flexible here: its consume() increments before checking (a refused call still
// counts, so counters overshoot), its windows start at the first request rather than at UTC boundaries,
// and a union of limiters is not atomic across them. The script below is the exact form of the same idea.
import type { Redis } from 'ioredis';
import { closeRedisClient, createRedisClient, untilFirstConnect, type RedisClientConfig } from '../redis/index.js';
import { UtcCalendar } from './calendar.js';
import { amount, checkN, checkUnits, decide, slotDecisions } from './decide.js';
import { resolvePlans, type LimitsConfig, type ResolvedPlans } from './plans.js';
import type { LimitDecision, LimitSubject, Limiter } from './types.js';
import { counterName, windowsOf, type Window } from './windows.js';

/**
 * KEYS[i]: counter keys. ARGV[1]: n; then per key ARGV[2i]: limit, ARGV[2i+1]: expiry (epoch ms).
 * Returns { ok (1|0), count_1 … count_k } with the counts BEFORE this call. Increments only when every
 * counter has room for n; a new key gets PEXPIREAT at its window's end.
 */
export const CONSUME_LUA = `
local n = tonumber(ARGV[1])
local counts = {}
local ok = 1
for i = 1, #KEYS do
  local c = tonumber(redis.call('GET', KEYS[i]) or '0')
  counts[i] = c
  if c + n > tonumber(ARGV[2 * i]) then ok = 0 end
end
if ok == 1 then
  for i = 1, #KEYS do
    redis.call('INCRBY', KEYS[i], n)
    if counts[i] == 0 then redis.call('PEXPIREAT', KEYS[i], ARGV[2 * i + 1]) end
  end
end
return { ok, unpack(counts) }
`;

/**
 * CONSUME_LUA for m requests of one subject, decided in order, and a lease. KEYS[i]: counter keys. ARGV[1]: m;
 * ARGV[2]: deadline (Redis clock, epoch ms; 0 = none); ARGV[3]: lease cap (0 = no lease); ARGV[4]: the least any
 * counter must have left for a lease; ARGV[3+2j], ARGV[4+2j]: n and compute units of request j; then per key
 * ARGV[2m+2+3i]: limit, ARGV[2m+3+3i]: expiry (epoch ms), ARGV[2m+4+3i]: 1 when the counter counts units (a request
 * adds its units there, its n elsewhere). Returns { count_1 … count_k (BEFORE the first request), ok_1 … ok_m, lease }, or {} when the
 * script runs after its deadline: the caller has given up on it (command timeout, the client was refused), so it must
 * count nothing — e.g. a Redis that stalled and resumes with the call still in its socket buffer. Request j is
 * admitted (ok 1) when every counter, after the requests admitted before it, has room for its n; then, when every
 * counter has at least ARGV[4] left, `lease` = min(cap, 1/64 of the least left) units are reserved on each counter
 * too; the counters grow by the admitted total plus the lease; a new key gets PEXPIREAT.
 */
export const CONSUME_BATCH_LUA = `
local m = tonumber(ARGV[1])
local deadline = tonumber(ARGV[2])
if deadline > 0 then
  local t = redis.call('TIME')
  if tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) > deadline then return {} end
end
local cap = tonumber(ARGV[3])
local floor = tonumber(ARGV[4])
local base = 2 * m + 4
local k = #KEYS
local start, counts, limits, units = {}, {}, {}, {}
for i = 1, k do
  local c = tonumber(redis.call('GET', KEYS[i]) or '0')
  start[i] = c
  counts[i] = c
  limits[i] = tonumber(ARGV[base + 3 * i - 2])
  units[i] = ARGV[base + 3 * i] == '1'
end
local out = {}
for j = 1, m do
  local n = tonumber(ARGV[3 + 2 * j])
  local u = tonumber(ARGV[4 + 2 * j])
  local ok = 1
  for i = 1, k do
    local a = n
    if units[i] then a = u end
    if counts[i] + a > limits[i] then ok = 0 end
  end
  if ok == 1 then
    for i = 1, k do
      if units[i] then counts[i] = counts[i] + u else counts[i] = counts[i] + n end
    end
  end
  out[k + j] = ok
end
local lease = 0
if cap > 0 then
  local least = limits[1] - counts[1]
  for i = 2, k do
    if limits[i] - counts[i] < least then least = limits[i] - counts[i] end
  end
  if least >= floor then lease = math.min(cap, math.floor(least / 64)) end
  if lease > 0 then
    for i = 1, k do counts[i] = counts[i] + lease end
  end
end
out[k + m + 1] = lease
for i = 1, k do
  out[i] = start[i]
  if counts[i] > start[i] then
    redis.call('INCRBY', KEYS[i], counts[i] - start[i])
    if start[i] == 0 then redis.call('PEXPIREAT', KEYS[i], ARGV[base + 3 * i - 1]) end
  end
end
return out
`;

/**
 * Keys live a little past their window's end: a replica whose clock lags Redis's by up to this much
 * still counts in a live key instead of creating one whose expiry is already past. Key names carry the
 * window, so a key is never read after its window anyway.
 */
export const EXPIRY_GRACE_MS = 5_000;

/** Gives back `ARGV[1]` unused leased units on each of KEYS (only where the counter still holds at least that many:
 *  a key that expired or was reset is left alone). */
export const RETURN_LEASE_LUA = `
local u = tonumber(ARGV[1])
for i = 1, #KEYS do
  local c = tonumber(redis.call('GET', KEYS[i]) or '-1')
  if c >= u then redis.call('DECRBY', KEYS[i], u) end
end
return 1
`;

/** A subject's counters in the current windows as one key (same keys = same subject, limits and expiries): what
 *  waiting consumes are grouped by and leases are held under. */
function groupKey(slots: readonly RedisSlot[]): string {
  return slots.length === 1 ? slots[0].key : slots.map((s) => s.key).join(' ');
}

/** Lease defaults (contracts/config.schema.json LimitsLease). */
const LEASE_DEFAULTS = { maxUnits: 100, minRemaining: 4096, idleReturnMs: 1000 };

/** The script's deadline: at most this share of the command timeout after sending (less the clock offset's error). */
const DEADLINE_SHARE = 0.75;
/** TIME round trips per clock-offset measurement (the fastest one counts). */
const CLOCK_SAMPLES = 3;
/** Clocks drift: the offset to Redis's clock is measured on every connect and this often. */
const CLOCK_SYNC_MS = 60_000;

type ScriptedRedis = Redis & {
  rpcgateLimitConsume(numKeys: number, ...keysAndArgs: (string | number)[]): Promise<number[]>;
  rpcgateLimitConsumeBatch(numKeys: number, ...keysAndArgs: (string | number)[]): Promise<number[]>;
  rpcgateLimitReturn(numKeys: number, ...keysAndArgs: (string | number)[]): Promise<number>;
};

/** Units of one subject's counters (same keys) this replica reserved in Redis and has not used yet. */
interface Lease {
  slots: RedisSlot[];
  /** Units left to admit from. */
  units: number;
  /** Each counter's value in Redis right after the last grant (the units held are part of it). */
  reserved: number[];
  /** performance.now() of the last call drawn from it (or of the grant). */
  lastUse: number;
}

/** One waiting consume. */
interface Waiting {
  n: number;
  /** Compute units (unit windows count these). */
  u: number;
  now: number;
  resolve: (d: LimitDecision) => void;
  reject: (e: unknown) => void;
}

/** The consumes of one subject's counters (same keys) waiting for the next flush. */
interface Group {
  slots: RedisSlot[];
  reqs: Waiting[];
}

export interface RedisLimiterOptions extends LimitsConfig {
  /** `redis://…` URL; ignored when `client` is given. The limiter then makes (and closes) its own client. */
  url?: string;
  /**
   * An existing client, from src/gateway/redis (not closed by close()). It needs a command timeout: while a script
   * call is unanswered, later consumes wait for it. Without one (a plain ioredis client) scripts carry no deadline.
   */
  client?: Redis;
  /** Key prefix, default `rpcgate:limits`. */
  prefix?: string;
  /** Timeouts of an own client (`url`). */
  clientConfig?: RedisClientConfig;
}

interface RedisSlot extends Window {
  key: string;
}

export class RedisLimiter implements Limiter {
  readonly backend = 'redis' as const;
  readonly plans: ResolvedPlans;
  readonly prefix: string;
  readonly redis: ScriptedRedis;
  private readonly ownsClient: boolean;
  private readonly cal = new UtcCalendar();

  constructor(opts: RedisLimiterOptions) {
    this.plans = resolvePlans(opts);
    this.prefix = opts.prefix ?? 'rpcgate:limits';
    this.ownsClient = !opts.client;
    const client =
      opts.client ??
      createRedisClient({ url: opts.url ?? 'redis://127.0.0.1:6379', role: 'limits', ...opts.clientConfig });
    client.defineCommand('rpcgateLimitConsume', { lua: CONSUME_LUA });
    client.defineCommand('rpcgateLimitConsumeBatch', { lua: CONSUME_BATCH_LUA });
    client.defineCommand('rpcgateLimitReturn', { lua: RETURN_LEASE_LUA });
    this.redis = client as ScriptedRedis;
    this.flush = this.flush.bind(this);
    this.lease = { ...LEASE_DEFAULTS, ...opts.lease };
    if (this.lease.maxUnits > 0) {
      this.leaseTimer = setInterval(() => this.returnIdle(false), this.lease.idleReturnMs);
      this.leaseTimer.unref();
    }
    const timeout = client.options.commandTimeout;
    let synced!: () => void;
    this.clockSynced = new Promise<void>((r) => (synced = r));
    if (timeout === undefined || timeout <= 0) synced();
    else {
      this.timeoutMs = timeout;
      const sync = () => void this.syncClock().finally(synced);
      client.on('ready', sync);
      if (client.status === 'ready') sync();
      this.clockTimer = setInterval(sync, CLOCK_SYNC_MS);
      this.clockTimer.unref();
    }
  }

  /** Settles after the first clock-offset measurement (at once without a command timeout: no deadlines then). */
  readonly clockSynced: Promise<void>;
  /** The client's command timeout (0: none, no deadlines). */
  private timeoutMs = 0;
  /** Redis clock minus ours (ms), measured around a TIME call; undefined until known. */
  private clockOffset: number | undefined;
  private clockTimer: NodeJS.Timeout | undefined;

  private async syncClock(): Promise<void> {
    try {
      // The offset is known within ±rtt/2 of its sample; the fastest of a few samples is the best estimate (a sample
      // whose answer our busy event loop read late would skew it), and its error comes off the deadline's margin.
      let best: { rtt: number; offset: number } | undefined;
      for (let i = 0; i < CLOCK_SAMPLES; i++) {
        const t0 = Date.now();
        const [sec, usec] = await this.redis.time();
        const t1 = Date.now();
        if (best === undefined || t1 - t0 < best.rtt)
          best = { rtt: t1 - t0, offset: Number(sec) * 1000 + Math.floor(Number(usec) / 1000) - (t0 + t1) / 2 };
      }
      const budget = this.timeoutMs * DEADLINE_SHARE - best!.rtt / 2;
      if (budget < this.timeoutMs * 0.4) {
        // Only slow answers (a loaded process): keep the last estimate and measure again soon.
        setTimeout(() => void this.syncClock(), 1000).unref();
        return;
      }
      this.clockOffset = best!.offset;
      this.deadlineMs = budget;
    } catch {
      // Redis down: the next 'ready' measures again; until then the last offset (or none) is used.
    }
  }

  /** How long after sending the script may still count (ms): DEADLINE_SHARE of the timeout less the offset's error. */
  private deadlineMs = 0;

  /**
   * When the script must no longer count anything, on Redis's clock: well before our command timeout fires, so a
   * call we answer as refused (timed out) is not counted later — the last quarter of the timeout covers our own event
   * loop being late to read an answer that is already there. 0 (none) while the clock offset is unknown.
   */
  private deadline(): number {
    if (this.clockOffset === undefined) return 0;
    return Math.floor(Date.now() + this.clockOffset + this.deadlineMs);
  }

  private readonly lease: typeof LEASE_DEFAULTS;
  private readonly leases = new Map<string, Lease>();
  private leaseTimer: NodeJS.Timeout | undefined;
  /** Lease statistics (tests, bench): calls admitted from a lease, units granted and given back, script calls. */
  readonly stats = { leased: 0, granted: 0, returned: 0, scripts: 0 };

  /** Admits `n` from the subject's lease when it holds that many (undefined otherwise). */
  private fromLease(gk: string, slots: RedisSlot[], n: number, now: number): LimitDecision | undefined {
    const l = this.leases.get(gk);
    if (l === undefined || l.units < n) return undefined;
    const k = slots.length;
    // The subject's limits changed since the grant (an account's plan, issue 27): units reserved under the old limits
    // are given back and Redis decides again under the new ones.
    for (let i = 0; i < k; i++)
      if (slots[i].limit !== l.slots[i].limit) {
        this.giveBack(gk, l);
        return undefined;
      }
    // As Redis sees it, minus what this replica still holds: what is spent (by anyone) or reserved by others.
    for (let i = 0; i < k; i++) slots[i].count = l.reserved[i] - l.units;
    const d = decide(slots, k, n, now, this.cal.dayEnd);
    l.units -= n;
    l.lastUse = performance.now();
    this.stats.leased += n;
    return d;
  }

  /** Gives back unused units: of leases idle for idleReturnMs (or of all, `all`, at close). */
  private returnIdle(all: boolean): Promise<unknown> {
    const before = performance.now() - this.lease.idleReturnMs;
    const sent: Promise<unknown>[] = [];
    for (const [gk, l] of this.leases) {
      if (!all && l.lastUse > before) continue;
      sent.push(this.giveBack(gk, l));
    }
    return Promise.all(sent);
  }

  /** Drops a lease and gives its unused units back to Redis (sent before any later consume of the subject). */
  private giveBack(gk: string, l: Lease): Promise<unknown> {
    this.leases.delete(gk);
    if (l.units === 0 || this.redis.status !== 'ready') return Promise.resolve();
    const units = l.units;
    return this.redis.rpcgateLimitReturn(l.slots.length, ...l.slots.map((x) => x.key), units).then(
      () => void (this.stats.returned += units),
      () => undefined, // Redis failing: those units stay counted until their window ends
    );
  }

  /** Consumes waiting for this turn's flush, by counter keys. */
  private pending = new Map<string, Group>();
  private scheduled = false;

  /** The subject's counters in the current windows, shortest period first (counts not loaded). */
  slots(subject: LimitSubject, now: number): RedisSlot[] {
    this.cal.at(now);
    const out: RedisSlot[] = [];
    windowsOf(this.plans, subject, now, out);
    for (const w of out) w.key = `${this.prefix}:${counterName(w)}`;
    return out;
  }

  consume(subject: LimitSubject, n: number, now = Date.now(), units = n): Promise<LimitDecision> {
    try {
      checkN(n);
      checkUnits(units);
    } catch (e) {
      return Promise.reject(e);
    }
    const slots = this.slots(subject, now);
    const k = slots.length;
    if (k === 0) return Promise.resolve(decide(slots, 0, n, now, this.cal.dayEnd, units));
    const gk = groupKey(slots);
    // Leases are granted only to subjects without unit windows (a lease's units are requests).
    if (this.leases.size > 0 && !this.pending.has(gk)) {
      const d = this.fromLease(gk, slots, n, now);
      if (d !== undefined) return Promise.resolve(d);
    }
    let g = this.pending.get(gk);
    if (g === undefined) {
      g = { slots, reqs: [] };
      this.pending.set(gk, g);
      this.schedule();
    }
    const reqs = g.reqs;
    return new Promise<LimitDecision>((resolve, reject) => reqs.push({ n, u: units, now, resolve, reject }));
  }

  consumeNow(subject: LimitSubject, n: number, units?: number): Promise<LimitDecision> {
    return this.consume(subject, n, undefined, units);
  }

  peekNow(subject: LimitSubject): Promise<LimitDecision> {
    return this.peek(subject);
  }

  /** Script calls sent and not yet answered. */
  private inFlight = 0;

  /** A flush at the end of this turn, unless calls are in flight: then when they are answered. */
  private schedule(): void {
    if (this.scheduled || this.inFlight > 0) return;
    this.scheduled = true;
    setImmediate(this.flush);
  }

  /**
   * Sends every waiting group as one script call (auto-pipelining puts them in one write). While those are in
   * flight, new consumes wait for their answer and go in the next flush: under load each script call carries
   * every request that arrived during one round trip, so the client's per-command cost is shared by many (one
   * round trip of added latency at most, and none when idle).
   */
  private flush(): void {
    this.scheduled = false;
    const groups = this.pending;
    if (groups.size === 0) return;
    this.pending = new Map();
    for (const [gk, g] of groups) {
      // A lease granted while these waited serves them first, in order; the rest go to Redis.
      let j = 0;
      if (this.leases.has(gk)) {
        for (; j < g.reqs.length; j++) {
          const d = this.fromLease(gk, g.slots, g.reqs[j].n, g.reqs[j].now);
          if (d === undefined) break;
          g.reqs[j].resolve(d);
        }
      }
      if (j === g.reqs.length) continue;
      if (j > 0) g.reqs = g.reqs.slice(j);
      this.inFlight++;
      this.send(gk, g);
    }
  }

  private settled(): void {
    if (--this.inFlight === 0 && this.pending.size > 0) this.schedule();
  }

  private send(gk: string, g: Group): void {
    const first = untilFirstConnect(this.redis);
    if (first !== undefined) {
      void first.then(() => this.send(gk, g));
      return;
    }
    const { slots, reqs } = g;
    const k = slots.length;
    const m = reqs.length;
    const args: (string | number)[] = [];
    for (const s of slots) args.push(s.key);
    const leaseCap = slots.some((s) => s.units) ? 0 : this.lease.maxUnits;
    args.push(m, this.deadline(), leaseCap, this.lease.minRemaining);
    for (const r of reqs) args.push(r.n, r.u);
    this.stats.scripts++;
    for (const s of slots) args.push(s.limit, s.resetAt + EXPIRY_GRACE_MS, s.units ? 1 : 0);
    this.redis.rpcgateLimitConsumeBatch(k, ...args).then(
      (reply) => {
        if (reply.length === 0) {
          const e = new Error('limits: the script reached Redis after its deadline (nothing counted)');
          for (const r of reqs) r.reject(e);
          this.settled();
          return;
        }
        // Replay the script's order on its starting counts: each request's decision from the counts before it.
        for (let i = 0; i < k; i++) slots[i].count = Number(reply[i]);
        // Units this replica holds are in those counts but still its own to spend: not subtracted from `remaining`.
        const held = this.leases.get(gk)?.units ?? 0;
        for (let j = 0; j < m; j++) {
          const r = reqs[j];
          const d = decide(slots, k, r.n, r.now, this.cal.dayEnd, r.u);
          if (d.allowed !== (Number(reply[k + j]) === 1)) {
            r.reject(new Error('limits: Redis script and client disagree (limits changed mid-call?)'));
            continue;
          }
          if (d.allowed) {
            for (let i = 0; i < k; i++) slots[i].count += amount(slots[i], r.n, r.u);
            d.remaining += held;
          }
          r.resolve(d);
        }
        const granted = Number(reply[k + m] ?? 0);
        if (granted > 0) {
          // Units still held from an earlier lease stay held (they are part of the counts too).
          const l = this.leases.get(gk);
          const reserved = slots.map((x) => x.count + granted);
          if (l === undefined) this.leases.set(gk, { slots, units: granted, reserved, lastUse: performance.now() });
          else {
            l.units += granted;
            l.reserved = reserved;
            l.lastUse = performance.now();
          }
          this.stats.granted += granted;
        }
        this.settled();
      },
      (e: unknown) => {
        for (const r of reqs) r.reject(e);
        this.settled();
      },
    );
  }

  private async load(subject: LimitSubject, now: number): Promise<RedisSlot[]> {
    const slots = this.slots(subject, now);
    if (slots.length === 0) return slots;
    await untilFirstConnect(this.redis);
    const vals = await this.redis.mget(...slots.map((s) => s.key));
    // Units this replica holds (a lease) are counted in Redis but not spent yet.
    const held = this.leases.get(groupKey(slots))?.units ?? 0;
    for (let i = 0; i < slots.length; i++)
      slots[i].count = Math.max(0, (vals[i] === null ? 0 : Number(vals[i])) - held);
    return slots;
  }

  async peek(subject: LimitSubject, now = Date.now()): Promise<LimitDecision> {
    const slots = await this.load(subject, now);
    return decide(slots, slots.length, 0, now, this.cal.dayEnd);
  }

  async peekAll(subject: LimitSubject, now = Date.now()): Promise<LimitDecision[]> {
    const slots = await this.load(subject, now);
    return slotDecisions(slots, slots.length, now);
  }

  async close(): Promise<void> {
    clearInterval(this.clockTimer);
    clearInterval(this.leaseTimer);
    await this.returnIdle(true);
    if (this.ownsClient) await closeRedisClient(this.redis);
  }
}
