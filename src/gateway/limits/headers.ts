// A decision as HTTP: rate-limit headers on every node API response, and the -32005 error when refused.
import type { RpcError } from '@rpcgate/toolkit/errors';
import { limitExceeded } from '../errors.js';
import { PERIODS } from './periods.js';
import type { LimitDecision } from './types.js';

/**
 * Headers for a node API response: x-ratelimit-limit, x-ratelimit-remaining, x-ratelimit-reset (epoch seconds),
 * plus retry-after (seconds, ≥ 1) when a per-second rate refused (a used-up quota has none: see limitExceeded).
 * Empty for a subject without limits (all switched off in the plan).
 */
export function limitHeaders(d: LimitDecision): Record<string, string> {
  if (!Number.isFinite(d.limit)) return {};
  // The limit and the reset rarely change from one call to the next: their strings are kept (number → string
  // conversion showed in profiles of the authenticated path).
  if (d.limit !== lastLimit) {
    lastLimit = d.limit;
    lastLimitStr = String(d.limit);
  }
  if (d.resetAt !== lastReset) {
    lastReset = d.resetAt;
    lastResetStr = String(Math.ceil(d.resetAt / 1000));
  }
  const h: Record<string, string> = {
    'x-ratelimit-limit': lastLimitStr,
    'x-ratelimit-remaining': String(d.remaining),
    'x-ratelimit-reset': lastResetStr,
  };
  if (!d.allowed && d.period === 'second') h['retry-after'] = String(d.retryAfterSec ?? 1);
  return h;
}

let lastLimit = NaN;
let lastLimitStr = '';
let lastReset = NaN;
let lastResetStr = '';

/** What the limit counts, in its message (the x-ratelimit-* numbers are in the same measure). */
function what(d: LimitDecision): string {
  return d.units ? 'compute units' : 'requests';
}

/**
 * The refusal as an RpcError: -32005, data {source, reason: rate|quota, limit, period, resetAt (ISO)}, and the headers
 * (x-ratelimit-*) for a single request. A per-second rate: HTTP 429 with Retry-After (≤ 1 s, clients retry). A daily or
 * monthly quota: HTTP 402 without Retry-After (no client retries it for hours; x-ratelimit-reset says when).
 */
export function limitError(d: LimitDecision, now = Date.now()): RpcError {
  const err = limitExceeded(
    { limit: d.limit, period: d.period, resetAt: d.resetAt },
    d.period === 'second'
      ? `limit exceeded: ${d.limit} ${what(d)} per second; resets at ${new Date(d.resetAt).toISOString()}`
      : `limit exceeded: ${PERIODS[d.period].quota} quota of ${d.limit} ${what(d)} used up (UTC ${d.period}); resets at ${new Date(d.resetAt).toISOString()}`,
    now,
  );
  const h: Record<string, string> = {
    'x-ratelimit-limit': String(d.limit),
    'x-ratelimit-remaining': String(d.remaining),
    'x-ratelimit-reset': String(Math.ceil(d.resetAt / 1000)),
  };
  if (err.httpStatus === 429) h['Retry-After'] = String(d.retryAfterSec ?? Number(err.headers?.['Retry-After'] ?? 1));
  err.headers = h;
  return err;
}
