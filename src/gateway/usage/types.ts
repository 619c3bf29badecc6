// Usage vocabulary shared by the meter, the usage store (which persists it) and the Prometheus metrics. It lives below
// both: the store is the bottom of the gateway and imports no folder above it.

/**
 * What became of a metered call. `auth`, `allowlist`, `limit` and `validation` are refusals by rpcgate (with their
 * JSON-RPC code); `node_error` is the node's own error passed through; `upstream_error` is no healthy upstream or an
 * upstream timeout (-32603 …); `backend_unavailable` is rpcgate's own shared backend (Redis: the limits backend,
 * -32044, or the filter store) unreachable — the call was refused, the node was not asked.
 */
export const OUTCOMES = [
  'ok',
  'node_error',
  'auth',
  'allowlist',
  'limit',
  'validation',
  'upstream_error',
  'backend_unavailable',
] as const;
export type Outcome = (typeof OUTCOMES)[number];

/** Outcome → index into per-outcome arrays (hot path: an own-property lookup, no allocation). */
export const OUTCOME_INDEX: Readonly<Record<Outcome, number>> = Object.freeze(
  Object.fromEntries(OUTCOMES.map((o, i) => [o, i])) as Record<Outcome, number>,
);

/** Whom usage is attributed to in the store (apps of access point A, network keys of access point B). */
export type MeterPrincipal =
  | { readonly kind: 'app'; readonly appId: string; readonly userId: string }
  | { readonly kind: 'key'; readonly keyId: string; readonly userId: string };

/** Label value for methods outside the contract (and networks outside the configured set): bounded cardinality. */
export const OTHER = 'other';
