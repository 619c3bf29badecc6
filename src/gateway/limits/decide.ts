// Turning counter values into a decision. Shared by both backends so they answer identically.
import { retryAfterSec } from './calendar.js';
import type { LimitDecision, LimitPeriod } from './types.js';

/** One limit of a subject in the current window, with its counter value BEFORE this call. */
export interface Slot {
  period: LimitPeriod;
  limit: number;
  /** Window end, epoch ms. */
  resetAt: number;
  count: number;
}

/**
 * Index of the limit that refuses `n` more (count + n > limit), or -1 when all fit. When several refuse,
 * the one that resets last: retrying before it would fail again.
 */
export function refusingSlot(slots: readonly Slot[], k: number, n: number): number {
  let r = -1;
  for (let i = 0; i < k; i++) {
    const s = slots[i];
    if (s.count + n > s.limit && (r < 0 || s.resetAt > slots[r].resetAt)) r = i;
  }
  return r;
}

export function refusedDecision(s: Slot, now: number): LimitDecision {
  return {
    allowed: false,
    limit: s.limit,
    remaining: Math.max(0, s.limit - s.count),
    resetAt: s.resetAt,
    period: s.period,
    retryAfterSec: retryAfterSec(s.resetAt, now),
  };
}

/** After `n` were counted: the limit with the least remaining (ties: the one that resets last). */
export function allowedDecision(slots: readonly Slot[], k: number, n: number, unlimitedResetAt: number): LimitDecision {
  if (k === 0) return { allowed: true, limit: Infinity, remaining: Infinity, resetAt: unlimitedResetAt, period: 'day' };
  let best = 0;
  let bestRem = slots[0].limit - slots[0].count - n;
  for (let i = 1; i < k; i++) {
    const s = slots[i];
    const rem = s.limit - s.count - n;
    if (rem < bestRem || (rem === bestRem && s.resetAt > slots[best].resetAt)) {
      best = i;
      bestRem = rem;
    }
  }
  const s = slots[best];
  return { allowed: true, limit: s.limit, remaining: bestRem, resetAt: s.resetAt, period: s.period };
}

/** Decision for `n` more given counts before the call; `n` 0 is a peek that asks "would one more pass?". */
export function decide(
  slots: readonly Slot[],
  k: number,
  n: number,
  now: number,
  unlimitedResetAt: number,
): LimitDecision {
  const r = refusingSlot(slots, k, n === 0 ? 1 : n);
  return r >= 0 ? refusedDecision(slots[r], now) : allowedDecision(slots, k, n, unlimitedResetAt);
}

/** One decision per slot (peekAll). */
export function slotDecisions(slots: readonly Slot[], k: number, now: number): LimitDecision[] {
  const out: LimitDecision[] = [];
  for (let i = 0; i < k; i++) {
    const s = slots[i];
    out.push(
      s.count + 1 > s.limit
        ? refusedDecision(s, now)
        : { allowed: true, limit: s.limit, remaining: s.limit - s.count, resetAt: s.resetAt, period: s.period },
    );
  }
  return out;
}

export function checkN(n: number): void {
  if (!Number.isSafeInteger(n) || n < 1) throw new RangeError(`limits: n must be a positive integer, got ${n}`);
}
