// Redis filter store: replicas share filters. Per filter one hash `<prefix>:filter:f:<id>` (s: the state as JSON,
// v: its version, o: its owner) whose key TTL is the idle timeout, restarted by every poll; per owner a sorted set
// `<prefix>:filter:o:<owner>` of its filter ids scored by expiry time, the count the cap checks (entries past their
// expiry are dropped first). Every write is one Lua script (Redis runs it alone): the cap and the compare-and-set
// of a poll hold across any number of replicas. Expiry scores are on Redis's clock (TIME), the one clock the filter
// keys' own TTLs follow: a replica whose clock runs ahead cannot drop another's live filters from the count (the cap
// would then let it create more). One round trip per filter call; nothing else touches Redis here.
import type { Redis } from 'ioredis';
import { closeRedisClient, createRedisClient, untilFirstConnect } from '../redis/index.js';
import type { CreateResult, FilterState, FilterStore, Versioned } from './store.js';

/** Redis's clock in ms (scripts may write after TIME: Redis 5+ replicates a script's effects). */
const NOW_LUA = `local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
`;

/** KEYS: filter, owner set. ARGV: id, owner, state, idleMs, cap. → {1} stored, {0, count} over the cap. */
const CREATE_LUA = `${NOW_LUA}
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
local n = redis.call('ZCARD', KEYS[2])
if n >= tonumber(ARGV[5]) then return {0, n} end
redis.call('HSET', KEYS[1], 's', ARGV[3], 'v', 0, 'o', ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[4])
redis.call('ZADD', KEYS[2], now + tonumber(ARGV[4]), ARGV[1])
redis.call('PEXPIRE', KEYS[2], ARGV[4])
return {1, n}
`;

/** KEYS: filter, owner set. ARGV: id, owner, state, idleMs, version. → 1 updated, 0 not (gone, other owner, other version). */
const UPDATE_LUA = `${NOW_LUA}
local v = redis.call('HMGET', KEYS[1], 'v', 'o')
if v[1] == false or v[2] ~= ARGV[2] or v[1] ~= ARGV[5] then return 0 end
redis.call('HSET', KEYS[1], 's', ARGV[3], 'v', tonumber(ARGV[5]) + 1)
redis.call('PEXPIRE', KEYS[1], ARGV[4])
redis.call('ZADD', KEYS[2], now + tonumber(ARGV[4]), ARGV[1])
redis.call('PEXPIRE', KEYS[2], ARGV[4])
return 1
`;

/** KEYS: filter, owner set. ARGV: id, owner. → 1 deleted, 0 not there or another owner's. */
const DELETE_LUA = `
if redis.call('HGET', KEYS[1], 'o') ~= ARGV[2] then return 0 end
redis.call('DEL', KEYS[1])
redis.call('ZREM', KEYS[2], ARGV[1])
return 1
`;

type Scripted = Redis & {
  filterCreate(k1: string, k2: string, ...argv: (string | number)[]): Promise<[number, number]>;
  filterUpdate(k1: string, k2: string, ...argv: (string | number)[]): Promise<number>;
  filterDelete(k1: string, k2: string, ...argv: (string | number)[]): Promise<number>;
};

export interface RedisFilterStoreOptions {
  /** `redis://…` URL; ignored when `client` is given. The store then makes (and closes) its own client. */
  url?: string;
  /** An existing client, from src/gateway/redis (not closed by close()). */
  client?: Redis;
  /** Key prefix; the store's keys are `<prefix>:filter:…` (default `rpcgate`). */
  prefix?: string;
  idleMs: number;
}

export class RedisFilterStore implements FilterStore {
  private readonly redis: Scripted;
  private readonly base: string;
  private readonly idleMs: number;
  private readonly ownsClient: boolean;

  constructor(opts: RedisFilterStoreOptions) {
    this.base = `${opts.prefix ?? 'rpcgate'}:filter:`;
    this.idleMs = opts.idleMs;
    this.ownsClient = !opts.client;
    const client = opts.client ?? createRedisClient({ url: opts.url ?? 'redis://127.0.0.1:6379', role: 'filters' });
    client.defineCommand('filterCreate', { numberOfKeys: 2, lua: CREATE_LUA });
    client.defineCommand('filterUpdate', { numberOfKeys: 2, lua: UPDATE_LUA });
    client.defineCommand('filterDelete', { numberOfKeys: 2, lua: DELETE_LUA });
    this.redis = client as Scripted;
  }

  private keys(id: string, owner: string): [string, string] {
    return [`${this.base}f:${id}`, `${this.base}o:${owner}`];
  }

  async create(state: FilterState, cap: number): Promise<CreateResult> {
    await untilFirstConnect(this.redis);
    const [ok, n] = await this.redis.filterCreate(
      ...this.keys(state.id, state.owner),
      state.id,
      state.owner,
      JSON.stringify(state),
      this.idleMs,
      cap,
    );
    return ok === 1 ? { ok: true } : { ok: false, count: n };
  }

  async get(id: string): Promise<Versioned | undefined> {
    await untilFirstConnect(this.redis);
    const [s, v] = await this.redis.hmget(`${this.base}f:${id}`, 's', 'v');
    if (s === null || v === null) return undefined;
    return { state: JSON.parse(s) as FilterState, version: Number(v) };
  }

  async update(state: FilterState, version: number): Promise<boolean> {
    await untilFirstConnect(this.redis);
    return (
      (await this.redis.filterUpdate(
        ...this.keys(state.id, state.owner),
        state.id,
        state.owner,
        JSON.stringify(state),
        this.idleMs,
        version,
      )) === 1
    );
  }

  async delete(id: string, owner: string): Promise<boolean> {
    await untilFirstConnect(this.redis);
    return (await this.redis.filterDelete(...this.keys(id, owner), id, owner)) === 1;
  }

  async close(): Promise<void> {
    if (this.ownsClient) await closeRedisClient(this.redis);
  }
}
