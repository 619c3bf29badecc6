// PostgreSQL and Redis for the scale-out tests: where they are, whether they answer, and scratch resources that
// each test run creates for itself (a database, a key prefix) and removes afterwards. Where a server is
// unreachable the tests that need it skip with a message — unless CI is set: there they must run (and fail).
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import pg from 'pg';

export const PG_ADMIN_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
export const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

export async function pgReachable(url = PG_ADMIN_URL): Promise<boolean> {
  const c = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3000 });
  try {
    await c.connect();
    return true;
  } catch {
    return false;
  } finally {
    await c.end().catch(() => {});
  }
}

export async function redisReachable(url = REDIS_URL): Promise<boolean> {
  const r = new Redis(url, {
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    connectTimeout: 1000,
    retryStrategy: () => null,
  });
  r.on('error', () => {});
  try {
    await r.connect();
    return (await r.ping()) === 'PONG';
  } catch {
    return false;
  } finally {
    r.disconnect();
  }
}

/** True when the tests needing `what` should skip (unreachable and CI unset); says so once. */
export function skipUnless(up: boolean, label: string, what: string): boolean {
  const skip = !up && !process.env.CI;
  if (skip)
    console.warn(
      `[${label}] ${what} unreachable (${shown(PG_ADMIN_URL)}, ${REDIS_URL}): those cases SKIPPED (required when CI is set)`,
    );
  return skip;
}

function shown(url: string): string {
  const u = new URL(url);
  u.password = '';
  return u.href;
}

async function admin<T>(fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const c = new pg.Client({ connectionString: PG_ADMIN_URL, connectionTimeoutMillis: 5000 });
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
}

/**
 * Drops a scratch database once its last connection is gone. A pool that was just ended may still be closing its
 * sockets; `DROP … WITH (FORCE)` would terminate them mid-close and the client would raise an unhandled error, so
 * wait (bounded) for them to leave and only then force what remains.
 */
async function dropDatabase(name: string): Promise<void> {
  await admin(async (c) => {
    for (let i = 0; i < 50; i++) {
      const r = await c.query('SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1', [name]);
      if (r.rows[0].n === 0) break;
      await new Promise((res) => setTimeout(res, 100));
    }
    await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  });
}

/** A database of this test run's own: `create()` it before use, `drop()` it after. */
export function scratchDatabase(): { name: string; url: string; create(): Promise<void>; drop(): Promise<void> } {
  const name = `rpcgate_test_${randomBytes(6).toString('hex')}`;
  const url = new URL(PG_ADMIN_URL);
  url.pathname = `/${name}`;
  return {
    name,
    url: url.href,
    create: () => admin(async (c) => void (await c.query(`CREATE DATABASE ${name}`))),
    drop: () => dropDatabase(name),
  };
}

/** A Redis key prefix of this test run's own. */
export function scratchPrefix(): string {
  return `rpcgate-test-${randomBytes(6).toString('hex')}`;
}

/** Deletes every Redis key under `prefix` (SCAN, not KEYS: safe on a shared server). */
export async function deleteRedisKeys(prefix: string): Promise<void> {
  const r = new Redis(REDIS_URL);
  try {
    let cursor = '0';
    do {
      const [next, keys] = await r.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 500);
      if (keys.length) await r.del(...keys);
      cursor = next;
    } while (cursor !== '0');
  } finally {
    r.disconnect();
  }
}
