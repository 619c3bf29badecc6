// Account security limits (issue 14): log-in and sign-up throttles, and the bound on concurrent password hashing.
//
// Log-in: a point is consumed BEFORE the password is verified (one atomic increment per counter: Redis INCR in a Lua
// script with rate-limiter-flexible's RateLimiterRedis, or synchronous in RateLimiterMemory), so any number of
// concurrent calls can verify at most `limit` passwords; a successful log-in gives its points back. Counters:
//   - per (email, client IP): `failedLoginsPerEmailIp` per 15 min — an attacker's IP locks only itself out;
//   - per email: `failedLoginsPerEmail` per hour — softer, bounds a distributed guess on one account;
//   - per client IP: `loginsPerIp` per 15 min — every attempt (unknown emails too), never given back.
// Sign-up: `signupsPerIp` per hour per client IP.
// With Redis (config redisUrl) the counters are shared by every replica; if Redis fails, each replica falls back to
// in-process counters (insurance limiter) instead of refusing every log-in.
//
// Password hashing (argon2id, ~20 ms of CPU and 19 MiB each) runs on libuv's threadpool, the same 4 threads that
// serve file reads: a flood of log-ins starved GET /docs and the node API. HashGate lets `concurrency` hashes run
// (default half the CPUs) and `queue` wait; beyond that the call is refused at once (429, Retry-After) before any hash.
import { isIP } from 'node:net';
import { availableParallelism } from 'node:os';
import type { Redis } from 'ioredis';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import { RpcError, invalidRequest } from '@rpcgate/toolkit/errors';
import type { AdmitFn } from '@rpcgate/toolkit/engine';
import { GatewayErrorCode, SOURCE } from '../errors.js';

export interface AccountSecurityConfig {
  failedLoginsPerEmailIp?: number;
  failedLoginsPerEmail?: number;
  loginsPerIp?: number;
  signupsPerIp?: number;
  /** Password hashes computed at once (0/absent: half the CPUs, at least 1). */
  passwordHashConcurrency?: number;
  /** Hashes that may wait for a slot; one more is refused (429). */
  passwordHashQueue?: number;
}

/** Which counter refused (data.scope of the 429). */
export type ThrottleScope = 'email+ip' | 'email' | 'ip' | 'signup-ip' | 'password-hashing';

const WINDOWS: Record<Exclude<ThrottleScope, 'password-hashing'>, { sec: number; period: string }> = {
  'email+ip': { sec: 15 * 60, period: '15 minutes' },
  email: { sec: 60 * 60, period: 'hour' },
  ip: { sec: 15 * 60, period: '15 minutes' },
  'signup-ip': { sec: 60 * 60, period: 'hour' },
};

const MESSAGES: Record<ThrottleScope, string> = {
  'email+ip': 'too many failed log-ins for this email from your address',
  email: 'too many failed log-ins for this email',
  ip: 'too many log-in attempts from your address',
  'signup-ip': 'too many sign-ups from your address',
  'password-hashing': 'the server is busy checking passwords',
};

/** -32005 (HTTP 429, Retry-After): `data.retryAfter` seconds and `data.scope` say when and why. */
export function throttled(scope: ThrottleScope, limit: number, retryAfterSec: number, now = Date.now()): RpcError {
  const retryAfter = Math.max(1, Math.ceil(retryAfterSec));
  const period = scope === 'password-hashing' ? 'concurrent' : WINDOWS[scope].period;
  return new RpcError(
    GatewayErrorCode.LimitExceeded,
    `${MESSAGES[scope]}: try again in ${retryAfter} s`,
    { source: SOURCE, reason: 'rate', scope, limit, period, retryAfter, resetAt: new Date(now + retryAfter * 1000).toISOString() },
    429,
    { 'Retry-After': String(retryAfter) },
  );
}

/** Methods that check a password or create one: at most one per HTTP request. */
export const CREDENTIAL_METHODS: ReadonlySet<string> = new Set(['account_logIn', 'account_signUp']);

/** Admission hook of the account engine: log-in and sign-up are refused inside a batch (-32600), so one request can
 *  never check more than one password. */
export const oneCredentialCallPerRequest: AdmitFn = (calls) => {
  if (calls.length < 2 || !calls.some((c) => CREDENTIAL_METHODS.has(c.method))) return undefined;
  return {
    refused: calls.map((c) =>
      CREDENTIAL_METHODS.has(c.method) ? invalidRequest(`${c.method} cannot be sent in a batch: send it as a single JSON-RPC request`, { reason: 'batch', method: c.method }) : undefined,
    ),
  };
};

/** The throttles' key for a client address: IPv4 as is (also when IPv4-mapped), IPv6 by its /64 — one host usually
 *  holds a whole /64, so counting single IPv6 addresses would let it rotate past every per-IP limit. */
export function clientKey(ip: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip);
  if (mapped !== null) return mapped[1];
  if (isIP(ip) !== 6) return ip;
  const [head, tail] = ip.toLowerCase().split('%')[0].split('::');
  const h = head === '' ? [] : head.split(':');
  const t = tail === undefined || tail === '' ? [] : tail.split(':');
  const groups = tail === undefined ? h : [...h, ...Array<string>(8 - h.length - t.length).fill('0'), ...t];
  return `${groups.slice(0, 4).map((g) => g.replace(/^0+(?=.)/, '')).join(':')}::/64`;
}

/** Bounded concurrency for password hashing: `run` answers undefined (refuse) when every slot and queue place is taken. */
export class HashGate {
  private active = 0;
  private readonly waiting: (() => void)[] = [];
  /** Hashes computed (log-in verifications and sign-up hashes alike). */
  done = 0;
  /** Calls refused because the gate was full. */
  refused = 0;
  /** Most hashes that ran at once. */
  peak = 0;

  constructor(
    readonly concurrency: number,
    readonly queue: number,
  ) {}

  run<T>(fn: () => Promise<T>): Promise<T> | undefined {
    if (this.active >= this.concurrency && this.waiting.length >= this.queue) {
      this.refused++;
      return undefined;
    }
    return this.enter().then(async () => {
      try {
        return await fn();
      } finally {
        this.done++;
        this.leave();
      }
    });
  }

  private enter(): Promise<void> {
    if (this.active < this.concurrency) {
      this.peak = Math.max(this.peak, ++this.active);
      return Promise.resolve();
    }
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  private leave(): void {
    const next = this.waiting.shift();
    if (next !== undefined) next(); // the slot passes on: `active` stays
    else this.active--;
  }
}

export interface ThrottleOptions extends AccountSecurityConfig {
  /** Shared counters (every replica): the service's Redis client (src/gateway/redis; the service closes it); absent =
   *  in-process. */
  redisClient?: Redis;
  /** Redis key prefix (default `rpcgate`): keys `<prefix>:acct:<scope>:…`. */
  redisPrefix?: string;
}

type Counter = { scope: Exclude<ThrottleScope, 'password-hashing'>; limit: number; rl: RateLimiterAbstract };

export const ACCOUNT_SECURITY_DEFAULTS = {
  failedLoginsPerEmailIp: 10,
  failedLoginsPerEmail: 100,
  loginsPerIp: 100,
  signupsPerIp: 10,
  passwordHashQueue: 8,
} as const;

export class AccountThrottle {
  /** Refusals by scope (data.scope of the 429), the hash gate's included. */
  refusals(): Record<ThrottleScope, number> {
    return { ...this.refusedBy, 'password-hashing': this.gate.refused };
  }

  readonly gate: HashGate;
  /** Calls refused per counter (the hash gate's are `gate.refused`): read by rpcgate_account_throttled_total. */
  private readonly refusedBy: Record<Counter['scope'], number> = { 'email+ip': 0, email: 0, ip: 0, 'signup-ip': 0 };
  private readonly emailIp: Counter;
  private readonly email: Counter;
  private readonly ip: Counter;
  private readonly signupIp: Counter;

  private readonly redis: Redis | undefined;

  constructor(o: ThrottleOptions = {}) {
    const d = ACCOUNT_SECURITY_DEFAULTS;
    // Fail fast when Redis is slow or away (no offline queue, short command timeout): the insurance counters answer.
    const redis = (this.redis = o.redisClient);
    const prefix = `${o.redisPrefix ?? 'rpcgate'}:acct`;
    const make = (scope: Counter['scope'], limit: number): Counter => {
      const base = { points: limit, duration: WINDOWS[scope].sec, keyPrefix: `${prefix}:${scope}` };
      const memory = new RateLimiterMemory(base);
      // Redis down → this replica's own counters (RateLimiterRedis fails over to its insurance limiter).
      const rl = redis === undefined ? memory : new RateLimiterRedis({ ...base, storeClient: redis, insuranceLimiter: memory, rejectIfRedisNotReady: true });
      return { scope, limit, rl };
    };
    this.emailIp = make('email+ip', o.failedLoginsPerEmailIp ?? d.failedLoginsPerEmailIp);
    this.email = make('email', o.failedLoginsPerEmail ?? d.failedLoginsPerEmail);
    this.ip = make('ip', o.loginsPerIp ?? d.loginsPerIp);
    this.signupIp = make('signup-ip', o.signupsPerIp ?? d.signupsPerIp);
    const c = o.passwordHashConcurrency || Math.max(1, Math.floor(availableParallelism() / 2));
    this.gate = new HashGate(c, o.passwordHashQueue ?? d.passwordHashQueue);
  }

  /** Consumes one point of each counter in order; the first refusal is thrown (later counters are not touched, and
   *  the per-email ones before it get their point back: a refused attempt checked nothing). */
  private async consume(list: readonly [Counter, string][]): Promise<void> {
    for (let i = 0; i < list.length; i++) {
      const [c, key] = list[i];
      try {
        await c.rl.consume(key);
      } catch (e) {
        if (!(e instanceof RateLimiterRes)) throw e;
        this.refusedBy[c.scope]++;
        await Promise.all(list.slice(0, i).filter(([p]) => p !== this.ip).map(([p, k]) => p.rl.reward(k, 1)));
        throw throttled(c.scope, c.limit, e.msBeforeNext / 1000);
      }
    }
  }

  private static ipKey(ip: string | undefined): string {
    return ip === undefined ? 'unknown' : clientKey(ip);
  }

  /** Before a log-in's password check: throws the 429 when any counter is used up. */
  async beforeLogIn(email: string, ip: string | undefined): Promise<void> {
    const k = AccountThrottle.ipKey(ip);
    await this.consume([
      [this.ip, k],
      [this.emailIp, `${email}|${k}`],
      [this.email, email],
    ]);
  }

  /** The password was right (or never checked): the email's points come back. The IP's attempt stays counted. */
  async refundLogIn(email: string, ip: string | undefined): Promise<void> {
    const k = AccountThrottle.ipKey(ip);
    await Promise.all([this.emailIp.rl.reward(`${email}|${k}`, 1), this.email.rl.reward(email, 1)]);
  }

  async beforeSignUp(ip: string | undefined): Promise<void> {
    await this.consume([[this.signupIp, AccountThrottle.ipKey(ip)]]);
  }

  /** True when the counters are shared right now (Redis configured and connected). */
  get shared(): boolean {
    return this.redis?.status === 'ready';
  }

  /** Runs a password hash or check through the gate, or throws the 429 when it is full. */
  hash<T>(fn: () => Promise<T>): Promise<T> {
    const p = this.gate.run(fn);
    if (p === undefined) throw throttled('password-hashing', this.gate.concurrency + this.gate.queue, 1);
    return p;
  }
}
