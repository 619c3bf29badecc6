// Sign-up invites (migration 0013_invites; issue 27 item 2). The link carries 32 random bytes; the table keeps only
// their sha256. An invite is used in the transaction that creates the account: the conditional UPDATE (pending, not
// expired, the email it is bound to) takes the row's lock, so of two concurrent sign-ups with one invite exactly one
// updates it and creates an account — the other sees it used. A sign-up whose email is taken rolls back and leaves the
// invite unused.
import type { Kysely } from 'kysely';
import { hashSessionToken, newId, newSessionToken } from '../secrets/keys.js';
import { isUniqueViolation } from './errors.js';
import type { Database } from './schema.js';
import { normalizeEmail, type User } from './users.js';

export type InviteStatus = 'pending' | 'used' | 'expired' | 'revoked';

export interface Invite {
  id: string;
  email?: string;
  createdBy?: string;
  /** The issuing admin's email, while that account exists. */
  createdByEmail?: string;
  createdAt: number;
  expiresAt: number;
  usedAt?: number;
  usedBy?: string;
  revokedAt?: number;
  status: InviteStatus;
}

/** Most invites one list holds (newest first). */
export const MAX_INVITES_LISTED = 200;

/** Issues an invite; returns its id and the token for the link (never stored). */
export async function createInvite(
  db: Kysely<Database>,
  input: { email?: string; createdBy?: string; ttlMs: number },
  now = Date.now(),
): Promise<{ id: string; token: string; expiresAt: number; email?: string }> {
  const token = newSessionToken();
  const id = newId('inv');
  const email = input.email === undefined ? undefined : normalizeEmail(input.email);
  const expiresAt = now + input.ttlMs;
  await db
    .insertInto('invites')
    .values({
      id,
      token_hash: hashSessionToken(token),
      email: email ?? null,
      created_by: input.createdBy ?? null,
      created_at: now,
      expires_at: expiresAt,
      used_at: null,
      used_by: null,
      revoked_at: null,
    })
    .execute();
  return { id, token, expiresAt, email };
}

function statusOf(r: { used_at: unknown; revoked_at: unknown; expires_at: unknown }, now: number): InviteStatus {
  if (r.used_at !== null) return 'used';
  if (r.revoked_at !== null) return 'revoked';
  return Number(r.expires_at) <= now ? 'expired' : 'pending';
}

/** Invites, newest first (at most {@link MAX_INVITES_LISTED}). */
export async function listInvites(db: Kysely<Database>, now = Date.now()): Promise<Invite[]> {
  const rows = await db
    .selectFrom('invites')
    .leftJoin('users', 'users.id', 'invites.created_by')
    .select([
      'invites.id',
      'invites.email',
      'invites.created_by',
      'users.email as created_by_email',
      'invites.created_at',
      'invites.expires_at',
      'invites.used_at',
      'invites.used_by',
      'invites.revoked_at',
    ])
    .orderBy('invites.created_at', 'desc')
    .orderBy('invites.id', 'desc')
    .limit(MAX_INVITES_LISTED)
    .execute();
  return rows.map((r) => ({
    id: r.id,
    email: r.email ?? undefined,
    createdBy: r.created_by ?? undefined,
    createdByEmail: r.created_by_email ?? undefined,
    createdAt: Number(r.created_at),
    expiresAt: Number(r.expires_at),
    usedAt: r.used_at === null ? undefined : Number(r.used_at),
    usedBy: r.used_by ?? undefined,
    revokedAt: r.revoked_at === null ? undefined : Number(r.revoked_at),
    status: statusOf(r, now),
  }));
}

/** Revokes a pending invite: true when it was pending, false when it was already used, expired or revoked;
 *  undefined when there is no such invite. */
export async function revokeInvite(db: Kysely<Database>, id: string, now = Date.now()): Promise<boolean | undefined> {
  const r = await db
    .updateTable('invites')
    .set({ revoked_at: now })
    .where('id', '=', id)
    .where('used_at', 'is', null)
    .where('revoked_at', 'is', null)
    .where('expires_at', '>', now)
    .executeTakeFirst();
  if (r.numUpdatedRows > 0n) return true;
  const row = await db.selectFrom('invites').select('id').where('id', '=', id).executeTakeFirst();
  return row === undefined ? undefined : false;
}

/** Why an invite cannot be used by `email` now: `invalid` (unknown, used, expired or revoked) or `email` (bound to
 *  another email); undefined = usable. A read for the refusal's wording: {@link signUpWithInvite} decides. */
export async function inviteRefusal(
  db: Kysely<Database>,
  token: string,
  email: string,
  now = Date.now(),
): Promise<'invalid' | 'email' | undefined> {
  const r = await db
    .selectFrom('invites')
    .select(['email', 'expires_at', 'used_at', 'revoked_at'])
    .where('token_hash', '=', hashSessionToken(token))
    .executeTakeFirst();
  if (r === undefined || statusOf(r, now) !== 'pending') return 'invalid';
  return r.email !== null && r.email !== normalizeEmail(email) ? 'email' : undefined;
}

/** Creates the account and uses the invite in one transaction. `used: false` = the invite was not usable (nothing
 *  created); `conflict` = the email has an account (nothing changed, the invite stays unused). */
export async function signUpWithInvite(
  db: Kysely<Database>,
  token: string,
  input: { email: string; passwordHash: string; verified: boolean },
  now = Date.now(),
): Promise<{ used: false } | { used: true; user: User; inviteId: string } | { used: true; conflict: true }> {
  const email = normalizeEmail(input.email);
  const id = newId('usr');
  const pending = !input.verified;
  try {
    return await db.transaction().execute(async (trx) => {
      // The user row first (the invite's used_by refers to it); the invite's UPDATE decides, else everything rolls back.
      await trx
        .insertInto('users')
        .values({
          id,
          email,
          password_hash: input.passwordHash,
          created_at: now,
          ...(pending ? { email_verified_at: null } : {}),
        })
        .execute();
      const inv = await trx
        .updateTable('invites')
        .set({ used_at: now, used_by: id })
        .where('token_hash', '=', hashSessionToken(token))
        .where('used_at', 'is', null)
        .where('revoked_at', 'is', null)
        .where('expires_at', '>', now)
        .where((eb) => eb.or([eb('email', 'is', null), eb('email', '=', email)]))
        .returning('id')
        .executeTakeFirst();
      if (inv === undefined) throw new InviteNotUsable();
      const user: User = { id, email, createdAt: now, emailVerifiedAt: pending ? undefined : 0, role: 'user' };
      return { used: true as const, user, inviteId: inv.id };
    });
  } catch (e) {
    if (e instanceof InviteNotUsable) return { used: false };
    if (isUniqueViolation(e)) return { used: true, conflict: true };
    throw e;
  }
}

class InviteNotUsable extends Error {}
