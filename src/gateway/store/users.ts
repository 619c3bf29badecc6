// Users. Emails are compared case-insensitively by storing them lower-cased (unique index on the stored form).
import { sql, type Kysely } from 'kysely';
import { newId } from '../secrets/keys.js';
import type { Database, UserRole } from './schema.js';
import { ConflictError, isUniqueViolation } from './errors.js';
import { recordKeyEvent } from './keyEvents.js';
import { deleteUserRequestLog } from './requestLog.js';

export interface User {
  id: string;
  email: string;
  createdAt: number;
  /** When the email was proved by a mailed link; undefined = not yet. */
  emailVerifiedAt?: number;
  /** 'admin': granted the operator role in the store (config `accounts.admins` names more; 0012_admin). */
  role: UserRole;
  /** Set while an operator has the account suspended. */
  suspended?: { at: number; reason: string };
  /** The account's plan name (config `plans`); undefined = `accounts.defaultPlan`. */
  plan?: string;
  /** The per-account limits over the plan (PlanLimits of config `plans`). */
  planOverride?: PlanOverride;
}

/** Per-account limits over a plan (the config's PlanLimits; kept as JSON in `users.plan_override`). */
export type PlanOverride = Record<string, number | null>;

export interface UserWithPassword extends User {
  passwordHash: string;
}

export function normalizeEmail(email: string): string {
  return email.trim().toLowerCase();
}

/** Creates a user; `ConflictError('email')` when the email (any case) is taken. `verified: false`: the email must be
 *  proved first (`accounts.verifyEmail`); otherwise it counts as proved. */
export async function createUser(
  db: Kysely<Database>,
  input: { email: string; passwordHash: string; verified?: boolean },
): Promise<User> {
  const pending = input.verified === false;
  const row = {
    id: newId('usr'),
    email: normalizeEmail(input.email),
    password_hash: input.passwordHash,
    created_at: Date.now(),
    // Absent = the column's default, 0: verified, no verification asked for.
    ...(pending ? { email_verified_at: null } : {}),
  };
  try {
    await db.insertInto('users').values(row).execute();
  } catch (e) {
    if (isUniqueViolation(e)) throw new ConflictError('email', 'an account with this email already exists');
    throw e;
  }
  return {
    id: row.id,
    email: row.email,
    createdAt: row.created_at,
    emailVerifiedAt: pending ? undefined : 0,
    role: 'user',
  };
}

/** The users columns a User is built from (never the password hash). */
export const USER_COLUMNS = [
  'id',
  'email',
  'created_at',
  'email_verified_at',
  'role',
  'suspended_at',
  'suspended_reason',
  'plan',
  'plan_override',
] as const;

export interface UserColumns {
  id: string;
  email: string;
  created_at: number;
  email_verified_at: number | null;
  role: UserRole;
  suspended_at: number | null;
  suspended_reason: string | null;
  plan: string | null;
  plan_override: string | null;
}

export const toUser = (r: UserColumns): User => ({
  id: r.id,
  email: r.email,
  createdAt: Number(r.created_at),
  emailVerifiedAt: r.email_verified_at === null ? undefined : Number(r.email_verified_at),
  role: r.role === 'admin' ? 'admin' : 'user',
  ...(r.suspended_at === null ? {} : { suspended: { at: Number(r.suspended_at), reason: r.suspended_reason ?? '' } }),
  ...(r.plan === null ? {} : { plan: r.plan }),
  ...(r.plan_override === null ? {} : { planOverride: JSON.parse(r.plan_override) as PlanOverride }),
});

/** For log-in: the user with the password hash, by email (any case). */
export async function findUserByEmail(db: Kysely<Database>, email: string): Promise<UserWithPassword | undefined> {
  const r = await db.selectFrom('users').selectAll().where('email', '=', normalizeEmail(email)).executeTakeFirst();
  return r && { ...toUser(r), passwordHash: r.password_hash };
}

export async function getUser(db: Kysely<Database>, userId: string): Promise<User | undefined> {
  const r = await db.selectFrom('users').select(USER_COLUMNS).where('id', '=', userId).executeTakeFirst();
  return r && toUser(r);
}

/** For a password change or account deletion: the user with the password hash, by id. */
export async function getUserWithPassword(db: Kysely<Database>, userId: string): Promise<UserWithPassword | undefined> {
  const r = await db.selectFrom('users').selectAll().where('id', '=', userId).executeTakeFirst();
  return r && { ...toUser(r), passwordHash: r.password_hash };
}

/** Marks the email proved (a verification or reset link was followed); the first time counts. */
export async function markEmailVerified(db: Kysely<Database>, userId: string, at = Date.now()): Promise<void> {
  await db
    .updateTable('users')
    .set({ email_verified_at: at })
    .where('id', '=', userId)
    .where('email_verified_at', 'is', null)
    .execute();
}

export async function updatePasswordHash(db: Kysely<Database>, userId: string, passwordHash: string): Promise<boolean> {
  const r = await db
    .updateTable('users')
    .set({ password_hash: passwordHash })
    .where('id', '=', userId)
    .executeTakeFirst();
  return r.numUpdatedRows > 0n;
}

/** What deleting an account does with its usage rows (config `accounts.deletedUsage`). */
export type DeletedUsage = 'anonymise' | 'remove';

const USAGE_TABLES = ['usage_minute', 'usage_hour', 'usage_day'] as const;

/** Deletes a user and (by cascade) their sessions, tokens, apps and keys; revokes every key in the change feed;
 *  deletes their request-log rows, activity, quota alerts and alert webhook; and anonymises (a random owner id nothing
 *  links to the account) or removes their usage rows — all in one transaction. */
export async function deleteUser(
  db: Kysely<Database>,
  userId: string,
  usage: DeletedUsage = 'anonymise',
): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    const at = Date.now();
    const hashes = [
      ...(await trx.selectFrom('apps').select('key_hash').where('user_id', '=', userId).execute()),
      ...(await trx.selectFrom('network_keys').select('key_hash').where('user_id', '=', userId).execute()),
    ];
    // The invite it signed up with keeps its row (the admins' list), without the email it was bound to.
    await trx.updateTable('invites').set({ email: null, used_by: null }).where('used_by', '=', userId).execute();
    const r = await trx.deleteFrom('users').where('id', '=', userId).executeTakeFirst();
    if (r.numDeletedRows === 0n) return false;
    for (const h of hashes) await recordKeyEvent(trx, h.key_hash, 'revoke', at);
    await deleteUserRequestLog(trx, userId);
    await trx.deleteFrom('audit_events').where('user_id', '=', userId).execute();
    await trx.deleteFrom('quota_alerts').where('user_id', '=', userId).execute();
    await trx.deleteFrom('alert_webhooks').where('user_id', '=', userId).execute();
    // The usage tables are not in the store's typed schema (store/usage.ts): plain SQL.
    const anonymous = newId('del');
    for (const t of USAGE_TABLES)
      await (usage === 'remove'
        ? sql`delete from ${sql.table(t)} where user_id = ${userId}`
        : sql`update ${sql.table(t)} set user_id = ${anonymous} where user_id = ${userId}`
      ).execute(trx);
    return true;
  });
}
