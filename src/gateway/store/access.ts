// Loaders for the in-memory access index (src/gateway/access): key hash → principal, with everything a request check needs
// (network / chain, allowlists, JWT settings), so the request path never queries the store.
// Build: `feed.start()`, then `loadAllActiveKeys()`; keep in sync: `feed.poll()` + `loadAccessEntry()` (keyEvents.ts).
import type { Kysely } from 'kysely';
import type { AllowlistKind, Database, JwtAlg, NetworkName } from './schema.js';

export type Allowlists = Record<AllowlistKind, string[]>;

export interface AppAccess {
  accessPoint: 'A';
  keyHash: string;
  appId: string;
  userId: string;
  name: string;
  /** The app's chain: the key works on every network of this chain. */
  chain: string;
  /** Services enabled for the app (e.g. `node-api`). */
  services: string[];
  requireJwt: boolean;
  /** Longest accepted JWT lifetime (exp - iat, seconds); null = no maximum. */
  jwtMaxLifetimeSec: number | null;
  /** Per kind, the allowed values; an empty list = that kind is not restricted. */
  allowlists: Allowlists;
  jwtKeys: { kid: string; alg: JwtAlg; publicKeyPem: string }[];
  /** Request log: capture this app's params and results (0007_request_log; off by default). */
  logBodies: boolean;
  account: AccountAccess;
}

export interface NetworkKeyAccess {
  accessPoint: 'B';
  keyHash: string;
  keyId: string;
  userId: string;
  name: string;
  /** The only network the key works on. */
  network: NetworkName;
  account: AccountAccess;
}

/** What the index needs of the key's account (0012_admin): suspension and plan. */
export interface AccountAccess {
  /** An operator suspended the account: its keys are refused (`suspended`). */
  suspended: boolean;
  /** Plan name (config `plans`); null = `accounts.defaultPlan`. */
  plan: string | null;
  /** Per-account PlanLimits over the plan; null = none. */
  planOverride: Record<string, number | null> | null;
}

export type AccessEntry = AppAccess | NetworkKeyAccess;

/** An account with no suspension, plan or override (most): one shared object. */
const PLAIN_ACCOUNT: AccountAccess = Object.freeze({ suspended: false, plan: null, planOverride: null });

interface AccountRow {
  id: string;
  suspended_at: number | null;
  plan: string | null;
  plan_override: string | null;
}
const ACCOUNT_COLUMNS = ['id', 'suspended_at', 'plan', 'plan_override'] as const;

function accountAccess(r: AccountRow | undefined): AccountAccess {
  if (r === undefined || (r.suspended_at === null && r.plan === null && r.plan_override === null)) return PLAIN_ACCOUNT;
  return {
    suspended: r.suspended_at !== null,
    plan: r.plan,
    planOverride: r.plan_override === null ? null : (JSON.parse(r.plan_override) as Record<string, number | null>),
  };
}

const emptyAllowlists = (): Allowlists => ({ origin: [], ip: [], address: [], method: [] });

// The columns each principal is built from, and the one place rows become principals (bulk load and single reload).
const APP_COLUMNS = [
  'id',
  'user_id',
  'name',
  'chain',
  'services',
  'require_jwt',
  'jwt_max_lifetime_sec',
  'key_hash',
  'log_bodies',
] as const;
const KEY_COLUMNS = ['id', 'user_id', 'name', 'network', 'key_hash'] as const;

interface AppRow {
  id: string;
  user_id: string;
  name: string;
  chain: string;
  services: string;
  require_jwt: number | boolean;
  jwt_max_lifetime_sec: number | string | null;
  key_hash: string;
  log_bodies: number | boolean;
}
interface KeyRow {
  id: string;
  user_id: string;
  name: string;
  network: NetworkName;
  key_hash: string;
}
interface JwtRow {
  id: string;
  alg: JwtAlg;
  public_key_pem: string;
}

function appAccess(a: AppRow, account: AccountAccess): AppAccess {
  return {
    account,
    accessPoint: 'A',
    keyHash: a.key_hash,
    appId: a.id,
    userId: a.user_id,
    name: a.name,
    chain: a.chain,
    services: JSON.parse(a.services) as string[],
    requireJwt: Number(a.require_jwt) === 1,
    jwtMaxLifetimeSec: a.jwt_max_lifetime_sec === null ? null : Number(a.jwt_max_lifetime_sec),
    allowlists: emptyAllowlists(),
    jwtKeys: [],
    logBodies: Number(a.log_bodies) === 1,
  };
}

const jwtKey = (j: JwtRow) => ({ kid: j.id, alg: j.alg, publicKeyPem: j.public_key_pem });

const keyAccess = (k: KeyRow, account: AccountAccess): NetworkKeyAccess => ({
  account,
  accessPoint: 'B',
  keyHash: k.key_hash,
  keyId: k.id,
  userId: k.user_id,
  name: k.name,
  network: k.network,
});

/** Every active key (apps and network keys) with its principal; five queries regardless of size. */
export async function loadAllActiveKeys(db: Kysely<Database>): Promise<AccessEntry[]> {
  const [apps, lists, jwt, keys, accounts] = await Promise.all([
    db.selectFrom('apps').select(APP_COLUMNS).execute(),
    db
      .selectFrom('app_allowlists')
      .select(['app_id', 'kind', 'value'])
      .orderBy('created_at')
      .orderBy('value')
      .execute(),
    db.selectFrom('app_jwt_keys').select(['id', 'app_id', 'alg', 'public_key_pem']).orderBy('created_at').execute(),
    db.selectFrom('network_keys').select(KEY_COLUMNS).execute(),
    // Only the accounts that are not plain (suspended, or with a plan or an override): usually few.
    db
      .selectFrom('users')
      .select(ACCOUNT_COLUMNS)
      .where((eb) =>
        eb.or([eb('suspended_at', 'is not', null), eb('plan', 'is not', null), eb('plan_override', 'is not', null)]),
      )
      .execute(),
  ]);
  const byUser = new Map(accounts.map((u) => [u.id, accountAccess(u)]));
  const byApp = new Map<string, AppAccess>();
  const out: AccessEntry[] = [];
  for (const a of apps) {
    const e = appAccess(a, byUser.get(a.user_id) ?? PLAIN_ACCOUNT);
    byApp.set(a.id, e);
    out.push(e);
  }
  for (const l of lists) byApp.get(l.app_id)?.allowlists[l.kind].push(l.value);
  for (const j of jwt) byApp.get(j.app_id)?.jwtKeys.push(jwtKey(j));
  for (const k of keys) out.push(keyAccess(k, byUser.get(k.user_id) ?? PLAIN_ACCOUNT));
  return out;
}

/** The current principal of one key hash (after a key event), or undefined when the key no longer exists. */
export async function loadAccessEntry(db: Kysely<Database>, keyHash: string): Promise<AccessEntry | undefined> {
  const app = await db.selectFrom('apps').select(APP_COLUMNS).where('key_hash', '=', keyHash).executeTakeFirst();
  if (app !== undefined) {
    const [lists, jwt] = await Promise.all([
      db
        .selectFrom('app_allowlists')
        .select(['kind', 'value'])
        .where('app_id', '=', app.id)
        .orderBy('created_at')
        .orderBy('value')
        .execute(),
      db
        .selectFrom('app_jwt_keys')
        .select(['id', 'alg', 'public_key_pem'])
        .where('app_id', '=', app.id)
        .orderBy('created_at')
        .execute(),
    ]);
    const e = appAccess(app, await accountOf(db, app.user_id));
    for (const l of lists) e.allowlists[l.kind].push(l.value);
    e.jwtKeys = jwt.map(jwtKey);
    return e;
  }
  const k = await db.selectFrom('network_keys').select(KEY_COLUMNS).where('key_hash', '=', keyHash).executeTakeFirst();
  return k && keyAccess(k, await accountOf(db, k.user_id));
}

async function accountOf(db: Kysely<Database>, userId: string): Promise<AccountAccess> {
  return accountAccess(
    await db.selectFrom('users').select(ACCOUNT_COLUMNS).where('id', '=', userId).executeTakeFirst(),
  );
}
