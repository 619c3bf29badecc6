// The audit trail (migration 0009_audit_events): one row per security event of an account, newest first by id.
import type { Kysely } from 'kysely';
import type { Database } from './schema.js';

export const AUDIT_ACTIONS = [
  'logged_in',
  'login_throttled',
  'password_changed',
  'password_reset',
  'password_reset_requested',
  'email_verified',
  'app_created',
  'app_key_rotated',
  'app_deleted',
  'key_created',
  'key_deleted',
  // By an operator (actor_id: the admin's user id, or 'cli' for `rpcgate admin` on the server host).
  'suspended',
  'unsuspended',
  'plan_changed',
  'admin_granted',
  'admin_revoked',
  // Sign-up (detail.invite: the invite used), and invites issued / revoked by an admin (in the admin's own trail).
  'signed_up',
  'invite_created',
  'invite_revoked',
] as const;
export type AuditAction = (typeof AUDIT_ACTIONS)[number];

export interface AuditEvent {
  id: number;
  at: number;
  userId: string;
  actorId?: string;
  action: AuditAction;
  ip?: string;
  detail?: Record<string, unknown>;
}

export async function recordAudit(
  db: Kysely<Database>,
  e: { userId: string; action: AuditAction; actorId?: string; ip?: string; detail?: Record<string, unknown> },
  at = Date.now(),
): Promise<void> {
  await db
    .insertInto('audit_events')
    .values({
      at,
      user_id: e.userId,
      actor_id: e.actorId ?? null,
      action: e.action,
      ip: e.ip ?? null,
      detail: e.detail === undefined ? null : JSON.stringify(e.detail),
    })
    .execute();
}

/** A user's events, newest first: at most `limit`, older than the cursor id `before` when given. */
export async function listAudit(
  db: Kysely<Database>,
  userId: string,
  opts: { limit: number; before?: number },
): Promise<AuditEvent[]> {
  let q = db.selectFrom('audit_events').selectAll().where('user_id', '=', userId);
  if (opts.before !== undefined) q = q.where('id', '<', opts.before);
  const rows = await q.orderBy('id', 'desc').limit(opts.limit).execute();
  return rows.map(toEvent);
}

/** Every account's events (operators), newest first: of one user and/or one action when given. */
export async function listAuditAll(
  db: Kysely<Database>,
  opts: { limit: number; before?: number; userId?: string; action?: AuditAction },
): Promise<AuditEvent[]> {
  let q = db.selectFrom('audit_events').selectAll();
  if (opts.userId !== undefined) q = q.where('user_id', '=', opts.userId);
  if (opts.action !== undefined) q = q.where('action', '=', opts.action);
  if (opts.before !== undefined) q = q.where('id', '<', opts.before);
  const rows = await q.orderBy('id', 'desc').limit(opts.limit).execute();
  return rows.map(toEvent);
}

function toEvent(r: {
  id: number;
  at: number;
  user_id: string;
  actor_id: string | null;
  action: string;
  ip: string | null;
  detail: string | null;
}): AuditEvent {
  return {
    id: Number(r.id),
    at: Number(r.at),
    userId: r.user_id,
    actorId: r.actor_id ?? undefined,
    action: r.action as AuditAction,
    ip: r.ip ?? undefined,
    detail: r.detail === null ? undefined : (JSON.parse(r.detail) as Record<string, unknown>),
  };
}
