// The one mapping from a plan to counting windows, shared by both limiters (in-process and Redis): which counters a
// subject's call grows, under whose id, with which limit, and when each window starts and resets. A limiter only
// stores and compares counts. Adding a window (say an hourly one): its plan field (contracts/config.schema.json and
// plans.ts), a row here, and its period in periods.ts when new.
import { UtcCalendar } from './calendar.js';
import type { Slot } from './decide.js';
import { PERIODS } from './periods.js';
import type { ResolvedPlans } from './plans.js';
import type { LimitPeriod, LimitSubject } from './types.js';

/** One kind of counting window: whose counter, over which period, limited by which plan field. */
export interface WindowKind {
  /** Whose counter: `a` the app (access point A's rate), `au` the app's user (A's quotas, shared by all the user's
   *  apps), `b` the user (access point B's keys). Part of the counter's name (Redis keys `<prefix>:<scope>:<id>:…`). */
  scope: 'a' | 'au' | 'b';
  period: LimitPeriod;
  /** The period in counter names (`s`, `d`, `m`; `us`, `ud`, `um` for unit windows). */
  letter: string;
  /** Counts compute units (x-gateway.units of each call) instead of requests. */
  units: boolean;
  /** The plan's limit for this window; null = off. */
  limitOf(plans: ResolvedPlans): number | null;
}

/** A subject's windows, shortest period first (a decision's ties and peekAll follow this order). */
const A_WINDOWS: readonly WindowKind[] = [
  { scope: 'a', period: 'second', letter: 's', units: false, limitOf: (p) => p.a.perSecond },
  { scope: 'a', period: 'second', letter: 'us', units: true, limitOf: (p) => p.a.unitsPerSecond },
  { scope: 'au', period: 'day', letter: 'd', units: false, limitOf: (p) => p.a.daily },
  { scope: 'au', period: 'day', letter: 'ud', units: true, limitOf: (p) => p.a.dailyUnits },
  { scope: 'au', period: 'month', letter: 'm', units: false, limitOf: (p) => p.a.monthly },
  { scope: 'au', period: 'month', letter: 'um', units: true, limitOf: (p) => p.a.monthlyUnits },
];
const B_WINDOWS: readonly WindowKind[] = [
  { scope: 'b', period: 'day', letter: 'd', units: false, limitOf: (p) => p.b.daily },
  { scope: 'b', period: 'day', letter: 'ud', units: true, limitOf: (p) => p.b.dailyUnits },
];

/** One of a subject's windows now, with its counter value (`count`, 0 until a limiter loads it). */
export interface Window extends Slot {
  kind: WindowKind;
  /** The counter's owner: the app id (scope `a`) or the user id. */
  id: string;
  /** Window start, epoch ms. */
  start: number;
  /** The window in counter names: epoch second, YYYYMMDD or YYYYMM (a cached string: no per-call allocation). */
  label: number | string;
}

const cal = new UtcCalendar();

function bounds(period: LimitPeriod, now: number, w: Window): void {
  const fixed = PERIODS[period].ms;
  if (fixed !== undefined) {
    w.start = now - (now % fixed);
    w.resetAt = w.start + fixed;
    w.label = w.start / fixed;
    return;
  }
  cal.at(now);
  if (period === 'day') {
    w.start = cal.dayStart;
    w.resetAt = cal.dayEnd;
    w.label = cal.dayKey;
  } else {
    w.start = cal.monthStart;
    w.resetAt = cal.monthEnd;
    w.label = cal.monthKey;
  }
}

function blank(): Window {
  return { kind: B_WINDOWS[0], id: '', period: 'day', limit: 0, start: 0, resetAt: 0, label: '', count: 0 };
}

/**
 * The subject's windows at `now` under its own plans (`subject.plans`) or else the limiter's `plans`, shortest period first, written into `out` (its objects are reused,
 * missing ones created; counts reset to 0). Returns how many: `out` may hold more from earlier calls.
 */
export function windowsOf<W extends Window = Window>(
  plans: ResolvedPlans,
  subject: LimitSubject,
  now: number,
  out: W[] = [],
): number {
  const kinds = subject.kind === 'A' ? A_WINDOWS : B_WINDOWS;
  // The account's own plan (issue 27: named plans, per-account overrides) when the access index gave it one.
  const p = subject.plans ?? plans;
  let k = 0;
  for (const kind of kinds) {
    const limit = kind.limitOf(p);
    if (limit === null) continue;
    const w = (out[k] ??= blank() as W);
    w.kind = kind;
    w.id = kind.scope === 'a' && subject.kind === 'A' ? subject.appId : subject.userId;
    w.period = kind.period;
    w.units = kind.units;
    w.limit = limit;
    w.count = 0;
    bounds(kind.period, now, w);
    k++;
  }
  return k;
}

/** The counter's name: `<scope>:<id>:<letter>:<label>` (Redis keys put the prefix before it). */
export function counterName(w: Window): string {
  return `${w.kind.scope}:${w.id}:${w.kind.letter}:${w.label}`;
}
