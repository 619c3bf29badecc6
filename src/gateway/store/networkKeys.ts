// Network API keys (access point B): each bound to one network, at most `maxPerUser` per user.
// The limit is race-free: count and insert run in one transaction that first serializes on the user —
// PostgreSQL: `SELECT … FROM users WHERE id = $1 FOR UPDATE` (concurrent creates of one user queue on the row lock,
// and under READ COMMITTED each count after the lock sees the previous creator's committed insert);
// SQLite: the transaction is BEGIN IMMEDIATE (db.ts), i.e. holds the database write lock from its first statement.
import type { Kysely } from 'kysely';
import { decryptKey, encryptKey, hashKey, newApiKey, newId } from '../secrets/keys.js';
import type { Database, NetworkKeyRow, NetworkName } from './schema.js';
import { LimitError, NotFoundError } from './errors.js';
import { recordKeyEvent } from './keyEvents.js';
import { isPostgres } from './util.js';

export const MAX_NETWORK_KEYS_PER_USER = 4;

export interface NetworkKey {
  id: string;
  userId: string;
  name: string;
  network: NetworkName;
  description: string;
  createdAt: number;
  /** The API key, decrypted. */
  key: string;
}

export interface NewNetworkKey {
  name: string;
  network: NetworkName;
  description?: string;
}

function toNetworkKey(secret: Uint8Array, r: NetworkKeyRow): NetworkKey {
  return {
    id: r.id,
    userId: r.user_id,
    name: r.name,
    network: r.network,
    description: r.description,
    createdAt: Number(r.created_at),
    key: decryptKey(secret, r.key_enc),
  };
}

/**
 * Creates a key. Throws `LimitError` ({ limit }) when the user already has `maxPerUser` keys — nothing is stored —
 * and `NotFoundError('user')` for an unknown user.
 */
export async function createNetworkKey(
  db: Kysely<Database>,
  secret: Uint8Array,
  userId: string,
  input: NewNetworkKey,
  opts: { maxPerUser?: number } = {},
): Promise<NetworkKey> {
  const max = opts.maxPerUser ?? MAX_NETWORK_KEYS_PER_USER;
  const key = newApiKey();
  const now = Date.now();
  const row: NetworkKeyRow = {
    id: newId('key'),
    user_id: userId,
    name: input.name,
    network: input.network,
    description: input.description ?? '',
    key_hash: hashKey(secret, key),
    key_enc: encryptKey(secret, key),
    created_at: now,
  };
  await db.transaction().execute(async (trx) => {
    const user = isPostgres(trx)
      ? await trx.selectFrom('users').select('id').where('id', '=', userId).forUpdate().executeTakeFirst()
      : await trx.selectFrom('users').select('id').where('id', '=', userId).executeTakeFirst();
    if (user === undefined) throw new NotFoundError('user');
    const { n } = await trx
      .selectFrom('network_keys')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('user_id', '=', userId)
      .executeTakeFirstOrThrow();
    if (Number(n) >= max) throw new LimitError('network API keys', max);
    await trx.insertInto('network_keys').values(row).execute();
    await recordKeyEvent(trx, row.key_hash, 'upsert', now);
  });
  return toNetworkKey(secret, row);
}

/** The user's keys, oldest first. */
export async function listNetworkKeys(db: Kysely<Database>, secret: Uint8Array, userId: string): Promise<NetworkKey[]> {
  const rows = await db
    .selectFrom('network_keys')
    .selectAll()
    .where('user_id', '=', userId)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
  return rows.map((r) => toNetworkKey(secret, r));
}

export async function countNetworkKeys(db: Kysely<Database>, userId: string): Promise<number> {
  const { n } = await db
    .selectFrom('network_keys')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('user_id', '=', userId)
    .executeTakeFirstOrThrow();
  return Number(n);
}

export async function getNetworkKey(
  db: Kysely<Database>,
  secret: Uint8Array,
  userId: string,
  keyId: string,
): Promise<NetworkKey | undefined> {
  const r = await db
    .selectFrom('network_keys')
    .selectAll()
    .where('id', '=', keyId)
    .where('user_id', '=', userId)
    .executeTakeFirst();
  return r && toNetworkKey(secret, r);
}

/** Renames / re-describes a key (its network is fixed: a key is bound to one network). */
export async function updateNetworkKey(
  db: Kysely<Database>,
  secret: Uint8Array,
  userId: string,
  keyId: string,
  patch: { name?: string; description?: string },
): Promise<NetworkKey | undefined> {
  const set: Partial<NetworkKeyRow> = {};
  if (patch.name !== undefined) set.name = patch.name;
  if (patch.description !== undefined) set.description = patch.description;
  if (Object.keys(set).length === 0) return getNetworkKey(db, secret, userId, keyId);
  const r = await db.transaction().execute(async (trx) => {
    const row = await trx
      .updateTable('network_keys')
      .set(set)
      .where('id', '=', keyId)
      .where('user_id', '=', userId)
      .returningAll()
      .executeTakeFirst();
    if (row !== undefined) await recordKeyEvent(trx, row.key_hash, 'upsert');
    return row;
  });
  return r && toNetworkKey(secret, r);
}

/** Deletes (revokes) a key; false when it does not exist or is not the user's. */
export async function deleteNetworkKey(db: Kysely<Database>, userId: string, keyId: string): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    const row = await trx
      .deleteFrom('network_keys')
      .where('id', '=', keyId)
      .where('user_id', '=', userId)
      .returning('key_hash')
      .executeTakeFirst();
    if (row === undefined) return false;
    await recordKeyEvent(trx, row.key_hash, 'revoke');
    return true;
  });
}
