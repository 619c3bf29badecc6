// Quota alerts (issue 25): at 75 %, 90 % and 100 % of each daily and monthly quota — access point A's per-account
// quotas of apps, access point B's daily quota per user — a row in the store (the dashboard banner reads it via
// `alerts_list`) and, when the account set one, a signed webhook.
//
// Off the request path: the meter calls `observe` after each successful flush with the principals it wrote; the
// watcher then peeks the limiter's counters (the same Redis/memory counters every replica consumes from — no usage
// query) for those users only. Once per period per threshold across replicas: `claimQuotaAlert` inserts with
// ON CONFLICT DO NOTHING and only the inserting replica delivers.
//
// Webhook: POST JSON, `X-Rpcgate-Timestamp: <unix seconds>` and `X-Rpcgate-Signature: sha256=<hex HMAC-SHA256 of
// "<timestamp>.<body>" keyed by the account's secret>`; a network error or a 5xx is retried with exponential backoff
// (retryBaseMs · 2^attempt, `maxAttempts` in all); a 4xx is final. Deliveries run detached: nothing waits on them.
import { createHmac } from 'node:crypto';
import type { Kysely } from 'kysely';
import { UtcCalendar } from '../limits/calendar.js';
import { appSubject, type Limiter, type LimitSubject, type PlanCatalog, userSubject } from '../limits/index.js';
import { getUser } from '../store/users.js';
import { claimQuotaAlert, getAlertWebhook, type QuotaAlert } from '../store/quotaAlerts.js';
import type { Database } from '../store/schema.js';

export const ALERT_THRESHOLDS = [75, 90, 100] as const;
export const SIGNATURE_HEADER = 'x-rpcgate-signature';
export const TIMESTAMP_HEADER = 'x-rpcgate-timestamp';

/** What the meter hands over after a flush: who was metered. */
export interface FlushedPrincipal {
  principalKind: 'app' | 'key';
  principalId: string;
  userId: string;
}

export interface AlertLogger {
  warn(obj: object, msg: string): void;
  info(obj: object, msg: string): void;
}

export interface QuotaAlertsOptions {
  db: Kysely<Database>;
  limiter: Limiter;
  logger?: AlertLogger;
  /** Delivery attempts in all (default 6). */
  maxAttempts?: number;
  /** First retry delay (default 1 000 ms), doubled per attempt. */
  retryBaseMs?: number;
  /** Per-attempt timeout (default 10 000 ms). */
  timeoutMs?: number;
  now?: () => number;
  /** The deployment's plans: an account with a plan or override is checked against its own quotas (issue 27). */
  plans?: PlanCatalog;
}

/** The webhook body (documented in README and contracts/account.openrpc.json). */
export interface AlertPayload {
  type: 'quota.threshold';
  account: string;
  subject: 'apps' | 'keys';
  app: string | null;
  limit: 'daily' | 'monthly';
  window: 'day' | 'month';
  threshold: number;
  used: number;
  limitValue: number;
  periodStart: string;
  resetAt: string;
  time: string;
}

export function signAlert(secret: string, timestamp: string, body: string): string {
  return `sha256=${createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex')}`;
}

export function alertPayload(a: QuotaAlert): AlertPayload {
  return {
    type: 'quota.threshold',
    account: a.userId,
    subject: a.subject,
    app: a.appId,
    limit: a.window === 'day' ? 'daily' : 'monthly',
    window: a.window,
    threshold: a.threshold,
    used: a.used,
    limitValue: a.limit,
    periodStart: new Date(a.periodStart).toISOString(),
    resetAt: new Date(a.resetAt).toISOString(),
    time: new Date(a.createdAt).toISOString(),
  };
}

export class QuotaAlerts {
  private readonly db: Kysely<Database>;
  private readonly limiter: Limiter;
  private readonly logger: AlertLogger | undefined;
  private readonly maxAttempts: number;
  private readonly retryBaseMs: number;
  private readonly timeoutMs: number;
  private readonly now: () => number;
  private readonly cal = new UtcCalendar();
  /** Checks and deliveries in flight (drained by `idle`/`stop`). */
  private readonly inflight = new Set<Promise<unknown>>();
  private stopped = false;

  constructor(opts: QuotaAlertsOptions) {
    this.db = opts.db;
    this.limiter = opts.limiter;
    this.logger = opts.logger;
    this.maxAttempts = opts.maxAttempts ?? 6;
    this.retryBaseMs = opts.retryBaseMs ?? 1_000;
    this.timeoutMs = opts.timeoutMs ?? 10_000;
    this.now = opts.now ?? Date.now;
    this.plans = opts.plans;
  }

  private readonly plans: PlanCatalog | undefined;

  /** The account's own limiter plans (off the request path: one store read per account checked). */
  private async plansOf(userId: string) {
    if (this.plans === undefined) return undefined;
    const u = await getUser(this.db, userId);
    const l = u === undefined ? this.plans.base : this.plans.resolve(u.plan, u.planOverride);
    return l === this.plans.base ? undefined : l.plans;
  }

  /** After a meter flush: checks the quotas of the users metered (detached; never throws). */
  observe(rows: readonly FlushedPrincipal[]): void {
    if (this.stopped || rows.length === 0) return;
    // A's quotas are per account: one app per user suffices to peek them (the app is named in the alert).
    const subjects = new Map<string, { subject: LimitSubject; appId: string | null }>();
    for (const r of rows) {
      const k = `${r.principalKind}\u0000${r.userId}`;
      if (subjects.has(k)) continue;
      subjects.set(
        k,
        r.principalKind === 'app'
          ? { subject: appSubject(r.principalId, r.userId), appId: r.principalId }
          : { subject: userSubject(r.userId), appId: null },
      );
    }
    this.track(
      Promise.all(
        [...subjects.values()].map(async (s) => {
          const plans = await this.plansOf(s.subject.userId);
          return this.check(plans === undefined ? s.subject : { ...s.subject, plans }, s.appId);
        }),
      ).catch((err: unknown) =>
        this.logger?.warn({ err }, 'quota alert check failed; checked again after the next flush'),
      ),
    );
  }

  /** Resolves when every check and delivery started so far has finished (tests, shutdown). */
  async idle(): Promise<void> {
    while (this.inflight.size > 0) await Promise.allSettled([...this.inflight]);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.idle();
  }

  private track(p: Promise<unknown>): void {
    this.inflight.add(p);
    void p.finally(() => this.inflight.delete(p));
  }

  private async check(subject: LimitSubject, appId: string | null): Promise<void> {
    const now = this.now();
    const decisions = await this.limiter.peekAll(subject, now);
    const cal = this.cal.at(now);
    for (const d of decisions) {
      if ((d.period !== 'day' && d.period !== 'month') || !Number.isFinite(d.limit) || d.limit <= 0) continue;
      const used = d.limit - d.remaining;
      for (const t of ALERT_THRESHOLDS) {
        if (used * 100 < t * d.limit) break;
        const alert: QuotaAlert = {
          userId: subject.userId,
          subject: subject.kind === 'A' ? 'apps' : 'keys',
          window: d.period,
          periodStart: d.period === 'day' ? cal.dayStart : cal.monthStart,
          threshold: t,
          appId,
          used,
          limit: d.limit,
          resetAt: d.resetAt,
          createdAt: now,
        };
        if (await claimQuotaAlert(this.db, alert)) {
          this.logger?.info(alertPayload(alert), 'quota threshold crossed');
          this.track(this.deliver(alert));
        }
      }
    }
  }

  private async deliver(alert: QuotaAlert): Promise<void> {
    const hook = await getAlertWebhook(this.db, alert.userId);
    if (hook === undefined) return;
    const body = JSON.stringify(alertPayload(alert));
    for (let attempt = 0; attempt < this.maxAttempts; attempt++) {
      if (attempt > 0) await sleep(this.retryBaseMs * 2 ** (attempt - 1));
      const ts = String(Math.floor(Date.now() / 1000));
      let status = 0;
      try {
        const res = await fetch(hook.url, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            [TIMESTAMP_HEADER]: ts,
            [SIGNATURE_HEADER]: signAlert(hook.secret, ts, body),
          },
          body,
          redirect: 'manual',
          signal: AbortSignal.timeout(this.timeoutMs),
        });
        status = res.status;
        await res.body?.cancel();
        if (status < 500) {
          if (status >= 300)
            this.logger?.warn({ status, userId: alert.userId }, 'alert webhook refused the delivery; not retried');
          return;
        }
      } catch (err) {
        this.logger?.warn({ err, attempt, userId: alert.userId }, 'alert webhook delivery failed');
      }
      if (status >= 500) this.logger?.warn({ status, attempt, userId: alert.userId }, 'alert webhook answered 5xx');
    }
    this.logger?.warn({ userId: alert.userId, attempts: this.maxAttempts }, 'alert webhook gave up');
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms).unref());
}
