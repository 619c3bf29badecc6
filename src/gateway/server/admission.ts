// The engine's admission hook for the node API: per-call allowlists (method, address), then the limiter.
// Calls refused by an allowlist do not count; the admitted ones are consumed all-or-nothing (a batch counts each
// admitted item, notifications included — they are forwarded too). Over a limit the whole request is refused (429
// for a per-second rate, 402 for a used-up quota; a batch gets the error once per item with an id) and nothing counts. Every answer of a principal with limits carries x-ratelimit-* headers.
import { checkCall, hasCallChecks, type AccessContext, type Principal } from '../access/index.js';
import { limitError, limitHeaders, type LimitDecision, type Limiter } from '../limits/index.js';
import type { AdmitCall, AdmitFn, AdmitResult } from '@rpcgate/toolkit/engine';
import { RpcError } from '@rpcgate/toolkit/errors';
import { limitsBackendUnavailable } from '../errors.js';
import { type AddressParam, DEFAULT_UNITS } from '../method-meaning.js';
import { inSpan, tracing } from '../telemetry/index.js';

/** Headers that describe a subject's state without counting (for responses where nothing was admitted). */
function stateHeaders(d: LimitDecision): Record<string, string> {
  // A peek at an exhausted limit reads as refused; only a refusing per-second rate carries Retry-After.
  return limitHeaders(d.allowed ? d : { ...d, allowed: true });
}

function limiterDown(err: unknown, onError?: (err: unknown) => void): RpcError {
  onError?.(err);
  return limitsBackendUnavailable();
}

/** Rate-limit headers of a principal's current state (refusals before the engine: route, origin, IP, JWT). */
export async function peekLimitHeaders(
  limiter: Limiter | undefined,
  p: Principal,
  onError?: (err: unknown) => void,
): Promise<Record<string, string> | undefined> {
  if (limiter === undefined || p.limitSubject === undefined) return undefined;
  try {
    return stateHeaders(await limiter.peek(p.limitSubject));
  } catch (e) {
    onError?.(e);
    return undefined;
  }
}

/** `addressParams`: where each method names contract addresses (method-meaning.ts `addressParamsTable` of the node
 *  contract), for the address allowlist. `units`: each method's compute units (`unitsTable`), counted against the
 *  plan's unit limits (a method not in it weighs DEFAULT_UNITS). */
export function createAdmission(
  limiter: Limiter | undefined,
  addressParams: ReadonlyMap<string, readonly AddressParam[]>,
  onError?: (err: unknown) => void,
  units: ReadonlyMap<string, number> = new Map(),
): AdmitFn<AccessContext> {
  const backend = limiter?.backend ?? 'none';
  const admit = (
    calls: readonly AdmitCall[],
    ctx: AccessContext,
  ): AdmitResult | undefined | Promise<AdmitResult | undefined> => {
    const p = ctx.principal;
    if (p === undefined) return undefined;
    let refused: (RpcError | undefined)[] | undefined;
    let admitted = calls.length;
    if (hasCallChecks(p)) {
      for (let i = 0; i < calls.length; i++) {
        const err = checkCall(p, calls[i].method, calls[i].params, addressParams.get(calls[i].method));
        if (err === undefined) continue;
        (refused ??= new Array<RpcError | undefined>(calls.length))[i] = err;
        admitted--;
      }
    }
    const subject = p.limitSubject;
    if (subject === undefined || limiter === undefined) return refused === undefined ? undefined : { refused };
    // In-process counters answer synchronously: the hook then returns its result without a Promise.
    let d: LimitDecision | Promise<LimitDecision>;
    try {
      d =
        admitted === 0
          ? limiter.peekNow(subject)
          : limiter.consumeNow(subject, admitted, unitsOf(calls, refused, units));
    } catch (e) {
      return failed(e, onError);
    }
    if (d instanceof Promise)
      return d.then(
        (v) => decided(v, admitted, refused),
        (e: unknown) => failed(e, onError),
      );
    return decided(d, admitted, refused);
  };
  return (calls, ctx) => {
    const tracer = tracing.tracer;
    if (tracer === undefined || ctx.span === undefined) return admit(calls, ctx);
    // The limits step of the request's trace: allowlists per call and the limiter.
    return inSpan(
      tracer,
      'rpcgate.limits',
      ctx.span,
      { 'rpcgate.limits.calls': calls.length, 'rpcgate.limits.backend': backend },
      () => admit(calls, ctx),
      (span, r) => {
        const err = r?.error;
        span.setAttribute('rpcgate.limits.allowed', err === undefined);
        if (err !== undefined) span.setAttribute('rpc.jsonrpc.error_code', err.code);
        if (r?.refused !== undefined)
          span.setAttribute('rpcgate.limits.refused_calls', r.refused.filter(Boolean).length);
      },
    );
  };
}

/** Compute units of the admitted calls (those an allowlist did not refuse). */
export function unitsOf(
  calls: readonly AdmitCall[],
  refused: readonly (RpcError | undefined)[] | undefined,
  units: ReadonlyMap<string, number>,
): number {
  let u = 0;
  for (let i = 0; i < calls.length; i++)
    if (refused?.[i] === undefined) u += units.get(calls[i].method) ?? DEFAULT_UNITS;
  return u;
}

/** The limiter failed: an RpcError passes (the engine answers it), anything else is the backend being down. */
function failed(e: unknown, onError?: (err: unknown) => void): AdmitResult {
  if (e instanceof RpcError) throw e;
  return { error: limiterDown(e, onError) };
}

/** The answer for a decision: with nothing admitted (a peek) only the state's headers; else the whole request refused
 *  (429 / 402) or the rate-limit headers. */
function decided(d: LimitDecision, admitted: number, refused: (RpcError | undefined)[] | undefined): AdmitResult {
  if (admitted === 0) return { refused, headers: stateHeaders(d) };
  // limitError carries the x-ratelimit-* headers and (for a rate) Retry-After itself.
  if (!d.allowed) return { error: limitError(d) };
  return { refused, headers: limitHeaders(d) };
}
