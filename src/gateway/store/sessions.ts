// Sessions: the cookie carries a random token; the table keeps only its sha256. Expiry is checked on every lookup
// (an expired row is deleted then), and `sweepExpiredSessions` clears the rest now and then.
import type { Kysely } from 'kysely';
import { hashSessionToken, newSessionToken } from '../secrets/keys.js';
import type { Database } from './schema.js';

export const DEFAULT_SESSION_TTL_MS = 7 * 86_400_000;

export interface Session {
  userId: string;
  createdAt: number;
  expiresAt: number;
}

/** Starts a session; returns the token for the cookie (never stored) and its expiry. */
export async function createSession(
  db: Kysely<Database>,
  userId: string,
  opts: { ttlMs?: number; now?: number } = {},
): Promise<{ token: string; expiresAt: number }> {
  const now = opts.now ?? Date.now();
  const token = newSessionToken();
  const expiresAt = now + (opts.ttlMs ?? DEFAULT_SESSION_TTL_MS);
  await db
    .insertInto('sessions')
    .values({ token_hash: hashSessionToken(token), user_id: userId, created_at: now, expires_at: expiresAt })
    .execute();
  return { token, expiresAt };
}

/** The live session for a cookie token, or undefined (unknown or expired — an expired one is deleted). */
export async function getSession(db: Kysely<Database>, token: string, now = Date.now()): Promise<Session | undefined> {
  const tokenHash = hashSessionToken(token);
  const r = await db.selectFrom('sessions').selectAll().where('token_hash', '=', tokenHash).executeTakeFirst();
  if (r === undefined) return undefined;
  if (Number(r.expires_at) <= now) {
    await db.deleteFrom('sessions').where('token_hash', '=', tokenHash).execute();
    return undefined;
  }
  return { userId: r.user_id, createdAt: Number(r.created_at), expiresAt: Number(r.expires_at) };
}

/** Log out. */
export async function deleteSession(db: Kysely<Database>, token: string): Promise<boolean> {
  const r = await db.deleteFrom('sessions').where('token_hash', '=', hashSessionToken(token)).executeTakeFirst();
  return r.numDeletedRows > 0n;
}

/** Log out everywhere (e.g. after a password reset), or everywhere but the session of `keepToken` (a password
 *  change: the browser that made it stays signed in). */
export async function deleteUserSessions(db: Kysely<Database>, userId: string, keepToken?: string): Promise<number> {
  let q = db.deleteFrom('sessions').where('user_id', '=', userId);
  if (keepToken !== undefined) q = q.where('token_hash', '!=', hashSessionToken(keepToken));
  const r = await q.executeTakeFirst();
  return Number(r.numDeletedRows);
}

/** Deletes every expired session; returns how many. */
export async function sweepExpiredSessions(db: Kysely<Database>, now = Date.now()): Promise<number> {
  const r = await db.deleteFrom('sessions').where('expires_at', '<=', now).executeTakeFirst();
  return Number(r.numDeletedRows);
}
