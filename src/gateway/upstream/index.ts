// Upstream pools per network: `createUpstreams(config, urlsByNetwork)`.
import type { UpstreamConfig } from '../config/config.js';
import { UpstreamPool, type UpstreamMetrics } from './pool.js';

export { UpstreamPool, NON_IDEMPOTENT, type UpstreamPoolOptions, type UpstreamStatus, type UpstreamMetrics } from './pool.js';
export { upstreamUnavailable, upstreamTimeout, upstreamBadResponse, nodeError } from './errors.js';

/** One pool per network over the given node URLs. */
export function createUpstreams(
  urlsByNetwork: Record<string, string[]>,
  config: UpstreamConfig,
  onHealth?: (network: string, url: string, healthy: boolean, reason?: string) => void,
  metrics?: UpstreamMetrics,
): Map<string, UpstreamPool> {
  const pools = new Map<string, UpstreamPool>();
  for (const [network, urls] of Object.entries(urlsByNetwork)) {
    pools.set(network, new UpstreamPool({ network, urls, config, metrics, onHealth: onHealth && ((u, h, r) => onHealth(network, u, h, r)) }));
  }
  return pools;
}
