// LogThrottle (packages/toolkit/src/server/log-throttle.ts): what every failing call could log is logged once, then at most
// once per interval per kind with the count of what was skipped; reset() makes the next occurrence log at once.
import { describe, expect, it } from 'vitest';
import { LogThrottle } from '../packages/toolkit/src/server/log-throttle.js';

describe('LogThrottle', () => {
  it('logs the first occurrence, skips within the interval, then logs with the skipped count; kinds are apart', () => {
    const t = new LogThrottle(1000);
    expect(t.take('a', 0)).toBe(0);
    expect([t.take('a', 10), t.take('a', 500), t.take('a', 999)]).toEqual([undefined, undefined, undefined]);
    expect(t.take('b', 20)).toBe(0);
    expect(t.take('a', 1000)).toBe(3);
    expect(t.take('a', 1500)).toBeUndefined();
    expect(t.take('a', 2001)).toBe(1);
    t.reset('a');
    expect(t.take('a', 2002)).toBe(0);
    expect(t.take('b', 1019)).toBeUndefined();
  });
});
