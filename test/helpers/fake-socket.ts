// In-process stand-ins for the subscription tests: a node API WebSocket connection that records what is written to
// it and its close, and a Subscriptions manager on one network (by default its head never reads: notifications are
// then delivered by hand through `deliver`).
import { pino } from 'pino';
import type { AccessContext } from '../../src/gateway/access/index.js';
import { ChainHead } from '../../src/gateway/heads/index.js';
import type { Limiter } from '../../src/gateway/limits/index.js';
import {
  Subscriptions,
  type FeedUpstream,
  type SocketCallContext,
  type SubscriptionsOptions,
} from '../../src/gateway/subscriptions/index.js';
import type { WsConnection } from '../../packages/toolkit/src/ws/index.js';

export interface FakeConnection {
  conn: WsConnection<AccessContext>;
  /** The call context of an eth_subscribe on it. */
  ctx: SocketCallContext;
  /** Every text frame written, in order (send and sendAll alike). */
  frames: string[];
  /** The close code and reason, once closed. */
  closed(): [number, string] | undefined;
  /** Hands `result` to each of its subscriptions, as the feed does. */
  deliver(result: unknown): void;
}

export function fakeConnection(
  network: string,
  o: { principal?: unknown; onWrite?: (texts: readonly string[]) => void } = {},
): FakeConnection {
  const frames: string[] = [];
  let closed: [number, string] | undefined;
  const closers: (() => void)[] = [];
  const write = (texts: readonly string[]) => {
    frames.push(...texts);
    o.onWrite?.(texts);
  };
  const conn = {
    ctx: { network, principal: o.principal },
    state: undefined,
    get closed() {
      return closed !== undefined;
    },
    send: (t: string) => (write([t]), true),
    sendAll: (texts: readonly string[]) => (write(texts), texts.length),
    close: (code: number, reason: string) => {
      closed ??= [code, reason];
      for (const f of closers.splice(0)) f();
    },
    onClose: (f: () => void) => void closers.push(f),
  } as unknown as WsConnection<AccessContext>;
  const ctx = { ...conn.ctx, requestId: 'r', startedAt: 0, socket: conn } as SocketCallContext;
  const deliver = (result: unknown) => {
    const st = conn.state as { subs: Map<string, { deliver(r: unknown, j: string): void }> } | undefined;
    for (const s of st?.subs.values() ?? []) s.deliver(result, JSON.stringify(result));
  };
  return { conn, ctx, frames, closed: () => closed, deliver };
}

/** An upstream that never answers. */
export const silentUpstream: FeedUpstream = { call: () => new Promise<never>(() => undefined) };

/** Subscriptions on `network` over `upstream` (default: one that never answers), its head polling every `pollMs`. */
export function subscriptionsOn(
  network: string,
  o: Partial<Pick<SubscriptionsOptions, 'maxQueued' | 'maxQueuedBytes' | 'maxPerConnection'>> & {
    upstream?: FeedUpstream;
    pollMs?: number;
    limiter?: Limiter;
  } = {},
): { subs: Subscriptions; head: ChainHead } {
  const upstream = o.upstream ?? silentUpstream;
  const pollMs = o.pollMs ?? 60_000;
  const head = new ChainHead({ network, upstream, pollMs, idleMs: 60_000, finalityDepth: 64 });
  const subs = new Subscriptions({
    upstreams: new Map([[network, upstream]]),
    heads: new Map([[network, head]]),
    intervalMs: () => pollMs,
    maxPerConnection: o.maxPerConnection ?? 10,
    maxQueued: o.maxQueued ?? 1000,
    maxQueuedBytes: o.maxQueuedBytes ?? 1_000_000,
    limiter: o.limiter,
    logger: pino({ level: 'silent' }),
  });
  return { subs, head };
}
