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
//   rpcgate's own error (data.source rpcgate, a code of src/gateway/errors.ts), wherever it arose (admission hook,
//   a handler, before the engine), whatever its HTTP status → its table row's outcome: auth (-32016), allowlist
//                                              (-32041, -32601/403), limit (-32005 rate, quota, connections,
//                                              subscriptions, block-range, response-size; -32000 filters),
//                                              backend_unavailable (-32044, filter store), upstream_error (-32042,
//                                              -32043); also counted in rpcgate_refusals_total{network,outcome,reason}
//   failed: any other error with HTTP 200    → node_error (the node's own error, passed through)
//   failed: any other                        → upstream_error (bad answer, strict result violation, unexpected failure)
//   refused before the engine, not rpcgate's → validation (-32600: 404/413/415), -32603 upstream_error
// Limit refusals with a period (the limiter's) are also counted in rpcgate_limit_refusals_total{network,period}.
// Request log (src/gateway/metering/request-log.ts): calls of apps and network keys are also queued there (one object
// push; HTTP status = 200 for a result, else the error's status; the upstream that answered from
// src/gateway/upstream/answered.ts; params and result only for apps with capture on).
import type { AccessContext, Principal } from '../access/index.js';
import { isCacheHit } from '../cache/index.js';
import type { LimitPeriod } from '../limits/types.js';
import { OTHER, meterPrincipal, type Meter, type Metrics, type Outcome } from '../metering/index.js';
import type { CallObserver, CallStage } from '@rpcgate/toolkit/engine';
import { ErrorCode, type RpcError } from '@rpcgate/toolkit/errors';
import { gatewayErrorMeaning } from '../errors.js';
import type { RequestLog } from '../metering/request-log.js';
import { answeredBy } from '../upstream/answered.js';

/** A refusal by the admission hook or before the engine: the table's outcome (every such error is rpcgate's own). */
function refusalOutcome(err: RpcError): Outcome {
  return gatewayErrorMeaning(err)?.outcome ?? (err.code === ErrorCode.InternalError ? 'upstream_error' : 'validation');
}

function outcomeOf(stage: CallStage, err: RpcError | undefined): Outcome {
  switch (stage) {
    case 'ok':
      return 'ok';
    case 'invalid':
      return 'validation';
    case 'refused':
      return refusalOutcome(err!);
    default: {
      if (err === undefined) return 'upstream_error';
      // rpcgate's own error (the block-range cap, the subscription cap, too many filters, a response over the size cap,
      // the filter store down, no healthy upstream…): its row in the error table says what it is, whatever its HTTP
      // status — it was never the node's answer.
      const own = gatewayErrorMeaning(err);
      if (own !== undefined) return own.outcome;
      return err.httpStatus === 200 ? 'node_error' : 'upstream_error';
    }
  }
}

export class CallMeter {
  /** The engine's call observer (bound once). */
  readonly onCall: CallObserver<AccessContext>;

  constructor(
    private readonly meter: Meter,
    private readonly metrics: Metrics,
    private readonly requestLog?: RequestLog,
  ) {
    this.onCall = (method, stage, err, ctx, result, params) =>
      this.record(method ?? OTHER, outcomeOf(stage, err), err, ctx, result, params);
  }

  private record(
    method: string,
    outcome: Outcome,
    err: RpcError | undefined,
    ctx: AccessContext,
    result: unknown,
    params: unknown,
  ): void {
    const network = ctx.network;
    const t0 = ctx.startedAt;
    const principal = meterPrincipal(ctx.principal);
    const cacheHit = isCacheHit(result);
    const latencyMs = t0 === undefined ? 0 : performance.now() - t0;
    this.meter.record({ principal, network, method, outcome, code: err?.code, latencyMs, cacheHit });
    const log = this.requestLog;
    if (log !== undefined && principal !== undefined) {
      const p = ctx.principal;
      const capture = p !== undefined && p.kind === 'app' && p.logBodies === true;
      log.record({
        ts: 0,
        principal,
        network,
        method,
        httpStatus: err === undefined ? 200 : err.httpStatus,
        code: err?.code,
        latencyMs,
        cacheHit,
        upstream: cacheHit ? undefined : answeredBy(err ?? result),
        requestId: ctx.requestId,
        ip: ctx.ip,
        transport: 'socket' in ctx ? 'ws' : 'http',
        params: capture ? (params ?? null) : undefined,
        result: capture
          ? err === undefined
            ? (result ?? null)
            : { error: { code: err.code, message: err.message } }
          : undefined,
      });
    }
    if (err !== undefined) this.ownError(network, outcome, err);
  }

  /** A request refused before the engine: one call, method `other`. */
  refused(
    network: string,
    principal: Principal | undefined,
    err: RpcError,
    startedAt: number,
    requestId?: string,
    ip?: string,
  ): void {
    const outcome = refusalOutcome(err);
    const mp = meterPrincipal(principal);
    const latencyMs = performance.now() - startedAt;
    this.meter.record({ principal: mp, network, method: OTHER, outcome, code: err.code, latencyMs });
    if (mp !== undefined && this.requestLog !== undefined)
      this.requestLog.record({
        ts: 0,
        principal: mp,
        network,
        method: OTHER,
        httpStatus: err.httpStatus,
        code: err.code,
        latencyMs,
        cacheHit: false,
        upstream: undefined,
        requestId,
        ip,
        transport: 'http',
      });
    this.ownError(network, outcome, err);
  }

  /** rpcgate's own errors by reason (rpcgate_refusals_total); limit refusals with a period also by period. */
  private ownError(network: string, outcome: Outcome, err: RpcError): void {
    const own = gatewayErrorMeaning(err);
    if (own !== undefined) this.metrics.ownError(network, outcome, own.reason);
    if (outcome === 'limit') this.limitRefused(network, err);
  }

  private limitRefused(network: string, err: RpcError): void {
    const period = (err.data as { period?: string } | undefined)?.period;
    if (period !== undefined) this.metrics.limitRefusal(network, period as LimitPeriod); // caps without a period: by reason only
  }
}
