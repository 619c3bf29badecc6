// Runs rpcgate in its own process for the benchmark, so it can be pinned with taskset and its CPU time read
// from /proc/<pid>/stat. Usage: node --import tsx bench/rpcgate-server.ts '<ConfigInput as JSON>' ['<BenchAuth as JSON>']
// Prints `RPCGATE_READY <B-style mainnet URL>` once listening; SIGUSR2 prints pool counters; SIGTERM/SIGINT stop it.
//
// BenchAuth `{ "networkKey": true }`: the authenticated path (issue 3). Before the service starts, a real account
// and one network API key (access point B, mainnet) are created in the store of the config's dataDir (SQLite) with
// the same server secret the service then loads — exactly what the account API does — and the READY URL carries
// that key, so every request goes through the key index (HMAC lookup), the admission hook and the limiter
// (in-process counters, or Redis when the config has `redisUrl`; the Redis keys under the config's `redisPrefix`
// are deleted on exit).
import { startService, type RunningService } from '../src/gateway/server/index.js';
import { openStore, createUser, createNetworkKey } from '../src/gateway/store/index.js';
import { randomBytes } from 'node:crypto';
import { loadOrCreateServerSecret, hashPassword } from '../src/gateway/secrets/index.js';

interface BenchAuth {
  networkKey?: boolean;
}

const input = JSON.parse(process.argv[2] ?? '{}');
const auth = JSON.parse(process.argv[3] ?? '{}') as BenchAuth;
let svc: RunningService | undefined;

/** Deletes the limiter's counters under the run's (random) prefix. */
async function cleanRedis(): Promise<void> {
  if (!input.redisUrl || !input.redisPrefix || !svc) return;
  const { RedisLimiter } = await import('../src/gateway/limits/index.js');
  if (!(svc.limiter instanceof RedisLimiter)) return;
  const redis = svc.limiter.redis;
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${input.redisPrefix}:*`, 'COUNT', 1000);
    if (keys.length) await redis.del(...keys);
    cursor = next;
  } while (cursor !== '0');
}

const shutdown = async () => {
  try {
    await cleanRedis().catch((e: unknown) => process.stderr.write(`bench: Redis cleanup failed: ${String(e)}\n`));
    await svc?.stop();
  } finally {
    process.exit(0);
  }
};
process.once('SIGTERM', () => void shutdown());
process.once('SIGINT', () => void shutdown());
// The upstream pool's counters (HTTP requests sent upstream, calls, deduped), read by run.ts around each run.
process.on('SIGUSR2', () => {
  process.stdout.write(`RPCGATE_STATS ${JSON.stringify(svc?.pools.get('mainnet')?.stats ?? null)}\n`);
});

let key: string | undefined;
if (auth.networkKey) {
  // A user and a network key made through the store repositories, as the account API makes them.
  const store = await openStore({ dataDir: input.dataDir });
  try {
    const secret = loadOrCreateServerSecret(input.dataDir);
    const user = await createUser(store.db, {
      email: `bench-${randomBytes(6).toString('hex')}@example.com`,
      passwordHash: await hashPassword(randomBytes(16).toString('hex')),
    });
    key = (await createNetworkKey(store.db, secret, user.id, { name: 'bench', network: 'mainnet' })).key;
  } finally {
    await store.close();
  }
}

// startService merges onto the embedded defaults without the environment: only the benchmark's settings apply.
svc = await startService(input);
if (key !== undefined && svc.access.size === 0) throw new Error('bench: the network key is not in the access index');
const url = key === undefined ? svc.urls.mainnet.B : `${svc.url}/mainnet/${key}`;
process.stdout.write(`RPCGATE_READY ${url}\n`);
