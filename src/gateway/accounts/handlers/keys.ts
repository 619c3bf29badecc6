// The account API's `keys_…` methods (contracts/account.openrpc.json); ./index.ts merges the namespaces.
// Network keys (B).
import type * as T from '../../../../generated/account/types.js';
import { examples as nodeExamples } from '../../../../generated/node/examples.js';
import * as store from '../../store/index.js';
import { NO_SESSION, countLimit, notFound } from '../errors.js';
import { iso, trim, type Kit, type Namespace } from './kit.js';

export function keysHandlers(kit: Kit): Namespace<'keys'> {
  const { deps, db, secret, keyBase, keyFull, keyToday, metrics, networkOf } = kit;
  return {
    keys_logs: kit.logs.keys_logs,
    async keys_create([input], c) {
      await kit.requireVerifiedEmail(c.userId);
      const network = networkOf(input.network, 'key', '/0/network');
      try {
        const k = await store.createNetworkKey(
          db,
          secret,
          c.userId,
          { name: trim(input.name), network, description: input.description ?? '' },
          { maxPerUser: (await kit.limitsOfUser(c.userId)).maxKeys },
        );
        await kit.audit(c, 'key_created', { keyId: k.id, name: k.name, network: k.network });
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
      const limits = await kit.limitsOfUser(c.userId);
      let usage: T.DailyUsage;
      if (deps.peekDaily !== undefined) {
        const d = await deps.peekDaily(c.userId, kit.ownPlans(limits));
        usage = {
          used: Math.max(0, d.limit - d.remaining),
          limit: d.limit,
          remaining: d.remaining,
          period: 'day',
          resetAt: iso(d.resetAt),
        };
      } else {
        const limit = limits.plans.b.daily;
        const next = new Date();
        next.setUTCHours(24, 0, 0, 0);
        usage = { used: 0, limit, remaining: limit, period: 'day', resetAt: iso(next.getTime()) };
      }
      return { keys, maxKeys: limits.maxKeys, usage };
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
      await kit.audit(c, 'key_deleted', { keyId });
      return { id: keyId, deleted: true };
    },
  };
}
