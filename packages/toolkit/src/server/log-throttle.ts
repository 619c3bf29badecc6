// Logging what may happen on every call while a backend is down (Redis, a node's head poll): the first occurrence
// of a kind is logged, then at most one line per `everyMs`, carrying how many occurrences were not logged since — a
// flood of refused calls must not become a flood of log lines.

export class LogThrottle {
  private readonly kinds = new Map<string, { at: number; skipped: number }>();

  constructor(private readonly everyMs: number) {}

  /** An occurrence of `kind`: undefined when it is not to be logged, else how many before it were not (0 = none). */
  take(kind = '', now = Date.now()): number | undefined {
    const k = this.kinds.get(kind);
    if (k === undefined) {
      this.kinds.set(kind, { at: now, skipped: 0 });
      return 0;
    }
    if (now - k.at < this.everyMs) {
      k.skipped++;
      return undefined;
    }
    const skipped = k.skipped;
    k.at = now;
    k.skipped = 0;
    return skipped;
  }

  /** Forget `kind`: its next occurrence is logged at once (e.g. the backend came back). */
  reset(kind = ''): void {
    this.kinds.delete(kind);
  }
}
