// Account security limits (issue 14): log-in and sign-up throttles, and the bound on concurrent password hashing.
//
// Log-in: a point is consumed BEFORE the password is verified (one atomic increment per counter: Redis INCR in a Lua
// script with rate-limiter-flexible's RateLimiterRedis, or synchronous in RateLimiterMemory), so any number of
// concurrent calls can verify at most `limit` passwords; a successful log-in gives its points back. Counters:
//   - per (email, client IP): `failedLoginsPerEmailIp` per 15 min — an attacker's IP locks only itself out;
//   - per email: `failedLoginsPerEmail` per hour — bounds a distributed guess on one account, but only for log-ins
//     the server cannot tell from an attacker's (below);
//   - per device: `failedLoginsPerEmailIp` per 15 min — for log-ins with a device cookie (./device.ts);
//   - per client IP: `loginsPerIp` per 15 min — every attempt (unknown emails too), never given back.
// Sign-up: `signupsPerIp` per hour per client IP.
//
// Distributed attacks on one account (issue 26 item 6): many addresses guessing one email used to fill the per-email
// counter, and then the owner — right password, own address — got 429 for an hour. Now the per-email counter applies
// only to log-ins that are neither
//   - from a known device: a valid device cookie for this email (issued on a successful log-in) — counted per device
//     instead, so a stolen cookie still checks at most `failedLoginsPerEmailIp` passwords per 15 min, from anywhere;
//   - from a known address: this (email, client IP) logged in successfully within KNOWN_ADDRESS_SEC.
// So the owner is never locked out by others from a browser or an address they used before. A new browser on a new
// address is indistinguishable from the attacker: it keeps the hard per-email window (decided: no trickle or delay —
// any slot it could use, the attacker would take first). The (email, IP) and per-IP counters apply to everyone.
// With Redis (config redisUrl) the counters (and known addresses) are shared by every replica; if Redis fails, each
// replica falls back to in-process counters (insurance limiter) instead of refusing every log-in.
//
// Password hashing (argon2id, ~20 ms of CPU and 19 MiB each) runs on libuv's threadpool, the same 4 threads that
// serve file reads: a flood of log-ins starved GET /docs and the node API. HashGate lets `concurrency` hashes run
// (default half the CPUs) and `queue` wait; beyond that the call is refused at once (429, Retry-After) before any hash.
// Known-good log-ins (known device or address) wait in a queue of their own (as long again) that is served first, so
// a flood of unknown emails from thousands of addresses cannot starve the owners who logged in before.
import { isIP } from 'node:net';
import { availableParallelism } from 'node:os';
import type { Redis } from 'ioredis';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import { type RpcError, invalidRequest } from '@rpcgate/toolkit/errors';
import type { AdmitFn } from '@rpcgate/toolkit/engine';
import { gatewayError } from '../errors.js';

export interface AccountSecurityConfig {
  failedLoginsPerEmailIp?: number;
  failedLoginsPerEmail?: number;
  loginsPerIp?: number;
  signupsPerIp?: number;
  /** Password-reset requests per client IP per hour. */
  passwordResetsPerIp?: number;
  /** Password-reset requests per email per hour (every address together). */
  passwordResetsPerEmail?: number;
  /** Password hashes computed at once (0/absent: half the CPUs, at least 1). */
  passwordHashConcurrency?: number;
  /** Hashes that may wait for a slot; one more is refused (429). */
  passwordHashQueue?: number;
}

/** Which counter refused (data.scope of the 429). */
export type ThrottleScope =
  | 'email+ip'
  | 'email'
  | 'device'
  | 'ip'
  | 'signup-ip'
  | 'reset-ip'
  | 'reset-email'
  | 'password-hashing';

const WINDOWS: Record<Exclude<ThrottleScope, 'password-hashing'>, { sec: number; period: string }> = {
  'email+ip': { sec: 15 * 60, period: '15 minutes' },
  email: { sec: 60 * 60, period: 'hour' },
  device: { sec: 15 * 60, period: '15 minutes' },
  ip: { sec: 15 * 60, period: '15 minutes' },
  'signup-ip': { sec: 60 * 60, period: 'hour' },
  'reset-ip': { sec: 60 * 60, period: 'hour' },
  'reset-email': { sec: 60 * 60, period: 'hour' },
};

const MESSAGES: Record<ThrottleScope, string> = {
  'email+ip': 'too many failed log-ins for this email from your address',
  email: 'too many failed log-ins for this email',
  device: 'too many failed log-ins for this email from this device',
  ip: 'too many log-in attempts from your address',
  'signup-ip': 'too many sign-ups from your address',
  'reset-ip': 'too many password-reset requests from your address',
  'reset-email': 'too many password-reset requests for this email',
  'password-hashing': 'the server is busy checking passwords',
};

/** -32005 (HTTP 429, Retry-After): `data.retryAfter` seconds and `data.scope` say when and why. */
export function throttled(scope: ThrottleScope, limit: number, retryAfterSec: number, now = Date.now()): RpcError {
  const retryAfter = Math.max(1, Math.ceil(retryAfterSec));
  const period = scope === 'password-hashing' ? 'concurrent' : WINDOWS[scope].period;
  return gatewayError(
    `${MESSAGES[scope]}: try again in ${retryAfter} s`,
    {
      reason: 'rate',
      scope,
      limit,
      period,
      retryAfter,
      resetAt: new Date(now + retryAfter * 1000).toISOString(),
    },
    429,
    { 'Retry-After': String(retryAfter) },
  );
}

/** Methods that check a password or create one: at most one per HTTP request. */
export const CREDENTIAL_METHODS: ReadonlySet<string> = new Set([
  'account_logIn',
  'account_signUp',
  'account_changePassword',
  'account_delete',
  'account_resetPassword',
]);

/** Admission hook of the account engine: log-in and sign-up are refused inside a batch (-32600), so one request can
 *  never check more than one password. */
export const oneCredentialCallPerRequest: AdmitFn = (calls) => {
  if (calls.length < 2 || !calls.some((c) => CREDENTIAL_METHODS.has(c.method))) return undefined;
  return {
    refused: calls.map((c) =>
      CREDENTIAL_METHODS.has(c.method)
        ? invalidRequest(`${c.method} cannot be sent in a batch: send it as a single JSON-RPC request`, {
            reason: 'batch',
            method: c.method,
          })
        : undefined,
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
  return `${groups
    .slice(0, 4)
    .map((g) => g.replace(/^0+(?=.)/, ''))
    .join(':')}::/64`;
}

/** Bounded concurrency for password hashing: `run` answers undefined (refuse) when every slot and queue place is taken. */
export class HashGate {
  private active = 0;
  private readonly waiting: (() => void)[] = [];
  /** Known-good log-ins: a queue as long as `queue` of their own, served before `waiting`. */
  private readonly priority: (() => void)[] = [];
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

  run<T>(fn: () => Promise<T>, known = false): Promise<T> | undefined {
    if (this.active >= this.concurrency && (known ? this.priority : this.waiting).length >= this.queue) {
      this.refused++;
      return undefined;
    }
    return this.enter(known).then(async () => {
      try {
        return await fn();
      } finally {
        this.done++;
        this.leave();
      }
    });
  }

  private enter(known: boolean): Promise<void> {
    if (this.active < this.concurrency) {
      this.peak = Math.max(this.peak, ++this.active);
      return Promise.resolve();
    }
    return new Promise((resolve) => (known ? this.priority : this.waiting).push(resolve));
  }

  private leave(): void {
    const next = this.priority.shift() ?? this.waiting.shift();
    if (next !== undefined)
      next(); // the slot passes on: `active` stays
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

/** How long an (email, client IP) that logged in successfully stays known: 14 days (below setTimeout's 24.8-day
 *  ceiling, which the in-process store uses for expiry). */
export const KNOWN_ADDRESS_SEC = 14 * 86_400;

/** How a log-in is treated, decided before its password is checked. */
export type LogInTrust = 'device' | 'address' | 'none';

/** One log-in attempt's points (given back by `refundLogIn`) and trust (for the hash gate). */
export interface LogInAttempt {
  readonly email: string;
  readonly ipKey: string;
  readonly trust: LogInTrust;
  readonly taken: readonly (readonly [Counter, string])[];
}

export const ACCOUNT_SECURITY_DEFAULTS = {
  failedLoginsPerEmailIp: 10,
  failedLoginsPerEmail: 100,
  loginsPerIp: 100,
  signupsPerIp: 10,
  passwordResetsPerIp: 10,
  passwordResetsPerEmail: 5,
  passwordHashQueue: 8,
} as const;

export class AccountThrottle {
  /** Refusals by scope (data.scope of the 429), the hash gate's included. */
  refusals(): Record<ThrottleScope, number> {
    return { ...this.refusedBy, 'password-hashing': this.gate.refused };
  }

  readonly gate: HashGate;
  /** Calls refused per counter (the hash gate's are `gate.refused`): read by rpcgate_account_throttled_total. */
  private readonly refusedBy: Record<Counter['scope'], number> = {
    'email+ip': 0,
    email: 0,
    device: 0,
    ip: 0,
    'signup-ip': 0,
    'reset-ip': 0,
    'reset-email': 0,
  };
  private readonly emailIp: Counter;
  private readonly email: Counter;
  private readonly device: Counter;
  private readonly ip: Counter;
  private readonly signupIp: Counter;
  private readonly resetIp: Counter;
  private readonly resetEmail: Counter;
  /** (email, client IP) pairs that logged in successfully (value 1, expiring after KNOWN_ADDRESS_SEC). */
  private readonly known: RateLimiterAbstract;

  private readonly redis: Redis | undefined;

  constructor(o: ThrottleOptions = {}) {
    const d = ACCOUNT_SECURITY_DEFAULTS;
    // Fail fast when Redis is slow or away (no offline queue, short command timeout): the insurance counters answer.
    const redis = (this.redis = o.redisClient);
    const prefix = `${o.redisPrefix ?? 'rpcgate'}:acct`;
    const limiter = (base: { points: number; duration: number; keyPrefix: string }): RateLimiterAbstract => {
      const memory = new RateLimiterMemory(base);
      // Redis down → this replica's own counters (RateLimiterRedis fails over to its insurance limiter).
      return redis === undefined
        ? memory
        : new RateLimiterRedis({ ...base, storeClient: redis, insuranceLimiter: memory, rejectIfRedisNotReady: true });
    };
    const make = (scope: Counter['scope'], limit: number): Counter => ({
      scope,
      limit,
      rl: limiter({ points: limit, duration: WINDOWS[scope].sec, keyPrefix: `${prefix}:${scope}` }),
    });
    this.emailIp = make('email+ip', o.failedLoginsPerEmailIp ?? d.failedLoginsPerEmailIp);
    this.email = make('email', o.failedLoginsPerEmail ?? d.failedLoginsPerEmail);
    this.device = make('device', o.failedLoginsPerEmailIp ?? d.failedLoginsPerEmailIp);
    this.ip = make('ip', o.loginsPerIp ?? d.loginsPerIp);
    this.signupIp = make('signup-ip', o.signupsPerIp ?? d.signupsPerIp);
    this.resetIp = make('reset-ip', o.passwordResetsPerIp ?? d.passwordResetsPerIp);
    this.resetEmail = make('reset-email', o.passwordResetsPerEmail ?? d.passwordResetsPerEmail);
    this.known = limiter({ points: 1, duration: KNOWN_ADDRESS_SEC, keyPrefix: `${prefix}:known` });
    const c = o.passwordHashConcurrency || Math.max(1, Math.floor(availableParallelism() / 2));
    this.gate = new HashGate(c, o.passwordHashQueue ?? d.passwordHashQueue);
  }

  /** Consumes one point of each counter in order; the first refusal is thrown (later counters are not touched, and
   *  the per-email ones before it get their point back: a refused attempt checked nothing). */
  private async consume(list: readonly (readonly [Counter, string])[]): Promise<void> {
    for (let i = 0; i < list.length; i++) {
      const [c, key] = list[i];
      try {
        await c.rl.consume(key);
      } catch (e) {
        if (!(e instanceof RateLimiterRes)) throw e;
        this.refusedBy[c.scope]++;
        await Promise.all(
          list
            .slice(0, i)
            .filter(([p]) => p !== this.ip)
            .map(([p, k]) => p.rl.reward(k, 1)),
        );
        throw throttled(c.scope, c.limit, e.msBeforeNext / 1000);
      }
    }
  }

  private static ipKey(ip: string | undefined): string {
    return ip === undefined ? 'unknown' : clientKey(ip);
  }

  /** Before a log-in's password check: throws the 429 when any counter that applies is used up. `device` is the
   *  device id of a valid device cookie for this email (DeviceCookies.verify), if any. */
  async beforeLogIn(email: string, ip: string | undefined, device?: string): Promise<LogInAttempt> {
    const ipKey = AccountThrottle.ipKey(ip);
    const pair = `${email}|${ipKey}`;
    let trust: LogInTrust = device !== undefined ? 'device' : 'none';
    if (trust === 'none' && ((await this.known.get(pair))?.consumedPoints ?? 0) > 0) trust = 'address';
    const taken: [Counter, string][] = [
      [this.ip, ipKey],
      [this.emailIp, pair],
    ];
    if (trust === 'device') taken.push([this.device, `${email}|${device}`]);
    else if (trust === 'none') taken.push([this.email, email]);
    await this.consume(taken);
    return { email, ipKey, trust, taken };
  }

  /** The password was right (or never checked): the attempt's points come back. The IP's attempt stays counted. */
  async refundLogIn(a: LogInAttempt): Promise<void> {
    await Promise.all(a.taken.filter(([c]) => c !== this.ip).map(([c, k]) => c.rl.reward(k, 1)));
  }

  /** The password was right: its points come back and this (email, client IP) is known from now on. */
  async loggedIn(a: LogInAttempt): Promise<void> {
    const remember = this.known.set(`${a.email}|${a.ipKey}`, 1, KNOWN_ADDRESS_SEC).catch(() => undefined); // best effort
    await Promise.all([this.refundLogIn(a), remember]);
  }

  async beforeSignUp(ip: string | undefined): Promise<void> {
    await this.consume([[this.signupIp, AccountThrottle.ipKey(ip)]]);
  }

  /** Before a password-reset request is taken: per client IP, then per email (known or not: the answer must not
   *  tell). */
  async beforePasswordReset(email: string, ip: string | undefined): Promise<void> {
    await this.consume([
      [this.resetIp, AccountThrottle.ipKey(ip)],
      [this.resetEmail, email],
    ]);
  }

  /** True when the counters are shared right now (Redis configured and connected). */
  get shared(): boolean {
    return this.redis?.status === 'ready';
  }

  /** Runs a password hash or check through the gate, or throws the 429 when it is full. `known`: a known-good log-in
   *  (trust `device` or `address`), which waits in the gate's priority queue. */
  hash<T>(fn: () => Promise<T>, known = false): Promise<T> {
    const p = this.gate.run(fn, known);
    if (p === undefined) throw throttled('password-hashing', this.gate.concurrency + this.gate.queue, 1);
    return p;
  }
}
