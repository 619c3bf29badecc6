// Wiring: config → store + server secret → access index (keys) + limiter → embedded chains (for networks without
// upstreams) → upstream pools → engine (with the admission hook and the call meter) → route table → HTTP server.
// `startService` is what `rpcgate start` runs and what tests call (port 0 = a free port).
//
// Metering (src/gateway/metering, src/gateway/server/call-observer.ts): one Metrics registry and one Meter per process; the engine's call
// observer and the node API route's refusals record every node API call; the Meter flushes every 5 s (durability.usageFlushIntervalMs), the current minute as a partial row.
// Logs: pino JSON lines on stderr with logRedaction() (keys, JWTs, cookies, upstream credentials never written).
//
// Stop (`stop()`, what SIGINT/SIGTERM run in `rpcgate start`): stop accepting (server.close) → drain: idle keep-alive
// connections are closed as they become idle, in-flight requests finish (bounded: after DRAIN_MS the remaining
// connections are cut) → upstream pools and embedded chains → `meter.stop()` (final flush, the current minute
// included) → key index, limiter → store closed. Every call answered before the stop is in the store.
//
// Keys: accounts' keys from the store (src/gateway/access/index.ts: in-memory index synced from the key-event feed), plus
// static `keys` from the config, plus — dev mode (`devKey`, see src/gateway/config/config.ts) — a development key generated
// at start. Static and development keys have no limits and no allowlists.
import { readFileSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Kysely } from 'kysely';
import { pino, type DestinationStream, type Logger } from 'pino';
import pretty from 'pino-pretty';
import { methods } from '../../../generated/node/methods.js';
import { validators } from '../../../generated/node/validators.js';
import {
  AccessIndex,
  ConfigKeyStore,
  KeyStores,
  generateDevKey,
  type AccessContext,
  type KeyStore,
} from '../access/index.js';
import { startEmbeddedChain, compileToken, type EmbeddedChain, type SeededChain } from '../chain/index.js';
import {
  chainNetworks,
  devKeyEnabled,
  loadConfig,
  trustProxyHops,
  type Config,
  type ConfigInput,
} from '../config/config.js';
import { createLimiter, type Limiter } from '../limits/index.js';
import { createFilterStore, type FilterStore } from '../filters/index.js';
import { LogThrottle } from '@rpcgate/toolkit/log-throttle';
import {
  closeRedisClient,
  createRedisClient,
  LOG_EVERY_MS,
  REDIS_CLIENT_DEFAULTS,
  waitReady,
  type ServiceRedis,
} from '../redis/index.js';
import { createNodeHandlers } from '../node-api/handlers.js';
import { createResponseCaches, type ResponseCaches } from '../cache/index.js';
import { createHeads, headPollMs, type ChainHead, type HeadPool } from '../heads/index.js';
import { addressParamsTable, meaningTable } from '../method-meaning.js';
import { Meter, Metrics, logRedaction, type MeterOptions } from '../metering/index.js';
import { createHttpServer } from '@rpcgate/toolkit/http';
import { createEngine } from '@rpcgate/toolkit/engine';
import { createUpstreams, type UpstreamPool } from '../upstream/index.js';
import { loadOrCreateServerSecret } from '../secrets/index.js';
import { downsample, openStore, type Store } from '../store/index.js';
import { createAdmission, peekLimitHeaders } from './admission.js';
import { readiness } from './readiness.js';
import { accountRoute } from './account-route.js';
import type { AccountApi } from '../accounts/index.js';
import { CallMeter } from './call-observer.js';
import { metricsRoute } from './metrics-route.js';
import { buildRoutes, type Mount } from './routes.js';
import { createWebRoute } from './web-route.js';
import { Subscriptions } from '../subscriptions/index.js';
import { attachNodeWebSockets, type NodeWebSockets } from './ws-route.js';
import { RedisConnectionSlots } from '../limits/connections.js';

/** In-flight requests get this long to finish on stop before their connections are cut. */
const DRAIN_MS = 5000;

export interface NetworkInfo {
  name: string;
  /** true when served by an embedded anvil. */
  embedded: boolean;
  /** Upstream node URLs (the embedded anvil's URL when embedded). */
  upstreams: string[];
  /** Chain id of the embedded chain (undefined for external upstreams: ask the node). */
  chainId?: number;
  /** PID of the embedded anvil. */
  pid?: number;
}

export interface RunningService {
  /** Base URL, e.g. http://127.0.0.1:8080 */
  url: string;
  /** Per network, the two node API URLs including the key: A `/{network}/v2/{key}`, B `/{network}/{key}`. */
  urls: Record<string, { A: string; B: string }>;
  docsUrl: string;
  /** The development key, or the first static key; '' when there is neither (keys come from accounts only). */
  key: string;
  /** True when `key` is the development key generated at start (dev mode). */
  devKey: boolean;
  networks: Record<string, NetworkInfo>;
  /** What was seeded into each embedded chain. */
  seeded: Record<string, SeededChain>;
  pools: ReadonlyMap<string, UpstreamPool>;
  /** Every key source: static/development keys, then the account index. */
  keys: KeyStore;
  /** The account store's key index (sync(): apply pending key events now). */
  access: AccessIndex;
  store: Store;
  /** The server secret (API keys are found by HMAC with it). */
  secret: Buffer;
  limiter: Limiter;
  /** Usage metering (undefined with `metering: false`). `flush()` writes what was recorded (the current minute as a partial row); `stop()` runs on stop. */
  meter: Meter | undefined;
  /** The /metrics registry. */
  metrics: Metrics;
  /** The response cache per network (src/gateway/cache; a network with the cache off has none). */
  caches: ResponseCaches['networks'];
  config: Config;
  logger: Logger;
  /** The node API's WebSocket connections and eth_subscribe subscriptions on this replica. */
  websockets: { connections(): number; perNetwork(): Record<string, number>; subscriptions(): number };
  /** The account API's throttles and password-hashing gate (counters: `throttle.gate.done`, `.refused`). */
  account: AccountApi;
  stop(): Promise<void>;
}

function readContract(path: string, logger: Logger): string {
  try {
    // Minified once; rpc.discover splices it in as raw JSON.
    return JSON.stringify(JSON.parse(readFileSync(path, 'utf8')));
  } catch (e) {
    throw new Error(`cannot read the node contract ${path}: ${(e as Error).message}`);
  } finally {
    logger.debug({ path }, 'contract loaded');
  }
}

/**
 * Starts the service. `input` is a full Config or a partial one (merged onto the embedded defaults, without env);
 * the CLI passes a config already loaded from defaults, file, env and flags. `networks`, when given, is the
 * complete set of networks (entries are completed from the defaults).
 */
export interface ServiceExtensions {
  /** Extra HTTP routes, built once the store and the key index are up; added before the account API (same path: they win). */
  routes?: (svc: {
    config: Config;
    store: Store;
    secret: Buffer;
    access: AccessIndex;
    limiter: Limiter;
    logger: Logger;
  }) => Mount[];
  /** Where log lines go (default: stderr, asynchronously). Tests pass a stream to read every line. */
  logDestination?: DestinationStream;
  /** Meter options for tests (a clock they move, the flush interval). */
  meter?: Pick<MeterOptions, 'now' | 'flushIntervalMs' | 'maxCells'>;
}

export async function startService(
  input: Config | ConfigInput = {},
  ext: ServiceExtensions = {},
): Promise<RunningService> {
  const config = loadConfig({ overrides: input as ConfigInput, env: {} });
  // Networks given here are the complete set (a test with one stand-in network starts no anvil for the other).
  if (input.networks)
    for (const name of Object.keys(config.networks))
      if (!(name in input.networks) || input.networks[name] === null) delete config.networks[name];
  const logger = pino(
    { level: config.logLevel, base: undefined, ...logRedaction({ networks: Object.keys(config.networks) }) },
    ext.logDestination ?? logDestination(config.logFormat),
  );
  const contractJson = readContract(config.openrpcPath, logger);

  const chains: EmbeddedChain[] = [];
  const pools = new Map<string, UpstreamPool>();
  let server: Server | undefined;
  let store: Store | undefined;
  let access: AccessIndex | undefined;
  let limiter: Limiter | undefined;
  let filterStore: FilterStore | undefined;
  const redisClients: { limits?: ServiceRedis; filters?: ServiceRedis; accounts?: ServiceRedis; cache?: ServiceRedis } =
    {};
  let meter: Meter | undefined;
  let retention: NodeJS.Timeout | undefined;
  let stopped: Promise<void> | undefined;
  let sockets: NodeWebSockets | undefined;
  let subscriptions: Subscriptions | undefined;
  let caches: ResponseCaches | undefined;
  let heads: Map<string, ChainHead> | undefined;
  let staticKeyCount = 0;
  let accountThrottle: { refusals(): Record<string, number> } | undefined;
  // One registry per service; active keys are read at scrape time from the key sources.
  const metrics = new Metrics({
    activeKeys: () => ({ account: access?.size ?? 0, static: staticKeyCount }),
    processMetrics: true,
    networks: Object.keys(config.networks),
    websocketConnections: () => sockets?.perNetwork() ?? {},
    subscriptionsActive: () => subscriptions?.byNetworkAndKind() ?? {},
    cacheBytes: () => caches?.bytes() ?? {},
    accountThrottled: () => accountThrottle?.refusals() ?? {},
  });

  const stop = (): Promise<void> =>
    (stopped ??= (async () => {
      // WebSockets first (1001 going away): upgraded sockets would otherwise hold server.close() until the drain cut.
      subscriptions?.stop();
      await sockets?.close();
      if (server) {
        const s = server;
        await new Promise<void>((r) => {
          // No new connections; the callback runs once every connection is closed.
          s.close(() => {
            clearInterval(idle);
            clearTimeout(cut);
            r();
          });
          // Keep-alive connections are closed as soon as they are idle (each one's in-flight request answered).
          s.closeIdleConnections();
          const idle = setInterval(() => s.closeIdleConnections(), 20);
          const cut = setTimeout(() => {
            logger.warn(
              { drainMs: DRAIN_MS },
              'stop: requests still in flight after the drain time; closing their connections',
            );
            s.closeAllConnections();
          }, DRAIN_MS);
        });
      }
      await caches?.close().catch((e: unknown) => logger.warn({ err: e }, 'closing the response cache failed'));
      for (const h of heads?.values() ?? []) h.stop();
      await Promise.all([...pools.values()].map((p) => p.close()));
      await Promise.all(chains.map((c) => c.stop()));
      // Final flush (the current minute included) after the last answered call, before the store closes.
      if (meter) {
        const m = meter;
        await m.stop().then(
          (r) => logger.info({ rows: r.rows }, 'usage flushed'),
          (e: unknown) =>
            logger.error(
              { err: e, pending: m.stats().pendingCells },
              'final usage flush failed; unflushed usage is lost',
            ),
        );
      }
      clearInterval(retention);
      await access?.stop();
      await limiter?.close().catch((e: unknown) => logger.warn({ err: e }, 'closing the limiter failed'));
      await filterStore?.close().catch((e: unknown) => logger.warn({ err: e }, 'closing the filter store failed'));
      await Promise.all(Object.values(redisClients).map((c) => closeRedisClient(c)));
      await store?.close();
      logger.flush();
    })());

  try {
    // The store (SQLite in dataDir, or PostgreSQL), the secret that keys the key hashes, the key index, the limiter.
    store = await openStore({
      dataDir: config.dataDir,
      databaseUrl: config.databaseUrl,
      connectTimeoutMs: config.durability?.storeConnectTimeoutMs,
      statementTimeoutMs: config.durability?.storeStatementTimeoutMs,
      onError: (err) =>
        logger.warn({ err }, 'store: an idle database connection failed; the pool reconnects on next use'),
    });
    const secret = loadOrCreateServerSecret(config.dataDir, config.secret);
    access = new AccessIndex({ db: store.db, secret, chains: chainNetworks(config), logger });
    await access.start();
    // Redis (when configured): one client per use, all from src/gateway/redis (fast failure, JSON logs, reconnects).
    if (config.redisUrl) {
      const base = { url: config.redisUrl, logger, ...config.redis };
      redisClients.limits = createRedisClient({
        ...base,
        role: 'limits',
        whileDown: 'limited calls fail closed (503, -32044) until it is back',
      });
      redisClients.filters = createRedisClient({
        ...base,
        role: 'filters',
        whileDown: 'filter calls fail (503, -32603) until it is back',
      });
      redisClients.accounts = createRedisClient({
        ...base,
        role: 'accounts',
        whileDown: 'log-in and sign-up throttles count per replica until it is back',
      });
    }
    // The response cache's shared tier may have a Redis of its own (cache.redis.url).
    const cacheRedisUrl = config.cache?.redis?.enabled ? (config.cache.redis.url ?? config.redisUrl) : undefined;
    if (cacheRedisUrl !== undefined) {
      redisClients.cache = createRedisClient({
        url: cacheRedisUrl,
        logger,
        ...config.redis,
        role: 'cache',
        whileDown: 'shared cache lookups count as misses until it is back',
      });
    }
    if (Object.keys(redisClients).length > 0) {
      // Bounded: a Redis that is down at start does not stop the service (calls fail closed, /readyz says 503).
      const wait = 2 * (config.redis?.connectTimeoutMs ?? REDIS_CLIENT_DEFAULTS.connectTimeoutMs);
      const up = await Promise.all(Object.values(redisClients).map((c) => waitReady(c, wait)));
      if (up.includes(false))
        logger.warn(
          { waitedMs: wait },
          'Redis not reachable at start; serving anyway (limited calls fail closed until it is)',
        );
    }
    limiter = createLimiter({ ...config.limits, redisClient: redisClients.limits, redisPrefix: config.redisPrefix });
    // Filters (eth_newFilter & co.) live in the gateway: in Redis when configured, so every replica serves every filter.
    filterStore = createFilterStore({
      redisClient: redisClients.filters,
      redisPrefix: config.redisPrefix,
      idleMs: config.filters?.idleTimeoutMs ?? 300_000,
    });
    if (config.metering) {
      meter = new Meter({
        db: store.db,
        // eth_subscription: the notifications delivered over WebSocket.
        methods: [...Object.keys(methods), 'eth_subscription'],
        networks: Object.keys(config.networks),
        metrics,
        logger,
        flushIntervalMs: config.durability?.usageFlushIntervalMs,
        ...ext.meter,
      }).start();
      // Retention: older minutes roll up into hours, hours into days (safe to run on every replica at once).
      const db = store.db;
      const retain = () =>
        void downsample(db, config.usageRetention).catch((e: unknown) =>
          logger.warn({ err: e }, 'usage downsampling failed; retried later'),
        );
      retain();
      retention = setInterval(retain, 15 * 60_000);
      retention.unref();
    }

    // Embedded chains: one compile shared by all, anvils started and seeded in parallel.
    const embedded = Object.entries(config.networks).filter(([, n]) => n.upstreams.length === 0);
    if (embedded.length) {
      const artifact = compileToken(config.dataDir);
      const started = await Promise.allSettled(
        embedded.map(([name, n]) =>
          startEmbeddedChain({
            network: name,
            chainId: n.chainId,
            blockTime: n.blockTime,
            dataDir: config.dataDir,
            artifact,
            activityIntervalMs: n.activityIntervalMs,
            onActivityError: (err) =>
              logger.warn({ network: name, err: err.message }, 'embedded chain activity round failed'),
          }),
        ),
      );
      for (const r of started) if (r.status === 'fulfilled') chains.push(r.value);
      const failed = started.find((r) => r.status === 'rejected');
      if (failed) throw (failed as PromiseRejectedResult).reason;
    }
    const networks: Record<string, NetworkInfo> = {};
    const urlsByNetwork: Record<string, string[]> = {};
    for (const [name, n] of Object.entries(config.networks)) {
      const chain = chains.find((c) => c.network === name);
      const upstreams = chain ? [chain.url] : n.upstreams;
      urlsByNetwork[name] = upstreams;
      networks[name] = chain
        ? { name, embedded: true, upstreams, chainId: chain.chainId, pid: chain.pid }
        : { name, embedded: false, upstreams };
    }
    for (const [name, pool] of createUpstreams(
      urlsByNetwork,
      config.upstream,
      (network, url, healthy, reason, rule) => {
        if (healthy)
          logger.info({ network, upstream: redact(url), circuit: 'closed' }, 'upstream healthy again (circuit closed)');
        else
          logger.warn(
            { network, upstream: redact(url), circuit: 'open', rule, reason },
            'upstream marked down (circuit open)',
          );
      },
      metrics,
      meaningTable(methods),
    ))
      pools.set(name, pool);
    // One head per network (src/gateway/heads): the cache, the eth_getLogs range cap and the feeds all follow it.
    heads = createHeads(pools, config, logger);
    // The response cache in front of each network's pool (config `cache`).
    caches = createResponseCaches({
      heads,
      config,
      upstreams: pools,
      meanings: meaningTable(methods),
      metrics,
      logger,
      redisClient: redisClients.cache,
    });

    const staticKeys = new ConfigKeyStore(config.keys);
    let key = '';
    const devKey = devKeyEnabled(config);
    if (devKey) {
      key = generateDevKey();
      staticKeys.addDevelopmentKey(key);
    } else if (config.keys.length > 0) {
      const first = config.keys[0];
      key = typeof first === 'string' ? first : first.key;
    }
    const keys = new KeyStores([staticKeys, access]);
    staticKeyCount = staticKeys.size;
    const callMeter = meter === undefined ? undefined : new CallMeter(meter, metrics);
    const lim = limiter;
    // Every refused call would otherwise log a line while Redis is down: one line, then one per LOG_EVERY_MS with a count.
    const limiterLog = new LogThrottle(LOG_EVERY_MS);
    const onLimiterError = (err: unknown) => {
      const skipped = limiterLog.take();
      if (skipped !== undefined)
        logger.error(
          { err: { message: (err as Error)?.message }, calls: skipped + 1 },
          'limiter failed; limited calls refused (503, -32044)',
        );
    };

    const ws = config.websocket;
    const subs = (subscriptions = new Subscriptions({
      upstreams: pools,
      heads,
      push: (n) => (pools.get(n) as HeadPool | undefined)?.pushTransports?.() ?? [],
      intervalMs: (n) => headPollMs(config, n),
      maxPerConnection: ws.maxSubscriptionsPerConnection,
      maxQueued: ws.maxQueuedNotifications,
      maxQueuedBytes: ws.maxQueuedBytes,
      limiter: lim,
      logger,
      onNotified: (ctx, n) => {
        metrics.notificationsDelivered(ctx.network, n);
        if (callMeter === undefined) return;
        const c = { ...ctx, startedAt: performance.now() };
        for (let i = 0; i < n; i++) callMeter.onCall('eth_subscription', 'ok', undefined, c);
      },
    }));
    const engine = createEngine<typeof methods, AccessContext>({
      methods,
      validators,
      handlers: createNodeHandlers({
        pools,
        contractJson,
        filters: { store: filterStore, maxPerKey: config.filters?.maxPerKey ?? 100 },
        subscriptions: subs,
        getLogsMaxBlockRange: config.upstream.getLogsMaxBlockRange,
        caches: caches.networks,
        heads: caches.heads,
      }),
      options: { maxBatchSize: config.maxBatchSize, strictResults: config.strictResults },
      onError: (err, info) =>
        logger.error({ err, method: info.method, rid: info.ctx.requestId }, 'unexpected error in a call'),
      admit: createAdmission(lim, addressParamsTable(methods), onLimiterError),
      onCall: callMeter?.onCall,
    });
    const acct = accountRoute({
      config,
      store,
      secret,
      access,
      limiter: lim,
      logger,
      redisClient: redisClients.accounts,
      embedded: Object.fromEntries(Object.entries(networks).map(([n, i]) => [n, i.embedded])),
    });
    accountThrottle = acct.throttle;
    const router = buildRoutes({
      engine,
      keys,
      networks: Object.keys(config.networks),
      hostMap: config.hostMap,
      maxBodyBytes: config.maxBodyBytes,
      docsDir: config.docsDir,
      logger,
      trustProxy: trustProxyHops(config),
      limitHeaders: (p) => peekLimitHeaders(lim, p, onLimiterError),
      meter: callMeter,
      slowRequestMs: config.slowRequestMs,
      metrics: metricsRoute({ config: config.metrics, metrics, logger }),
      // The dashboard (dist/web): GET / for browsers, /index.html and /assets/*.
      web: createWebRoute({ logger }),
      // Extension routes first, then the account API at POST /api.
      mounts: [...(ext.routes?.({ config, store, secret, access, limiter: lim, logger }) ?? []), (r) => acct.mount(r)],
      ready: readiness({ db: store.db as Kysely<never>, dialect: store.dialect, redis: redisClients }),
      health: () => {
        const detail: Record<string, unknown> = {};
        let served = 0;
        for (const [name, pool] of pools) {
          const st = pool.status();
          const healthy = st.filter((s) => s.healthy).length;
          if (healthy > 0) served++;
          detail[name] = {
            healthy,
            total: st.length,
            embedded: networks[name].embedded,
            upstreams: st.map((u) => ({
              url: redact(u.url),
              healthy: u.healthy,
              circuit: u.circuit,
              ...(u.lastError === undefined ? {} : { lastError: u.lastError }),
            })),
          };
        }
        return { ok: served > 0 || pools.size === 0, detail: { networks: detail } };
      },
    });
    server = createHttpServer(router, (err, rid) => logger.error({ err, rid }, 'request failed'));
    sockets = attachNodeWebSockets(server, {
      engine,
      keys,
      networks: Object.keys(config.networks),
      hostMap: config.hostMap,
      logger,
      trustProxy: trustProxyHops(config),
      meter: callMeter,
      maxPayloadBytes: ws.maxPayloadBytes,
      maxInFlight: ws.maxInFlight,
      maxBufferedBytes: ws.maxBufferedBytes,
      pingIntervalMs: ws.pingIntervalMs,
      maxConnectionsPerKey: ws.maxConnectionsPerKey,
      endSubscriptions: (conn, err) => subs.end(conn, err),
      slots:
        redisClients.limits === undefined
          ? undefined
          : new RedisConnectionSlots({ client: redisClients.limits, prefix: config.redisPrefix ?? 'rpcgate', logger }),
    });
    const srv = server;
    await new Promise<void>((resolveListen, reject) => {
      srv.once('error', reject);
      srv.listen(config.port, config.host, () => {
        srv.off('error', reject);
        resolveListen();
      });
    });
    srv.on('error', (e) => logger.error({ err: e }, 'server error'));
    const addr = srv.address() as AddressInfo;
    const host = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address;
    const url = `http://${host === '0.0.0.0' ? '127.0.0.1' : host === '[::]' ? '[::1]' : host}:${addr.port}`;
    const urls: RunningService['urls'] = {};
    for (const name of Object.keys(config.networks))
      urls[name] = { A: `${url}/${name}/v2/${key}`, B: `${url}/${name}/${key}` };
    const seeded: Record<string, SeededChain> = {};
    for (const c of chains) seeded[c.network] = c.seeded;
    return {
      url,
      urls,
      docsUrl: `${url}/docs/`,
      key,
      devKey,
      networks,
      seeded,
      pools,
      keys,
      access,
      store,
      secret,
      limiter: lim,
      meter,
      metrics,
      caches: caches.networks,
      config,
      logger,
      stop,
      account: acct,
      websockets: {
        connections: () => sockets?.size ?? 0,
        perNetwork: () => sockets?.perNetwork() ?? {},
        subscriptions: () => subscriptions?.size ?? 0,
      },
    };
  } catch (e) {
    await stop().catch(() => undefined);
    throw e;
  }
}

/** Where log lines go (stderr): JSON for collectors, or pino-pretty's lines for people (see config `logFormat`). */
function logDestination(format: Config['logFormat']): DestinationStream {
  const tty = process.stderr.isTTY === true;
  if (format === 'json' || (format === 'auto' && !tty)) return pino.destination({ fd: 2, sync: false });
  return pretty({
    destination: 2,
    colorize: tty,
    translateTime: 'SYS:HH:MM:ss.l',
    ignore: 'pid,hostname',
    singleLine: true,
  });
}

/** An upstream URL for logs: no credentials, no path (provider keys often live there). */
function redact(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return '(invalid url)';
  }
}
