// Redis clients of the service: one factory (timeouts, no offline queue, bounded reconnect, JSON error logs).
export {
  createRedisClient,
  untilFirstConnect,
  waitReady,
  redisReady,
  closeRedisClient,
  REDIS_CLIENT_DEFAULTS,
  LOG_EVERY_MS,
  type RedisClientConfig,
  type CreateRedisClientOptions,
  type ServiceRedis,
} from './client.js';
