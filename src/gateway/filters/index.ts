// Filters over HTTP, kept by the gateway (see ./filters.ts for the semantics, ./store.ts for the stores).
import { MemoryFilterStore } from './memory.js';
import { RedisFilterStore, type RedisFilterStoreOptions } from './redis.js';
import type { FilterStore } from './store.js';

export {
  createFilterHandlers,
  filterNotFound,
  tooManyFilters,
  newFilterId,
  FILTER_METHODS,
  type FilterMethod,
  type FilterOptions,
} from './filters.js';
export { MemoryFilterStore } from './memory.js';
export { RedisFilterStore } from './redis.js';
export type { FilterStore, FilterState, FilterKind, LogCriteria, LogObject, Versioned, CreateResult } from './store.js';

export interface CreateFilterStoreOptions {
  /** Redis URL: filters shared by replicas; absent = in-process. */
  redisUrl?: string;
  /** Redis key prefix; the filters' keys are `<prefix>:filter:…`. */
  redisPrefix?: string;
  /** A client from src/gateway/redis to use instead of `redisUrl` (the service passes its own). */
  redisClient?: RedisFilterStoreOptions['client'];
  idleMs: number;
}

export function createFilterStore(opts: CreateFilterStoreOptions): FilterStore {
  if (opts.redisUrl || opts.redisClient)
    return new RedisFilterStore({
      url: opts.redisUrl,
      client: opts.redisClient,
      prefix: opts.redisPrefix,
      idleMs: opts.idleMs,
    });
  return new MemoryFilterStore(opts.idleMs);
}
