// The one way the service makes a Redis client (limits, filters, any later user such as a response cache).
// Redis down must cost a call milliseconds, not ioredis's defaults (offline queue + 20 retries + no timeout = 10–15 s):
//   - enableOfflineQueue false: a command while disconnected fails at once instead of waiting for a reconnect;
//   - commandTimeout: a command on a live but silent connection (Redis stalled, network black hole) fails in time;
//   - maxRetriesPerRequest 0 and no resend of unanswered commands: a script that may have run is never run twice
//     (a limit consume resent after a reconnect would count a call the client was already refused);
//   - bounded reconnect backoff, forever: the service recovers by itself when Redis is back;
//   - an 'error' listener that logs through pino (JSON), once per outage and then at most every LOG_EVERY_MS —
//     without a listener ioredis prints "[ioredis] Unhandled error event" on every reconnect attempt.
import { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { LogThrottle } from '@rpcgate/toolkit/log-throttle';

export interface RedisClientConfig {
  /** A command without an answer after this long fails (ms). */
  commandTimeoutMs?: number;
  /** Longest wait for the TCP connection (ms), each attempt. */
  connectTimeoutMs?: number;
  /** Reconnect backoff cap (ms): 50 ms doubling per failed attempt, at most this. */
  maxReconnectDelayMs?: number;
}

export const REDIS_CLIENT_DEFAULTS: Required<RedisClientConfig> = {
  commandTimeoutMs: 250,
  connectTimeoutMs: 1000,
  maxReconnectDelayMs: 1000,
};

/** While an outage lasts, one "still unreachable" line per this long at most. */
export const LOG_EVERY_MS = 30_000;

export interface CreateRedisClientOptions extends RedisClientConfig {
  url: string;
  /** What the client is for (`limits`, `filters`, …): in every log line. */
  role: string;
  /** Where connection errors go; without one they are only counted (tests). */
  logger?: Logger;
  /** Consequence told in the outage's first log line, e.g. "limited calls fail closed (-32044)". */
  whileDown?: string;
}

/** A client of the service: an ioredis client plus its role. */
export type ServiceRedis = Redis & { readonly rpcgateRole: string };

/** Per factory client: settles at its first connection or after the connect timeout, then deleted. */
const firstConnect = new WeakMap<Redis, Promise<void>>();

/**
 * Without an offline queue a command sent before the very first connection fails; users call this first. It returns
 * undefined (no await on the hot path) once the client has connected once or gave up waiting: after that a command
 * while disconnected fails at once, as it should.
 */
export function untilFirstConnect(client: Redis): Promise<void> | undefined {
  return firstConnect.get(client);
}

export function createRedisClient(opts: CreateRedisClientOptions): ServiceRedis {
  const cfg = { ...REDIS_CLIENT_DEFAULTS, ...definedOnly(opts) };
  const client = new Redis(opts.url, {
    enableOfflineQueue: false,
    enableAutoPipelining: true,
    commandTimeout: cfg.commandTimeoutMs,
    connectTimeout: cfg.connectTimeoutMs,
    maxRetriesPerRequest: 0,
    autoResendUnfulfilledCommands: false,
    retryStrategy: (times) => Math.min(50 * 2 ** Math.min(times - 1, 16), cfg.maxReconnectDelayMs),
    // Our own reconnects only: a READONLY reply (failover) is an error the caller sees, not a silent reconnect loop.
    reconnectOnError: null,
  }) as ServiceRedis;
  Object.defineProperty(client, 'rpcgateRole', { value: opts.role });
  const first = waitReady(client, 2 * cfg.connectTimeoutMs).then(() => void firstConnect.delete(client));
  firstConnect.set(client, first);
  const log = opts.logger?.child({ component: 'redis', role: opts.role, redis: redactedUrl(opts.url) });
  let downSince = 0;
  const throttle = new LogThrottle(LOG_EVERY_MS);
  const down = (message: string, code: string | undefined) => {
    const now = Date.now();
    const skipped = throttle.take('', now);
    if (skipped === undefined) return;
    if (downSince === 0) {
      downSince = now;
      log?.error(
        { err: { message, code } },
        `Redis unreachable${opts.whileDown ? `; ${opts.whileDown}` : ''}; reconnecting`,
      );
    } else
      log?.warn(
        { err: { message }, downMs: now - downSince, errorsSinceLastLine: skipped + 1 },
        'Redis still unreachable',
      );
  };
  client.on('error', (err: Error) => down(err.message, (err as { code?: string }).code));
  // A lost connection is an outage from that moment, not from the first failed reconnect (which may come later, or
  // never fail at all before Redis is back): ioredis says 'reconnecting' only for connections it did not close itself.
  client.on('reconnecting', () => down('connection lost', undefined));
  client.on('ready', () => {
    if (downSince === 0) return;
    log?.info({ downMs: Date.now() - downSince }, 'Redis reachable again');
    downSince = 0;
    throttle.reset();
  });
  return client;
}

/** Waits (bounded) for the first connection; false when it is not there in time (the client keeps trying). */
export function waitReady(client: Redis, timeoutMs: number): Promise<boolean> {
  if (client.status === 'ready') return Promise.resolve(true);
  return new Promise((resolve) => {
    const done = (ok: boolean) => {
      clearTimeout(t);
      client.off('ready', onReady);
      resolve(ok);
    };
    const onReady = () => done(true);
    const t = setTimeout(() => done(false), timeoutMs);
    client.on('ready', onReady);
  });
}

/** For readiness: PING answered within the client's command timeout. */
export async function redisReady(client: Redis): Promise<{ ok: boolean; status: string; error?: string }> {
  if (client.status !== 'ready') return { ok: false, status: client.status };
  try {
    await client.ping();
    return { ok: true, status: 'ready' };
  } catch (e) {
    return { ok: false, status: client.status, error: (e as Error).message };
  }
}

export async function closeRedisClient(client: Redis): Promise<void> {
  if (client.status === 'ready') await client.quit().catch(() => client.disconnect());
  else client.disconnect();
}

function definedOnly(c: RedisClientConfig): RedisClientConfig {
  const out: RedisClientConfig = {};
  if (c.commandTimeoutMs !== undefined) out.commandTimeoutMs = c.commandTimeoutMs;
  if (c.connectTimeoutMs !== undefined) out.connectTimeoutMs = c.connectTimeoutMs;
  if (c.maxReconnectDelayMs !== undefined) out.maxReconnectDelayMs = c.maxReconnectDelayMs;
  return out;
}

/** host:port only (no password in logs). */
function redactedUrl(url: string): string {
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.host}${u.pathname === '/' ? '' : u.pathname}`;
  } catch {
    return 'redis';
  }
}
