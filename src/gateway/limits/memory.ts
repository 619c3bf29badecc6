// In-process backend: counters in Maps, one Map per (kind, period) holding only the current window.
// A window change clears its Map, so stale periods are dropped without a sweep. Single-threaded JS makes
// check-then-increment atomic; the work per call is a few Map lookups and one decision object.
// An app's call (A) counts its per-second window under the app and its day/month windows under the app's user:
// the quotas are the account's, shared by all its apps (more apps do not multiply them); the rate stays per app.
import { UtcCalendar } from './calendar.js';
import { checkN, decide, slotDecisions, type Slot } from './decide.js';
import { resolvePlans, type LimitsConfig, type ResolvedPlans } from './plans.js';
import type { LimitDecision, LimitPeriod, LimitSubject, Limiter } from './types.js';

class WindowCounts {
  start = -Infinity;
  readonly counts = new Map<string, number>();
  /** Moves to the window starting at `start`. A `now` from an older window (clock stepped back) is counted in the newer one. */
  roll(start: number): void {
    if (start > this.start) {
      if (this.counts.size > 0) this.counts.clear();
      this.start = start;
    }
  }
}

interface MemSlot extends Slot {
  store: WindowCounts;
  id: string;
}

function scratchSlot(): MemSlot {
  return {
    period: 'day' as LimitPeriod,
    limit: 0,
    resetAt: 0,
    count: 0,
    store: undefined as unknown as WindowCounts,
    id: '',
  };
}

export class MemoryLimiter implements Limiter {
  readonly plans: ResolvedPlans;
  private readonly cal = new UtcCalendar();
  private readonly bDay = new WindowCounts();
  private readonly aSec = new WindowCounts();
  private readonly aDay = new WindowCounts();
  private readonly aMonth = new WindowCounts();
  /** Reused per call (calls are synchronous inside): no per-call arrays. */
  private readonly slots: MemSlot[] = [scratchSlot(), scratchSlot(), scratchSlot()];

  constructor(config: LimitsConfig = {}) {
    this.plans = resolvePlans(config);
  }

  /** Fills this.slots for the subject (shortest period first), loading current counts; returns how many. */
  private fill(subject: LimitSubject, now: number): number {
    const cal = this.cal.at(now);
    const slots = this.slots;
    let k = 0;
    if (subject.kind === 'B') {
      k = this.set(slots[k], k, this.bDay, cal.dayStart, subject.userId, 'day', this.plans.b.daily, cal.dayEnd);
      return k;
    }
    const p = this.plans.a;
    if (p.perSecond !== null) {
      const start = now - (now % 1000);
      k = this.set(slots[k], k, this.aSec, start, subject.appId, 'second', p.perSecond, start + 1000);
    }
    const user = subject.userId;
    if (p.daily !== null) k = this.set(slots[k], k, this.aDay, cal.dayStart, user, 'day', p.daily, cal.dayEnd);
    if (p.monthly !== null)
      k = this.set(slots[k], k, this.aMonth, cal.monthStart, user, 'month', p.monthly, cal.monthEnd);
    return k;
  }

  private set(
    s: MemSlot,
    k: number,
    store: WindowCounts,
    start: number,
    id: string,
    period: LimitPeriod,
    limit: number,
    resetAt: number,
  ): number {
    store.roll(start);
    s.store = store;
    s.id = id;
    s.period = period;
    s.limit = limit;
    s.resetAt = resetAt;
    s.count = store.counts.get(id) ?? 0;
    return k + 1;
  }

  /** Synchronous consume for callers on the hot path that want to skip a Promise. */
  consumeSync(subject: LimitSubject, n: number, now = Date.now()): LimitDecision {
    checkN(n);
    const k = this.fill(subject, now);
    const d = decide(this.slots, k, n, now, this.cal.dayEnd);
    if (d.allowed) {
      for (let i = 0; i < k; i++) {
        const s = this.slots[i];
        s.store.counts.set(s.id, s.count + n);
      }
    }
    return d;
  }

  peekSync(subject: LimitSubject, now = Date.now()): LimitDecision {
    const k = this.fill(subject, now);
    return decide(this.slots, k, 0, now, this.cal.dayEnd);
  }

  async consume(subject: LimitSubject, n: number, now?: number): Promise<LimitDecision> {
    return this.consumeSync(subject, n, now);
  }

  async peek(subject: LimitSubject, now?: number): Promise<LimitDecision> {
    return this.peekSync(subject, now);
  }

  async peekAll(subject: LimitSubject, now = Date.now()): Promise<LimitDecision[]> {
    const k = this.fill(subject, now);
    return slotDecisions(this.slots, k, now);
  }

  async close(): Promise<void> {
    this.bDay.counts.clear();
    this.aSec.counts.clear();
    this.aDay.counts.clear();
    this.aMonth.counts.clear();
  }
}
