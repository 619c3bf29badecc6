// The account API's `alerts_…` methods: the signed-in account's quota alerts of the current periods (the dashboard's
// banner). Written by src/gateway/alerts/quota-alerts.ts after meter flushes.
import * as store from '../../store/index.js';
import { iso, type Kit, type Namespace } from './kit.js';

export function alertsHandlers(kit: Kit): Namespace<'alerts'> {
  const { db } = kit;
  return {
    async alerts_list(_p, c) {
      const alerts = await store.listQuotaAlerts(db, c.userId, Date.now());
      return alerts.map((a) => ({
        subject: a.subject,
        app: a.appId,
        window: a.window,
        threshold: a.threshold as 75 | 90 | 100,
        used: a.used,
        limit: a.limit,
        periodStart: iso(a.periodStart),
        resetAt: iso(a.resetAt),
        createdAt: iso(a.createdAt),
      }));
    },
  };
}
