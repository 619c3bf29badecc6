// The service's subsystems, each built by one function that returns `{ value, close }` (issue 22). startService lists
// them in the order they depend on each other; `Subsystems` remembers each close, and stopping runs them in the reverse
// order — whatever was built last (the server, its sockets) closes first, the store last — so no stop sequence is
// written by hand, and a start that fails half way closes exactly what it had built.
import type { Server } from 'node:http';
import type { Logger } from 'pino';
import { methods } from '../../../generated/node/methods.js';
import { compileToken, startEmbeddedChain, type EmbeddedChain } from '../chain/index.js';
import type { Config } from '../config/config.js';
import {
  closeRedisClient,
  createRedisClient,
  REDIS_CLIENT_DEFAULTS,
  waitReady,
  type ServiceRedis,
} from '../redis/index.js';
import { QuotaAlerts, type QuotaAlertsOptions } from '../alerts/quota-alerts.js';
import type { Limiter } from '../limits/index.js';
import { Meter, type MeterOptions, type Metrics } from '../metering/index.js';
import { RequestLog, requestLogRetentionMs } from '../metering/request-log.js';
import {
  downsample,
  encryptPlainWebhookSecrets,
  openStore,
  sweepExpiredAccountTokens,
  sweepExpiredSessions,
  type Store,
} from '../store/index.js';
import { unitsTable } from '../method-meaning.js';

/** A built subsystem: what the rest of the service uses, and how to release it on stop (absent: nothing to release). */
export interface Built<T> {
  value: T;
  close?: () => unknown;
}

/** The subsystems built so far, closed in reverse order of building. */
export class Subsystems {
  private readonly closers: { name: string; close: () => unknown }[] = [];
  constructor(private readonly logger: Logger) {}

  /** Records a built subsystem (its close runs on stop) and gives back its value. */
  add<T>(name: string, built: Built<T>): T {
    if (built.close) this.closers.push({ name, close: built.close });
    return built.value;
  }

  /** Closes everything, last built first; a close that fails is logged and the others still run. */
  async closeAll(): Promise<void> {
    for (const { name, close } of this.closers.splice(0).reverse()) {
      try {
        await close();
      } catch (err) {
        this.logger.warn({ err, subsystem: name }, `stop: closing the ${name} failed`);
      }
    }
  }
}

/** The store (SQLite in dataDir, or PostgreSQL). */
export async function storeSubsystem(config: Config, logger: Logger): Promise<Built<Store>> {
  const store = await openStore({
    dataDir: config.dataDir,
    databaseUrl: config.databaseUrl,
    connectTimeoutMs: config.durability?.storeConnectTimeoutMs,
    statementTimeoutMs: config.durability?.storeStatementTimeoutMs,
    onError: (err) =>
      logger.warn({ err }, 'store: an idle database connection failed; the pool reconnects on next use'),
  });
  return { value: store, close: () => store.close() };
}

export type RedisClients = {
  limits?: ServiceRedis;
  filters?: ServiceRedis;
  accounts?: ServiceRedis;
  cache?: ServiceRedis;
};

/** Redis (when configured): one client per use, all from src/gateway/redis (fast failure, JSON logs, reconnects). */
export async function redisSubsystem(config: Config, logger: Logger): Promise<Built<RedisClients>> {
  const clients: RedisClients = {};
  if (config.redisUrl) {
    const base = { url: config.redisUrl, logger, ...config.redis };
    clients.limits = createRedisClient({
      ...base,
      role: 'limits',
      whileDown: 'limited calls fail closed (503, -32044) until it is back',
    });
    clients.filters = createRedisClient({
      ...base,
      role: 'filters',
      whileDown: 'filter calls fail (503, -32603) until it is back',
    });
    clients.accounts = createRedisClient({
      ...base,
      role: 'accounts',
      whileDown: 'log-in and sign-up throttles count per replica until it is back',
    });
  }
  // The response cache's shared tier may have a Redis of its own (cache.redis.url).
  const cacheRedisUrl = config.cache?.redis?.enabled ? (config.cache.redis.url ?? config.redisUrl) : undefined;
  if (cacheRedisUrl !== undefined) {
    clients.cache = createRedisClient({
      url: cacheRedisUrl,
      logger,
      ...config.redis,
      role: 'cache',
      whileDown: 'shared cache lookups count as misses until it is back',
    });
  }
  const close = () => Promise.all(Object.values(clients).map((c) => closeRedisClient(c)));
  if (Object.keys(clients).length > 0) {
    // Bounded: a Redis that is down at start does not stop the service (calls fail closed, /readyz says 503).
    const wait = 2 * (config.redis?.connectTimeoutMs ?? REDIS_CLIENT_DEFAULTS.connectTimeoutMs);
    const up = await Promise.all(Object.values(clients).map((c) => waitReady(c, wait)));
    if (up.includes(false))
      logger.warn(
        { waitedMs: wait },
        'Redis not reachable at start; serving anyway (limited calls fail closed until it is)',
      );
  }
  return { value: clients, close };
}

/** Usage metering and its retention (older minutes roll up into hours, hours into days); undefined with metering off. */
export function meterSubsystem(
  config: Config,
  store: Store,
  metrics: Metrics,
  logger: Logger,
  opts: Pick<MeterOptions, 'now' | 'flushIntervalMs' | 'maxCells' | 'onFlushed'> = {},
): Built<Meter | undefined> {
  if (!config.metering) return { value: undefined };
  const meter = new Meter({
    db: store.db,
    // eth_subscription: the notifications delivered over WebSocket.
    methods: [...Object.keys(methods), 'eth_subscription'],
    // A notification weighs what eth_subscribe does (as the limits count it).
    units: notificationUnits(unitsTable(methods)),
    networks: Object.keys(config.networks),
    metrics,
    logger,
    flushIntervalMs: config.durability?.usageFlushIntervalMs,
    ...opts,
  }).start();
  // Safe to run on every replica at once.
  const retain = () =>
    void downsample(store.db, config.usageRetention).catch((e: unknown) =>
      logger.warn({ err: e }, 'usage downsampling failed; retried later'),
    );
  retain();
  const retention = setInterval(retain, 15 * 60_000);
  retention.unref();
  return {
    value: meter,
    // Final flush (the current minute included) after the last answered call, before the store closes.
    close: async () => {
      clearInterval(retention);
      await meter.stop().then(
        (r) => logger.info({ rows: r.rows }, 'usage flushed'),
        (e: unknown) =>
          logger.error(
            { err: e, pending: meter.stats().pendingCells },
            'final usage flush failed; unflushed usage is lost',
          ),
      );
    },
  };
}

/** The request log (apps_logs / keys_logs): queued per call, written in batches, bounded by count and age. Off with
 *  metering off or `requestLog.enabled: false`; stopped after the last call (its final flush), before the store. */
export function requestLogSubsystem(
  config: Config,
  store: Store,
  secret: Uint8Array,
  metrics: Metrics,
  logger: Logger,
  metering: boolean,
): Built<RequestLog | undefined> {
  const rl = config.requestLog;
  if (!metering || rl?.enabled === false) return { value: undefined };
  const log = new RequestLog({
    db: store.db,
    secret,
    metrics,
    logger,
    flushIntervalMs: rl?.flushIntervalMs,
    maxQueued: rl?.maxQueued,
    maxRows: rl?.maxRows,
    retentionMs: requestLogRetentionMs(rl?.retentionDays, store.dialect === 'postgres'),
    maxBodyBytes: rl?.maxBodyBytes,
    redact: { networks: Object.keys(config.networks) },
  }).start();
  return { value: log, close: () => log.stop() };
}

/** Expired sessions and mailed tokens (password reset, email verification) are deleted every 15 minutes (a lookup
 *  already refuses them; this keeps the tables small). Safe on every replica at once. */
export function accountSweepSubsystem(store: Store, logger: Logger): Built<undefined> {
  const sweep = () =>
    void Promise.all([sweepExpiredSessions(store.db), sweepExpiredAccountTokens(store.db)]).catch((e: unknown) =>
      logger.warn({ err: e }, 'sweeping expired sessions and tokens failed; retried later'),
    );
  const timer = setInterval(sweep, 15 * 60_000);
  timer.unref();
  return { value: undefined, close: async () => clearInterval(timer) };
}

/** Quota alerts (banner rows, signed webhooks), fed by the meter's flushes. Signing secrets still stored in plain
 *  text (written before they were encrypted) are encrypted now, in the background. */
export function quotaAlertsSubsystem(
  store: Store,
  limiter: Limiter,
  logger: Logger,
  opts: Pick<
    QuotaAlertsOptions,
    'secret' | 'allowPrivateWebhooks' | 'retryBaseMs' | 'maxAttempts' | 'timeoutMs' | 'plans'
  >,
): Built<QuotaAlerts> {
  const alerts = new QuotaAlerts({ db: store.db, limiter, logger, ...opts });
  void encryptPlainWebhookSecrets(store.db, opts.secret).then(
    (n) => n > 0 && logger.info({ webhooks: n }, 'alert webhook signing secrets encrypted at rest'),
    (err: unknown) => logger.warn({ err }, 'encrypting stored webhook signing secrets failed; retried at next start'),
  );
  return { value: alerts, close: () => alerts.stop() };
}

/** Embedded chains for the networks without upstreams: one compile shared by all, anvils started in parallel. */
export async function chainsSubsystem(config: Config, logger: Logger): Promise<Built<EmbeddedChain[]>> {
  const chains: EmbeddedChain[] = [];
  const close = () => Promise.all(chains.map((c) => c.stop()));
  const embedded = Object.entries(config.networks).filter(([, n]) => n.upstreams.length === 0);
  if (embedded.length === 0) return { value: chains };
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
  if (failed) {
    await close(); // the ones that did start
    throw (failed as PromiseRejectedResult).reason;
  }
  return { value: chains, close };
}

/** In-flight requests get this long to finish on stop before their connections are cut. */
export const DRAIN_MS = 5000;

/**
 * Stops accepting and drains: idle keep-alive connections are closed as they become idle, in-flight requests finish
 * (bounded: after DRAIN_MS the remaining connections are cut).
 */
export function drainServer(server: Server, logger: Logger): Promise<void> {
  return new Promise<void>((r) => {
    // No new connections; the callback runs once every connection is closed.
    server.close(() => {
      clearInterval(idle);
      clearTimeout(cut);
      r();
    });
    // Keep-alive connections are closed as soon as they are idle (each one's in-flight request answered).
    server.closeIdleConnections();
    const idle = setInterval(() => server.closeIdleConnections(), 20);
    const cut = setTimeout(() => {
      logger.warn(
        { drainMs: DRAIN_MS },
        'stop: requests still in flight after the drain time; closing their connections',
      );
      server.closeAllConnections();
    }, DRAIN_MS);
  });
}

/** The contract's units with eth_subscription (a delivered notification) weighing what eth_subscribe does. */
function notificationUnits(units: ReadonlyMap<string, number>): ReadonlyMap<string, number> {
  return new Map([...units, ['eth_subscription', units.get('eth_subscribe') ?? 0]]);
}
