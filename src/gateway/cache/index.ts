// The node API's finality-aware response cache: one NetworkCache per network (./cache.ts) built from the config's
// `cache` block (contracts/config.schema.json CacheConfig), optionally backed by Redis (./redis.ts).
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { Config } from '../config/config.js';
import type { GatewayMeaning } from '../method-meaning.js';
import { NetworkCache, type CacheMetrics, type CacheUpstream } from './cache.js';
import { RedisTier } from './redis.js';
import { LogThrottle } from '@rpcgate/toolkit/log-throttle';
import { HeadTracker } from './heads.js';
import type { ChainHead } from '../heads/head.js';

export {
  NetworkCache,
  CachedResult,
  isCacheHit,
  type CacheMetrics,
  type CacheUpstream,
  type NetworkCacheOptions,
} from './cache.js';
export { HeadTracker, type HeadEvents, type HeadUpstream } from './heads.js';
export { ByteLru } from './lru.js';
export { RedisTier } from './redis.js';
export { decide, decideByResult, blockNumberOf, type Decision, type Position } from './policy.js';

/** The settings of the `cache` block with every default filled in (the schema's defaults; a partial block merges). */
export function cacheSettings(config: Pick<Config, 'cache'>) {
  const c = config.cache ?? {};
  return {
    enabled: c.enabled ?? true,
    maxBytes: c.maxBytes ?? 64 * 1024 * 1024,
    finalityDepth: c.finalityDepth ?? 1024,
    pollIntervalMs: c.pollIntervalMs ?? 0,
    idleMs: c.idleMs ?? 60_000,
    disabledMethods: c.disabledMethods ?? [],
    redis: {
      enabled: c.redis?.enabled ?? false,
      url: c.redis?.url,
      prefix: c.redis?.prefix ?? 'rpcgate:cache',
      finalTtlSeconds: c.redis?.finalTtlSeconds ?? 86400,
      headTtlMs: c.redis?.headTtlMs ?? 0,
    },
    networks: c.networks ?? {},
  };
}

export interface ResponseCaches {
  /** Per network with the cache on. */
  readonly networks: ReadonlyMap<string, NetworkCache>;
  /** The chain position per network, cache on or off: the cache's own tracker, else one that polls only while a
   *  caller needs the head (the eth_getLogs range cap), so a `fromBlock..latest` query does not wait for an
   *  eth_blockNumber round trip first. */
  readonly heads: ReadonlyMap<string, HeadTracker>;
  /** Bytes in memory per network (for /metrics). */
  bytes(): Record<string, number>;
  close(): Promise<void>;
}

export interface CreateCachesOptions {
  config: Pick<Config, 'cache' | 'networks' | 'redisUrl'>;
  upstreams: ReadonlyMap<string, CacheUpstream>;
  meanings: ReadonlyMap<string, GatewayMeaning>;
  metrics?: CacheMetrics;
  logger?: Logger;
  /** The head per network (src/gateway/heads); a network without one gets a head of its own (tests). */
  heads?: ReadonlyMap<string, ChainHead>;
  /** The Redis client of the cache tier (src/gateway/redis, from `cache.redis.url` or `redisUrl`): required when
   *  `cache.redis.enabled`; its owner closes it. */
  redisClient?: Redis;
}

/** The caches of every network whose cache is on (none: an empty map). Throws on a Redis tier without a URL. */
export function createResponseCaches(o: CreateCachesOptions): ResponseCaches {
  const s = cacheSettings(o.config);
  const log = o.logger;
  // Failures are logged at most every 10 s per kind: a down Redis or node must not flood the log.
  const throttle = new LogThrottle(10_000);
  const warn = (what: string, fields: Record<string, unknown>, msg: string) => {
    const skipped = throttle.take(what);
    if (skipped !== undefined) log?.warn({ ...fields, skipped }, msg);
  };
  let redis: RedisTier | undefined;
  const networks = new Map<string, NetworkCache>();
  const heads = new Map<string, HeadTracker>();
  for (const [name, n] of Object.entries(o.config.networks)) {
    const over = s.networks[name] ?? {};
    const upstream = o.upstreams.get(name);
    if (upstream === undefined) continue;
    const pollMs = s.pollIntervalMs || Math.max(250, n.blockTime * 500);
    const head = o.heads?.get(name);
    const finalityDepth = over.finalityDepth ?? s.finalityDepth;
    const onPollError = (err: unknown) =>
      warn(
        `poll:${name}`,
        { err, network: name },
        'cache: head poll failed; head-dependent answers are not cached until it succeeds',
      );
    if (!(over.enabled ?? s.enabled)) {
      const nothing = () => undefined;
      heads.set(
        name,
        new HeadTracker({
          ...(head !== undefined ? { head } : { upstream, pollMs, idleMs: s.idleMs, finalityDepth }),
          events: { onHead: nothing, onReorg: nothing, onFinalized: nothing, onReset: nothing, onError: onPollError },
        }),
      );
      continue;
    }
    if (s.redis.enabled && redis === undefined) {
      if (o.redisClient === undefined) throw new Error('cache.redis.enabled needs cache.redis.url or redisUrl');
      redis = new RedisTier({
        client: o.redisClient,
        prefix: s.redis.prefix,
        finalTtlSeconds: s.redis.finalTtlSeconds,
        // One TTL for every network: the slowest block time when not set.
        headTtlMs: s.redis.headTtlMs || Math.max(...Object.values(o.config.networks).map((x) => x.blockTime * 1000)),
        onError: (err) =>
          warn('redis', { err }, 'cache: Redis failing; cache lookups there count as misses until it is back'),
      });
    }
    networks.set(
      name,
      new NetworkCache({
        network: name,
        upstream,
        meanings: o.meanings,
        disabled: new Set([...s.disabledMethods, ...(over.disabledMethods ?? [])]),
        maxBytes: over.maxBytes ?? s.maxBytes,
        finalityDepth,
        pollMs,
        idleMs: s.idleMs,
        redis,
        metrics: o.metrics,
        onPollError,
        head,
      }),
    );
    heads.set(name, networks.get(name)!.tracker);
  }
  return {
    networks,
    heads,
    bytes: () => Object.fromEntries([...networks].map(([n, c]) => [n, c.bytes])),
    async close() {
      // Every network's tracker, the caches' own among them (stopping a cache is stopping its tracker).
      for (const h of heads.values()) h.stop();
    },
  };
}
