// Apps (access point A: one key per app), their allowlists and JWT public keys.
// Ownership by construction: every query names the user — apps by `user_id`, allowlist and JWT rows through
// their app's `user_id` — so another user's id reads nothing and changes nothing (undefined / false, as for a
// missing object). Every change the access index cares about appends a key event in the same transaction.
import type { Kysely, Transaction } from 'kysely';
import { decryptKey, encryptKey, hashKey, newApiKey, newId } from '../secrets/keys.js';
import type { AllowlistKind, AppRow, Database, JwtAlg } from './schema.js';
import { LimitError, NotFoundError } from './errors.js';
import { recordKeyEvent } from './keyEvents.js';
import { isPostgres } from './util.js';

/** A new app's JWT maximum lifetime (24 h), also what 0005_jwt_lifetime gives existing apps. */
export const DEFAULT_JWT_MAX_LIFETIME_SEC = 86_400;

/** Apps per user when the caller names no cap (config `accounts.maxAppsPerUser`, whose default it mirrors). */
export const MAX_APPS_PER_USER = 10;

export interface App {
  id: string;
  userId: string;
  name: string;
  description: string;
  useCase: string;
  chain: string;
  services: string[];
  requireJwt: boolean;
  /** Longest accepted JWT lifetime in seconds; null = no maximum. */
  jwtMaxLifetimeSec: number | null;
  createdAt: number;
  updatedAt: number;
  keyRotatedAt: number | null;
  /** The API key, decrypted (for the dashboard's "show key" and the RPC URLs). */
  key: string;
  /** Request log: params and results of its calls are captured (redacted, size-capped). */
  logBodies: boolean;
}

export interface NewApp {
  name: string;
  description?: string;
  useCase: string;
  chain: string;
  services: string[];
  requireJwt?: boolean;
  jwtMaxLifetimeSec?: number | null;
  logBodies?: boolean;
}

export type AppPatch = Partial<NewApp>;

export interface AllowlistEntry {
  id: string;
  appId: string;
  kind: AllowlistKind;
  value: string;
  createdAt: number;
}

export interface JwtKey {
  /** The key id tokens carry in `kid`. */
  id: string;
  appId: string;
  alg: JwtAlg;
  publicKeyPem: string;
  createdAt: number;
}

function toApp(secret: Uint8Array, r: AppRow): App {
  return {
    id: r.id,
    userId: r.user_id,
    name: r.name,
    description: r.description,
    useCase: r.use_case,
    chain: r.chain,
    services: JSON.parse(r.services) as string[],
    requireJwt: Number(r.require_jwt) === 1,
    jwtMaxLifetimeSec: r.jwt_max_lifetime_sec === null ? null : Number(r.jwt_max_lifetime_sec),
    createdAt: Number(r.created_at),
    updatedAt: Number(r.updated_at),
    keyRotatedAt: r.key_rotated_at === null ? null : Number(r.key_rotated_at),
    key: decryptKey(secret, r.key_enc),
    logBodies: Number(r.log_bodies) === 1,
  };
}

/**
 * Creates an app with a fresh key. Throws `LimitError` when the user already has `maxPerUser` apps — nothing is
 * stored — and `NotFoundError('user')` for an unknown user. Race-free across replicas as network keys are: count and
 * insert run in one transaction that first serializes on the user's row (PostgreSQL `FOR UPDATE`; SQLite: BEGIN
 * IMMEDIATE holds the write lock), so concurrent creates queue and each counts the previous one's committed insert.
 */
export async function createApp(
  db: Kysely<Database>,
  secret: Uint8Array,
  userId: string,
  input: NewApp,
  opts: { maxPerUser?: number } = {},
): Promise<App> {
  const max = opts.maxPerUser ?? MAX_APPS_PER_USER;
  const key = newApiKey();
  const now = Date.now();
  const row: AppRow = {
    id: newId('app'),
    user_id: userId,
    name: input.name,
    description: input.description ?? '',
    use_case: input.useCase,
    chain: input.chain,
    services: JSON.stringify(input.services),
    key_hash: hashKey(secret, key),
    key_enc: encryptKey(secret, key),
    require_jwt: input.requireJwt ? 1 : 0,
    jwt_max_lifetime_sec:
      input.jwtMaxLifetimeSec === undefined ? DEFAULT_JWT_MAX_LIFETIME_SEC : input.jwtMaxLifetimeSec,
    created_at: now,
    updated_at: now,
    key_rotated_at: null,
    log_bodies: input.logBodies ? 1 : 0,
  };
  await db.transaction().execute(async (trx) => {
    const owner = trx.selectFrom('users').select('id').where('id', '=', userId);
    if ((await (isPostgres(trx) ? owner.forUpdate() : owner).executeTakeFirst()) === undefined)
      throw new NotFoundError('user');
    const { n } = await trx
      .selectFrom('apps')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('user_id', '=', userId)
      .executeTakeFirstOrThrow();
    if (Number(n) >= max) throw new LimitError('apps', max);
    await trx.insertInto('apps').values(row).execute();
    await recordKeyEvent(trx, row.key_hash, 'upsert', now);
  });
  return toApp(secret, row);
}

/** How many apps the user has. */
export async function countApps(db: Kysely<Database>, userId: string): Promise<number> {
  const { n } = await db
    .selectFrom('apps')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('user_id', '=', userId)
    .executeTakeFirstOrThrow();
  return Number(n);
}

/** The user's apps, oldest first. */
export async function listApps(db: Kysely<Database>, secret: Uint8Array, userId: string): Promise<App[]> {
  const rows = await db
    .selectFrom('apps')
    .selectAll()
    .where('user_id', '=', userId)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
  return rows.map((r) => toApp(secret, r));
}

export async function getApp(
  db: Kysely<Database>,
  secret: Uint8Array,
  userId: string,
  appId: string,
): Promise<App | undefined> {
  const r = await db
    .selectFrom('apps')
    .selectAll()
    .where('id', '=', appId)
    .where('user_id', '=', userId)
    .executeTakeFirst();
  return r && toApp(secret, r);
}

/** Changes the given fields; undefined when the user has no such app. */
export async function updateApp(
  db: Kysely<Database>,
  secret: Uint8Array,
  userId: string,
  appId: string,
  patch: AppPatch,
): Promise<App | undefined> {
  const now = Date.now();
  const set: Partial<AppRow> = { updated_at: now };
  if (patch.name !== undefined) set.name = patch.name;
  if (patch.description !== undefined) set.description = patch.description;
  if (patch.useCase !== undefined) set.use_case = patch.useCase;
  if (patch.chain !== undefined) set.chain = patch.chain;
  if (patch.services !== undefined) set.services = JSON.stringify(patch.services);
  if (patch.requireJwt !== undefined) set.require_jwt = patch.requireJwt ? 1 : 0;
  if (patch.jwtMaxLifetimeSec !== undefined) set.jwt_max_lifetime_sec = patch.jwtMaxLifetimeSec;
  if (patch.logBodies !== undefined) set.log_bodies = patch.logBodies ? 1 : 0;
  const r = await db.transaction().execute(async (trx) => {
    const row = await trx
      .updateTable('apps')
      .set(set)
      .where('id', '=', appId)
      .where('user_id', '=', userId)
      .returningAll()
      .executeTakeFirst();
    if (row !== undefined) await recordKeyEvent(trx, row.key_hash, 'upsert', now);
    return row;
  });
  return r && toApp(secret, r);
}

/** Replaces the app's key: the old one is revoked (feed: revoke old hash, upsert new). */
export async function rotateAppKey(
  db: Kysely<Database>,
  secret: Uint8Array,
  userId: string,
  appId: string,
): Promise<App | undefined> {
  const key = newApiKey();
  const keyHash = hashKey(secret, key);
  const now = Date.now();
  const r = await db.transaction().execute(async (trx) => {
    const old = await lockOwnedApp(trx, userId, appId);
    if (old === undefined) return undefined;
    const row = await trx
      .updateTable('apps')
      .set({ key_hash: keyHash, key_enc: encryptKey(secret, key), key_rotated_at: now, updated_at: now })
      .where('id', '=', appId)
      .where('user_id', '=', userId)
      .returningAll()
      .executeTakeFirstOrThrow();
    await recordKeyEvent(trx, old.key_hash, 'revoke', now);
    await recordKeyEvent(trx, keyHash, 'upsert', now);
    return row;
  });
  return r && toApp(secret, r);
}

/** Deletes the app (its allowlists and JWT keys by cascade) and revokes its key. */
export async function deleteApp(db: Kysely<Database>, userId: string, appId: string): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    const row = await trx
      .deleteFrom('apps')
      .where('id', '=', appId)
      .where('user_id', '=', userId)
      .returning('key_hash')
      .executeTakeFirst();
    if (row === undefined) return false;
    await recordKeyEvent(trx, row.key_hash, 'revoke');
    return true;
  });
}

// The app row, if the user owns it, locked against concurrent delete/rotate on PostgreSQL for the rest of the
// transaction (SQLite transactions already hold the database write lock: BEGIN IMMEDIATE, see db.ts).
async function lockOwnedApp(
  trx: Transaction<Database>,
  userId: string,
  appId: string,
): Promise<{ key_hash: string } | undefined> {
  const q = trx.selectFrom('apps').select('key_hash').where('id', '=', appId).where('user_id', '=', userId);
  return (isPostgres(trx) ? q.forUpdate() : q).executeTakeFirst();
}

// ---- allowlists -------------------------------------------------------------------------------------------------

function toEntry(r: {
  id: string;
  app_id: string;
  kind: AllowlistKind;
  value: string;
  created_at: number;
}): AllowlistEntry {
  return { id: r.id, appId: r.app_id, kind: r.kind, value: r.value, createdAt: Number(r.created_at) };
}

/** Adds one entry (idempotent: an existing identical entry is returned); undefined when the user has no such app. */
export async function addAllowlistEntry(
  db: Kysely<Database>,
  userId: string,
  appId: string,
  kind: AllowlistKind,
  value: string,
): Promise<AllowlistEntry | undefined> {
  return db.transaction().execute(async (trx) => {
    const app = await lockOwnedApp(trx, userId, appId);
    if (app === undefined) return undefined;
    const now = Date.now();
    await trx
      .insertInto('app_allowlists')
      .values({ id: newId('alw'), app_id: appId, kind, value, created_at: now })
      .onConflict((oc) => oc.columns(['app_id', 'kind', 'value']).doNothing())
      .execute();
    const row = await trx
      .selectFrom('app_allowlists')
      .selectAll()
      .where('app_id', '=', appId)
      .where('kind', '=', kind)
      .where('value', '=', value)
      .executeTakeFirstOrThrow();
    await recordKeyEvent(trx, app.key_hash, 'upsert', now);
    return toEntry(row);
  });
}

/** Replaces all entries of one kind with `values` (an empty list turns that kind off). */
export async function setAllowlist(
  db: Kysely<Database>,
  userId: string,
  appId: string,
  kind: AllowlistKind,
  values: readonly string[],
): Promise<AllowlistEntry[] | undefined> {
  return db.transaction().execute(async (trx) => {
    const app = await lockOwnedApp(trx, userId, appId);
    if (app === undefined) return undefined;
    const now = Date.now();
    const unique = [...new Set(values)];
    await trx.deleteFrom('app_allowlists').where('app_id', '=', appId).where('kind', '=', kind).execute();
    if (unique.length > 0) {
      await trx
        .insertInto('app_allowlists')
        .values(unique.map((value) => ({ id: newId('alw'), app_id: appId, kind, value, created_at: now })))
        .execute();
    }
    await recordKeyEvent(trx, app.key_hash, 'upsert', now);
    const rows = await trx
      .selectFrom('app_allowlists')
      .selectAll()
      .where('app_id', '=', appId)
      .where('kind', '=', kind)
      .orderBy('created_at')
      .orderBy('value')
      .execute();
    return rows.map(toEntry);
  });
}

/** All entries of the app (every kind); undefined when the user has no such app. */
export async function listAllowlist(
  db: Kysely<Database>,
  userId: string,
  appId: string,
): Promise<AllowlistEntry[] | undefined> {
  const rows = await db
    .selectFrom('apps')
    .leftJoin('app_allowlists', 'app_allowlists.app_id', 'apps.id')
    .select([
      'apps.id as owned',
      'app_allowlists.id',
      'app_allowlists.app_id',
      'app_allowlists.kind',
      'app_allowlists.value',
      'app_allowlists.created_at',
    ])
    .where('apps.id', '=', appId)
    .where('apps.user_id', '=', userId)
    .orderBy('app_allowlists.kind')
    .orderBy('app_allowlists.created_at')
    .orderBy('app_allowlists.value')
    .execute();
  if (rows.length === 0) return undefined;
  return rows.filter((r) => r.id !== null).map((r) => toEntry(r as Parameters<typeof toEntry>[0]));
}

/** Removes one entry; false when it does not exist or is not the user's. */
export async function removeAllowlistEntry(
  db: Kysely<Database>,
  userId: string,
  appId: string,
  entryId: string,
): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    const app = await lockOwnedApp(trx, userId, appId);
    if (app === undefined) return false;
    const r = await trx
      .deleteFrom('app_allowlists')
      .where('id', '=', entryId)
      .where('app_id', '=', appId)
      .executeTakeFirst();
    if (r.numDeletedRows === 0n) return false;
    await recordKeyEvent(trx, app.key_hash, 'upsert');
    return true;
  });
}

// ---- JWT public keys ------------------------------------------------------------------------------------------

function toJwtKey(r: { id: string; app_id: string; alg: JwtAlg; public_key_pem: string; created_at: number }): JwtKey {
  return { id: r.id, appId: r.app_id, alg: r.alg, publicKeyPem: r.public_key_pem, createdAt: Number(r.created_at) };
}

/** Stores a public key (validated by the caller) and returns it with its new key id; undefined when no such app. */
export async function addJwtKey(
  db: Kysely<Database>,
  userId: string,
  appId: string,
  input: { alg: JwtAlg; publicKeyPem: string },
): Promise<JwtKey | undefined> {
  return db.transaction().execute(async (trx) => {
    const app = await lockOwnedApp(trx, userId, appId);
    if (app === undefined) return undefined;
    const row = {
      id: newId('kid'),
      app_id: appId,
      alg: input.alg,
      public_key_pem: input.publicKeyPem,
      created_at: Date.now(),
    };
    await trx.insertInto('app_jwt_keys').values(row).execute();
    await recordKeyEvent(trx, app.key_hash, 'upsert', row.created_at);
    return toJwtKey(row);
  });
}

/** The app's JWT keys, oldest first; undefined when the user has no such app. */
export async function listJwtKeys(db: Kysely<Database>, userId: string, appId: string): Promise<JwtKey[] | undefined> {
  const rows = await db
    .selectFrom('apps')
    .leftJoin('app_jwt_keys', 'app_jwt_keys.app_id', 'apps.id')
    .select([
      'apps.id as owned',
      'app_jwt_keys.id',
      'app_jwt_keys.app_id',
      'app_jwt_keys.alg',
      'app_jwt_keys.public_key_pem',
      'app_jwt_keys.created_at',
    ])
    .where('apps.id', '=', appId)
    .where('apps.user_id', '=', userId)
    .orderBy('app_jwt_keys.created_at')
    .orderBy('app_jwt_keys.id')
    .execute();
  if (rows.length === 0) return undefined;
  return rows.filter((r) => r.id !== null).map((r) => toJwtKey(r as Parameters<typeof toJwtKey>[0]));
}

/** Removes a JWT key by kid; false when it does not exist or is not the user's. */
export async function removeJwtKey(db: Kysely<Database>, userId: string, appId: string, kid: string): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    const app = await lockOwnedApp(trx, userId, appId);
    if (app === undefined) return false;
    const r = await trx.deleteFrom('app_jwt_keys').where('id', '=', kid).where('app_id', '=', appId).executeTakeFirst();
    if (r.numDeletedRows === 0n) return false;
    await recordKeyEvent(trx, app.key_hash, 'upsert');
    return true;
  });
}
