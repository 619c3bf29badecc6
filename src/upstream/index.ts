// Upstream pools per network: `createUpstreams(config, urlsByNetwork)`.
import type { UpstreamConfig } from '../config/config.js';
import { UpstreamPool } from './pool.js';

export { UpstreamPool, NON_IDEMPOTENT, type UpstreamPoolOptions, type UpstreamStatus } from './pool.js';
export { upstreamUnavailable, upstreamTimeout, upstreamBadResponse, nodeError } from './errors.js';

/** One pool per network over the given node URLs. */
export function createUpstreams(
  urlsByNetwork: Record<string, string[]>,
  config: UpstreamConfig,
  onHealth?: (network: string, url: string, healthy: boolean, reason?: string) => void,
): Map<string, UpstreamPool> {
  const pools = new Map<string, UpstreamPool>();
  for (const [network, urls] of Object.entries(urlsByNetwork)) {
    pools.set(network, new UpstreamPool({ network, urls, config, onHealth: onHealth && ((u, h, r) => onHealth(network, u, h, r)) }));
  }
  return pools;
}
