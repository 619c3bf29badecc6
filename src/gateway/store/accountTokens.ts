// Single-use, time-limited tokens mailed for a password reset or an email verification (issue 27). The link carries
// 32 random bytes; the table keeps only their sha256, so a copy of the database opens nothing. Using a token deletes
// it in the same statement that reads it: two concurrent uses cannot both succeed.
import type { Kysely } from 'kysely';
import { hashSessionToken, newSessionToken } from '../secrets/keys.js';
import type { AccountTokenPurpose, Database } from './schema.js';

/** Issues a token for `purpose`; returns the token for the link (never stored). */
export async function createAccountToken(
  db: Kysely<Database>,
  userId: string,
  purpose: AccountTokenPurpose,
  ttlMs: number,
  now = Date.now(),
): Promise<{ token: string; expiresAt: number }> {
  const token = newSessionToken();
  const expiresAt = now + ttlMs;
  await db
    .insertInto('account_tokens')
    .values({ token_hash: hashSessionToken(token), user_id: userId, purpose, created_at: now, expires_at: expiresAt })
    .execute();
  return { token, expiresAt };
}

/** The user a token was issued to, when it is known, meant for `purpose` and not expired; the token stays (check a
 *  new password first, then {@link consumeAccountToken}: a refused password does not burn the link). */
export async function findAccountToken(
  db: Kysely<Database>,
  token: string,
  purpose: AccountTokenPurpose,
  now = Date.now(),
): Promise<string | undefined> {
  const r = await db
    .selectFrom('account_tokens')
    .select(['user_id', 'expires_at'])
    .where('token_hash', '=', hashSessionToken(token))
    .where('purpose', '=', purpose)
    .executeTakeFirst();
  return r !== undefined && Number(r.expires_at) > now ? r.user_id : undefined;
}

/** Uses a token: the user it was issued to when it is known, meant for `purpose` and not expired; undefined otherwise.
 *  The token is gone afterwards either way (an expired one too). */
export async function consumeAccountToken(
  db: Kysely<Database>,
  token: string,
  purpose: AccountTokenPurpose,
  now = Date.now(),
): Promise<string | undefined> {
  const r = await db
    .deleteFrom('account_tokens')
    .where('token_hash', '=', hashSessionToken(token))
    .where('purpose', '=', purpose)
    .returning(['user_id', 'expires_at'])
    .executeTakeFirst();
  return r !== undefined && Number(r.expires_at) > now ? r.user_id : undefined;
}

/** Drops every token of a user for `purpose` (after a reset: older links stop working). */
export async function deleteAccountTokens(
  db: Kysely<Database>,
  userId: string,
  purpose: AccountTokenPurpose,
): Promise<number> {
  const r = await db
    .deleteFrom('account_tokens')
    .where('user_id', '=', userId)
    .where('purpose', '=', purpose)
    .executeTakeFirst();
  return Number(r.numDeletedRows);
}

/** Deletes expired tokens; returns how many. Run now and then (the session sweep does). */
export async function sweepExpiredAccountTokens(db: Kysely<Database>, now = Date.now()): Promise<number> {
  const r = await db.deleteFrom('account_tokens').where('expires_at', '<=', now).executeTakeFirst();
  return Number(r.numDeletedRows);
}
