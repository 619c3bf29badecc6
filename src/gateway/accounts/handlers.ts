// Account API handlers (contracts/account.openrpc.json). Params arrive validated by the generated validators;
// these add what a schema cannot know (the deployment's chains and networks, a real IP/CIDR, a PEM that imports for
// its algorithm, a node API method name) and do the work through the store, always with the session's user id —
// the store's repository functions filter by it, so another user's object reads and changes as "not found".
//
// Every method goes through `gate` (one table below): the Origin check for methods that change something, then the
// session check for all but the open methods (sign up / log in / log out). Which methods are read-only or open is the
// contract's `x-gateway` (src/gateway/method-meaning.ts); a method without it counts as changing and closed (fail closed).
import { createPublicKey, randomBytes } from 'node:crypto';
import { isIP } from 'node:net';
import { importSPKI } from 'jose';
import type { Handlers } from '@rpcgate/toolkit/engine';
import type { ParamsOf, ResultOf } from '@rpcgate/client';
import { invalidParams } from '@rpcgate/toolkit/errors';
import { methods as accountMethods, type Methods } from '../../../generated/account/methods.js';
import type * as T from '../../../generated/account/types.js';
import { methods as nodeMethods } from '../../../generated/node/methods.js';
import { examples as nodeExamples } from '../../../generated/node/examples.js';
import { DEFAULT_APP_PLAN, DEFAULT_B_DAILY_PER_USER } from '../limits/plans.js';
import { hashPassword, verifyPassword } from '../secrets/index.js';
import { loadStrengthEstimator, passwordRuleReason, passwordStrengthReason } from '../secrets/password-policy.js';
import { methodsWhere } from '../method-meaning.js';
import * as store from '../store/index.js';
import type { Store } from '../store/index.js';
import type { JwtAlg } from '../store/schema.js';
import { BAD_CREDENTIALS, NO_SESSION, badValue, conflict, countLimit, notFound, originRefused } from './errors.js';
import { DeviceCookies } from './device.js';
import { AccountThrottle } from './throttle.js';
import { createLogHandlers } from './logs.js';
import {
  accountRequest,
  clearedSessionCookie,
  sessionCookie,
  type AccountContext,
  type AccountRequest,
} from './session.js';

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
  peekDaily?: (userId: string) => Promise<{ limit: number; remaining: number; resetAt: number }>;
  /** The account's A quotas now (the limiter's day and month windows of the user's apps, shared by all of them);
   *  absent = reported as 0 used of `appPlan`'s. */
  peekAppQuotas?: (userId: string) => Promise<{ period: string; limit: number; remaining: number; resetAt: number }[]>;
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
}

export const USE_CASES = ['Defi', 'Analytics', 'Gaming', 'Wallet', 'NFT', 'Infrastructure', 'Other'] as const;

/** Methods that change nothing (`readOnly`): no Origin check. Everything else is checked. */
const READS = methodsWhere(accountMethods, (m) => m.readOnly);
/** Methods that run without a session (`open`). */
const OPEN = methodsWhere(accountMethods, (m) => m.open);

const iso = (ms: number) => new Date(ms).toISOString();

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
const cap = (s: string) => (s === '' ? s : s[0].toUpperCase() + s.slice(1));
/** Names are trimmed; the rest of the text is kept verbatim (the schema already refused control characters). */
const trim = (s: string) => s.trim();

interface Caller {
  req: AccountRequest;
  /** The session's user ('' for the methods that run without a session). */
  userId: string;
  /** The client IP (trustProxy applied), for the log-in and sign-up throttles. */
  ip: string | undefined;
}

type Inner = { [K in keyof Methods]: (params: ParamsOf<Methods[K]>, c: Caller) => Promise<ResultOf<Methods[K]>> };

export function createAccountHandlers(deps: AccountDeps): Handlers<Methods, AccountContext> {
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
  const user = (u: store.User): T.User => ({ id: u.id, email: u.email, createdAt: iso(u.createdAt) });

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

  const inner: Inner = {
    // Request log (./logs.ts).
    ...createLogHandlers({ db, secret, networks: Object.keys(deps.networks), parseTime: parseMetricsTime }),
    // ---- account -------------------------------------------------------------------------------------------------
    async account_signUp([cred], c) {
      const email = store.normalizeEmail(cred.email);
      const weakPassword = (reason: string) =>
        invalidParams(`password ${reason}`, { param: 'credentials', path: '/0/password', reason });
      const rule = passwordRuleReason(cred.password, email);
      if (rule !== undefined) throw weakPassword(rule);
      await throttle.beforeSignUp(c.ip); // before zxcvbn, which costs CPU on this thread
      const weak = await passwordStrengthReason(cred.password, email);
      if (weak !== undefined) throw weakPassword(weak);
      const passwordHash = await throttle.hash(() => hashPassword(cred.password));
      try {
        await store.createUser(db, { email, passwordHash });
      } catch (e) {
        // A registered email gets the same answer, after the same work, and its account is left unchanged: the
        // answer never tells whether an email has an account (no enumeration). The owner simply logs in.
        if (!(e instanceof store.ConflictError)) throw e;
      }
      return { email, next: 'account_logIn' };
    },
    async account_logIn([cred], c) {
      const email = store.normalizeEmail(cred.email);
      // A browser that logged in to this account before (device cookie) is not held to the per-email limit.
      const device = devices.verify(c.req.device, email);
      // A point is taken before the password is checked: concurrent calls cannot check more than the limit.
      const attempt = await throttle.beforeLogIn(email, c.ip, device);
      const u = await store.findUserByEmail(db, email);
      const stored = u?.passwordHash ?? (await dummy()); // unknown email: the same work as a wrong password
      let ok: boolean;
      try {
        ok = await throttle.hash(() => verifyPassword(stored, cred.password), attempt.trust !== 'none');
      } catch (e) {
        await throttle.refundLogIn(attempt); // refused by the hashing gate: nothing was checked
        throw e;
      }
      if (u === undefined || !ok) throw BAD_CREDENTIALS;
      await throttle.loggedIn(attempt);
      const expiresAt = await startSession(c, u.id);
      c.req.setCookie.push(devices.issue(email, device, c.req.secure));
      return { user: user(u), expiresAt: iso(expiresAt) };
    },
    async account_logOut(_p, c) {
      if (c.req.token !== undefined) await store.deleteSession(db, c.req.token);
      c.req.token = undefined;
      c.req.userId = Promise.resolve(undefined);
      c.req.setCookie.push(clearedSessionCookie(c.req.secure));
      return { loggedOut: true };
    },
    async account_me(_p, c) {
      const u = await store.getUser(db, c.userId);
      if (u === undefined) throw NO_SESSION; // deleted meanwhile
      return user(u);
    },

    // ---- chains and use cases ------------------------------------------------------------------------------------
    async chains_list([query]) {
      const q = (query ?? '').trim().toLowerCase();
      const out: T.Chain[] = [];
      for (const [id, nets] of Object.entries(deps.chains)) {
        const networks = nets.filter((n) => deps.networks[n] !== undefined).map(chainNetwork);
        const chain = { id, name: cap(id), networks };
        if (
          q === '' ||
          id.toLowerCase().includes(q) ||
          chain.name.toLowerCase().includes(q) ||
          networks.some((n) => n.network.includes(q) || String(n.chainId) === q)
        )
          out.push(chain);
      }
      return out;
    },
    async networks_list() {
      return Object.keys(deps.networks).map(chainNetwork);
    },
    async useCases_list() {
      return [...USE_CASES];
    },

    // ---- apps ----------------------------------------------------------------------------------------------------
    async apps_create([input], c) {
      const chain = chainOf(input.chain, 'app', '/0/chain');
      const app = {
        name: trim(input.name),
        description: input.description ?? '',
        useCase: trim(input.useCase),
        chain,
        services: [...input.services],
      };
      try {
        return appFull(await store.createApp(db, secret, c.userId, app, { maxPerUser: maxApps }), c.req.baseUrl);
      } catch (e) {
        if (e instanceof store.LimitError) throw countLimit(e.what, e.limit);
        if (e instanceof store.NotFoundError) throw NO_SESSION; // the user was deleted meanwhile
        throw e;
      }
    },
    async apps_list(_p, c) {
      return (await store.listApps(db, secret, c.userId)).map(appSummary);
    },
    async apps_usage(_p, c) {
      const plan = deps.appPlan ?? DEFAULT_APP_PLAN;
      let quotas: T.AccountQuota[];
      if (deps.peekAppQuotas !== undefined) {
        quotas = (await deps.peekAppQuotas(c.userId)).map((d) => ({
          period: d.period as T.AccountQuota['period'],
          used: Math.max(0, d.limit - d.remaining),
          limit: d.limit,
          remaining: d.remaining,
          resetAt: iso(d.resetAt),
        }));
      } else {
        const now = new Date();
        const day = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1);
        const month = Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1);
        quotas = [];
        if (plan.daily !== null)
          quotas.push({ period: 'day', used: 0, limit: plan.daily, remaining: plan.daily, resetAt: iso(day) });
        if (plan.monthly !== null)
          quotas.push({ period: 'month', used: 0, limit: plan.monthly, remaining: plan.monthly, resetAt: iso(month) });
      }
      return { apps: await store.countApps(db, c.userId), maxApps, perSecond: plan.perSecond, quotas };
    },
    async apps_get([appId], c) {
      const a = await store.getApp(db, secret, c.userId, appId);
      if (a === undefined) throw notFound('app', appId);
      return appFull(a, c.req.baseUrl);
    },
    async apps_metrics([appId, query], c) {
      if ((await store.getApp(db, secret, c.userId, appId)) === undefined) throw notFound('app', appId);
      return metrics(c.userId, { appId }, query);
    },
    async apps_update([appId, patch], c) {
      const p: store.AppPatch = {};
      if (patch.name !== undefined) p.name = trim(patch.name);
      if (patch.description !== undefined) p.description = patch.description;
      if (patch.useCase !== undefined) p.useCase = trim(patch.useCase);
      if (patch.chain !== undefined) p.chain = chainOf(patch.chain, 'patch', '/1/chain');
      if (patch.services !== undefined) p.services = [...patch.services];
      if (patch.jwtMaxLifetimeSec !== undefined) p.jwtMaxLifetimeSec = patch.jwtMaxLifetimeSec;
      if (patch.logBodies !== undefined) p.logBodies = patch.logBodies;
      const a = await store.updateApp(db, secret, c.userId, appId, p);
      if (a === undefined) throw notFound('app', appId);
      return appFull(a, c.req.baseUrl);
    },
    async apps_rotateKey([appId], c) {
      const a = await store.rotateAppKey(db, secret, c.userId, appId);
      if (a === undefined) throw notFound('app', appId);
      return appFull(a, c.req.baseUrl);
    },
    async apps_delete([appId], c) {
      if (!(await store.deleteApp(db, c.userId, appId))) throw notFound('app', appId);
      return { id: appId, deleted: true };
    },

    // ---- allowlists ----------------------------------------------------------------------------------------------
    async apps_addAllowlistEntry([appId, e], c) {
      const value = e.value.trim();
      if (e.kind === 'ip') {
        const slash = value.indexOf('/');
        const addr = slash === -1 ? value : value.slice(0, slash);
        const v = isIP(addr);
        if (v === 0) throw badValue('entry', '/1/value', `not an IPv4 or IPv6 address: ${addr}`);
        if (slash !== -1) {
          const bits = Number(value.slice(slash + 1));
          if (!Number.isInteger(bits) || bits > (v === 4 ? 32 : 128))
            throw badValue('entry', '/1/value', `CIDR prefix must be 0..${v === 4 ? 32 : 128}`);
        }
      } else if (e.kind === 'method') {
        if (!Object.hasOwn(nodeMethods, value))
          throw badValue('entry', '/1/value', `not a method of the node API: ${value}`);
      } else if (e.kind === 'origin') {
        const port = /:(\d+)\/?$/.exec(value);
        if (port !== null && Number(port[1]) > 65535) throw badValue('entry', '/1/value', 'port must be 0..65535');
      }
      const r = await store.addAllowlistEntry(db, c.userId, appId, e.kind, value);
      if (r === undefined) throw notFound('app', appId);
      return entry(r);
    },
    async apps_listAllowlist([appId], c) {
      const r = await store.listAllowlist(db, c.userId, appId);
      if (r === undefined) throw notFound('app', appId);
      return r.map(entry);
    },
    async apps_removeAllowlistEntry([appId, entryId], c) {
      if (!(await store.removeAllowlistEntry(db, c.userId, appId, entryId))) throw notFound('allowlist entry', entryId);
      return { id: entryId, deleted: true };
    },

    // ---- JWT keys ------------------------------------------------------------------------------------------------
    async apps_addJwtKey([appId, k], c) {
      // Ownership first: a stranger's app id answers "not found" whatever the PEM.
      if ((await store.getApp(db, secret, c.userId, appId)) === undefined) throw notFound('app', appId);
      await checkJwtKey(k.alg, k.publicKeyPem);
      const r = await store.addJwtKey(db, c.userId, appId, { alg: k.alg, publicKeyPem: `${k.publicKeyPem.trim()}\n` });
      if (r === undefined) throw notFound('app', appId);
      return jwtKey(r);
    },
    async apps_listJwtKeys([appId], c) {
      const r = await store.listJwtKeys(db, c.userId, appId);
      if (r === undefined) throw notFound('app', appId);
      return r.map(jwtKey);
    },
    async apps_removeJwtKey([appId, keyId], c) {
      if (!(await store.removeJwtKey(db, c.userId, appId, keyId))) throw notFound('JWT key', keyId);
      return { id: keyId, deleted: true };
    },
    async apps_setRequireJwt([appId, requireJwt], c) {
      if (requireJwt) {
        const keys = await store.listJwtKeys(db, c.userId, appId);
        if (keys === undefined) throw notFound('app', appId);
        if (keys.length === 0)
          throw conflict('add a JWT public key before requiring JWT', { field: 'requireJwt', reason: 'no JWT key' });
      }
      const a = await store.updateApp(db, secret, c.userId, appId, { requireJwt });
      if (a === undefined) throw notFound('app', appId);
      return appFull(a, c.req.baseUrl);
    },

    // ---- network keys --------------------------------------------------------------------------------------------
    async keys_create([input], c) {
      const network = networkOf(input.network, 'key', '/0/network');
      try {
        const k = await store.createNetworkKey(
          db,
          secret,
          c.userId,
          { name: trim(input.name), network, description: input.description ?? '' },
          { maxPerUser: maxKeys },
        );
        return keyFull(k, c.req.baseUrl);
      } catch (e) {
        if (e instanceof store.LimitError) throw countLimit(e.what, e.limit);
        if (e instanceof store.NotFoundError) throw NO_SESSION; // the user was deleted meanwhile
        throw e;
      }
    },
    async keys_list(_p, c) {
      const keys = await Promise.all(
        (await store.listNetworkKeys(db, secret, c.userId)).map(async (k) => ({
          ...keyBase(k),
          today: await keyToday(c.userId, k.id),
        })),
      );
      let usage: T.DailyUsage;
      if (deps.peekDaily !== undefined) {
        const d = await deps.peekDaily(c.userId);
        usage = {
          used: Math.max(0, d.limit - d.remaining),
          limit: d.limit,
          remaining: d.remaining,
          period: 'day',
          resetAt: iso(d.resetAt),
        };
      } else {
        const limit = deps.dailyLimit ?? DEFAULT_B_DAILY_PER_USER;
        const next = new Date();
        next.setUTCHours(24, 0, 0, 0);
        usage = { used: 0, limit, remaining: limit, period: 'day', resetAt: iso(next.getTime()) };
      }
      return { keys, maxKeys, usage };
    },
    async keys_get([keyId], c) {
      const k = await store.getNetworkKey(db, secret, c.userId, keyId);
      if (k === undefined) throw notFound('network key', keyId);
      const full = keyFull(k, c.req.baseUrl);
      const today = await keyToday(c.userId, k.id);
      const examples: T.CodeExample[] = [];
      for (const method of ['eth_blockNumber', 'eth_getBlockByNumber'] as const) {
        for (const x of nodeExamples[method])
          examples.push({
            method,
            id: x.id,
            language: x.language,
            label: x.label,
            code: x.code.split('{{RPC_URL}}').join(full.url),
          });
      }
      return { ...full, today, examples };
    },
    async keys_metrics([keyId, query], c) {
      if ((await store.getNetworkKey(db, secret, c.userId, keyId)) === undefined) throw notFound('network key', keyId);
      return metrics(c.userId, { keyId }, query);
    },
    async keys_delete([keyId], c) {
      if (!(await store.deleteNetworkKey(db, c.userId, keyId))) throw notFound('network key', keyId);
      return { id: keyId, deleted: true };
    },
  };

  /** Origin check for changing methods, then the session (memoised per HTTP request). */
  async function gate(method: string, ctx: AccountContext): Promise<Caller> {
    const req = accountRequest(ctx);
    if (!READS.has(method) && !req.originOk) throw originRefused(req.origin ?? '');
    if (OPEN.has(method)) return { req, userId: '', ip: ctx.ip };
    const token = req.token;
    req.userId ??=
      token === undefined ? Promise.resolve(undefined) : store.getSession(db, token).then((s) => s?.userId);
    const userId = await req.userId;
    if (userId === undefined) throw NO_SESSION;
    return { req, userId, ip: ctx.ip };
  }

  const out: Record<string, (params: never, ctx: AccountContext) => Promise<unknown>> = {};
  const watch = deps.store.watch;
  const guard = watch === undefined ? <T>(f: () => Promise<T>) => f() : <T>(f: () => Promise<T>) => watch.guard(f);
  for (const [name, fn] of Object.entries(inner) as [string, (p: never, c: Caller) => Promise<unknown>][]) {
    const changes = !READS.has(name) && !OPEN.has(name) && deps.onChange !== undefined;
    // The store's stall watch: a stopped database answers -32045 in about a second, not after the pool's timeouts.
    out[name] = (params, ctx) =>
      guard(async () => {
        const r = await fn(params, await gate(name, ctx));
        if (changes) await deps.onChange!();
        return r;
      });
  }
  return out as Handlers<Methods, AccountContext>;
}
