// Fan-out in turns (src/gateway/subscriptions/manager.ts `scheduleFlush`): the connections owed a notification are
// flushed FLUSH_TURN (16) per event-loop turn, in the order they got it — so a fan-out to many sockets never holds the
// loop at once (I/O between turns: other clients' calls, the block's eth_getLogs answer), and a connection whose turn
// has not come yet sends what arrived meanwhile together with what it had (one write: sendAll). In process, with
// connections that record their writes; no limiter (nothing to count).
import { describe, expect, it } from 'vitest';
import { fakeConnection, subscriptionsOn } from './helpers/fake-socket.js';

const turn = () => new Promise<void>((r) => setImmediate(r));

describe('notifications are flushed in turns', () => {
  it('16 connections a turn, in order; I/O runs between turns; what arrives before a turn leaves with it', async () => {
    const { subs } = subscriptionsOn('mainnet');
    const N = 100;
    const writes: Array<{ conn: number; frames: number }> = [];
    const delivers: Array<(r: unknown) => void> = [];
    for (let i = 0; i < N; i++) {
      const c = fakeConnection('mainnet', { onWrite: (texts) => writes.push({ conn: i, frames: texts.length }) });
      void subs.subscribe(['newHeads'], c.ctx);
      delivers.push(c.deliver);
    }
    // A block's head to all 100, as the feed does (synchronously).
    for (const d of delivers) d({ number: '0x1' });
    expect(writes).toHaveLength(0); // nothing written in the feed's own turn
    // I/O between turns: a timer set now fires before the last turn (its phase comes before the next check phase).
    let timerAt = -1;
    setTimeout(() => (timerAt = writes.length), 0);
    await turn();
    expect(writes.map((w) => w.conn)).toEqual(Array.from({ length: 16 }, (_, i) => i));
    // Before the next turns: the block's logs arrive for every connection — the 84 not flushed yet send both at once.
    for (const d of delivers) d({ log: 1 });
    for (let t = 0; t < 10 && writes.length < N + 16; t++) await turn();
    expect(writes).toHaveLength(N + 16);
    // First the 84 connections in their turns with 2 frames each, in order; then the 16 early ones with the log alone.
    expect(writes.slice(16, N).map((w) => [w.conn, w.frames])).toEqual(
      Array.from({ length: N - 16 }, (_, i) => [i + 16, 2]),
    );
    expect(writes.slice(N).map((w) => [w.conn, w.frames])).toEqual(Array.from({ length: 16 }, (_, i) => [i, 1]));
    expect(timerAt).toBeGreaterThan(0);
    expect(timerAt).toBeLessThan(N + 16);
    subs.stop();
  });
});
