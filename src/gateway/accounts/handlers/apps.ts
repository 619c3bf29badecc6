// The account API's `apps_…` methods (contracts/account.openrpc.json); ./index.ts merges the namespaces.
// Apps, their allowlists and JWT keys.
import { isIP } from 'node:net';
import type * as T from '../../../../generated/account/types.js';
import { methods as nodeMethods } from '../../../../generated/node/methods.js';
import * as store from '../../store/index.js';
import { NO_SESSION, badValue, conflict, countLimit, notFound } from '../errors.js';
import { iso, trim, type Kit, type Namespace } from './kit.js';

export function appsHandlers(kit: Kit): Namespace<'apps'> {
  const { deps, db, secret, appSummary, appFull, metrics, entry, jwtKey, chainOf, checkJwtKey } = kit;
  return {
    apps_logs: kit.logs.apps_logs,
    async apps_create([input], c) {
      await kit.requireVerifiedEmail(c.userId);
      const chain = chainOf(input.chain, 'app', '/0/chain');
      const app = {
        name: trim(input.name),
        description: input.description ?? '',
        useCase: trim(input.useCase),
        chain,
        services: [...input.services],
      };
      try {
        const a = await store.createApp(db, secret, c.userId, app, {
          maxPerUser: (await kit.limitsOfUser(c.userId)).maxApps,
        });
        await kit.audit(c, 'app_created', { appId: a.id, name: a.name });
        return appFull(a, c.req.baseUrl);
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
      const limits = await kit.limitsOfUser(c.userId);
      const plan = limits.plans.a;
      let quotas: T.AccountQuota[];
      if (deps.peekAppQuotas !== undefined) {
        quotas = (await deps.peekAppQuotas(c.userId, kit.ownPlans(limits))).map((d) => ({
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
      return { apps: await store.countApps(db, c.userId), maxApps: limits.maxApps, perSecond: plan.perSecond, quotas };
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
      await kit.audit(c, 'app_key_rotated', { appId, name: a.name });
      return appFull(a, c.req.baseUrl);
    },
    async apps_delete([appId], c) {
      if (!(await store.deleteApp(db, c.userId, appId))) throw notFound('app', appId);
      await kit.audit(c, 'app_deleted', { appId });
      return { id: appId, deleted: true };
    },

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
  };
}
