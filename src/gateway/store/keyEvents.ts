// The change feed that keeps every replica's in-memory access index in sync with the store.
//
// Every repository change that affects what the access index holds (a key created, rotated or deleted; an app's
// chain, JWT switch, allowlists or JWT keys changed; a user deleted) inserts a `key_events` row — key hash + kind —
// in the SAME transaction as the change. Each replica:
//   1. `feed.start()` (remember the end of the feed), then `loadAllActiveKeys()` (the snapshot);
//   2. every ~1 s `feed.poll()` → for each event: kind 'revoke' → drop the hash from the index; kind 'upsert' →
//      `loadAccessEntry(hash)` and put it (or drop it if it is gone by now). Applying an event means re-reading
//      the current row, so events are idempotent and their order does not matter; replays are harmless.
//   3. as a safety net, rebuild from a fresh snapshot every few minutes (also covers a replica that was away
//      longer than `pruneKeyEvents` keeps events).
// A change is thus visible on every replica within one poll interval plus one query (< 2 s with a 1 s poll).
//
// Ids come from a sequence (PG bigserial / SQLite AUTOINCREMENT). On PostgreSQL ids are taken at insert but become
// visible at commit, so a poll can see id 12 before id 11 commits. KeyEventFeed therefore remembers missing ids
// ("gaps") for `gapTimeoutMs` and asks for them again; a gap that never fills was a rolled-back transaction.
import type { Kysely } from 'kysely';
import type { Database, KeyEventKind } from './schema.js';

export interface KeyEvent {
  id: number;
  keyHash: string;
  kind: KeyEventKind;
  at: number;
}

/** Appends an event; call it with the transaction that makes the change. */
export async function recordKeyEvent(
  db: Kysely<Database>,
  keyHash: string,
  kind: KeyEventKind,
  at = Date.now(),
): Promise<void> {
  await db.insertInto('key_events').values({ key_hash: keyHash, kind, at }).execute();
}

/** Events with id > afterId, oldest first (raw; KeyEventFeed adds gap handling). */
export async function listKeyEventsSince(db: Kysely<Database>, afterId: number, limit = 1000): Promise<KeyEvent[]> {
  const rows = await db
    .selectFrom('key_events')
    .selectAll()
    .where('id', '>', afterId)
    .orderBy('id')
    .limit(limit)
    .execute();
  return rows.map(toEvent);
}

/** The newest event id (0 when the feed is empty). */
export async function latestKeyEventId(db: Kysely<Database>): Promise<number> {
  const r = await db
    .selectFrom('key_events')
    .select((eb) => eb.fn.max('id').as('max'))
    .executeTakeFirst();
  return Number(r?.max ?? 0);
}

/** Deletes events older than `maxAgeMs` (default 1 day); returns how many. Run it now and then from any replica. */
export async function pruneKeyEvents(db: Kysely<Database>, maxAgeMs = 86_400_000, now = Date.now()): Promise<number> {
  const r = await db
    .deleteFrom('key_events')
    .where('at', '<', now - maxAgeMs)
    .executeTakeFirst();
  return Number(r.numDeletedRows);
}

export interface KeyEventFeedOptions {
  /** How long a missing id is asked for again before it counts as rolled back (ms). */
  gapTimeoutMs?: number;
  /** At start, ids this far below the newest are checked for gaps (transactions in flight at start). */
  startWindow?: number;
  /** Rows per query; poll() loops until the feed is drained. */
  batch?: number;
  now?: () => number;
}

/** A cursor over key_events for one replica: each committed event is delivered once (at least once across restarts). */
export class KeyEventFeed {
  private cursor = 0;
  /** Missing id → when first noticed. */
  private readonly gaps = new Map<number, number>();
  private readonly gapTimeoutMs: number;
  private readonly startWindow: number;
  private readonly batch: number;
  private readonly now: () => number;

  constructor(
    private readonly db: Kysely<Database>,
    opts: KeyEventFeedOptions = {},
  ) {
    this.gapTimeoutMs = opts.gapTimeoutMs ?? 10_000;
    this.startWindow = opts.startWindow ?? 1000;
    this.batch = opts.batch ?? 1000;
    this.now = opts.now ?? Date.now;
  }

  /** The highest id delivered (or the feed's end at start). */
  get position(): number {
    return this.cursor;
  }

  /** Ids still awaited (for tests and metrics). */
  get pendingGaps(): number[] {
    return [...this.gaps.keys()].sort((a, b) => a - b);
  }

  /** Positions the feed at the current end. Call BEFORE loading the snapshot, so nothing falls between the two. */
  async start(): Promise<void> {
    const rows = await this.db
      .selectFrom('key_events')
      .select('id')
      .orderBy('id', 'desc')
      .limit(this.startWindow)
      .execute();
    this.gaps.clear();
    this.cursor = rows.length > 0 ? Number(rows[0].id) : 0;
    const present = new Set(rows.map((r) => Number(r.id)));
    const t = this.now();
    for (let id = Math.max(1, this.cursor - this.startWindow + 1); id < this.cursor; id++)
      if (!present.has(id)) this.gaps.set(id, t);
  }

  /** Events committed since the last poll (including late commits of earlier ids), oldest id first. */
  async poll(): Promise<KeyEvent[]> {
    const t = this.now();
    for (const [id, since] of this.gaps) if (t - since > this.gapTimeoutMs) this.gaps.delete(id);
    const out: KeyEvent[] = [];
    for (;;) {
      const gapIds = [...this.gaps.keys()];
      const rows = await this.db
        .selectFrom('key_events')
        .selectAll()
        .where((eb) =>
          gapIds.length > 0 ? eb.or([eb('id', '>', this.cursor), eb('id', 'in', gapIds)]) : eb('id', '>', this.cursor),
        )
        .orderBy('id')
        .limit(this.batch)
        .execute();
      for (const row of rows) {
        const id = Number(row.id);
        if (id > this.cursor) {
          // Ids skipped over are not visible yet (in flight) or rolled back: ask again for a while.
          for (let g = Math.max(this.cursor + 1, id - this.startWindow); g < id; g++) this.gaps.set(g, t);
          this.cursor = id;
        } else if (!this.gaps.delete(id)) {
          continue; // already delivered
        }
        out.push(toEvent(row));
      }
      // Each full batch advanced the cursor or filled gaps, so the next query moves on.
      if (rows.length < this.batch) return out;
    }
  }
}

function toEvent(r: { id: number; key_hash: string; kind: KeyEventKind; at: number }): KeyEvent {
  return { id: Number(r.id), keyHash: r.key_hash, kind: r.kind, at: Number(r.at) };
}
