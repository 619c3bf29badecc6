// Limits: per-second rate and daily/monthly quotas, counted in-process (default) or in Redis (REDIS_URL)
// so replicas share counters exactly. See plans.ts for the defaults.
import { MemoryLimiter } from './memory.js';
import { RedisLimiter, type RedisLimiterOptions } from './redis.js';
import { PlanCatalog, type LimitsConfig } from './plans.js';
import type { Config } from '../config/config.js';
import type { Limiter } from './types.js';

export {
  appSubject,
  userSubject,
  type LimitSubject,
  type LimitDecision,
  type LimitPeriod,
  type Limiter,
} from './types.js';
export {
  DEFAULT_APP_PLAN,
  DEFAULT_B_DAILY_PER_USER,
  resolvePlans,
  PlanCatalog,
  DEFAULT_MAX_KEYS,
  DEFAULT_MAX_APPS,
  type AccountLimits,
  type PlanCatalogConfig,
  type PlanLimits,
  type AppPlan,
  type NetworkKeyPlan,
  type LimitsConfig,
  type ResolvedPlans,
} from './plans.js';
export { MemoryLimiter } from './memory.js';
export { RedisLimiter, CONSUME_LUA, CONSUME_BATCH_LUA, EXPIRY_GRACE_MS, type RedisLimiterOptions } from './redis.js';
export { limitHeaders, limitError } from './headers.js';
export { UtcCalendar } from './calendar.js';

export interface CreateLimiterOptions extends LimitsConfig {
  /** Redis URL (the config's REDIS_URL): counters in Redis; without it, in-process. */
  redisUrl?: string;
  /** Redis key prefix (default `rpcgate:limits`). */
  redisPrefix?: string;
  /** A client from src/gateway/redis to use instead of `redisUrl` (the service passes its own). */
  redisClient?: RedisLimiterOptions['client'];
}

export function createLimiter(opts: CreateLimiterOptions = {}): Limiter {
  const { redisUrl, redisPrefix, redisClient, ...plans } = opts;
  if (redisUrl || redisClient)
    return new RedisLimiter({ ...plans, url: redisUrl, client: redisClient, prefix: redisPrefix });
  return new MemoryLimiter(plans);
}

/** The deployment's plan catalogue from its config: `limits`, `plans`, `accounts.defaultPlan`, `accounts.maxAppsPerUser`. */
export function accountPlans(config: Pick<Config, 'limits' | 'plans' | 'accounts'>): PlanCatalog {
  return new PlanCatalog({
    limits: config.limits,
    plans: config.plans,
    defaultPlan: config.accounts?.defaultPlan,
    maxApps: config.accounts?.maxAppsPerUser,
  });
}
