// Wiring: config → store + server secret → access index (keys) + limiter → embedded chains (for networks without
// upstreams) → upstream pools → engine (with the admission hook and the call meter) → route table → HTTP server.
// `startService` is what `rpcgate start` runs and what tests call (port 0 = a free port).
//
// Metering (src/gateway/metering, src/gateway/server/call-observer.ts): one Metrics registry and one Meter per process; the engine's call
// observer and the node API route's refusals record every node API call; the Meter flushes every 5 s (durability.usageFlushIntervalMs), the current minute as a partial row.
// Logs: pino JSON lines on stderr with logRedaction() (keys, JWTs, cookies, upstream credentials never written).
//
// Stop (`stop()`, what SIGINT/SIGTERM run in `rpcgate start`): the subsystems close in the reverse order of their
// building (src/gateway/server/subsystems.ts): WebSockets (1001) → HTTP server (stop accepting, drain in-flight requests,
// cut after DRAIN_MS) → subscriptions → response cache → upstream pools → embedded chains → meter (final flush, the
// current minute included) → filter store, limiter → Redis → key index → store. Every call answered before the stop is
// in the store.
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
import type { EmbeddedChain, SeededChain } from '../chain/index.js';
import {
  chainNetworks,
  devKeyEnabled,
  loadConfig,
  trustProxyHops,
  type Config,
  type ConfigInput,
} from '../config/config.js';
import { accountPlans, createLimiter, type Limiter } from '../limits/index.js';
import { createFilterStore } from '../filters/index.js';
import { LogThrottle } from '@rpcgate/toolkit/log-throttle';
import { LOG_EVERY_MS } from '../redis/index.js';
import { createNodeHandlers } from '../node-api/handlers.js';
import { createResponseCaches, type ResponseCaches } from '../cache/index.js';
import { createHeads, headPollMs, type HeadPool } from '../heads/index.js';
import { addressParamsTable, meaningTable, unitsTable } from '../method-meaning.js';
import { type Meter, Metrics, logRedaction, type MeterOptions } from '../metering/index.js';
import type { RequestLog } from '../metering/request-log.js';
import type { QuotaAlerts, QuotaAlertsOptions } from '../alerts/quota-alerts.js';
import { createHttpServer } from '@rpcgate/toolkit/http';
import { createEngine } from '@rpcgate/toolkit/engine';
import { createUpstreams, splitUpstream, type UpstreamPool, type UpstreamSpec } from '../upstream/index.js';
import {
  accountSweepSubsystem,
  chainsSubsystem,
  drainServer,
  meterSubsystem,
  quotaAlertsSubsystem,
  redisSubsystem,
  requestLogSubsystem,
  storeSubsystem,
  Subsystems,
} from './subsystems.js';
import { loadOrCreateServerSecret } from '../secrets/index.js';
import type { Store } from '../store/index.js';
import { createAdmission, peekLimitHeaders } from './admission.js';
import { startTracing, tracing } from '../telemetry/index.js';
import { readiness } from './readiness.js';
import { packagePath } from '../paths.js';
import { accountRoute } from './account-route.js';
import type { AccountApi } from '../accounts/index.js';
import { CallMeter } from './call-observer.js';
import { metricsRoute } from './metrics-route.js';
import { buildRoutes, type Mount } from './routes.js';
import { createWebRoute } from './web-route.js';
import { Subscriptions } from '../subscriptions/index.js';
import { attachNodeWebSockets, type NodeWebSockets } from './ws-route.js';
import { RedisConnectionSlots } from '../limits/connections.js';

export interface NetworkInfo {
  name: string;
  /** true when served by an embedded anvil. */
  embedded: boolean;
  /** Upstream node URLs (the embedded anvil's URL when embedded; of an {http, ws} pair, its HTTP URL). */
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
  /** The request log's writer (undefined with `metering: false` or `requestLog.enabled: false`). */
  requestLog: RequestLog | undefined;
  /** Quota alerts (undefined with `metering: false`); `idle()` waits for checks and webhook deliveries. */
  alerts: QuotaAlerts | undefined;
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
  /** Quota alert webhook delivery options for tests (retry delays). */
  alerts?: Pick<QuotaAlertsOptions, 'retryBaseMs' | 'maxAttempts' | 'timeoutMs' | 'lookup'>;
}

/** The package's version (span resources). */
const SERVICE_VERSION = (JSON.parse(readFileSync(packagePath('package.json'), 'utf8')) as { version: string }).version;

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

  // Read lazily by /metrics (scrapes may come before every subsystem is up).
  const live: {
    access?: AccessIndex;
    sockets?: NodeWebSockets;
    subscriptions?: Subscriptions;
    caches?: ResponseCaches;
    accountThrottle?: { refusals(): Record<string, number> };
    backends?: () => Record<string, boolean>;
    staticKeyCount: number;
  } = { staticKeyCount: 0 };
  // One registry per service; active keys are read at scrape time from the key sources.
  const metrics = new Metrics({
    activeKeys: () => ({ account: live.access?.size ?? 0, static: live.staticKeyCount }),
    processMetrics: true,
    networks: Object.keys(config.networks),
    websocketConnections: () => live.sockets?.perNetwork() ?? {},
    subscriptionsActive: () => live.subscriptions?.byNetworkAndKind() ?? {},
    cacheBytes: () => live.caches?.bytes() ?? {},
    accountThrottled: () => live.accountThrottle?.refusals() ?? {},
    backendsUp: () => live.backends?.() ?? {},
  });

  // Each subsystem is added once built; stop closes them in reverse order (src/gateway/server/subsystems.ts).
  const built = new Subsystems(logger);
  let stopped: Promise<void> | undefined;
  const stop = (): Promise<void> => (stopped ??= built.closeAll().then(() => logger.flush()));

  try {
    // First built, last closed: spans of the stop itself are flushed (on only with OTEL_EXPORTER_OTLP_*ENDPOINT).
    const stopTracing = startTracing(SERVICE_VERSION);
    built.add('tracing', { value: undefined, close: stopTracing });
    if (tracing.tracer !== undefined) {
      logger.info('tracing: OpenTelemetry spans exported over OTLP/HTTP (JSON)');
      const protocol = process.env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL ?? process.env.OTEL_EXPORTER_OTLP_PROTOCOL;
      if (protocol !== undefined && protocol !== 'http/json')
        logger.warn({ protocol }, 'tracing: only OTLP http/json is built in; spans are sent as http/json');
    }
    const store = built.add('store', await storeSubsystem(config, logger));
    // The secret that keys the key hashes, the key index, the limiter.
    const secret = loadOrCreateServerSecret(config.dataDir, config.secret);
    // Named plans and the default plan (config `plans`, `accounts.defaultPlan`): resolved per account into the key
    // index's principals, and read by the account API.
    const plans = accountPlans(config);
    const access = new AccessIndex({ db: store.db, secret, chains: chainNetworks(config), plans, logger });
    await access.start();
    live.access = built.add('key index', { value: access, close: () => access.stop() });
    const redisClients = built.add('Redis clients', await redisSubsystem(config, logger));
    live.backends = () => {
      const up: Record<string, boolean> = { store: store.watch?.down !== true };
      for (const c of Object.values(redisClients))
        if (c !== undefined) up[`redis-${c.rpcgateRole}`] = c.status === 'ready';
      return up;
    };
    const lim = createLimiter({ ...config.limits, redisClient: redisClients.limits, redisPrefix: config.redisPrefix });
    built.add('limiter', { value: lim, close: () => lim.close() });
    // Filters (eth_newFilter & co.) live in the gateway: in Redis when configured, so every replica serves every filter.
    const filterStore = createFilterStore({
      redisClient: redisClients.filters,
      redisPrefix: config.redisPrefix,
      idleMs: config.filters?.idleTimeoutMs ?? 300_000,
    });
    built.add('filter store', { value: filterStore, close: () => filterStore.close() });
    // Quota alerts: checked after each meter flush (off the request path); closed after the meter's final flush.
    const alerts = config.metering
      ? built.add(
          'quota alerts',
          quotaAlertsSubsystem(store, lim, logger, {
            secret,
            allowPrivateWebhooks: config.alerts?.allowPrivateWebhooks ?? false,
            plans,
            ...ext.alerts,
          }),
        )
      : undefined;
    const meter = built.add(
      'meter',
      meterSubsystem(config, store, metrics, logger, {
        ...ext.meter,
        onFlushed: alerts === undefined ? undefined : (rows) => alerts.observe(rows),
      }),
    );
    const requestLog = built.add(
      'request log',
      requestLogSubsystem(config, store, secret, metrics, logger, meter !== undefined),
    );
    const chains = built.add('embedded chains', await chainsSubsystem(config, logger));

    const { networks, upstreams } = describeNetworks(config, chains);
    const meanings = meaningTable(methods);
    const pools = new Map<string, UpstreamPool>();
    built.add('upstream pools', { value: pools, close: () => Promise.all([...pools.values()].map((p) => p.close())) });
    for (const [name, pool] of createUpstreams(upstreams, config.upstream, circuitLog(logger), metrics, meanings))
      pools.set(name, pool);
    // One head per network (src/gateway/heads): the cache, the eth_getLogs range cap and the feeds all follow it.
    const heads = createHeads(pools, config, logger);
    built.add('network heads', {
      value: heads,
      close: async () => {
        for (const h of heads.values()) h.stop();
      },
    });
    // The response cache in front of each network's pool (config `cache`).
    const caches = createResponseCaches({
      heads,
      config,
      upstreams: pools,
      meanings,
      metrics,
      logger,
      redisClient: redisClients.cache,
    });
    live.caches = built.add('response cache', { value: caches, close: () => caches.close() });

    const { staticKeys, key, devKey } = staticKeySource(config);
    const keys = new KeyStores([staticKeys, access]);
    live.staticKeyCount = staticKeys.size;
    const callMeter = meter === undefined ? undefined : new CallMeter(meter, metrics, requestLog);
    const onLimiterError = limiterErrorLog(logger);

    const ws = config.websocket;
    const subs = new Subscriptions({
      upstreams: pools,
      heads,
      push: (n) => (pools.get(n) as HeadPool | undefined)?.pushTransports?.() ?? [],
      intervalMs: (n) => headPollMs(config, n),
      maxPerConnection: ws.maxSubscriptionsPerConnection,
      maxQueued: ws.maxQueuedNotifications,
      maxQueuedBytes: ws.maxQueuedBytes,
      limiter: lim,
      notificationUnits: meanings.get('eth_subscribe')?.units,
      logger,
      onNotified: (ctx, n) => {
        metrics.notificationsDelivered(ctx.network, n);
        if (callMeter === undefined) return;
        const c = { ...ctx, startedAt: performance.now() };
        for (let i = 0; i < n; i++) callMeter.onCall('eth_subscription', 'ok', undefined, c);
      },
    });
    live.subscriptions = built.add('subscriptions', { value: subs, close: () => subs.stop() });
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
      admit: createAdmission(lim, addressParamsTable(meanings), onLimiterError, unitsTable(methods)),
      onCall: callMeter?.onCall,
    });
    const acct = accountRoute({
      config,
      plans,
      store,
      secret,
      access,
      limiter: lim,
      logger,
      redisClient: redisClients.accounts,
      embedded: Object.fromEntries(Object.entries(networks).map(([n, i]) => [n, i.embedded])),
    });
    live.accountThrottle = acct.throttle;
    built.add('account sweep', accountSweepSubsystem(store, logger));
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
      health: () => fleetHealth(pools, networks),
    });
    const srv = createHttpServer(router, (err, rid) => logger.error({ err, rid }, 'request failed'));
    built.add('HTTP server', { value: srv, close: () => drainServer(srv, logger) });
    // Closed before the server (1001 going away): upgraded sockets would otherwise hold server.close() until the cut.
    const sockets = attachNodeWebSockets(srv, {
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
    live.sockets = built.add('WebSockets', { value: sockets, close: () => sockets.close() });
    const url = await listen(srv, config, logger);
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
      requestLog,
      alerts,
      metrics,
      caches: caches.networks,
      config,
      logger,
      stop,
      account: acct,
      websockets: {
        connections: () => sockets.size,
        perNetwork: () => sockets.perNetwork(),
        subscriptions: () => subs.size,
      },
    };
  } catch (e) {
    await stop().catch(() => undefined);
    throw e;
  }
}

/** Per network: what `RunningService.networks` tells, and the upstreams its pool is made of (the embedded chain's
 *  URL where one serves it). */
function describeNetworks(
  config: Config,
  chains: readonly EmbeddedChain[],
): { networks: Record<string, NetworkInfo>; upstreams: Record<string, UpstreamSpec[]> } {
  const networks: Record<string, NetworkInfo> = {};
  const upstreams: Record<string, UpstreamSpec[]> = {};
  for (const [name, n] of Object.entries(config.networks)) {
    const chain = chains.find((c) => c.network === name);
    upstreams[name] = chain ? [chain.url] : n.upstreams;
    const urls = upstreams[name].map((u) => {
      const { spec } = splitUpstream(u);
      return typeof spec === 'string' ? spec : spec.http;
    });
    networks[name] = chain
      ? { name, embedded: true, upstreams: urls, chainId: chain.chainId, pid: chain.pid }
      : { name, embedded: false, upstreams: urls };
  }
  return { networks, upstreams };
}

/** An upstream's circuit opening or closing, as one log line. */
function circuitLog(logger: Logger): Parameters<typeof createUpstreams>[2] {
  return (network, url, healthy, reason, rule) => {
    if (healthy) logger.info({ network, upstream: url, circuit: 'closed' }, 'upstream healthy again (circuit closed)');
    else logger.warn({ network, upstream: url, circuit: 'open', rule, reason }, 'upstream marked down (circuit open)');
  };
}

/** The config's static keys, plus the development key in dev mode; `key` is the one the service shows (dev, else the
 *  first static key, else ''). */
function staticKeySource(config: Config): { staticKeys: ConfigKeyStore; key: string; devKey: boolean } {
  const staticKeys = new ConfigKeyStore(config.keys);
  const devKey = devKeyEnabled(config);
  let key = '';
  if (devKey) {
    key = generateDevKey();
    staticKeys.addDevelopmentKey(key);
  } else if (config.keys.length > 0) {
    const first = config.keys[0];
    key = typeof first === 'string' ? first : first.key;
  }
  return { staticKeys, key, devKey };
}

/** A limiter failure refuses the call (503, -32044). Every refused call would otherwise log a line while Redis is
 *  down: one line, then one per LOG_EVERY_MS with a count. */
function limiterErrorLog(logger: Logger): (err: unknown) => void {
  const throttle = new LogThrottle(LOG_EVERY_MS);
  return (err) => {
    const skipped = throttle.take();
    if (skipped !== undefined)
      logger.error(
        { err: { message: (err as Error)?.message }, calls: skipped + 1 },
        'limiter failed; limited calls refused (503, -32044)',
      );
  };
}

/** GET /health: per network, its upstreams' state; ok while every network with upstreams has a healthy one to serve. */
function fleetHealth(
  pools: ReadonlyMap<string, UpstreamPool>,
  networks: Record<string, NetworkInfo>,
): { ok: boolean; detail: Record<string, unknown> } {
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
        url: u.url, // redacted by the pool (scheme://host:port per URL)
        healthy: u.healthy,
        circuit: u.circuit,
        ...(u.lastError === undefined ? {} : { lastError: u.lastError }),
        ...(u.lag === undefined ? {} : { head: u.head, lag: u.lag }),
      })),
    };
  }
  return { ok: served > 0 || pools.size === 0, detail: { networks: detail } };
}

/** Listens on config.host:port; the base URL (a wildcard address shown as loopback, so it can be called). */
async function listen(srv: Server, config: Config, logger: Logger): Promise<string> {
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
  return `http://${host === '0.0.0.0' ? '127.0.0.1' : host === '[::]' ? '[::1]' : host}:${addr.port}`;
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
