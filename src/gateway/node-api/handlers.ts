// Node API handlers, routed by the contract: every method whose `x-gateway.route` is `forward` is sent to the
// network's upstream pool (no code per method: adding one is a contract edit), and every `local` method is answered
// by a handler here — rpc.discover, with the contract (serialised once at start, spliced in as raw JSON), and the
// filter methods (eth_newFilter & co.), kept by the gateway in a FilterStore (src/gateway/filters).
// With a response cache (src/gateway/cache) for the call's network, a forwarded call asks it first: it answers from
// the cache or calls the pool itself (the engine's admission and observer run around either: hits are counted calls).
// A local method without a handler stops the service at start (routeHandlers), never a -32601 at call time.
import { methods } from '../../../generated/node/methods.js';
import { RawResult, type Handler, type Handlers } from '@rpcgate/toolkit/engine';
import type { MethodTable } from '@rpcgate/client';
import { internalError } from '@rpcgate/toolkit/errors';
import { createFilterHandlers, type FilterStore } from '../filters/index.js';
import { addressVisible } from '../access/pipeline.js';
import type { AccessContext } from '../access/index.js';
import { meaningOf, type LocalMethodName } from '../method-meaning.js';
import type { UpstreamPool } from '../upstream/pool.js';
import { isCacheHit, type HeadTracker, type NetworkCache } from '../cache/index.js';
import type { Tracer } from '@opentelemetry/api';
import { inSpan, tracing } from '../telemetry/index.js';
import { notificationsNotSupported, type SocketCallContext, type Subscriptions } from '../subscriptions/index.js';
import { guardLogsRange, rangeChecked } from './logs-range.js';

export type NodeMethods = typeof methods;

export interface NodeHandlerOptions {
  /** Upstream pool per network name (ctx.network selects one). */
  pools: ReadonlyMap<string, UpstreamPool>;
  /** The OpenRPC document as JSON text (answered by rpc.discover). */
  contractJson: string;
  /** Where filters live (in-process or Redis) and how many one key may have. */
  filters: { store: FilterStore; maxPerKey: number };
  /** eth_subscribe / eth_unsubscribe over WebSocket (absent: both answer -32601 "notifications not supported"). */
  subscriptions?: Subscriptions;
  /** Most blocks one eth_getLogs may span (upstream.getLogsMaxBlockRange; 0 or absent = no cap). */
  getLogsMaxBlockRange?: number;
  /** Response cache per network (networks without one forward straight to the pool). */
  caches?: ReadonlyMap<string, Pick<NetworkCache, 'call' | 'caches'>>;
  /** The chain position per network (src/gateway/cache/heads.ts): a recent head spares the eth_getLogs range cap a
   *  round trip to the node. */
  heads?: ReadonlyMap<string, Pick<HeadTracker, 'knownHead'>>;
}

export function createNodeHandlers(opts: NodeHandlerOptions): Handlers<NodeMethods> {
  const discover = new RawResult(opts.contractJson);
  const knownHeadOf = (network: string) => opts.heads?.get(network)?.knownHead();
  const pools = guardLogsRange(opts.pools, opts.getLogsMaxBlockRange ?? 0, knownHeadOf);
  const local: Record<LocalMethodName<NodeMethods>, Handler<unknown, AccessContext>> = {
    'rpc.discover': (() => discover) as Handler<unknown, AccessContext>,
    ...createFilterHandlers({
      store: opts.filters.store,
      maxPerKey: opts.filters.maxPerKey,
      pools,
      logVisible: (ctx, log) => addressVisible((ctx as AccessContext).principal, log.address),
    }),
    ...subscriptionHandlers(opts.subscriptions),
  };
  // The range cap comes before the cache: a refused query is refused whether or not an answer is cached.
  const forward = forwarder(opts.pools, opts.caches);
  const max = opts.getLogsMaxBlockRange ?? 0;
  return routeHandlers(methods, local, (name) =>
    name === 'eth_getLogs' && max > 0 ? rangeChecked(forward(name), max, opts.pools, knownHeadOf) : forward(name),
  );
}

/** eth_subscribe / eth_unsubscribe: served on a WebSocket connection (ctx.socket), -32601 over HTTP as geth does. */
function subscriptionHandlers(
  subs: Subscriptions | undefined,
): Record<'eth_subscribe' | 'eth_unsubscribe', Handler<unknown, AccessContext>> {
  return {
    eth_subscribe: ((params: readonly unknown[], ctx: SocketCallContext) => {
      if (subs === undefined) throw notificationsNotSupported('eth_subscribe');
      return subs.subscribe(params, ctx);
    }) as unknown as Handler<unknown, AccessContext>,
    eth_unsubscribe: ((params: readonly unknown[], ctx: SocketCallContext) => {
      if (subs === undefined) throw notificationsNotSupported('eth_unsubscribe');
      return subs.unsubscribe(params, ctx);
    }) as unknown as Handler<unknown, AccessContext>,
  };
}

/** The forwarding handler of one method: the pool of the call's network, behind its response cache when the method is
 *  cached there. One closure per method (created once), so the hot path does a map lookup or two and a call. */
export function forwarder(
  pools: ReadonlyMap<string, Pick<UpstreamPool, 'call'>>,
  caches?: ReadonlyMap<string, Pick<NetworkCache, 'call' | 'caches'>>,
): (name: string) => Handler<unknown, AccessContext> {
  return (name) => {
    // Only the networks whose cache looks at this method at all.
    const cached = new Map([...(caches ?? [])].filter(([, c]) => c.caches(name)));
    const call = (params: readonly unknown[] | undefined, ctx: AccessContext, tracer?: Tracer): unknown => {
      const cache = cached.size === 0 ? undefined : cached.get(ctx.network);
      if (cache !== undefined)
        return tracer === undefined
          ? cache.call(name, params)
          : inSpan(
              tracer,
              'rpcgate.cache',
              undefined,
              { 'rpc.method': name },
              () => cache.call(name, params),
              (span, r) => span.setAttribute('rpcgate.cache.hit', isCacheHit(r)),
            );
      const pool = pools.get(ctx.network);
      if (pool === undefined) throw internalError({ reason: `no upstream pool for network ${ctx.network}` });
      return pool.call(name, params);
    };
    return ((params: readonly unknown[] | undefined, ctx: AccessContext) => {
      const tracer = tracing.tracer;
      if (tracer === undefined) return call(params, ctx);
      // One span per forwarded call (each batch item its own), under the request's span (a WebSocket call: a root).
      return inSpan(
        tracer,
        `rpcgate.call ${name}`,
        ctx.span,
        { 'rpc.system': 'jsonrpc', 'rpc.method': name, 'rpcgate.network': ctx.network },
        () => call(params, ctx, tracer),
        (span, r) => span.setAttribute('rpcgate.cache.hit', isCacheHit(r)),
      );
    }) as Handler<unknown, AccessContext>;
  };
}

/** The handler of every method of `table` by its meaning: `forward` → `forward(name)`, `local` → `local[name]`.
 *  Throws, naming the method, when a local method has no handler or a handler is given for a method that is not
 *  local (a contract/code mismatch the service must not start with). */
export function routeHandlers<T extends MethodTable>(
  table: T,
  local: Readonly<Record<string, Handler<unknown, AccessContext>>>,
  forward: (name: string) => Handler<unknown, AccessContext>,
): Handlers<T> {
  const handlers: Record<string, Handler<unknown, AccessContext>> = {};
  const missing: string[] = [];
  for (const [name, d] of Object.entries(table)) {
    const route = meaningOf(d).route;
    if (route === 'local') {
      if (Object.hasOwn(local, name)) handlers[name] = local[name];
      else missing.push(name);
    } else handlers[name] = forward(name);
  }
  if (missing.length > 0) {
    throw new Error(
      `method${missing.length > 1 ? 's' : ''} ${missing.join(', ')}: x-gateway route "local" in the contract, but no local handler in rpcgate (add one in src/gateway/node-api/handlers.ts or route the method "forward")`,
    );
  }
  const stray = Object.keys(local).filter(
    (name) => !Object.hasOwn(table, name) || meaningOf(table[name]).route !== 'local',
  );
  if (stray.length > 0) {
    throw new Error(
      `local handler${stray.length > 1 ? 's' : ''} for ${stray.join(', ')}, which the contract does not route "local" (x-gateway)`,
    );
  }
  return handlers as Handlers<T>;
}
