// Upstream pools per network: `createUpstreams(config, urlsByNetwork)`; the transport seam (./transport.ts) for
// consumers of upstream pushes (subscription feeds).
import type { UpstreamConfig } from '../config/config.js';
import {
  UpstreamPool,
  type BreakerRule,
  type UpstreamMethodPolicy,
  type UpstreamMetrics,
  type UpstreamSpec,
} from './pool.js';

export {
  UpstreamPool,
  CIRCUIT,
  type BreakerRule,
  type CircuitState,
  type UpstreamMethodPolicy,
  type UpstreamPoolOptions,
  type UpstreamStatus,
  type UpstreamMetrics,
  type UpstreamSpec,
} from './pool.js';
export {
  TransportError,
  type TransportErrorKind,
  type UpstreamTransport,
  type PushTransport,
  type PushSink,
  type SendOptions,
} from './transport.js';
export { redactUrl, redactIn } from './redact.js';
export { splitUpstream, UpstreamBudget, type UpstreamRateLimit } from './failsafe/budget.js';
export { retryAfterMs } from './transports/http.js';
export { upstreamUnavailable, upstreamTimeout, upstreamBadResponse, nodeError, responseTooLarge } from './errors.js';

/** One pool per network over the given node URLs; `methods` says which methods may be deduped / hedged / retried and
 *  their cost class (the node contract's meaning: src/gateway/method-meaning.ts meaningTable). */
export function createUpstreams(
  urlsByNetwork: Record<string, readonly UpstreamSpec[]>,
  config: UpstreamConfig,
  onHealth?: (network: string, url: string, healthy: boolean, reason?: string, rule?: BreakerRule) => void,
  metrics?: UpstreamMetrics,
  methods?: ReadonlyMap<string, UpstreamMethodPolicy>,
): Map<string, UpstreamPool> {
  const pools = new Map<string, UpstreamPool>();
  for (const [network, urls] of Object.entries(urlsByNetwork)) {
    pools.set(
      network,
      new UpstreamPool({
        network,
        urls,
        config,
        metrics,
        methods,
        onHealth: onHealth && ((u, h, r, rule) => onHealth(network, u, h, r, rule)),
      }),
    );
  }
  return pools;
}
