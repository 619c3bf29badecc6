// UTC windows. The current day/month bounds and their key strings are cached and recomputed only when `now`
// leaves them, so the hot path does no Date work.

function pad2(v: number): string {
  return v < 10 ? `0${v}` : String(v);
}

export class UtcCalendar {
  dayStart = 0;
  /** Exclusive end = next day's 00:00 UTC = the day's resetAt. */
  dayEnd = -1;
  /** YYYYMMDD */
  dayKey = '';
  monthStart = 0;
  monthEnd = -1;
  /** YYYYMM */
  monthKey = '';

  /** Makes the cached bounds describe the day and month containing `now`. */
  at(now: number): this {
    if (now >= this.dayEnd || now < this.dayStart) this.recompute(now);
    return this;
  }

  private recompute(now: number): void {
    const d = new Date(now);
    const y = d.getUTCFullYear();
    const m = d.getUTCMonth();
    const dd = d.getUTCDate();
    this.dayStart = Date.UTC(y, m, dd);
    this.dayEnd = Date.UTC(y, m, dd + 1);
    const mk = `${y}${pad2(m + 1)}`;
    this.dayKey = `${mk}${pad2(dd)}`;
    if (mk !== this.monthKey) {
      this.monthStart = Date.UTC(y, m, 1);
      this.monthEnd = Date.UTC(y, m + 1, 1);
      this.monthKey = mk;
    }
  }
}

/** Whole seconds from now until resetAt, at least 1 (Retry-After). */
export function retryAfterSec(resetAt: number, now: number): number {
  return Math.max(1, Math.ceil((resetAt - now) / 1000));
}
