// Table types for Kysely: one schema for SQLite and PostgreSQL.
// Portable column choices: timestamps are epoch milliseconds (bigint in PG, integer in SQLite; the pg pool parses
// int8 as a JS number), booleans are 0/1 integers, JSON is text. Public ids are random strings (`usr_…`, `app_…`).
import type { ColumnType, Generated, Insertable, Selectable } from 'kysely';

export type AllowlistKind = 'origin' | 'ip' | 'address' | 'method';
/** A network of the deployment's config (any configured name; the store keeps what the account API validated). */
export type NetworkName = string;
/** JWS algorithm a JWT public key is pinned to ("the algorithm comes from the key"). */
export type JwtAlg = 'RS256' | 'RS384' | 'RS512' | 'ES256' | 'ES384';
export type KeyEventKind = 'upsert' | 'revoke';

export interface UsersTable {
  id: string;
  /** Stored lower-cased; unique → case-insensitive uniqueness. */
  email: string;
  password_hash: string;
  created_at: number;
  /** When the email was proved (a verification or reset link followed); 0 = no verification was asked for (the
   *  default); null = not yet (0008_account_tokens). */
  email_verified_at: ColumnType<number | null, number | null | undefined, number | null>;
  /** 'admin' = granted the operator role (`rpcgate admin grant`); config `accounts.admins` names more (0012_admin). */
  role: ColumnType<UserRole, UserRole | undefined, UserRole>;
  /** Set while an operator has the account suspended (epoch ms), with the reason; null = active. */
  suspended_at: ColumnType<number | null, number | null | undefined, number | null>;
  suspended_reason: ColumnType<string | null, string | null | undefined, string | null>;
  /** A plan name of config `plans`; null = `accounts.defaultPlan`. */
  plan: ColumnType<string | null, string | null | undefined, string | null>;
  /** JSON of the per-account PlanLimits over the plan; null = none. */
  plan_override: ColumnType<string | null, string | null | undefined, string | null>;
}

export type UserRole = 'user' | 'admin';

/** A password-reset or email-verification token (0008_account_tokens): only its sha256 is kept. */
export interface AccountTokensTable {
  token_hash: string;
  user_id: string;
  purpose: AccountTokenPurpose;
  created_at: number;
  expires_at: number;
}

export type AccountTokenPurpose = 'reset' | 'verify';

/** A sign-up invite (0013_invites; see invites.ts): only the sha256 of its token is kept. */
export interface InvitesTable {
  id: string;
  token_hash: string;
  /** Only this email may sign up with it; null = anyone holding the link. */
  email: string | null;
  /** The admin who issued it (null: that account is gone). */
  created_by: string | null;
  created_at: number;
  expires_at: number;
  used_at: number | null;
  /** The account created with it (null: not used, or that account is gone). */
  used_by: string | null;
  revoked_at: number | null;
}

/** One security event of an account (0009_audit_events; see audit.ts). */
export interface AuditEventsTable {
  id: Generated<number>;
  at: number;
  user_id: string;
  actor_id: string | null;
  action: string;
  ip: string | null;
  detail: string | null;
}

export interface SessionsTable {
  /** sha256 hex of the cookie token. */
  token_hash: string;
  user_id: string;
  created_at: number;
  expires_at: number;
}

/** Access point A: one key per app. */
export interface AppsTable {
  id: string;
  user_id: string;
  name: string;
  description: string;
  use_case: string;
  chain: string;
  /** JSON array of service names, e.g. `["node-api"]`. */
  services: string;
  /** HMAC-SHA256 hex of the key (unique; the lookup). */
  key_hash: string;
  /** AES-256-GCM of the key (`v1.…`), so the dashboard can show it again. */
  key_enc: string;
  require_jwt: number;
  /** Longest accepted JWT lifetime (exp - iat, seconds); null = no maximum (0005_jwt_lifetime). */
  jwt_max_lifetime_sec: number | null;
  created_at: number;
  updated_at: number;
  key_rotated_at: number | null;
  /** Request log: capture params and results of this app's calls (redacted, size-capped); 0 = off (0007_request_log). */
  log_bodies: Generated<number>;
}

export interface AppAllowlistsTable {
  id: string;
  app_id: string;
  kind: AllowlistKind;
  value: string;
  created_at: number;
}

export interface AppJwtKeysTable {
  /** The `kid` tokens carry. */
  id: string;
  app_id: string;
  alg: JwtAlg;
  public_key_pem: string;
  created_at: number;
}

/** Access point B: keys bound to one network; at most `maxPerUser` (4) per user. */
export interface NetworkKeysTable {
  id: string;
  user_id: string;
  name: string;
  network: NetworkName;
  description: string;
  key_hash: string;
  key_enc: string;
  created_at: number;
}

/**
 * Change feed for the in-memory access index of every replica: one row per change to anything the index holds,
 * written in the same transaction as the change. Replicas poll `id > cursor` (see keyEvents.ts).
 */
export interface KeyEventsTable {
  id: Generated<number>;
  key_hash: string;
  kind: KeyEventKind;
  at: number;
}

export interface Database {
  users: UsersTable;
  sessions: SessionsTable;
  apps: AppsTable;
  app_allowlists: AppAllowlistsTable;
  app_jwt_keys: AppJwtKeysTable;
  network_keys: NetworkKeysTable;
  key_events: KeyEventsTable;
  request_log: RequestLogTable;
  request_log_principals: RequestLogPrincipalsTable;
  account_tokens: AccountTokensTable;
  invites: InvitesTable;
  audit_events: AuditEventsTable;
  quota_alerts: QuotaAlertsTable;
  alert_webhooks: AlertWebhooksTable;
}

/** A quota threshold crossed, once per (user, subject, window, period, threshold) (0011_quota_alerts). */
export interface QuotaAlertsTable {
  user_id: string;
  subject: 'apps' | 'keys';
  window: 'day' | 'month';
  period_start: number;
  threshold: number;
  app_id: string | null;
  used: number;
  limit_value: number;
  reset_at: number;
  created_at: number;
}

/** An account's quota-alert webhook (0011_quota_alerts). */
export interface AlertWebhooksTable {
  user_id: string;
  url: string;
  secret: string;
  updated_at: number;
}

/** One node API call of an app or network key (0007_request_log, 0015_request_log_principals; see requestLog.ts). */
export interface RequestLogTable {
  id: Generated<number>;
  ts: number;
  /** request_log_principals.id */
  principal: number;
  network: string;
  method: string;
  http_status: number;
  code: number | null;
  latency_ms: number;
  cache_hit: number;
  upstream: string | null;
  request_id: string | null;
  ip_hash: string | null;
  transport: string;
  params: string | null;
  result: string | null;
}

/** An app or network key that has request log rows, once (0015_request_log_principals). */
export interface RequestLogPrincipalsTable {
  id: Generated<number>;
  kind: 'app' | 'key';
  principal_id: string;
  user_id: string;
}

export type UserRow = Selectable<UsersTable>;
export type AppRow = Selectable<AppsTable>;
export type NetworkKeyRow = Selectable<NetworkKeysTable>;
export type NewKeyEvent = Insertable<KeyEventsTable>;
// Re-exported for repositories that need column helpers.
export type { ColumnType };
