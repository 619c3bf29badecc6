// The write-behind loop the meter and the request log share (src/gateway/metering/flush-loop.ts): flushes never
// overlap and run in call order; a tick while a write runs is skipped, not queued; a failed flush does not stop later
// ones; stopTimer stops the ticks. DropLog warns once per report with the drops since the last one.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { DropLog, FlushLoop } from '../src/gateway/metering/flush-loop.js';

describe('FlushLoop', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it('runs flushes one at a time, in call order; a failure does not block the next', async () => {
    const events: string[] = [];
    let running = 0;
    let n = 0;
    const loop = new FlushLoop(async () => {
      const i = ++n;
      running++;
      events.push(`start ${i} (running ${running})`);
      await new Promise((r) => setTimeout(r, 10));
      running--;
      events.push(`end ${i}`);
      if (i === 2) throw new Error('store down');
      return i;
    }, 1000);
    const a = loop.flush();
    const b = loop.flush();
    const c = loop.flush();
    await vi.advanceTimersByTimeAsync(50);
    expect(await a).toBe(1);
    await expect(b).rejects.toThrow('store down');
    expect(await c).toBe(3);
    expect(events).toEqual([
      'start 1 (running 1)',
      'end 1',
      'start 2 (running 1)',
      'end 2',
      'start 3 (running 1)',
      'end 3',
    ]);
  });

  it('ticks every interval, skips a tick while a write runs, and stops with stopTimer', async () => {
    let started = 0;
    let release: (() => void) | undefined;
    const loop = new FlushLoop(async () => {
      started++;
      await new Promise<void>((r) => (release = r));
    }, 100);
    loop.start();
    loop.start(); // idempotent: one timer
    await vi.advanceTimersByTimeAsync(100);
    expect(started).toBe(1);
    await vi.advanceTimersByTimeAsync(500); // five ticks while the first write hangs: none queued
    expect(started).toBe(1);
    release!();
    await vi.advanceTimersByTimeAsync(100);
    expect(started).toBe(2);
    release!();
    loop.stopTimer();
    await vi.advanceTimersByTimeAsync(1000);
    expect(started).toBe(2);
  });
});

describe('DropLog', () => {
  it('warns with the drops since the last warning, and not when there are none', () => {
    const warned: object[] = [];
    const log = new DropLog({ warn: (o) => warned.push(o) });
    log.report(0, 'm', { cap: 1 });
    log.report(3, 'm', { cap: 1 });
    log.report(3, 'm', { cap: 1 });
    log.report(5, 'm', { cap: 1 });
    expect(warned).toEqual([
      { dropped: 3, droppedTotal: 3, cap: 1 },
      { dropped: 2, droppedTotal: 5, cap: 1 },
    ]);
  });
});
