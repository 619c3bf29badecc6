// Users. Emails are compared case-insensitively by storing them lower-cased (unique index on the stored form).
import type { Kysely } from 'kysely';
import { newId } from '../secrets/keys.js';
import type { Database } from './schema.js';
import { ConflictError, isUniqueViolation } from './errors.js';
import { recordKeyEvent } from './keyEvents.js';

export interface User {
  id: string;
  email: string;
  createdAt: number;
}

export interface UserWithPassword extends User {
  passwordHash: string;
}

export function normalizeEmail(email: string): string {
  return email.trim().toLowerCase();
}

/** Creates a user; `ConflictError('email')` when the email (any case) is taken. */
export async function createUser(db: Kysely<Database>, input: { email: string; passwordHash: string }): Promise<User> {
  const row = {
    id: newId('usr'),
    email: normalizeEmail(input.email),
    password_hash: input.passwordHash,
    created_at: Date.now(),
  };
  try {
    await db.insertInto('users').values(row).execute();
  } catch (e) {
    if (isUniqueViolation(e)) throw new ConflictError('email', 'an account with this email already exists');
    throw e;
  }
  return { id: row.id, email: row.email, createdAt: row.created_at };
}

/** For log-in: the user with the password hash, by email (any case). */
export async function findUserByEmail(db: Kysely<Database>, email: string): Promise<UserWithPassword | undefined> {
  const r = await db.selectFrom('users').selectAll().where('email', '=', normalizeEmail(email)).executeTakeFirst();
  return r && { id: r.id, email: r.email, createdAt: Number(r.created_at), passwordHash: r.password_hash };
}

export async function getUser(db: Kysely<Database>, userId: string): Promise<User | undefined> {
  const r = await db
    .selectFrom('users')
    .select(['id', 'email', 'created_at'])
    .where('id', '=', userId)
    .executeTakeFirst();
  return r && { id: r.id, email: r.email, createdAt: Number(r.created_at) };
}

export async function updatePasswordHash(db: Kysely<Database>, userId: string, passwordHash: string): Promise<boolean> {
  const r = await db
    .updateTable('users')
    .set({ password_hash: passwordHash })
    .where('id', '=', userId)
    .executeTakeFirst();
  return r.numUpdatedRows > 0n;
}

/** Deletes a user and (by cascade) their sessions, apps and keys; revokes every key in the change feed. */
export async function deleteUser(db: Kysely<Database>, userId: string): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    const at = Date.now();
    const hashes = [
      ...(await trx.selectFrom('apps').select('key_hash').where('user_id', '=', userId).execute()),
      ...(await trx.selectFrom('network_keys').select('key_hash').where('user_id', '=', userId).execute()),
    ];
    const r = await trx.deleteFrom('users').where('id', '=', userId).executeTakeFirst();
    if (r.numDeletedRows === 0n) return false;
    for (const h of hashes) await recordKeyEvent(trx, h.key_hash, 'revoke', at);
    return true;
  });
}
