// In-process backend: counters in Maps, one Map per (kind, period) holding only the current window.
// A window change clears its Map, so stale periods are dropped without a sweep. Single-threaded JS makes
// check-then-increment atomic; the work per call is a few Map lookups and one decision object.
// An app's call (A) counts its per-second window under the app and its day/month windows under the app's user:
// the quotas are the account's, shared by all its apps (more apps do not multiply them); the rate stays per app.
import { UtcCalendar } from './calendar.js';
import { amount, checkN, checkUnits, decide, slotDecisions } from './decide.js';
import { resolvePlans, type LimitsConfig, type ResolvedPlans } from './plans.js';
import type { LimitDecision, LimitSubject, Limiter } from './types.js';
import { windowsOf, type Window, type WindowKind } from './windows.js';

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

interface MemSlot extends Window {
  store: WindowCounts;
}

export class MemoryLimiter implements Limiter {
  readonly backend = 'memory' as const;
  readonly plans: ResolvedPlans;
  private readonly cal = new UtcCalendar();
  /** One store per kind of window (windows.ts), holding only the current window's counts. */
  private readonly stores = new Map<WindowKind, WindowCounts>();
  /** Reused per call (calls are synchronous inside): no per-call arrays. */
  private readonly slots: MemSlot[] = [];

  constructor(config: LimitsConfig = {}) {
    this.plans = resolvePlans(config);
  }

  /** Fills this.slots for the subject (shortest period first), loading current counts; returns how many. */
  private fill(subject: LimitSubject, now: number): number {
    this.cal.at(now);
    const slots = this.slots;
    const k = windowsOf(this.plans, subject, now, slots);
    for (let i = 0; i < k; i++) {
      const s = slots[i];
      let store = this.stores.get(s.kind);
      if (store === undefined) this.stores.set(s.kind, (store = new WindowCounts()));
      store.roll(s.start);
      s.store = store;
      s.count = store.counts.get(s.id) ?? 0;
    }
    return k;
  }

  /** Synchronous consume for callers on the hot path that want to skip a Promise. */
  consumeSync(subject: LimitSubject, n: number, now = Date.now(), units = n): LimitDecision {
    checkN(n);
    checkUnits(units);
    const k = this.fill(subject, now);
    const d = decide(this.slots, k, n, now, this.cal.dayEnd, units);
    if (d.allowed) {
      for (let i = 0; i < k; i++) {
        const s = this.slots[i];
        s.store.counts.set(s.id, s.count + amount(s, n, units));
      }
    }
    return d;
  }

  peekSync(subject: LimitSubject, now = Date.now()): LimitDecision {
    const k = this.fill(subject, now);
    return decide(this.slots, k, 0, now, this.cal.dayEnd);
  }

  consumeNow(subject: LimitSubject, n: number, units?: number): LimitDecision {
    return this.consumeSync(subject, n, undefined, units);
  }

  peekNow(subject: LimitSubject): LimitDecision {
    return this.peekSync(subject);
  }

  async consume(subject: LimitSubject, n: number, now?: number, units?: number): Promise<LimitDecision> {
    return this.consumeSync(subject, n, now, units);
  }

  async peek(subject: LimitSubject, now?: number): Promise<LimitDecision> {
    return this.peekSync(subject, now);
  }

  async peekAll(subject: LimitSubject, now = Date.now()): Promise<LimitDecision[]> {
    const k = this.fill(subject, now);
    return slotDecisions(this.slots, k, now);
  }

  async close(): Promise<void> {
    for (const store of this.stores.values()) store.counts.clear();
  }
}
