// Mounts the account API (src/gateway/accounts) at POST /api from the running service's parts: the store, the server secret,
// the limiter (today's B usage), the deployment's chains and networks. startService adds it after any extension routes.
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { createAccountApi, SELF_SERVICE_DEFAULTS, SIGNUP_DEFAULTS, type AccountApi } from '../accounts/index.js';
import { createMailer } from '../mail/index.js';
import { chainNetworks, networkLabel, trustProxyHops, type Config } from '../config/config.js';
import { accountPlans, appSubject, userSubject, type Limiter, type PlanCatalog } from '../limits/index.js';
import { resolvePlans } from '../limits/plans.js';
import type { Store } from '../store/index.js';
import { limitsBackendUnavailable } from '../errors.js';

export interface AccountRouteDeps {
  config: Config;
  /** The plan catalogue the key index resolves accounts with (absent: built from `config`). */
  plans?: PlanCatalog;
  store: Store;
  secret: Uint8Array;
  limiter?: Limiter;
  /** The service's Redis client for the log-in / sign-up throttles (src/gateway/redis). */
  redisClient?: Redis;
  logger?: Logger;
  /** The key index: account changes are applied to it before the answer (read-your-writes on this replica). */
  access?: { sync(): Promise<void> };
  /** Per network: served by an embedded local chain. */
  embedded: Readonly<Record<string, boolean>>;
}

export function accountRoute(d: AccountRouteDeps): AccountApi {
  const { config, limiter } = d;
  const networks: Record<string, { chainId: number; local: boolean; label: string }> = {};
  for (const [name, n] of Object.entries(config.networks))
    networks[name] = {
      chainId: n.chainId,
      local: d.embedded[name] ?? n.upstreams.length === 0,
      label: networkLabel(name, n),
    };
  return createAccountApi({
    store: d.store,
    secret: d.secret,
    chains: chainNetworks(config),
    networks,
    // Redis down: the same fast, documented 503 -32044 as a limited node API call (not an internal error).
    peekDaily:
      limiter &&
      ((userId, plans) =>
        limiter.peek(userSubject(userId, plans)).catch((e: unknown) => {
          d.logger?.warn(
            { err: { message: (e as Error).message } },
            'account API: limits backend unreachable; usage not available',
          );
          throw limitsBackendUnavailable();
        })),
    // An app's day and month windows are its user's (the account's quota): read through any app id of that user.
    peekAppQuotas:
      limiter &&
      ((userId, plans) =>
        limiter.peekAll(appSubject('', userId, plans)).then(
          (ds) => ds.filter((d) => d.period !== 'second'),
          (e: unknown) => {
            d.logger?.warn(
              { err: { message: (e as Error).message } },
              'account API: limits backend unreachable; app quotas not available',
            );
            throw limitsBackendUnavailable();
          },
        )),
    appPlan: resolvePlans(config.limits).a,
    dailyLimit: resolvePlans(config.limits).b.daily,
    maxApps: config.accounts?.maxAppsPerUser,
    allowPrivateWebhooks: config.alerts?.allowPrivateWebhooks ?? false,
    plans: d.plans ?? accountPlans(config),
    admins: config.accounts?.admins,
    publicBaseUrl: config.publicBaseUrl,
    allowedOrigins: config.allowedOrigins,
    trustProxy: trustProxyHops(config),
    security: { ...config.accountSecurity, redisClient: d.redisClient, redisPrefix: config.redisPrefix },
    strictResults: config.strictResults,
    logger: d.logger,
    onChange: d.access && (() => d.access!.sync()),
    mailer: createMailer(
      config.smtp && {
        url: config.smtp.url,
        from: config.smtp.from ?? `rpcgate <no-reply@${new URL(config.publicBaseUrl!).hostname}>`,
      },
      d.logger,
    ),
    signup: {
      mode: config.accounts?.signup ?? SIGNUP_DEFAULTS.mode,
      inviteTtlMs:
        config.accounts?.inviteTtlHours === undefined
          ? SIGNUP_DEFAULTS.inviteTtlMs
          : config.accounts.inviteTtlHours * 3_600_000,
    },
    selfService: {
      verifyEmail: config.accounts?.verifyEmail ?? SELF_SERVICE_DEFAULTS.verifyEmail,
      resetTtlMs:
        config.accounts?.passwordResetTtlMinutes === undefined
          ? SELF_SERVICE_DEFAULTS.resetTtlMs
          : config.accounts.passwordResetTtlMinutes * 60_000,
      verifyTtlMs:
        config.accounts?.verifyEmailTtlHours === undefined
          ? SELF_SERVICE_DEFAULTS.verifyTtlMs
          : config.accounts.verifyEmailTtlHours * 3_600_000,
      deletedUsage: config.accounts?.deletedUsage ?? SELF_SERVICE_DEFAULTS.deletedUsage,
    },
  });
}
