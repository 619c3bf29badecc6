// Quota alerts (issue 25 item 3): thresholds 75/90/100 % of the daily and monthly quotas, recorded once per period
// (a unique row in the store, so two replicas crossing together deliver once), and the account's webhook: a real HTTP
// receiver started here verifies the HMAC signature and counts deliveries; a receiver that fails (500) first gets
// the delivery retried. SQLite with the in-process limiter; PostgreSQL with two replicas (two stores, two Redis
// limiters on one prefix, two watchers) when PostgreSQL and Redis answer.
import { createHmac, randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Migrator } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type FlushedPrincipal,
  QuotaAlerts,
  SIGNATURE_HEADER,
  TIMESTAMP_HEADER,
} from '../src/gateway/alerts/quota-alerts.js';
import { appSubject, createLimiter, type Limiter, userSubject } from '../src/gateway/limits/index.js';
import { listQuotaAlerts, migrateToLatest, setAlertWebhook, type Store } from '../src/gateway/store/index.js';
import { migrationProvider } from '../src/gateway/store/migrations/index.js';
import { deleteRedisKeys, REDIS_URL, redisReachable, scratchPrefix, skipUnless } from './helpers/services.js';
import { storeTargets } from './helpers/store-targets.js';

interface Receiver {
  url: string;
  /** Bodies accepted (2xx) with a valid signature. */
  accepted: Record<string, unknown>[];
  attempts: number;
  badSignatures: number;
  close(): Promise<void>;
}

/** A webhook receiver that checks `sha256=HMAC(secret, "<ts>.<body>")`; answers 500 to the first `failFirst` posts. */
async function receiver(secret: string, failFirst = 0): Promise<Receiver> {
  const r: Receiver = { url: '', accepted: [], attempts: 0, badSignatures: 0, close: async () => {} };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      r.attempts++;
      const body = Buffer.concat(chunks).toString('utf8');
      const ts = String(req.headers[TIMESTAMP_HEADER] ?? '');
      const want = `sha256=${createHmac('sha256', secret).update(`${ts}.${body}`).digest('hex')}`;
      if (req.headers[SIGNATURE_HEADER] !== want || Math.abs(Date.now() / 1000 - Number(ts)) > 300) {
        r.badSignatures++;
        res.writeHead(400).end();
        return;
      }
      if (r.attempts <= failFirst) {
        res.writeHead(500).end();
        return;
      }
      r.accepted.push(JSON.parse(body));
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  r.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  r.close = () => new Promise((ok) => server.close(() => ok()));
  return r;
}

const SERVER_SECRET = randomBytes(32);
const PLANS = { a: { perSecond: null, daily: 40, monthly: 100 }, b: { dailyPerUser: 20 } };
const targets = await storeTargets('quota-alerts');
const redisSkip = skipUnless(await redisReachable(), 'quota-alerts', 'Redis');

for (const target of targets) {
  const skip = target.skip || (target.dialect === 'postgres' && redisSkip);
  describe.skipIf(skip)(`quota alerts (${target.dialect})`, () => {
    const prefix = scratchPrefix();
    // Two replicas on PostgreSQL (own pools, Redis counters shared); one on SQLite (in-process counters).
    const replicas: { store: Store; limiter: Limiter; alerts: QuotaAlerts }[] = [];
    beforeAll(async () => {
      await target.setup();
      const memory = createLimiter(PLANS);
      for (let i = 0; i < (target.dialect === 'postgres' ? 2 : 1); i++) {
        const store = await target.open();
        const limiter =
          target.dialect === 'postgres'
            ? createLimiter({ ...PLANS, redisUrl: REDIS_URL, redisPrefix: prefix })
            : memory;
        replicas.push({
          store,
          limiter,
          alerts: new QuotaAlerts({
            db: store.db,
            secret: SERVER_SECRET,
            limiter,
            retryBaseMs: 50,
            allowPrivateWebhooks: true, // the receivers listen on 127.0.0.1
          }),
        });
      }
    });
    afterAll(async () => {
      for (const r of replicas) {
        await r.alerts.stop();
        await r.limiter.close().catch(() => {});
        await r.store.close();
      }
      if (target.dialect === 'postgres') await deleteRedisKeys(prefix);
      await target.teardown();
    });

    /** What a meter flush hands every replica after `n` calls were counted. */
    async function crossAll(rows: FlushedPrincipal[]) {
      for (const r of replicas) r.alerts.observe(rows);
      await Promise.all(replicas.map((r) => r.alerts.idle()));
    }

    it('network keys: 75, 90 and 100 % of the daily quota per user, each delivered once, signed', async () => {
      const userId = `usr_${randomBytes(6).toString('hex')}`;
      const secret = randomBytes(32).toString('hex');
      const hook = await receiver(secret);
      try {
        await setAlertWebhook(replicas[0].store.db, SERVER_SECRET, userId, { url: hook.url, secret }, Date.now());
        const rows: FlushedPrincipal[] = [{ principalKind: 'key', principalId: 'key_1', userId }];
        const lim = replicas[0].limiter;
        await lim.consume(userSubject(userId), 14); // 70 %: nothing
        await crossAll(rows);
        expect(hook.attempts).toBe(0);
        await lim.consume(userSubject(userId), 1); // 75 %
        await crossAll(rows);
        await crossAll(rows); // again in the same period: nothing new
        expect(hook.accepted.map((b) => b.threshold)).toEqual([75]);
        await lim.consume(userSubject(userId), 5); // 100 % (crosses 90 too)
        await crossAll(rows);
        expect(hook.badSignatures).toBe(0);
        expect(hook.attempts).toBe(3);
        expect(hook.accepted.map((b) => b.threshold).sort()).toEqual([100, 75, 90]);
        const last = hook.accepted.find((b) => b.threshold === 100)!;
        expect(last).toMatchObject({
          type: 'quota.threshold',
          account: userId,
          subject: 'keys',
          app: null,
          limit: 'daily',
          window: 'day',
          used: 20,
          limitValue: 20,
        });
        const dayStart = new Date();
        dayStart.setUTCHours(0, 0, 0, 0);
        expect(last.periodStart).toBe(dayStart.toISOString());
        const listed = await listQuotaAlerts(replicas[0].store.db, userId, Date.now());
        expect(listed.map((a) => a.threshold)).toEqual([100, 90, 75]);
      } finally {
        await hook.close();
      }
    });

    it('apps: daily and monthly quotas of the account, named by the app; another account sees none of them', async () => {
      const userId = `usr_${randomBytes(6).toString('hex')}`;
      const secret = randomBytes(32).toString('hex');
      const hook = await receiver(secret);
      try {
        await setAlertWebhook(replicas[0].store.db, SERVER_SECRET, userId, { url: hook.url, secret }, Date.now());
        await replicas[0].limiter.consume(appSubject('app_x', userId), 36); // day 90 %, month 36 %
        await crossAll([{ principalKind: 'app', principalId: 'app_x', userId }]);
        expect(hook.accepted.map((b) => `${b.window}:${b.threshold}`).sort()).toEqual(['day:75', 'day:90']);
        expect(hook.accepted[0]).toMatchObject({ subject: 'apps', app: 'app_x', limitValue: 40 });
        expect(await listQuotaAlerts(replicas[0].store.db, 'usr_other', Date.now())).toEqual([]);
      } finally {
        await hook.close();
      }
    });

    it('apps: 75, 90 and 100 % of the monthly quota, each once, named monthly', async () => {
      const userId = `usr_${randomBytes(6).toString('hex')}`;
      const secret = randomBytes(32).toString('hex');
      const hook = await receiver(secret);
      // A plan whose month runs out before its day: the monthly window's thresholds alone.
      const limiter = createLimiter({ a: { perSecond: null, daily: 1000, monthly: 40 }, b: { dailyPerUser: 20 } });
      const alerts = new QuotaAlerts({
        db: replicas[0].store.db,
        secret: SERVER_SECRET,
        limiter,
        allowPrivateWebhooks: true,
      });
      try {
        await setAlertWebhook(replicas[0].store.db, SERVER_SECRET, userId, { url: hook.url, secret }, Date.now());
        const rows: FlushedPrincipal[] = [{ principalKind: 'app', principalId: 'app_m', userId }];
        await limiter.consume(appSubject('app_m', userId), 30); // month 75 %, day 3 %
        alerts.observe(rows);
        await alerts.idle();
        await limiter.consume(appSubject('app_m', userId), 10); // month 100 % (crosses 90 too)
        alerts.observe(rows);
        await alerts.idle();
        alerts.observe(rows); // again: nothing new
        await alerts.idle();
        expect(hook.badSignatures).toBe(0);
        expect(hook.accepted.map((b) => `${b.window}:${b.threshold}`).sort()).toEqual([
          'month:100',
          'month:75',
          'month:90',
        ]);
        const last = hook.accepted.find((b) => b.threshold === 100)!;
        expect(last).toMatchObject({ subject: 'apps', app: 'app_m', limit: 'monthly', used: 40, limitValue: 40 });
        const monthStart = new Date();
        monthStart.setUTCDate(1);
        monthStart.setUTCHours(0, 0, 0, 0);
        expect(last.periodStart).toBe(monthStart.toISOString());
      } finally {
        await alerts.stop();
        await limiter.close();
        await hook.close();
      }
    });

    it('migration 0011 goes down (tables gone) and up again', async () => {
      const { store } = replicas[0];
      const migrator = new Migrator({ db: store.db, provider: migrationProvider(store.dialect) });
      expect((await migrator.migrateTo('0010_usage_units')).error).toBeUndefined();
      const tables = async () => (await store.db.introspection.getTables()).map((t) => t.name);
      expect(await tables()).not.toContain('quota_alerts');
      expect(await tables()).not.toContain('alert_webhooks');
      expect(await migrateToLatest(store.db, store.dialect)).toContain('0011_quota_alerts');
      expect(await tables()).toEqual(expect.arrayContaining(['quota_alerts', 'alert_webhooks']));
    });

    it('a receiver answering 500 gets the delivery again (backoff) and it arrives once', async () => {
      const userId = `usr_${randomBytes(6).toString('hex')}`;
      const secret = randomBytes(32).toString('hex');
      const hook = await receiver(secret, 2);
      try {
        await setAlertWebhook(replicas[0].store.db, SERVER_SECRET, userId, { url: hook.url, secret }, Date.now());
        await replicas[0].limiter.consume(userSubject(userId), 15);
        const t0 = Date.now();
        await crossAll([{ principalKind: 'key', principalId: 'key_2', userId }]);
        expect(hook.attempts).toBe(3); // 500, 500, 204
        expect(hook.accepted.map((b) => b.threshold)).toEqual([75]);
        expect(Date.now() - t0).toBeGreaterThanOrEqual(50 + 100); // waited 50 then 100 ms
      } finally {
        await hook.close();
      }
    });
  });
}
