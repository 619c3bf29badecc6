// The write-behind loop the meter (./meter.ts) and the request log (./request-log.ts) share: a call only records into
// memory; a timer (unref'd: it keeps no process alive) writes what was recorded in batches, one batch at a time and in
// call order, and skips its tick while a write is still running (a slow store costs batches, not a pile of writers).
// What a batch is, and what a failed one costs (the meter keeps it for a retry, the request log drops it), is the
// owner's `flushOnce`. Drops (a full buffer) are counted by the owner and logged once per flush, not once per call.

const noop = () => {};

export class FlushLoop<T> {
  private timer: NodeJS.Timeout | undefined;
  private tail: Promise<unknown> = Promise.resolve();
  private busy = false;

  /** `flushOnce` writes one batch; it is never run twice at once. */
  constructor(
    private readonly flushOnce: () => Promise<T>,
    private readonly intervalMs: number,
  ) {}

  /** Starts the periodic flush (idempotent). A tick's failure is the owner's to log; the next tick tries again. */
  start(): void {
    if (this.timer !== undefined) return;
    this.timer = setInterval(() => {
      if (!this.busy) this.flush().catch(noop);
    }, this.intervalMs);
    this.timer.unref();
  }

  /** Stops the timer (a flush in flight finishes; `flush` still works). */
  stopTimer(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  /** Runs `flushOnce` after every flush asked for before it: flushes run one at a time, in call order. */
  flush(): Promise<T> {
    const run = this.tail.then(() => this.guarded());
    this.tail = run.then(noop, noop);
    return run;
  }

  private async guarded(): Promise<T> {
    this.busy = true;
    try {
      return await this.flushOnce();
    } finally {
      this.busy = false;
    }
  }
}

/** Drops counted by an owner, logged as one warning per flush with how many since the last one. */
export class DropLog {
  private logged = 0;

  constructor(private readonly logger: { warn(obj: object, msg: string): void } | undefined) {}

  /** `total`: drops so far; `fields` are added to the warning. */
  report(total: number, msg: string, fields: object): void {
    if (total <= this.logged) return;
    this.logger?.warn({ dropped: total - this.logged, droppedTotal: total, ...fields }, msg);
    this.logged = total;
  }
}
