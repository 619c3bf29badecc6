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
  /** Counts compute units (a call adds its units) instead of requests (a call adds 1). */
  units?: boolean;
}

/** What a call of `n` requests weighing `u` units adds to this slot's counter. */
export function amount(s: Slot, n: number, u: number): number {
  return s.units ? u : n;
}

/**
 * Index of the limit that refuses `n` more (count + n > limit), or -1 when all fit. When several refuse,
 * the one that resets last: retrying before it would fail again.
 */
export function refusingSlot(slots: readonly Slot[], k: number, n: number, u = n): number {
  let r = -1;
  for (let i = 0; i < k; i++) {
    const s = slots[i];
    if (s.count + amount(s, n, u) > s.limit && (r < 0 || s.resetAt > slots[r].resetAt)) r = i;
  }
  return r;
}

/** Marks a decision about a unit limit (absent on request limits, so decisions read as before units existed). */
function measured(d: LimitDecision, s: Slot): LimitDecision {
  if (s.units) d.units = true;
  return d;
}

export function refusedDecision(s: Slot, now: number): LimitDecision {
  return measured(
    {
      allowed: false,
      limit: s.limit,
      remaining: Math.max(0, s.limit - s.count),
      resetAt: s.resetAt,
      period: s.period,
      retryAfterSec: retryAfterSec(s.resetAt, now),
    },
    s,
  );
}

/** After `n` were counted: the limit with the least remaining (ties: the one that resets last). */
export function allowedDecision(
  slots: readonly Slot[],
  k: number,
  n: number,
  unlimitedResetAt: number,
  u = n,
): LimitDecision {
  if (k === 0)
    return {
      allowed: true,
      limit: Infinity,
      remaining: Infinity,
      resetAt: unlimitedResetAt,
      period: 'day',
    };
  let best = 0;
  let bestRem = slots[0].limit - slots[0].count - amount(slots[0], n, u);
  for (let i = 1; i < k; i++) {
    const s = slots[i];
    const rem = s.limit - s.count - amount(s, n, u);
    if (rem < bestRem || (rem === bestRem && s.resetAt > slots[best].resetAt)) {
      best = i;
      bestRem = rem;
    }
  }
  const s = slots[best];
  return measured({ allowed: true, limit: s.limit, remaining: bestRem, resetAt: s.resetAt, period: s.period }, s);
}

/** Decision for `n` more requests weighing `u` units given counts before the call; `n` 0 is a peek that asks "would
 *  one more pass?" (one more request, one more unit). */
export function decide(
  slots: readonly Slot[],
  k: number,
  n: number,
  now: number,
  unlimitedResetAt: number,
  u = n,
): LimitDecision {
  const r = n === 0 ? refusingSlot(slots, k, 1, 1) : refusingSlot(slots, k, n, u);
  return r >= 0 ? refusedDecision(slots[r], now) : allowedDecision(slots, k, n, unlimitedResetAt, u);
}

/** One decision per slot (peekAll). */
export function slotDecisions(slots: readonly Slot[], k: number, now: number): LimitDecision[] {
  const out: LimitDecision[] = [];
  for (let i = 0; i < k; i++) {
    const s = slots[i];
    out.push(
      s.count + 1 > s.limit
        ? refusedDecision(s, now)
        : measured(
            { allowed: true, limit: s.limit, remaining: s.limit - s.count, resetAt: s.resetAt, period: s.period },
            s,
          ),
    );
  }
  return out;
}

export function checkN(n: number): void {
  if (!Number.isSafeInteger(n) || n < 1) throw new RangeError(`limits: n must be a positive integer, got ${n}`);
}

export function checkUnits(u: number): void {
  if (!Number.isSafeInteger(u) || u < 0) throw new RangeError(`limits: units must be a non-negative integer, got ${u}`);
}
