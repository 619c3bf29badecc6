// Metering of the node API: every JSON-RPC call → one Meter.record (O(1), no I/O; the Meter also feeds Prometheus).
//
// Two sources, one per place a call can end:
//   - the engine's call observer (`onCall`): calls that reached the engine — batch items one by one, notifications
//     included; parse errors and empty/oversized batches count as one call with method `other`;
//   - the node API route (`refused`, ./node-route.ts): requests refused before the engine (missing/unknown key, wrong
//     network or URL shape, Content-Type, origin/IP/JWT, body over the limit, unknown network) — one call, method
//     `other` (the body is not parsed for it).
// Cache hits: an `ok` call whose result came from the network's response cache (src/gateway/cache: a CachedResult,
// told by its class — nothing per call) counts as a call and as a cache hit (usage rows' cache_hits).
// Latency: from the moment the server took the request (headers parsed, `ctx.startedAt`) to the call's outcome
// (result or error ready, before the response is written); a batch item's latency ends when that item is done.
//
// Outcome of a call (with its JSON-RPC code when not ok):
//   engine stage ok                         → ok
//   invalid (envelope, method, params)       → validation (-32700, -32600, -32601, -32602)
//   refused by the admission hook            → by code (src/gateway/errors.ts): -32005 limit, -32041 or -32601 (method
//                                              allowlist) allowlist, -32016 auth, -32044 (limits backend down)
//                                              backend_unavailable; anything else → upstream_error
//   failed: an error with HTTP status 200    → node_error (the node's own error, passed through)
//   failed: the filter store (Redis) down    → backend_unavailable (503, data.reason filter-store)
//   failed: any other (502/503/504/500)      → upstream_error (no healthy upstream, timeout, bad answer, strict
//                                              result violation, unexpected failure)
//   refused before the engine                → by code: -32016 auth, -32041 allowlist, -32005 limit, -32044
//                                              backend_unavailable, -32603 upstream_error, else validation (-32600: 404/413/415)
// Limit refusals are also counted in rpcgate_limit_refusals_total{network,period} (per refused call).
import type { AccessContext, Principal } from '../access/index.js';
import { isCacheHit } from '../cache/index.js';
import type { LimitPeriod } from '../limits/types.js';
import { OTHER, meterPrincipal, type Meter, type Metrics, type Outcome } from '../metering/index.js';
import type { CallObserver, CallStage } from '@rpcgate/toolkit/engine';
import { ErrorCode, type RpcError } from '@rpcgate/toolkit/errors';
import { GatewayErrorCode, isGatewayError } from '../errors.js';

function refusalOutcome(code: number): Outcome {
  switch (code) {
    case GatewayErrorCode.LimitExceeded:
      return 'limit';
    case GatewayErrorCode.Forbidden:
    case GatewayErrorCode.MethodNotAllowed:
      return 'allowlist';
    case GatewayErrorCode.Unauthorized:
      return 'auth';
    case GatewayErrorCode.LimitsBackendUnavailable:
      return 'backend_unavailable';
    default:
      return 'upstream_error';
  }
}

function outcomeOf(stage: CallStage, err: RpcError | undefined): Outcome {
  switch (stage) {
    case 'ok':
      return 'ok';
    case 'invalid':
      return 'validation';
    case 'refused':
      return refusalOutcome(err!.code);
    default:
      if (err === undefined) return 'upstream_error';
      if (err.httpStatus === 200) return 'node_error';
      return (err.data as { reason?: unknown } | undefined)?.reason === 'filter-store' && isGatewayError(err) ? 'backend_unavailable' : 'upstream_error';
  }
}

export class CallMeter {
  /** The engine's call observer (bound once). */
  readonly onCall: CallObserver<AccessContext>;

  constructor(
    private readonly meter: Meter,
    private readonly metrics: Metrics,
  ) {
    this.onCall = (method, stage, err, ctx, result) => this.record(method ?? OTHER, outcomeOf(stage, err), err, ctx, isCacheHit(result));
  }

  private record(method: string, outcome: Outcome, err: RpcError | undefined, ctx: AccessContext, cacheHit: boolean): void {
    const network = ctx.network;
    const t0 = ctx.startedAt;
    this.meter.record({
      principal: meterPrincipal(ctx.principal),
      network,
      method,
      outcome,
      code: err?.code,
      latencyMs: t0 === undefined ? 0 : performance.now() - t0,
      cacheHit,
    });
    if (outcome === 'limit') this.limitRefused(network, err!);
  }

  /** A request refused before the engine: one call, method `other`. */
  refused(network: string, principal: Principal | undefined, err: RpcError, startedAt: number): void {
    const c = err.code;
    const outcome: Outcome =
      c === GatewayErrorCode.Unauthorized ||
      c === GatewayErrorCode.Forbidden ||
      c === GatewayErrorCode.LimitExceeded ||
      c === GatewayErrorCode.LimitsBackendUnavailable ||
      c === ErrorCode.InternalError
        ? refusalOutcome(c)
        : 'validation';
    this.meter.record({ principal: meterPrincipal(principal), network, method: OTHER, outcome, code: c, latencyMs: performance.now() - startedAt });
    if (outcome === 'limit') this.limitRefused(network, err);
  }

  private limitRefused(network: string, err: RpcError): void {
    const period = (err.data as { period?: string } | undefined)?.period;
    this.metrics.limitRefusal(network, (period ?? 'unknown') as LimitPeriod);
  }
}
