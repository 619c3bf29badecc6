// The shared tier of the response cache: final, per-height and head answers in Redis, so replicas serve each other's
// answers.
// A Redis failure is a miss, never a failed call: commands time out fast, nothing queues while disconnected
// (enableOfflineQueue off): the client comes from src/gateway/redis, which also logs its outages; `onError` hears the
// failed commands.
// Keys: `<prefix>:<network>:f:<method+params>` (final; TTL `finalTtlSeconds`, 0 = none) and
// `<prefix>:<network>:h:<head number>:<head hash>:<method+params>` (head; TTL `headTtlMs`) and
// `<prefix>:<network>:b:<height>:<block hash>:<method+params>` (an unfinalized block's answers, TTL `finalTtlSeconds`:
// the block hash in the key means a reorg at that height is a new key — a replica reads only answers for the block it
// knows at that height, and nothing has to be deleted). method+params longer than 200 characters (eth_call data…) are
// replaced by their SHA-256.
import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';

export interface RedisTierOptions {
  /** The service's client for the cache (src/gateway/redis createRedisClient; the service closes it). */
  client: Redis;
  prefix: string;
  finalTtlSeconds: number;
  headTtlMs: number;
  onError?: (err: unknown) => void;
}

export class RedisTier {
  readonly client: Redis;
  private readonly onError: (err: unknown) => void;

  constructor(private readonly o: RedisTierOptions) {
    this.onError = o.onError ?? (() => undefined);
    this.client = o.client;
  }

  private static digest(key: string): string {
    return key.length <= 200 ? key : createHash('sha256').update(key).digest('base64url');
  }

  finalKey(network: string, key: string): string {
    return `${this.o.prefix}:${network}:f:${RedisTier.digest(key)}`;
  }

  blockKey(network: string, height: number, blockHash: string, key: string): string {
    return `${this.o.prefix}:${network}:b:${height}:${blockHash}:${RedisTier.digest(key)}`;
  }

  headKey(network: string, head: number, headHash: string, key: string): string {
    return `${this.o.prefix}:${network}:h:${head}:${headHash}:${RedisTier.digest(key)}`;
  }

  /** The stored answer, or null (absent, or Redis failing). */
  async get(key: string): Promise<string | null> {
    if (this.client.status !== 'ready') return null;
    try {
      return await this.client.get(key);
    } catch (e) {
      this.onError(e);
      return null;
    }
  }

  setFinal(key: string, json: string): void {
    if (this.client.status !== 'ready') return;
    const p =
      this.o.finalTtlSeconds > 0
        ? this.client.set(key, json, 'EX', this.o.finalTtlSeconds)
        : this.client.set(key, json);
    p.catch((e: unknown) => this.onError(e));
  }

  setHead(key: string, json: string): void {
    if (this.client.status !== 'ready') return;
    this.client.set(key, json, 'PX', this.o.headTtlMs).catch((e: unknown) => this.onError(e));
  }
}
