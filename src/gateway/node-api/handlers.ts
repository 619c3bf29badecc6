// Node API handlers: every method of the node contract is forwarded to the network's upstream pool, except
// rpc.discover, answered locally with the contract (serialised once at start, spliced in as raw JSON).
import { methods } from '../../../generated/node/methods.js';
import { RawResult, type CallContext, type Handler, type Handlers } from '../../toolkit/rpc/engine.js';
import { internalError } from '../../toolkit/rpc/errors.js';
import type { UpstreamPool } from '../upstream/pool.js';

export type NodeMethods = typeof methods;

export interface NodeHandlerOptions {
  /** Upstream pool per network name (ctx.network selects one). */
  pools: ReadonlyMap<string, UpstreamPool>;
  /** The OpenRPC document as JSON text (answered by rpc.discover). */
  contractJson: string;
}

export function createNodeHandlers(opts: NodeHandlerOptions): Handlers<NodeMethods> {
  const { pools } = opts;
  const handlers: Record<string, Handler<unknown>> = {};
  for (const name of Object.keys(methods)) {
    if (name === 'rpc.discover') continue;
    // One closure per method (created once), so the hot path does a map lookup and a call.
    handlers[name] = ((params: readonly unknown[] | undefined, ctx: CallContext) => {
      const pool = ctx.network === undefined ? undefined : pools.get(ctx.network);
      if (pool === undefined) throw internalError({ reason: `no upstream pool for network ${String(ctx.network)}` });
      return pool.call(name, params);
    }) as Handler<unknown>;
  }
  const discover = new RawResult(opts.contractJson);
  handlers['rpc.discover'] = (() => discover) as Handler<unknown>;
  return handlers as Handlers<NodeMethods>;
}
