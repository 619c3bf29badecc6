// Quota alerts and the account's alert webhook (migration 0011). `claimQuotaAlert` is the cross-replica "send once":
// the row's primary key is (user, subject, window, period, threshold), so of several replicas crossing the same
// threshold exactly one inserts it — and only that one delivers the webhook.
// The webhook's signing secret is stored encrypted (AES-256-GCM under a key derived from the server secret, as API keys
// are: secrets/keys.ts) — a copy of the database alone cannot forge deliveries. Rows written before that hold it in plain
// text (`whsec_…`); they are still read, and `encryptPlainWebhookSecrets` (run at start) rewrites them encrypted.
import type { Kysely } from 'kysely';
import { decryptWebhookSecret, encryptWebhookSecret, isEncrypted } from '../secrets/keys.js';
import type { Database } from './schema.js';

export interface QuotaAlert {
  userId: string;
  subject: 'apps' | 'keys';
  window: 'day' | 'month';
  periodStart: number;
  threshold: number;
  appId: string | null;
  used: number;
  limit: number;
  resetAt: number;
  createdAt: number;
}

/** Inserts the alert unless that threshold was already recorded for the period; true = this caller won (sends). */
export async function claimQuotaAlert(db: Kysely<Database>, a: QuotaAlert): Promise<boolean> {
  const r = await db
    .insertInto('quota_alerts')
    .values({
      user_id: a.userId,
      subject: a.subject,
      window: a.window,
      period_start: a.periodStart,
      threshold: a.threshold,
      app_id: a.appId,
      used: a.used,
      limit_value: a.limit,
      reset_at: a.resetAt,
      created_at: a.createdAt,
    })
    .onConflict((oc) => oc.columns(['user_id', 'subject', 'window', 'period_start', 'threshold']).doNothing())
    .executeTakeFirst();
  return Number(r.numInsertedOrUpdatedRows ?? 0n) > 0;
}

/** The user's alerts of periods not yet reset at `now`, highest threshold first per (subject, window). */
export async function listQuotaAlerts(db: Kysely<Database>, userId: string, now: number): Promise<QuotaAlert[]> {
  const rows = await db
    .selectFrom('quota_alerts')
    .selectAll()
    .where('user_id', '=', userId)
    .where('reset_at', '>', now)
    .orderBy('subject')
    .orderBy('window')
    .orderBy('threshold', 'desc')
    .execute();
  return rows.map((r) => ({
    userId: r.user_id,
    subject: r.subject,
    window: r.window,
    periodStart: Number(r.period_start),
    threshold: r.threshold,
    appId: r.app_id,
    used: Number(r.used),
    limit: Number(r.limit_value),
    resetAt: Number(r.reset_at),
    createdAt: Number(r.created_at),
  }));
}

export interface AlertWebhook {
  url: string;
  secret: string;
}

/** The user's webhook URL (no decryption: what account_alertWebhook shows). */
export async function getAlertWebhookUrl(db: Kysely<Database>, userId: string): Promise<string | undefined> {
  const r = await db.selectFrom('alert_webhooks').select('url').where('user_id', '=', userId).executeTakeFirst();
  return r?.url;
}

/** The user's webhook with its signing secret decrypted by the server secret. */
export async function getAlertWebhook(
  db: Kysely<Database>,
  serverSecret: Uint8Array,
  userId: string,
): Promise<AlertWebhook | undefined> {
  const r = await db
    .selectFrom('alert_webhooks')
    .select(['url', 'secret'])
    .where('user_id', '=', userId)
    .executeTakeFirst();
  if (r === undefined) return undefined;
  return { url: r.url, secret: isEncrypted(r.secret) ? decryptWebhookSecret(serverSecret, r.secret) : r.secret };
}

/** Sets (or with `undefined`, removes) the user's webhook; the secret is stored encrypted. */
export async function setAlertWebhook(
  db: Kysely<Database>,
  serverSecret: Uint8Array,
  userId: string,
  hook: AlertWebhook | undefined,
  now: number,
): Promise<void> {
  if (hook === undefined) {
    await db.deleteFrom('alert_webhooks').where('user_id', '=', userId).execute();
    return;
  }
  const secret = encryptWebhookSecret(serverSecret, hook.secret);
  await db
    .insertInto('alert_webhooks')
    .values({ user_id: userId, url: hook.url, secret, updated_at: now })
    .onConflict((oc) => oc.column('user_id').doUpdateSet({ url: hook.url, secret, updated_at: now }))
    .execute();
}

/**
 * Rewrites signing secrets stored in plain text (before they were encrypted) encrypted; returns how many. Safe on
 * several replicas at once: a row is only rewritten while it still holds the plain text read.
 */
export async function encryptPlainWebhookSecrets(db: Kysely<Database>, serverSecret: Uint8Array): Promise<number> {
  const rows = await db
    .selectFrom('alert_webhooks')
    .select(['user_id', 'secret'])
    .where('secret', 'not like', 'v1.%')
    .execute();
  let n = 0;
  for (const r of rows) {
    const res = await db
      .updateTable('alert_webhooks')
      .set({ secret: encryptWebhookSecret(serverSecret, r.secret) })
      .where('user_id', '=', r.user_id)
      .where('secret', '=', r.secret)
      .executeTakeFirst();
    n += Number(res.numUpdatedRows);
  }
  return n;
}
