// The engine's admission hook for the node API: per-call allowlists (method, address), then the limiter.
// Calls refused by an allowlist do not count; the admitted ones are consumed all-or-nothing (a batch counts each
// admitted item, notifications included — they are forwarded too). Over a limit the whole request is refused (429
// for a per-second rate, 402 for a used-up quota; a batch gets the error once per item with an id) and nothing counts. Every answer of a principal with limits carries x-ratelimit-* headers.
import { checkCall, hasCallChecks, type AccessContext, type Principal } from '../access/index.js';
import {
  limitError,
  limitHeaders,
  MemoryLimiter,
  type LimitDecision,
  type Limiter,
  type LimitSubject,
} from '../limits/index.js';
import type { AdmitCall, AdmitFn, AdmitResult } from '@rpcgate/toolkit/engine';
import { RpcError } from '@rpcgate/toolkit/errors';
import { limitsBackendUnavailable } from '../errors.js';
import type { AddressParam } from '../method-meaning.js';
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
 *  contract), for the address allowlist. */
export function createAdmission(
  limiter: Limiter | undefined,
  addressParams: ReadonlyMap<string, readonly AddressParam[]>,
  onError?: (err: unknown) => void,
): AdmitFn<AccessContext> {
  // In-process counters answer synchronously: the hook then returns its result without a Promise.
  const memory = limiter instanceof MemoryLimiter ? limiter : undefined;
  const backend = limiter === undefined ? 'none' : memory !== undefined ? 'memory' : 'redis';
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
    if (memory !== undefined) {
      let d: LimitDecision;
      try {
        if (admitted === 0) return { refused, headers: stateHeaders(memory.peekSync(subject)) };
        d = memory.consumeSync(subject, admitted);
      } catch (e) {
        if (e instanceof RpcError) throw e;
        return { error: limiterDown(e, onError) };
      }
      return decided(d, refused);
    }
    return admitAsync(limiter, subject, admitted, refused, onError);
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

/** The answer for a decision: the whole request refused (429 / 402), otherwise the rate-limit headers. */
function decided(d: LimitDecision, refused: (RpcError | undefined)[] | undefined): AdmitResult {
  // limitError carries the x-ratelimit-* headers and (for a rate) Retry-After itself.
  if (!d.allowed) return { error: limitError(d) };
  return { refused, headers: limitHeaders(d) };
}

async function admitAsync(
  limiter: Limiter,
  subject: LimitSubject,
  admitted: number,
  refused: (RpcError | undefined)[] | undefined,
  onError?: (err: unknown) => void,
): Promise<AdmitResult> {
  let d: LimitDecision;
  try {
    if (admitted === 0) return { refused, headers: stateHeaders(await limiter.peek(subject)) };
    d = await limiter.consume(subject, admitted);
  } catch (e) {
    if (e instanceof RpcError) throw e;
    return { error: limiterDown(e, onError) };
  }
  return decided(d, refused);
}
