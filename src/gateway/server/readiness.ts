// /readyz: can this replica serve limited traffic now? The store (accounts, keys, usage) must answer a trivial query
// and, with Redis configured, every Redis client a PING — each bounded (the store by STORE_TIMEOUT_MS, Redis by the
// client's command timeout), so a load balancer's probe never hangs. The route (./routes.ts) adds the upstreams per network; /healthz is liveness only.
import { sql, type Kysely } from 'kysely';
import type { Redis } from 'ioredis';
import { redisReady } from '../redis/index.js';

const STORE_TIMEOUT_MS = 1000;

export interface ReadinessDeps {
  db: Kysely<never>;
  dialect: string;
  /** Redis clients by role (limits, filters); none = in-process counters and filters. */
  redis: Record<string, Redis | undefined>;
}

export function readiness(d: ReadinessDeps): () => Promise<{ ok: boolean; detail: Record<string, unknown> }> {
  return async () => {
    const [store, ...redis] = await Promise.all([
      storeReady(d.db),
      ...Object.values(d.redis).map((c) => (c ? redisReady(c) : undefined)),
    ]);
    const roles = Object.keys(d.redis);
    const backends: Record<string, unknown> = {};
    let ok = store.ok;
    roles.forEach((role, i) => {
      const r = redis[i];
      if (r === undefined) backends[role] = { backend: 'memory', ok: true };
      else {
        backends[role] = { backend: 'redis', ...r };
        ok &&= r.ok;
      }
    });
    return { ok, detail: { store: { backend: d.dialect, ...store }, ...backends } };
  };
}

async function storeReady(db: Kysely<never>): Promise<{ ok: boolean; error?: string }> {
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      sql`select 1`.execute(db),
      new Promise(
        (_, reject) =>
          (timer = setTimeout(() => reject(new Error(`no answer in ${STORE_TIMEOUT_MS} ms`)), STORE_TIMEOUT_MS)),
      ),
    ]);
    return { ok: true };
  } catch (e) {
    return { ok: false, error: (e as Error).message };
  } finally {
    clearTimeout(timer);
  }
}
