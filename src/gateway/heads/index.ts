// The network heads (./head.ts): one ChainHead per network and replica, over the network's upstream pool and the
// push side of its upstreams that have one. The cache, the eth_getLogs range cap and the subscription feeds all read it.
import type { Logger } from 'pino';
import type { Config } from '../config/config.js';
import { ChainHead, type HeadUpstream, type PushSource } from './head.js';

export {
  ChainHead,
  HISTORY,
  MAX_WALK,
  toHeadBlock,
  type ChainHeadOptions,
  type ChainUpdate,
  type HeadBlock,
  type HeadListener,
  type HeadUpstream,
  type PushSource,
} from './head.js';

/** A pool as the heads need it: calls with failover, and (when its upstreams have sockets) their push side. */
export interface HeadPool extends HeadUpstream {
  pushTransports?(): readonly PushSource[];
}

/** The poll interval of a network's head where no upstream pushes: `cache.pollIntervalMs` or
 *  `websocket.pollIntervalMs` when set (the shorter of the two), else half the block time, at least 250 ms. */
export function headPollMs(config: Pick<Config, 'cache' | 'websocket' | 'networks'>, network: string): number {
  const set = [config.cache?.pollIntervalMs ?? 0, config.websocket?.pollIntervalMs ?? 0].filter((v) => v > 0);
  if (set.length > 0) return Math.min(...set);
  return Math.max(250, (config.networks[network]?.blockTime ?? 2) * 500);
}

export function createHeads(
  pools: ReadonlyMap<string, HeadPool>,
  config: Pick<Config, 'cache' | 'websocket' | 'networks'>,
  logger?: Logger,
): Map<string, ChainHead> {
  const heads = new Map<string, ChainHead>();
  for (const [network, pool] of pools) {
    heads.set(
      network,
      new ChainHead({
        network,
        upstream: pool,
        push: () => pool.pushTransports?.() ?? [],
        pollMs: headPollMs(config, network),
        idleMs: config.cache?.idleMs ?? 60_000,
        finalityDepth: config.cache?.networks?.[network]?.finalityDepth ?? config.cache?.finalityDepth ?? 1024,
        logger,
      }),
    );
  }
  return heads;
}
