// Account API handlers (contracts/account.openrpc.json), one file per namespace (account, chains, networks, useCases, apps, keys, alerts, admin; sign-up modes and invites: invites.ts) and the request log's
// apps_logs/keys_logs (logs.ts),
// merged here. Params arrive validated by the generated validators; the namespaces add what a schema cannot know (the
// deployment's chains and networks, a real IP/CIDR, a PEM that imports for its algorithm, a node API method name) and
// do the work through the store, always with the session's user id — the store's repository functions filter by it,
// so another user's object reads and changes as "not found".
//
// Every method goes through `gate` (below): the Origin check for methods that change something, then the session check
// for all but the open methods (sign up / log in / log out), and for every `admin_` method the admin role (config
// `accounts.admins` or granted in the store), else -32041 `admin-only`. Which methods are read-only or open is the contract's
// `x-gateway` (src/gateway/method-meaning.ts); a method without it counts as changing and closed (fail closed).
// A new namespace: a file exporting `<ns>Handlers(kit): Namespace<'<ns>'>`, spread into `inner` below (the type
// checker refuses a contract method that no namespace handles).
import type { Handlers } from '@rpcgate/toolkit/engine';
import { methods as accountMethods, type Methods } from '../../../../generated/account/methods.js';
import { methodsWhere } from '../../method-meaning.js';
import * as store from '../../store/index.js';
import { ADMIN_ONLY, NO_SESSION, originRefused } from '../errors.js';
import { accountRequest, type AccountContext } from '../session.js';
import { accountHandlers } from './account.js';
import { adminHandlers } from './admin.js';
import { inviteHandlers } from './invites.js';
import { alertsHandlers } from './alerts.js';
import { appsHandlers } from './apps.js';
import { chainsHandlers } from './chains.js';
import { keysHandlers } from './keys.js';
import { type AccountDeps, type Caller, createKit, type Inner } from './kit.js';
import { networksHandlers } from './networks.js';
import { handlersForUseCases } from './useCases.js';

export { type AccountDeps, MAX_METRICS_POINTS, USE_CASES } from './kit.js';

/** Methods that change nothing (`readOnly`): no Origin check. Everything else is checked. */
const READS = methodsWhere(accountMethods, (m) => m.readOnly);
/** Methods that run without a session (`open`). */
const OPEN = methodsWhere(accountMethods, (m) => m.open);
/** The operators' namespace: every method named `admin_…` answers admins only. */
const ADMIN: ReadonlySet<string> = new Set(Object.keys(accountMethods).filter((m) => m.startsWith('admin_')));

export function createAccountHandlers(deps: AccountDeps): Handlers<Methods, AccountContext> {
  const kit = createKit(deps);
  const { db } = kit;
  const inner: Inner = {
    ...accountHandlers(kit),
    ...chainsHandlers(kit),
    ...networksHandlers(kit),
    ...handlersForUseCases(),
    ...appsHandlers(kit),
    ...keysHandlers(kit),
    ...alertsHandlers(kit),
    ...adminHandlers(kit),
    ...inviteHandlers(kit),
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
    if (!ADMIN.has(method)) return { req, userId, ip: ctx.ip };
    // Every `admin_` method of the contract, present and future: only an admin passes (the role read now, not cached).
    const admin = await store.getUser(db, userId);
    if (admin === undefined) throw NO_SESSION;
    if (!kit.isAdmin(admin)) throw ADMIN_ONLY;
    return { req, userId, ip: ctx.ip, admin };
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
