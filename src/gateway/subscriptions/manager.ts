// eth_subscribe / eth_unsubscribe over a WebSocket connection, fed by the network's shared feed (./feed.ts).
//
// Per connection (the transport's WsConnection, its `state`): the subscriptions by id, at most
// `maxSubscriptionsPerConnection` (-32005, reason `subscriptions`, beyond), and one outgoing queue of notifications
// so they keep their order. Ids are 16 random bytes in hex (as geth), unguessable and local to the connection:
// another connection's id is "not found" (false).
//
// Quotas: every delivered notification counts as one request of the key's limits (providers bill each event), and as
// eth_subscribe's compute units (x-gateway.units) against unit limits. The
// queue is counted in one limiter.consume(n) per flush (at most one per tick and connection, whatever the fan-out):
//   - allowed: the notifications are sent;
//   - refused by a per-second rate: they wait until that second is over and are counted again (order kept);
//   - refused by a daily/monthly quota (or the limiter down: fail closed as for calls): one last notification per
//     subscription carries the error (`params.error`, the same -32005/-32044 object a call would get), then the
//     connection closes with code 4402 (CLOSE_QUOTA: 4000 + the HTTP status of a used-up quota).
// Static and development keys have no limits: nothing is counted.
//
// Bounded memory: the queue holds at most `websocket.maxQueuedNotifications` notifications and
// `websocket.maxQueuedBytes` bytes of JSON (whatever holds them back: the rate limit, a slow limiter, a flood of
// blocks); once handed to the socket, `websocket.maxBufferedBytes` bounds them (packages/toolkit/src/ws). A notification that
// would pass a bound ends the connection: the queue is dropped, one last notification per subscription carries the
// error (-32005, reason `notification-queue`, `data.setting` naming the bound, `data.limit` its value), then close 4008 (CLOSE.slowConsumer, as
// for a full send buffer) — never unbounded growth.
import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import type { AccessContext } from '../access/index.js';
import { addressVisible } from '../access/pipeline.js';
import { limitError, type Limiter } from '../limits/index.js';
import { gatewayError, limitsBackendUnavailable, notificationQueueFull, tooManySubscriptions } from '../errors.js';
import { RpcError, internalError } from '@rpcgate/toolkit/errors';
import { CLOSE, type WsConnection } from '@rpcgate/toolkit/ws';
import type { ChainHead, PushSource } from '../heads/head.js';
import { NetworkFeed, type FeedSubscriber, type FeedUpstream, type LogFilter } from './feed.js';

/** Close code when the key's quota runs out mid-subscription. */
export const CLOSE_QUOTA = 4402;

/** A node API call's context over a WebSocket: the connection, for eth_subscribe. */
export interface SocketCallContext extends AccessContext {
  socket?: WsConnection<AccessContext>;
}

export interface SubscriptionsOptions {
  upstreams: ReadonlyMap<string, FeedUpstream>;
  /** The head per network (src/gateway/heads): newHeads and logs follow it. */
  heads: ReadonlyMap<string, ChainHead>;
  /** The push upstreams per network (newPendingTransactions). */
  push?: (network: string) => readonly PushSource[];
  /** Poll interval of the pending-transaction filter where no upstream pushes (ms). */
  intervalMs: (network: string) => number;
  maxPerConnection: number;
  /** Notifications waiting to be sent on one connection, at most (websocket.maxQueuedNotifications). */
  maxQueued: number;
  /** Bytes (characters of JSON) of those, at most (websocket.maxQueuedBytes). */
  maxQueuedBytes: number;
  limiter: Limiter | undefined;
  /** Compute units one notification weighs against unit limits (the node contract's eth_subscribe units; default 0). */
  notificationUnits?: number;
  logger: Logger;
  /** Each notification delivered (metering: method `eth_subscription`). */
  onNotified?: (ctx: AccessContext, count: number) => void;
}

/** -32601 over HTTP, as geth answers (there is no connection to notify). */
export const notificationsNotSupported = (method: string) =>
  gatewayError(
    `notifications not supported over HTTP: ${method} needs a WebSocket connection (ws://…/{network}/v2/{key} or ws://…/{network}/{key})`,
    { reason: 'transport', method },
  );

class Sub implements FeedSubscriber {
  constructor(
    readonly id: string,
    readonly kind: FeedSubscriber['kind'],
    readonly filter: LogFilter | undefined,
    private readonly owner: ConnectionSubs,
  ) {}

  deliver(result: unknown, json: string): void {
    // eth_subscribe("logs") was admitted only with listed addresses; this holds even if the feed's match did not.
    if (
      this.kind === 'logs' &&
      !addressVisible(this.owner.conn.ctx.principal, (result as { address?: unknown }).address)
    )
      return;
    this.owner.enqueue(this.id, json);
  }
}

/** One connection's subscriptions and notification queue. */
class ConnectionSubs {
  readonly subs = new Map<string, Sub>();
  private queue: string[] = [];
  /** Characters of JSON in `queue`. */
  private queuedBytes = 0;
  private flushing = false;
  private scheduled = false;
  /** Notifications counted per consume (lowered to the per-second limit when that refuses). */
  private chunk = Number.MAX_SAFE_INTEGER;
  ended = false;

  constructor(
    readonly conn: WsConnection<AccessContext>,
    private readonly mgr: Subscriptions,
  ) {}

  /** `json`: the notification's result, already serialised (once for every subscriber). */
  enqueue(id: string, json: string): void {
    if (this.ended) return;
    const m = `{"jsonrpc":"2.0","method":"eth_subscription","params":{"subscription":"${id}","result":${json}}}`;
    const { maxQueued, maxQueuedBytes } = this.mgr.bounds;
    if (this.queue.length >= maxQueued)
      return this.overflow(notificationQueueFull('websocket.maxQueuedNotifications', maxQueued));
    if (this.queuedBytes + m.length > maxQueuedBytes)
      return this.overflow(notificationQueueFull('websocket.maxQueuedBytes', maxQueuedBytes));
    this.queue.push(m);
    this.queuedBytes += m.length;
    if (!this.scheduled && !this.flushing) {
      this.scheduled = true;
      this.mgr.scheduleFlush(this);
    }
  }

  /** @internal sends what is queued (called in its turn by Subscriptions.scheduleFlush). */
  async flush(): Promise<void> {
    this.scheduled = false;
    if (this.flushing || this.ended) return;
    this.flushing = true;
    try {
      while (this.queue.length > 0 && !this.ended && !this.conn.closed) {
        // Counted first, taken after: what arrives meanwhile is appended, so the first n are still these.
        const n = Math.min(this.queue.length, this.chunk);
        const refusal = await this.mgr.count(this.conn.ctx, n);
        if (this.ended) return;
        if (typeof refusal === 'number') {
          // Per-second rate: keep them (in order), count again shortly, at most a second's worth at a time.
          this.chunk = Math.max(1, refusal);
          await new Promise((r) => setTimeout(r, 250));
          continue;
        }
        if (refusal !== undefined) return this.endWith(refusal, CLOSE_QUOTA, 'quota exhausted');
        const batch = this.queue.splice(0, n);
        for (const m of batch) this.queuedBytes -= m.length;
        // One write for everything this connection is owed now (a block's head and its logs, many logs).
        if (this.conn.sendAll(batch) < batch.length) return;
        this.mgr.notified(this.conn.ctx, batch.length);
      }
    } finally {
      this.flushing = false;
    }
  }

  /** A bound of the queue is passed: drop what waits, end every subscription with the error, close 4008. */
  private overflow(err: RpcError): void {
    this.queue = [];
    this.queuedBytes = 0;
    this.mgr.overflowed(this.conn.ctx);
    this.endWith(err, CLOSE.slowConsumer, 'slow consumer: notification queue full');
  }

  /** A last notification per subscription with the error, then close. */
  private endWith(err: RpcError, code: number, reason: string): void {
    this.end(err);
    this.conn.close(code, reason);
  }

  /** A last notification per subscription carrying `err` (params.error), then no more (the caller closes). */
  end(err: RpcError): void {
    if (this.ended) return;
    const e = JSON.stringify({ code: err.code, message: err.message, data: err.data });
    this.queue = [];
    this.queuedBytes = 0;
    for (const id of this.subs.keys())
      this.conn.send(`{"jsonrpc":"2.0","method":"eth_subscription","params":{"subscription":"${id}","error":${e}}}`);
    this.mgr.dropAll(this);
  }
}

function lowerList(v: unknown): string[] | undefined {
  if (v === undefined || v === null) return undefined;
  return (Array.isArray(v) ? v : [v]).map((x) => String(x).toLowerCase());
}

/** The params' filterOptions (already validated against the contract) as a LogFilter. */
function logFilter(opts: unknown): LogFilter | undefined {
  if (opts === undefined || opts === null || typeof opts !== 'object') return undefined;
  const o = opts as { address?: unknown; topics?: unknown };
  const f: LogFilter = {};
  const address = lowerList(o.address);
  if (address !== undefined) f.address = address;
  if (Array.isArray(o.topics)) f.topics = o.topics.map((t: unknown) => lowerList(t) ?? null);
  return f.address === undefined && f.topics === undefined ? undefined : f;
}

/** Longest an eth_subscribe waits for a head that is not following the chain to take its first position (its read
 *  of "latest" through the pool). Past it the answer goes out anyway (a node that cannot be read must not hang the
 *  client) and the subscription starts with the head's next move, as it would have. */
const PLACE_WAIT_MS = 2_000;

/** `p`, or after `ms`, whichever first (the timer never keeps the process up). */
function within(p: Promise<void>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<void>((r) => {
    timer = setTimeout(r, ms);
    timer.unref();
  });
  return Promise.race([p, late]).finally(() => clearTimeout(timer));
}

/** Connections flushed per event-loop turn (~10 µs of socket write each: ~0.2 ms per turn, so an upstream answer waits
 *  little — bench/ws-lag.ts: logs p50 33.6 → 17.5 ms with 64 a turn, 13.5 ms with 16, newHeads unchanged). */
const FLUSH_TURN = 16;

export class Subscriptions {
  private readonly feeds = new Map<string, NetworkFeed>();
  private active = 0;
  /** Connections with notifications to send, in the order they got them; `flushAt` is the next one's index. */
  private toFlush: ConnectionSubs[] = [];
  private flushAt = 0;
  private flushTurn: NodeJS.Immediate | undefined;

  constructor(private readonly opts: SubscriptionsOptions) {}

  /** Active subscriptions on this replica (metrics). */
  get size(): number {
    return this.active;
  }

  /** Active subscriptions by network and kind (read-only, for metrics at scrape time). */
  byNetworkAndKind(): Record<string, Record<FeedSubscriber['kind'], number>> {
    const out: Record<string, Record<FeedSubscriber['kind'], number>> = {};
    for (const [network, f] of this.feeds) out[network] = f.sizeByKind();
    return out;
  }

  private feed(network: string): NetworkFeed {
    let f = this.feeds.get(network);
    if (f === undefined) {
      const up = this.opts.upstreams.get(network);
      const head = this.opts.heads.get(network);
      if (up === undefined || head === undefined)
        throw internalError({ reason: `no upstream pool for network ${network}` });
      const push = this.opts.push;
      f = new NetworkFeed(network, {
        head,
        upstream: up,
        push: push && (() => push(network)),
        pollMs: this.opts.intervalMs(network),
        logger: this.opts.logger,
      });
      this.feeds.set(network, f);
    }
    return f;
  }

  private state(conn: WsConnection<AccessContext>): ConnectionSubs {
    let s = conn.state as ConnectionSubs | undefined;
    if (s === undefined) {
      s = new ConnectionSubs(conn, this);
      conn.state = s;
      conn.onClose(() => this.dropAll(s!));
    }
    return s;
  }

  /** eth_subscribe: the id, once the subscription has its place in the network's chain of blocks (./feed.ts `add`). */
  subscribe(params: readonly unknown[], ctx: SocketCallContext): string | Promise<string> {
    const conn = ctx.socket;
    if (conn === undefined) throw notificationsNotSupported('eth_subscribe');
    const st = this.state(conn);
    if (st.ended || conn.closed) throw internalError({ reason: 'connection closing' });
    if (st.subs.size >= this.opts.maxPerConnection) {
      throw tooManySubscriptions(this.opts.maxPerConnection);
    }
    const kind = params[0] as FeedSubscriber['kind'];
    const id = `0x${randomBytes(16).toString('hex')}`;
    const sub = new Sub(id, kind, kind === 'logs' ? logFilter(params[1]) : undefined, st);
    st.subs.set(id, sub);
    this.active++;
    const placed = this.feed(ctx.network).add(sub);
    return placed === undefined ? id : within(placed, PLACE_WAIT_MS).then(() => id);
  }

  /** eth_unsubscribe */
  unsubscribe(params: readonly unknown[], ctx: SocketCallContext): boolean {
    const conn = ctx.socket;
    if (conn === undefined) throw notificationsNotSupported('eth_unsubscribe');
    const st = conn.state as ConnectionSubs | undefined;
    const id = String(params[0]).toLowerCase();
    const sub = st?.subs.get(id);
    if (st === undefined || sub === undefined) return false;
    st.subs.delete(id);
    this.active--;
    this.feeds.get(conn.ctx.network)?.remove(sub);
    return true;
  }

  /** Ends a connection's subscriptions with a last error notification each (its credential no longer holds); the
   *  caller closes the connection. */
  end(conn: WsConnection<AccessContext>, err: RpcError): void {
    (conn.state as ConnectionSubs | undefined)?.end(err);
  }

  /** @internal a connection's subscriptions end (closed, or quota exhausted). */
  dropAll(st: ConnectionSubs): void {
    st.ended = true;
    const feed = this.feeds.get(st.conn.ctx.network);
    for (const sub of st.subs.values()) {
      feed?.remove(sub);
      this.active--;
    }
    st.subs.clear();
  }

  /** @internal counts n notifications: undefined = allowed, a number = rate-limited this second (the per-second
   *  limit), else the refusal to end with. */
  async count(ctx: AccessContext, n: number): Promise<RpcError | number | undefined> {
    const subject = ctx.principal?.limitSubject;
    const limiter = this.opts.limiter;
    if (subject === undefined || limiter === undefined) return undefined;
    try {
      const per = this.opts.notificationUnits ?? 0;
      const d = await limiter.consume(subject, n, undefined, n * per);
      if (d.allowed) return undefined;
      if (d.period !== 'second') return limitError(d);
      // A second's worth: in notifications (a unit limit's units divided by a notification's weight).
      return d.units && per > 0 ? Math.max(1, Math.floor(d.limit / per)) : d.limit;
    } catch (e) {
      if (e instanceof RpcError) return e;
      this.opts.logger.error({ err: e }, 'limiter failed while counting notifications');
      return limitsBackendUnavailable();
    }
  }

  /**
   * @internal Queues a connection's flush. Flushes run FLUSH_TURN connections per event-loop turn, in order: a fan-out
   * to 1,000 sockets (~10 ms of writes) then never holds the loop at once — calls of other clients and upstream answers
   * are read between turns. Among those answers is the block's eth_getLogs: its logs reach the connections not flushed
   * yet before their turn, so the head and its logs leave in one write (sendAll) instead of the logs waiting for the
   * whole heads fan-out and then a second one.
   */
  scheduleFlush(c: ConnectionSubs): void {
    this.toFlush.push(c);
    this.flushTurn ??= setImmediate(this.runFlushTurn);
  }

  private readonly runFlushTurn = (): void => {
    this.flushTurn = undefined;
    const end = Math.min(this.toFlush.length, this.flushAt + FLUSH_TURN);
    for (; this.flushAt < end; this.flushAt++) void this.toFlush[this.flushAt].flush();
    if (this.flushAt < this.toFlush.length) {
      this.flushTurn = setImmediate(this.runFlushTurn);
      return;
    }
    this.toFlush = [];
    this.flushAt = 0;
  };

  /** @internal the queue bounds of every connection. */
  get bounds(): { maxQueued: number; maxQueuedBytes: number } {
    return this.opts;
  }

  /** @internal a connection's queue overflowed (logged once per connection). */
  overflowed(ctx: AccessContext): void {
    this.opts.logger.warn(
      { network: ctx.network, key: ctx.principal?.id },
      'websocket notification queue full: connection closed (4008)',
    );
  }

  /** @internal */
  notified(ctx: AccessContext, n: number): void {
    this.opts.onNotified?.(ctx, n);
  }

  /** Stops every feed (service stop). */
  stop(): void {
    if (this.flushTurn !== undefined) clearImmediate(this.flushTurn);
    this.flushTurn = undefined;
    this.toFlush = [];
    this.flushAt = 0;
    for (const f of this.feeds.values()) f.stop();
    this.feeds.clear();
  }
}
