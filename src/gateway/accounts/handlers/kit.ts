// What every namespace of the account API's handlers shares (./index.ts merges the namespaces): the deployment
// (AccountDeps), the store, the throttles, the shapes the contract answers with, and the param checks a schema cannot do.
import { createLogHandlers } from './logs.js';
import { createPublicKey, randomBytes } from 'node:crypto';
import { importSPKI } from 'jose';
import type { Logger } from 'pino';
import type { ParamsOf, ResultOf } from '@rpcgate/client';
import { invalidParams } from '@rpcgate/toolkit/errors';
import type { Methods } from '../../../../generated/account/methods.js';
import type * as T from '../../../../generated/account/types.js';
import type { Lookup } from '../../alerts/webhook-address.js';
import { hashPassword } from '../../secrets/index.js';
import { loadStrengthEstimator } from '../../secrets/password-policy.js';
import * as store from '../../store/index.js';
import type { Store } from '../../store/index.js';
import type { JwtAlg } from '../../store/schema.js';
import { forbidden } from '../../errors.js';
import { PlanCatalog, type AccountLimits, type ResolvedPlans } from '../../limits/plans.js';
import { createMailer, type Mailer } from '../../mail/index.js';
import { NO_SESSION, badValue } from '../errors.js';
import { DeviceCookies } from '../device.js';
import { AccountThrottle } from '../throttle.js';
import { sessionCookie, type AccountRequest } from '../session.js';

/** What the handlers need of the deployment. */
export interface AccountDeps {
  store: Store;
  /** Server secret: API keys are hashed and encrypted with it. */
  secret: Uint8Array;
  /** Chain id (as configured) → networks an app on it may use (config.chains resolved: see chainNetworks). */
  chains: Readonly<Record<string, readonly string[]>>;
  /** The deployment's networks (config order): chain id, whether an embedded local chain serves it, display name
   *  (absent = the name capitalised). */
  networks: Readonly<Record<string, { chainId: number; local: boolean; label?: string }>>;
  /** Today's B usage (the limiter's `peek`); absent = reported as 0 used of `dailyLimit`. */
  peekDaily?: (userId: string, plans?: ResolvedPlans) => Promise<{ limit: number; remaining: number; resetAt: number }>;
  /** The account's A quotas now (the limiter's day and month windows of the user's apps, shared by all of them);
   *  absent = reported as 0 used of `appPlan`'s. */
  peekAppQuotas?: (
    userId: string,
    plans?: ResolvedPlans,
  ) => Promise<{ period: string; limit: number; remaining: number; resetAt: number }[]>;
  /** The A plan (config `limits.a` resolved); absent = the defaults. */
  appPlan?: { perSecond: number | null; daily: number | null; monthly: number | null };
  /** Daily B limit shown when there is no limiter. */
  dailyLimit?: number;
  sessionTtlMs?: number;
  maxNetworkKeys?: number;
  /** Apps per user (config `accounts.maxAppsPerUser`); absent = store.MAX_APPS_PER_USER. */
  maxApps?: number;
  /** Log-in / sign-up throttles and the password-hashing gate (./throttle.ts); absent = defaults, in-process. */
  throttle?: AccountThrottle;
  /** Called after every change to apps or keys, before the answer: e.g. the access index applies the change now, so
   *  this replica serves a new key at once and refuses a revoked one at once (other replicas follow by polling). */
  onChange?: () => Promise<void>;
  /** Where background failures (a token not issued) are reported. */
  logger?: Logger;
  /** Password-reset and verification mail (src/gateway/mail); absent = links go to the operator's log. */
  mailer?: Mailer;
  /** Account self-service (config `accounts`); absent = the defaults. */
  selfService?: SelfService;
  /** Webhook URLs may name non-public addresses (config `alerts.allowPrivateWebhooks`); absent = false. */
  allowPrivateWebhooks?: boolean;
  /** Name resolution for the webhook URL check (default node:dns lookup; tests inject one). */
  lookup?: Lookup;
  /** Who may sign up (config `accounts.signup`, `accounts.inviteTtlHours`); absent = open, invites for 72 hours. */
  signup?: SignUpPolicy;
  /** Emails of config `accounts.admins` (besides accounts granted the role in the store). */
  admins?: readonly string[];
  /** The deployment's plans (config `plans`, `accounts.defaultPlan`); absent = none (the base limits from `appPlan`,
   *  `dailyLimit`, `maxApps`, `maxNetworkKeys`). */
  plans?: PlanCatalog;
}

/** Config `accounts`' self-service part, resolved. */
export interface SelfService {
  /** Keys and apps only after the email was verified. */
  verifyEmail: boolean;
  resetTtlMs: number;
  verifyTtlMs: number;
  deletedUsage: store.DeletedUsage;
}

/** Config `accounts.signup` and `accounts.inviteTtlHours`, resolved. */
export interface SignUpPolicy {
  mode: 'open' | 'invite' | 'closed';
  inviteTtlMs: number;
}

export const SIGNUP_DEFAULTS: SignUpPolicy = { mode: 'open', inviteTtlMs: 72 * 3_600_000 };

export const SELF_SERVICE_DEFAULTS: SelfService = {
  verifyEmail: false,
  resetTtlMs: 30 * 60_000,
  verifyTtlMs: 48 * 3_600_000,
  deletedUsage: 'anonymise',
};

export const USE_CASES = ['Defi', 'Analytics', 'Gaming', 'Wallet', 'NFT', 'Infrastructure', 'Other'] as const;

export const iso = (ms: number) => new Date(ms).toISOString();

/** Most buckets one metrics answer holds (e.g. 25 h of minutes, 62 days of hours, 4 years of days). */
export const MAX_METRICS_POINTS = 1500;

// The contract's MetricsTime pattern lets through impossible dates (2025-02-30, 25:00); Date.parse would roll them
// over silently, so each field is checked against what it became.
const METRICS_TIME = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,3}))?)?(Z|([+-])(\d{2}):(\d{2}))$/;

export function parseMetricsTime(s: string, path: string): number {
  const m = METRICS_TIME.exec(s);
  const [y, mo, d, h, mi, sec = '0', ms = '0'] = m?.slice(1, 8) ?? [];
  if (m !== null) {
    const local = Date.UTC(+y, +mo - 1, +d, +h, +mi, +sec, Number(ms.padEnd(3, '0')));
    const t = new Date(local);
    const offH = m[10] === undefined ? 0 : +m[10];
    const offM = m[11] === undefined ? 0 : +m[11];
    const fieldsOk =
      t.getUTCFullYear() === +y &&
      t.getUTCMonth() === +mo - 1 &&
      t.getUTCDate() === +d &&
      t.getUTCHours() === +h &&
      t.getUTCMinutes() === +mi &&
      t.getUTCSeconds() === +sec;
    if (fieldsOk && offH <= 23 && offM <= 59) return local - (m[9] === '-' ? -1 : 1) * (offH * 60 + offM) * 60_000;
  }
  return badTime(path, s);
}
function badTime(path: string, s: string): never {
  throw badValue(
    'query',
    path,
    `not a valid date-time: ${JSON.stringify(s.slice(0, 40))} (ISO 8601 with a zone, e.g. 2025-03-01T09:00:00Z)`,
  );
}
export const cap = (s: string) => (s === '' ? s : s[0].toUpperCase() + s.slice(1));
/** Names are trimmed; the rest of the text is kept verbatim (the schema already refused control characters). */
export const trim = (s: string) => s.trim();

export interface Caller {
  req: AccountRequest;
  /** The session's user ('' for the methods that run without a session). */
  userId: string;
  /** The client IP (trustProxy applied), for the log-in and sign-up throttles. */
  ip: string | undefined;
  /** For the `admin_` methods: the admin calling (the gate checked the role). */
  admin?: store.User;
}

export type Inner = {
  [K in keyof Methods]: (params: ParamsOf<Methods[K]>, c: Caller) => Promise<ResultOf<Methods[K]>>;
};
/** The handlers of one namespace: the contract's methods named `<ns>_…`. */
export type Namespace<NS extends string> = { [K in keyof Inner as K extends `${NS}_${string}` ? K : never]: Inner[K] };

export type Kit = ReturnType<typeof createKit>;

export function createKit(deps: AccountDeps) {
  const { db } = deps.store;
  const secret = deps.secret;
  const maxKeys = deps.maxNetworkKeys ?? store.MAX_NETWORK_KEYS_PER_USER;
  const maxApps = deps.maxApps ?? store.MAX_APPS_PER_USER;
  const throttle = deps.throttle ?? new AccountThrottle();
  const devices = new DeviceCookies(secret);
  void loadStrengthEstimator(); // now, not on the first sign-up
  const chainIds = new Map(Object.keys(deps.chains).map((c) => [c.toLowerCase(), c]));
  const networkNames = new Map(Object.keys(deps.networks).map((n) => [n.toLowerCase(), n]));
  // A hash to verify against when the email is unknown: the answer then takes about as long as for a wrong password.
  let dummyHash: Promise<string> | undefined;
  const dummy = () => (dummyHash ??= hashPassword(randomBytes(16).toString('hex')));

  // ---- shapes ---------------------------------------------------------------------------------------------------
  const networksOf = (chain: string): T.Network[] =>
    [...(deps.chains[chainIds.get(chain.toLowerCase()) ?? ''] ?? [])].filter((n) => deps.networks[n] !== undefined);
  const labelOf = (n: string) => deps.networks[n]?.label ?? cap(n);
  const chainNetwork = (n: string): T.ChainNetwork => ({
    network: n,
    label: labelOf(n),
    chainId: deps.networks[n].chainId,
    local: deps.networks[n].local,
  });

  const appSummary = (a: store.App): T.AppSummary => ({
    id: a.id,
    name: a.name,
    description: a.description,
    useCase: a.useCase,
    chain: a.chain,
    services: a.services as T.Services,
    requireJwt: a.requireJwt,
    jwtMaxLifetimeSec: a.jwtMaxLifetimeSec,
    logBodies: a.logBodies,
    networks: networksOf(a.chain),
    createdAt: iso(a.createdAt),
    updatedAt: iso(a.updatedAt),
  });
  const appFull = (a: store.App, base: string): T.App => {
    const s = appSummary(a);
    const urls: Record<string, string> = {};
    for (const n of s.networks) urls[n] = `${base}/${n}/v2/${a.key}`;
    return { ...s, keyRotatedAt: a.keyRotatedAt === null ? null : iso(a.keyRotatedAt), key: a.key, urls };
  };
  const keyBase = (k: store.NetworkKey): Omit<T.NetworkKeySummary, 'today'> => ({
    id: k.id,
    name: k.name,
    network: k.network,
    networkLabel: labelOf(k.network),
    description: k.description,
    createdAt: iso(k.createdAt),
  });
  const keyFull = (k: store.NetworkKey, base: string): T.NetworkKey => ({
    ...keyBase(k),
    key: k.key,
    url: `${base}/${k.network}/${k.key}`,
  });
  /** Today's (UTC) metered calls on one key, from the usage store (the limiter stays the source for the daily limit). */
  const keyToday = async (userId: string, keyId: string): Promise<T.KeyUsageToday> => {
    const u = await store.usageToday(db, userId, { keyId });
    return { day: iso(u.day), total: u.total, success: u.success };
  };

  /** Validated range → the store's series, times as ISO strings. Ownership is checked by the caller first. */
  async function metrics(
    userId: string,
    target: { appId: string } | { keyId: string },
    q: T.MetricsQuery,
  ): Promise<T.UsageSeries> {
    const from = parseMetricsTime(q.from, '/1/from');
    const to = parseMetricsTime(q.to, '/1/to');
    if (!(to > from)) throw badValue('query', '/1/to', '`to` must be after `from`');
    const G = store.GRANULARITY_MS[q.granularity];
    const points = Math.ceil((to - Math.floor(from / G) * G) / G);
    if (points > MAX_METRICS_POINTS)
      throw invalidParams(`query: ${points} ${q.granularity} buckets asked, at most ${MAX_METRICS_POINTS}`, {
        param: 'query',
        path: '/1',
        reason: `at most ${MAX_METRICS_POINTS} points per answer (${points} ${q.granularity} buckets asked): use a shorter range or a coarser granularity`,
        maxPoints: MAX_METRICS_POINTS,
        points,
      });
    const s = await store.usageSeries(db, {
      userId,
      ...target,
      network: q.network === undefined ? undefined : networkOf(q.network, 'query', '/1/network'),
      from,
      to,
      granularity: q.granularity,
      maxPoints: MAX_METRICS_POINTS,
    });
    const point = (p: store.UsagePoint): T.UsagePoint => ({ ...p, start: iso(p.start) });
    return {
      granularity: s.granularity,
      from: iso(s.from),
      to: iso(s.to),
      points: s.points.map(point),
      summary: point(s.summary),
    };
  }
  const entry = (e: store.AllowlistEntry): T.AllowlistEntry => ({
    id: e.id,
    kind: e.kind,
    value: e.value,
    createdAt: iso(e.createdAt),
  });
  const jwtKey = (k: store.JwtKey): T.JwtKey => ({
    id: k.id,
    alg: k.alg,
    publicKeyPem: k.publicKeyPem,
    createdAt: iso(k.createdAt),
  });
  const admins = new Set((deps.admins ?? []).map(store.normalizeEmail));
  /** An operator: granted the role in the store, or named by config `accounts.admins`. */
  const isAdmin = (u: store.User) => u.role === 'admin' || admins.has(u.email);
  const user = (u: store.User): T.User => ({
    id: u.id,
    email: u.email,
    createdAt: iso(u.createdAt),
    emailVerified: u.emailVerifiedAt !== undefined,
    admin: isAdmin(u),
  });
  // Without configured plans, the base limits are what the deployment passed (appPlan, dailyLimit, maxApps, maxKeys).
  const plans =
    deps.plans ??
    new PlanCatalog({
      limits: {
        a: deps.appPlan,
        b: deps.dailyLimit === undefined ? undefined : { dailyPerUser: deps.dailyLimit },
      },
      maxApps,
      maxKeys,
    });
  /** An account's limits: its plan and override over the deployment's (the key index resolves the same). */
  const limitsOf = (u: store.User): AccountLimits => plans.resolve(u.plan, u.planOverride);
  /** The signed-in account's limits (its plan), read from the store; NO_SESSION when it is gone. */
  async function limitsOfUser(userId: string): Promise<AccountLimits> {
    const u = await store.getUser(db, userId);
    if (u === undefined) throw NO_SESSION;
    return limitsOf(u);
  }
  /** The limiter's plans for an account: undefined when they are the deployment's own (the limiter's default). */
  const ownPlans = (l: AccountLimits): ResolvedPlans | undefined => (l === plans.base ? undefined : l.plans);

  const selfService = deps.selfService ?? SELF_SERVICE_DEFAULTS;
  const signup = deps.signup ?? SIGNUP_DEFAULTS;
  const mailer = deps.mailer ?? createMailer(undefined);

  /** Records a security event of the caller's account (or `userId`'s); a failure to record is logged, never thrown:
   *  the change it describes has been made. */
  async function audit(
    c: Caller,
    action: store.AuditAction,
    detail?: Record<string, unknown>,
    userId = c.userId,
  ): Promise<void> {
    await store
      .recordAudit(db, { userId, action, ip: c.ip, detail })
      .catch((e: unknown) =>
        deps.logger?.error({ err: { message: (e as Error).message }, action }, 'audit event not recorded'),
      );
  }

  /** With `accounts.verifyEmail`: -32041 until the account's email was verified (apps and keys are what it gates). */
  async function requireVerifiedEmail(userId: string): Promise<void> {
    if (!selfService.verifyEmail) return;
    const u = await store.getUser(db, userId);
    if (u === undefined) throw NO_SESSION;
    if (u.emailVerifiedAt === undefined)
      throw forbidden('verify your email first: follow the link we mailed you, or ask for a new one', {
        reason: 'email-not-verified',
      });
  }

  /** The configured chain id for a chain name (case-insensitive), or -32602 at `path`. */
  function chainOf(name: string, param: string, path: string): string {
    const id = chainIds.get(name.trim().toLowerCase());
    if (id === undefined)
      throw badValue(param, path, `unknown chain "${name}" (this deployment: ${[...chainIds.values()].join(', ')})`);
    return id;
  }

  /** A network param → its configured name (compared case-insensitively), or -32602 at `path` naming the valid ones. */
  function networkOf(name: string, param: string, path: string): string {
    const n = networkNames.get(name.toLowerCase());
    if (n === undefined)
      throw badValue(
        param,
        path,
        `unknown network "${name}": this deployment's networks are ${[...networkNames.values()].join(', ')}`,
      );
    return n;
  }

  async function startSession(c: Caller, userId: string): Promise<number> {
    if (c.req.token !== undefined) await store.deleteSession(db, c.req.token); // the old session of this browser ends
    const s = await store.createSession(db, userId, { ttlMs: deps.sessionTtlMs });
    c.req.setCookie.push(sessionCookie(s.token, s.expiresAt, c.req.secure));
    c.req.token = s.token;
    c.req.userId = Promise.resolve(userId);
    return s.expiresAt;
  }

  async function checkJwtKey(alg: JwtAlg, pem: string): Promise<void> {
    const path = '/1/publicKeyPem';
    let reason: string | undefined;
    try {
      const k = createPublicKey({ key: pem, format: 'pem' });
      const d = k.asymmetricKeyDetails ?? {};
      if (alg.startsWith('RS')) {
        if (k.asymmetricKeyType !== 'rsa') reason = `${alg} needs an RSA public key, got ${k.asymmetricKeyType}`;
        else if ((d.modulusLength ?? 0) < 2048)
          reason = `${alg} needs an RSA key of at least 2048 bits, got ${d.modulusLength}`;
      } else {
        const curve = alg === 'ES256' ? 'prime256v1' : 'secp384r1';
        if (k.asymmetricKeyType !== 'ec') reason = `${alg} needs an EC public key, got ${k.asymmetricKeyType}`;
        else if (d.namedCurve !== curve)
          reason = `${alg} needs a ${alg === 'ES256' ? 'P-256' : 'P-384'} key, got ${d.namedCurve}`;
      }
      if (reason === undefined) await importSPKI(pem, alg); // what the access check will do with it
    } catch (e) {
      reason ??= `not an SPKI public key for ${alg}: ${(e as Error).message}`;
    }
    if (reason !== undefined) throw badValue('key', path, reason);
  }

  // Request log (./logs.ts): apps_logs and keys_logs, each spread into its namespace.
  const logs = createLogHandlers({ db, secret, networks: Object.keys(deps.networks), parseTime: parseMetricsTime });
  return {
    deps,
    db,
    secret,
    logs,
    maxKeys,
    maxApps,
    throttle,
    devices,
    chainIds,
    networkNames,
    dummy,
    networksOf,
    labelOf,
    chainNetwork,
    appSummary,
    appFull,
    keyBase,
    keyFull,
    keyToday,
    metrics,
    entry,
    jwtKey,
    user,
    chainOf,
    networkOf,
    startSession,
    checkJwtKey,
    selfService,
    signup,
    mailer,
    requireVerifiedEmail,
    audit,
    isAdmin,
    plans,
    limitsOf,
    limitsOfUser,
    ownPlans,
  };
}
