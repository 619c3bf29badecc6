// Open-connection slots per principal (`websocket.maxConnectionsPerKey`): how many WebSockets one key or app may hold.
//
// In process: a count per principal. With Redis (replicas share it, as they share the request limits): one sorted set
// per principal whose members are this replica's connections, scored by when the slot lapses. One script drops lapsed
// members, counts, and adds — atomically, so parallel upgrades on any number of replicas never pass the cap. Each
// replica renews its members' scores every `ttlMs / 3`; a replica killed while holding slots loses them after `ttlMs`
// (they lapse), so a crash never locks a key out for good. Closing a connection removes its member at once.
// Redis slow or gone: the slot is decided by this replica's own count (still a bound: the cap per replica), logged
// once per outage, so a Redis outage never stops every WebSocket.
import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { LogThrottle } from '@rpcgate/toolkit/log-throttle';

/** A slot held; release() gives it back (idempotent). */
export interface ConnectionSlot {
  release(): void;
}

export interface ConnectionSlots {
  /** Whether the cap counts this replica's connections or every replica's. */
  readonly scope: 'replica' | 'all replicas';
  /** Takes one of `id`'s `cap` slots; undefined when all are taken. */
  take(id: string, cap: number): ConnectionSlot | undefined | Promise<ConnectionSlot | undefined>;
  /** Slots held by this replica per principal (tests, metrics). */
  held(id: string): number;
  close(): Promise<void>;
}

/** Per-replica counts. */
export class MemoryConnectionSlots implements ConnectionSlots {
  readonly scope = 'replica';
  private readonly counts = new Map<string, number>();

  take(id: string, cap: number): ConnectionSlot | undefined {
    const n = this.counts.get(id) ?? 0;
    if (n >= cap) return undefined;
    this.counts.set(id, n + 1);
    let held = true;
    return {
      release: () => {
        if (!held) return;
        held = false;
        const left = (this.counts.get(id) ?? 1) - 1;
        if (left <= 0) this.counts.delete(id);
        else this.counts.set(id, left);
      },
    };
  }

  held(id: string): number {
    return this.counts.get(id) ?? 0;
  }

  async close(): Promise<void> {}
}

/** KEYS[1]: the principal's set. ARGV: now (ms), lapse (ms), cap, member. 1 = taken, 0 = full. */
const TAKE_LUA = `
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[1])
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[3]) then return 0 end
redis.call('ZADD', KEYS[1], ARGV[2], ARGV[4])
redis.call('PEXPIREAT', KEYS[1], ARGV[2])
return 1
`;

export interface RedisConnectionSlotsOptions {
  client: Redis;
  prefix: string;
  logger: Logger;
  /** How long a slot outlives its last renewal (ms): what a killed replica's slots cost. */
  ttlMs?: number;
}

type SlotsRedis = Redis & {
  rpcgateSlotTake(key: string, now: number, lapse: number, cap: number, member: string): Promise<number>;
};

/** Slots shared by every replica through Redis. */
export class RedisConnectionSlots implements ConnectionSlots {
  readonly scope = 'all replicas';
  private readonly client: SlotsRedis;
  private readonly ttlMs: number;
  private readonly replica = randomBytes(6).toString('hex');
  private seq = 0;
  /** Members this replica holds, by set key. */
  private readonly mine = new Map<string, Set<string>>();
  private readonly local = new MemoryConnectionSlots();
  private readonly renew: NodeJS.Timeout;
  private readonly outage = new LogThrottle(30_000);

  constructor(private readonly opts: RedisConnectionSlotsOptions) {
    this.client = opts.client as SlotsRedis;
    this.client.defineCommand('rpcgateSlotTake', { numberOfKeys: 1, lua: TAKE_LUA });
    this.ttlMs = opts.ttlMs ?? 30_000;
    this.renew = setInterval(() => void this.renewAll(), Math.max(100, Math.floor(this.ttlMs / 3)));
    this.renew.unref();
  }

  private key(id: string): string {
    return `${this.opts.prefix}:ws-slots:${id}`;
  }

  async take(id: string, cap: number): Promise<ConnectionSlot | undefined> {
    const key = this.key(id);
    const member = `${this.replica}:${++this.seq}`;
    const now = Date.now();
    let ok: number;
    try {
      ok = await this.client.rpcgateSlotTake(key, now, now + this.ttlMs, cap, member);
    } catch (e) {
      if (this.outage.take() !== undefined)
        this.opts.logger.error(
          { err: { message: (e as Error).message } },
          'Redis unreachable: WebSocket connection caps count per replica until it is back',
        );
      return this.local.take(id, cap);
    }
    if (ok !== 1) return undefined;
    let set = this.mine.get(key);
    if (set === undefined) this.mine.set(key, (set = new Set()));
    set.add(member);
    let held = true;
    return {
      release: () => {
        if (!held) return;
        held = false;
        const s = this.mine.get(key);
        s?.delete(member);
        if (s?.size === 0) this.mine.delete(key);
        // A failed ZREM leaves the member to lapse after ttlMs.
        this.client.zrem(key, member).catch(() => undefined);
      },
    };
  }

  held(id: string): number {
    return (this.mine.get(this.key(id))?.size ?? 0) + this.local.held(id);
  }

  private async renewAll(): Promise<void> {
    if (this.mine.size === 0) return;
    const lapse = Date.now() + this.ttlMs;
    const p = this.client.pipeline();
    for (const [key, members] of this.mine) {
      // XX: only members still there (one that lapsed while Redis was away is not re-added over the cap).
      for (const m of members) p.zadd(key, 'XX', lapse, m);
      p.pexpireat(key, lapse);
    }
    await p.exec().catch(() => undefined);
  }

  async close(): Promise<void> {
    clearInterval(this.renew);
    const p = this.client.pipeline();
    for (const [key, members] of this.mine) p.zrem(key, ...members);
    this.mine.clear();
    await p.exec().catch(() => undefined);
  }
}
