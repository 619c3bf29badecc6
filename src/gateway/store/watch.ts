// A stalled database answers the account API in about a second (issue 26 item 9, audit finding 14).
//
// A PostgreSQL server that stopped answering (SIGSTOP, a hung host, a network black hole) looks, from the client, like
// a slow query: the pool's sockets stay open and nothing comes back. The pool's own bounds are long on purpose
// (statement_timeout 5 s for real queries): the audit saw -32045 after 6.0 s on the first call, 2.0 s after. The watch
// tells "slow" from "stalled" without a query per call:
//   - a call still running after PING_AFTER_MS makes the watch ping the server (`select 1`) on a connection of its
//     own, bounded by `timeoutMs` (durability.storeConnectTimeoutMs); a call that is merely slow is left alone (the
//     ping answered) and checked again after each further PING_AFTER_MS;
//   - a ping that fails or times out marks the store down: that call and every account call after it fail at once
//     (StoreDownError → -32045) while a probe pings every PROBE_EVERY_MS; the first answer marks it up again.
// So a stalled server costs a call about PING_AFTER_MS + 1.5 × timeoutMs (≈ 1.75 s with the 1 s default: a failed ping
// is confirmed once, see alive()), later calls
// nothing, and recovery is seen within about PROBE_EVERY_MS. Fast calls (the usual case) never ping.
import pg from 'pg';
import { StoreDownError } from './errors.js';

export const PING_AFTER_MS = 250;
export const PROBE_EVERY_MS = 500;

export interface StoreWatch {
  /** Runs one account call's store work: rejects with StoreDownError when the database is known down, or when it
   *  stops answering while `fn` runs. */
  guard<T>(fn: () => Promise<T>): Promise<T>;
  /** The database is known down right now. */
  readonly down: boolean;
  close(): Promise<void>;
}

/** SQLite (in-process, nothing to stall on a socket): the work as is. */
export const NO_WATCH: StoreWatch = { guard: (fn) => fn(), down: false, close: async () => undefined };

const noop = () => undefined;

export class PgWatch implements StoreWatch {
  private client: pg.Client | undefined;
  private ping: Promise<boolean> | undefined;
  private probeTimer: NodeJS.Timeout | undefined;
  private closed = false;
  /** Fails a call in flight (-32045). */
  private readonly pending = new Set<() => void>();
  down = false;

  constructor(
    private readonly connectionString: string,
    private readonly timeoutMs: number,
  ) {}

  async guard<T>(fn: () => Promise<T>): Promise<T> {
    if (this.down) throw new StoreDownError();
    const work = fn();
    let timer: NodeJS.Timeout | undefined;
    let settled = false;
    let fail: () => void = noop;
    const stalled = new Promise<never>((_, reject) => {
      fail = () => reject(new StoreDownError());
      const check = () => {
        if (settled) return;
        timer = setTimeout(
          () =>
            void this.alive().then((ok) => {
              if (ok) check();
            }),
          PING_AFTER_MS,
        );
      };
      check();
    });
    this.pending.add(fail); // any ping that fails fails every call in flight
    stalled.catch(noop);
    work.catch(noop); // answered -32045 already: its late failure has no one to tell
    try {
      return await Promise.race([work, stalled]);
    } finally {
      settled = true;
      clearTimeout(timer);
      this.pending.delete(fail);
    }
  }

  /** One ping at a time (concurrent slow calls share it): true when the server answered within the timeout. */
  private alive(): Promise<boolean> {
    // Up until now, one failed ping is confirmed by a second (fresh connection, half the bound) before the store is
    // called down: on a CPU-starved machine a ping can miss its bound while the server is fine, and calling it down
    // fails every call in flight (CI saw 126 of 300 concurrent keys_create answered -32045 that way). A stalled server
    // then costs the first call ≈ PING_AFTER_MS + 1.5 × timeoutMs; while down, probes are single pings.
    const confirmed = async () =>
      (await this.pingOnce(this.timeoutMs)) || (!this.down && (await this.pingOnce(this.timeoutMs / 2)));
    this.ping ??= confirmed().then((ok) => {
      this.ping = undefined;
      this.down = !ok;
      if (!ok) {
        for (const fail of this.pending) fail();
        if (!this.closed && this.probeTimer === undefined) this.probe();
      }
      return ok;
    });
    return this.ping;
  }

  private async pingOnce(timeoutMs: number): Promise<boolean> {
    let timer: NodeJS.Timeout | undefined;
    // When the bound is up, the answer may already be waiting on the socket: a busy event loop runs due timers before
    // it reads sockets, so a timer alone would call a server down for the process's own lag. The verdict waits one
    // turn (setImmediate runs after the sockets are read); pg's own timeouts are only a backstop behind it.
    const timeout = new Promise<false>((r) => (timer = setTimeout(() => setImmediate(() => r(false)), timeoutMs)));
    const attempt = (async () => {
      if (this.client === undefined) {
        const c = new pg.Client({
          connectionString: this.connectionString,
          connectionTimeoutMillis: 2 * timeoutMs,
          query_timeout: 2 * timeoutMs,
        });
        c.on('error', noop); // a dead connection: the next ping drops it
        this.client = c;
        await c.connect();
      }
      await this.client.query('select 1');
      return true as const;
    })().catch(() => false as const);
    const ok = await Promise.race([attempt, timeout]);
    clearTimeout(timer);
    if (!ok) this.drop();
    return ok;
  }

  /** Forgets the ping connection (a stalled server may never answer its goodbye: not awaited). */
  private drop(): void {
    const c = this.client;
    this.client = undefined;
    c?.end().catch(noop);
  }

  /** While down: ping every PROBE_EVERY_MS until the server answers. */
  private probe(): void {
    this.probeTimer = setTimeout(() => {
      void this.alive().then((ok) => {
        this.probeTimer = undefined;
        if (!ok && !this.closed) this.probe();
      });
    }, PROBE_EVERY_MS);
    this.probeTimer.unref();
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.probeTimer);
    this.drop();
  }
}
