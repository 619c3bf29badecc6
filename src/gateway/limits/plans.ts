// Plans: how many requests a subject may make per period. From config; the defaults are the `default`s of the plan
// fields in contracts/config.schema.json (the one place they are defined): perSecond 100, daily 100,000, monthly
// 3,000,000 per account (A: the rate per app, the quotas shared by all apps of a user); 25,000 per user per UTC day (B).
import { configSchema } from '../../../generated/config/types.js';
import type { LimitsConfig, PlanLimits } from '../config/config.js';

export type { AppPlan, LimitsConfig, NetworkKeyPlan, PlanLimits } from '../config/config.js';

const { AppPlan: appPlan, NetworkKeyPlan: keyPlan } = configSchema.definitions;
export const DEFAULT_APP_PLAN = {
  perSecond: appPlan.properties.perSecond.default,
  daily: appPlan.properties.daily.default,
  monthly: appPlan.properties.monthly.default,
} as const;
export const DEFAULT_B_DAILY_PER_USER: number = keyPlan.properties.dailyPerUser.default;

/** A plan with defaults applied; 0 means "off" nowhere — `null` is off, numbers are limits. The `…Units` limits count
 *  compute units (x-gateway.units), the others requests. */
export interface ResolvedPlans {
  a: {
    perSecond: number | null;
    daily: number | null;
    monthly: number | null;
    unitsPerSecond: number | null;
    dailyUnits: number | null;
    monthlyUnits: number | null;
  };
  b: { daily: number; dailyUnits: number | null };
}

function limitValue(name: string, v: number | null | undefined, dflt: number | null): number | null {
  if (v === undefined) return dflt;
  if (v === null) return null;
  if (!Number.isSafeInteger(v) || v < 0)
    throw new RangeError(`limits: ${name} must be a non-negative integer or null, got ${v}`);
  return v;
}

export function resolvePlans(cfg: LimitsConfig = {}): ResolvedPlans {
  const a = cfg.a ?? {};
  const b = limitValue('b.dailyPerUser', cfg.b?.dailyPerUser, DEFAULT_B_DAILY_PER_USER);
  return {
    a: {
      perSecond: limitValue('a.perSecond', a.perSecond, DEFAULT_APP_PLAN.perSecond),
      daily: limitValue('a.daily', a.daily, DEFAULT_APP_PLAN.daily),
      monthly: limitValue('a.monthly', a.monthly, DEFAULT_APP_PLAN.monthly),
      // Unit limits are off unless configured (their schema default is null).
      unitsPerSecond: limitValue('a.unitsPerSecond', a.unitsPerSecond, null),
      dailyUnits: limitValue('a.dailyUnits', a.dailyUnits, null),
      monthlyUnits: limitValue('a.monthlyUnits', a.monthlyUnits, null),
    },
    b: {
      daily: b ?? DEFAULT_B_DAILY_PER_USER,
      dailyUnits: limitValue('b.dailyUnitsPerUser', cfg.b?.dailyUnitsPerUser, null),
    },
  };
}

// ---- account plans (issue 27): named plans of config `plans`, `accounts.defaultPlan`, per-account overrides ----------

/** An account's limits, every fall-back applied: the limiter's plans and the account's count caps. */
export interface AccountLimits {
  plans: ResolvedPlans;
  maxKeys: number;
  maxApps: number;
}

/** Network keys per account when neither plan nor override names `maxKeys` (store.MAX_NETWORK_KEYS_PER_USER). */
export const DEFAULT_MAX_KEYS = 4;
/** Apps per account by default: config `accounts.maxAppsPerUser`'s default. */
export const DEFAULT_MAX_APPS: number = configSchema.definitions.AccountsConfig.properties.maxAppsPerUser.default;

/** `over`'s fields over `base` (a field left out keeps the base; null switches a request limit off — but B's daily
 *  request quota, which cannot be off, keeps the base). */
function apply(base: AccountLimits, over: PlanLimits, where: string): AccountLimits {
  const v = (name: keyof PlanLimits, d: number | null) => limitValue(`${where}.${name}`, over[name], d);
  const a = base.plans.a;
  const b = base.plans.b;
  return {
    plans: {
      a: {
        perSecond: v('perSecond', a.perSecond),
        daily: v('daily', a.daily),
        monthly: v('monthly', a.monthly),
        unitsPerSecond: a.unitsPerSecond,
        dailyUnits: v('dailyUnits', a.dailyUnits),
        monthlyUnits: v('monthlyUnits', a.monthlyUnits),
      },
      b: { daily: v('daily', b.daily) ?? b.daily, dailyUnits: v('dailyUnits', b.dailyUnits) },
    },
    maxKeys: v('maxKeys', base.maxKeys) ?? base.maxKeys,
    maxApps: v('maxApps', base.maxApps) ?? base.maxApps,
  };
}

export interface PlanCatalogConfig {
  limits?: LimitsConfig;
  plans?: Readonly<Record<string, PlanLimits>>;
  defaultPlan?: string;
  /** config `accounts.maxAppsPerUser`. */
  maxApps?: number;
  /** Network keys per account without a plan (default 4). */
  maxKeys?: number;
}

/**
 * The deployment's plans, resolved once: an account's (plan, override) → its AccountLimits. Results are memoised per
 * (plan, override) — accounts on the same plan share one object, so principals built by the access index share it and
 * the limiter reads it without any per-request work. An account without plan or override (and no default plan) gets
 * `base` itself, which is what the limiters were built with.
 */
export class PlanCatalog {
  /** Limits of an account without a plan: `limits.a`, `limits.b`, maxAppsPerUser, 4 keys. */
  readonly base: AccountLimits;
  readonly defaultPlan: string | undefined;
  private readonly named = new Map<string, AccountLimits>();
  private readonly memo = new Map<string, AccountLimits>();

  constructor(readonly config: PlanCatalogConfig = {}) {
    this.base = {
      plans: resolvePlans(config.limits),
      maxKeys: config.maxKeys ?? DEFAULT_MAX_KEYS,
      maxApps: config.maxApps ?? DEFAULT_MAX_APPS,
    };
    for (const [name, p] of Object.entries(config.plans ?? {}))
      this.named.set(name, apply(this.base, p, `plans.${name}`));
    this.defaultPlan = config.defaultPlan;
    if (this.defaultPlan !== undefined && !this.named.has(this.defaultPlan))
      throw new RangeError(`accounts.defaultPlan: unknown plan "${this.defaultPlan}"`);
  }

  /** The configured plan names, in config order. */
  names(): string[] {
    return [...this.named.keys()];
  }

  has(name: string): boolean {
    return this.named.has(name);
  }

  /** A named plan's limits (undefined when not configured). */
  plan(name: string): AccountLimits | undefined {
    return this.named.get(name);
  }

  /** An account's limits: its plan (a name no longer configured counts as none: the default plan), the override over it. */
  resolve(plan: string | null | undefined, override: PlanLimits | null | undefined): AccountLimits {
    const name = plan != null && this.named.has(plan) ? plan : this.defaultPlan;
    const under = name === undefined ? this.base : this.named.get(name)!;
    if (override == null || Object.keys(override).length === 0) return under;
    const key = `${name ?? ''}\u0000${JSON.stringify(override)}`;
    let r = this.memo.get(key);
    if (r === undefined) {
      if (this.memo.size > 10_000) this.memo.clear();
      r = apply(under, override, 'override');
      this.memo.set(key, r);
    }
    return r;
  }
}
