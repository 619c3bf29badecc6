// Operators' view of the accounts (issue 27 item 1): list and search, the admin role, suspension and plans.
// Suspending, unsuspending and changing a plan append an 'upsert' key event for every key of the account (apps and
// network keys) in the same transaction: every replica's access index re-reads those keys — and with them the
// account's suspension and plan (store/access.ts) — within its poll interval, so the request path never asks the store.
import { sql, type Kysely } from 'kysely';
import type { Database, UserRole } from './schema.js';
import { recordKeyEvent } from './keyEvents.js';
import { normalizeEmail, toUser, USER_COLUMNS, type PlanOverride, type User } from './users.js';
import { isPostgres } from './util.js';

export interface AccountListQuery {
  /** Part of the email (case-insensitive), or a user id. */
  search?: string;
  status?: 'active' | 'suspended';
  limit: number;
  /** `next` of the previous page: `<created_at>.<id>` of its last account. */
  cursor?: string;
}

/** Accounts newest first (created_at, then id), at most `limit`, and the cursor of the next page. */
export async function listUsers(
  db: Kysely<Database>,
  q: AccountListQuery,
): Promise<{ users: User[]; next: string | undefined }> {
  let s = db.selectFrom('users').select(USER_COLUMNS);
  const search = q.search?.trim();
  if (search !== undefined && search !== '') {
    const needle = normalizeEmail(search);
    const pos = isPostgres(db) ? sql<number>`strpos(email, ${needle})` : sql<number>`instr(email, ${needle})`;
    s = s.where((eb) => eb.or([eb(pos, '>', 0), eb('id', '=', search)]));
  }
  if (q.status === 'suspended') s = s.where('suspended_at', 'is not', null);
  if (q.status === 'active') s = s.where('suspended_at', 'is', null);
  const cur = parseCursor(q.cursor);
  if (cur !== undefined)
    s = s.where((eb) =>
      eb.or([eb('created_at', '<', cur.at), eb.and([eb('created_at', '=', cur.at), eb('id', '<', cur.id)])]),
    );
  const rows = await s
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(q.limit + 1)
    .execute();
  const users = rows.slice(0, q.limit).map(toUser);
  const last = users[users.length - 1];
  return { users, next: rows.length > q.limit && last !== undefined ? `${last.createdAt}.${last.id}` : undefined };
}

function parseCursor(c: string | undefined): { at: number; id: string } | undefined {
  if (c === undefined) return undefined;
  const dot = c.indexOf('.');
  const at = Number(c.slice(0, dot));
  if (dot < 1 || !Number.isSafeInteger(at)) return undefined;
  return { at, id: c.slice(dot + 1) };
}

/** How many apps and network keys each of these users has. */
export async function countKeysOf(
  db: Kysely<Database>,
  userIds: readonly string[],
): Promise<Map<string, { apps: number; keys: number }>> {
  const out = new Map(userIds.map((id) => [id, { apps: 0, keys: 0 }]));
  if (userIds.length === 0) return out;
  const [apps, keys] = await Promise.all([
    db
      .selectFrom('apps')
      .select(['user_id', (eb) => eb.fn.countAll<number>().as('n')])
      .where('user_id', 'in', userIds)
      .groupBy('user_id')
      .execute(),
    db
      .selectFrom('network_keys')
      .select(['user_id', (eb) => eb.fn.countAll<number>().as('n')])
      .where('user_id', 'in', userIds)
      .groupBy('user_id')
      .execute(),
  ]);
  for (const r of apps) out.get(r.user_id)!.apps = Number(r.n);
  for (const r of keys) out.get(r.user_id)!.keys = Number(r.n);
  return out;
}

/** An account's apps and network keys as operators see them: ids, names, where — never the key values. */
export async function listKeysOf(
  db: Kysely<Database>,
  userId: string,
): Promise<{
  apps: { id: string; name: string; chain: string; createdAt: number }[];
  keys: { id: string; name: string; network: string; createdAt: number }[];
}> {
  const [apps, keys] = await Promise.all([
    db
      .selectFrom('apps')
      .select(['id', 'name', 'chain', 'created_at'])
      .where('user_id', '=', userId)
      .orderBy('created_at')
      .execute(),
    db
      .selectFrom('network_keys')
      .select(['id', 'name', 'network', 'created_at'])
      .where('user_id', '=', userId)
      .orderBy('created_at')
      .execute(),
  ]);
  return {
    apps: apps.map((a) => ({ id: a.id, name: a.name, chain: a.chain, createdAt: Number(a.created_at) })),
    keys: keys.map((k) => ({ id: k.id, name: k.name, network: k.network, createdAt: Number(k.created_at) })),
  };
}

/** Every key of the account gets an 'upsert' event: the access indexes re-read them (suspension, plan). */
async function touchKeys(trx: Kysely<Database>, userId: string, at: number): Promise<number> {
  const hashes = [
    ...(await trx.selectFrom('apps').select('key_hash').where('user_id', '=', userId).execute()),
    ...(await trx.selectFrom('network_keys').select('key_hash').where('user_id', '=', userId).execute()),
  ];
  for (const h of hashes) await recordKeyEvent(trx, h.key_hash, 'upsert', at);
  return hashes.length;
}

/** One operator change of an account, in a transaction: `change` updates the users row; when it matched, `then` runs,
 *  the account's keys are announced to every index (touchKeys) and the user is read back. Undefined when unknown. */
async function changeAccount(
  db: Kysely<Database>,
  userId: string,
  at: number,
  change: (trx: Kysely<Database>) => Promise<{ numUpdatedRows: bigint }>,
  then?: (trx: Kysely<Database>) => Promise<unknown>,
): Promise<User | undefined> {
  return db.transaction().execute(async (trx) => {
    if ((await change(trx)).numUpdatedRows === 0n) return undefined;
    await then?.(trx);
    await touchKeys(trx, userId, at);
    return toUser(
      await trx.selectFrom('users').select(USER_COLUMNS).where('id', '=', userId).executeTakeFirstOrThrow(),
    );
  });
}

/** Suspends an account (or updates the reason of a suspended one): its sessions end, its keys' principals are re-read
 *  everywhere (refused from then on); nothing is deleted. The user after the change; undefined when unknown. */
export async function suspendUser(
  db: Kysely<Database>,
  userId: string,
  reason: string,
  at = Date.now(),
): Promise<User | undefined> {
  return changeAccount(
    db,
    userId,
    at,
    (trx) =>
      trx
        .updateTable('users')
        .set((eb) => ({ suspended_at: eb.fn.coalesce('suspended_at', eb.val(at)), suspended_reason: reason }))
        .where('id', '=', userId)
        .executeTakeFirst(),
    (trx) => trx.deleteFrom('sessions').where('user_id', '=', userId).execute(),
  );
}

/** Lifts a suspension: the keys work again everywhere once the indexes re-read them. */
export async function unsuspendUser(db: Kysely<Database>, userId: string, at = Date.now()): Promise<User | undefined> {
  return changeAccount(db, userId, at, (trx) =>
    trx
      .updateTable('users')
      .set({ suspended_at: null, suspended_reason: null })
      .where('id', '=', userId)
      .executeTakeFirst(),
  );
}

/** Sets the account's plan (null = the default plan) and, unless `override` is undefined, its per-account override
 *  (null removes it). The indexes re-read the account's keys and apply the new limits. */
export async function setUserPlan(
  db: Kysely<Database>,
  userId: string,
  plan: string | null,
  override: PlanOverride | null | undefined,
  at = Date.now(),
): Promise<User | undefined> {
  return changeAccount(db, userId, at, (trx) =>
    trx
      .updateTable('users')
      .set({
        plan,
        ...(override === undefined ? {} : { plan_override: override === null ? null : JSON.stringify(override) }),
      })
      .where('id', '=', userId)
      .executeTakeFirst(),
  );
}

/** Grants or takes back the admin role of the account with this email (any case). The user; undefined when no account
 *  has that email. */
export async function setUserRole(db: Kysely<Database>, email: string, role: UserRole): Promise<User | undefined> {
  const r = await db
    .updateTable('users')
    .set({ role })
    .where('email', '=', normalizeEmail(email))
    .returning(USER_COLUMNS)
    .executeTakeFirst();
  return r && toUser(r);
}

/** The user with this email (any case), or undefined. */
export async function findUser(db: Kysely<Database>, email: string): Promise<User | undefined> {
  const r = await db
    .selectFrom('users')
    .select(USER_COLUMNS)
    .where('email', '=', normalizeEmail(email))
    .executeTakeFirst();
  return r && toUser(r);
}

/** Emails of these user ids (the audit trail's entries name their account). */
export async function emailsOf(db: Kysely<Database>, userIds: readonly string[]): Promise<Map<string, string>> {
  if (userIds.length === 0) return new Map();
  const rows = await db
    .selectFrom('users')
    .select(['id', 'email'])
    .where('id', 'in', [...new Set(userIds)])
    .execute();
  return new Map(rows.map((r) => [r.id, r.email]));
}
