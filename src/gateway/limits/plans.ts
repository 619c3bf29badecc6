// Plans: how many requests a subject may make per period. From config; defaults documented here.

/**
 * Operator plan for access point A (apps), applied per app. A field left out takes the default below;
 * `null` switches that limit off. Defaults are a free tier in the spirit of public node providers:
 *   perSecond 100, daily 100,000, monthly 3,000,000.
 */
export interface AppPlan {
  perSecond?: number | null;
  daily?: number | null;
  monthly?: number | null;
}

/** Access point B (network keys): requests per user per UTC day, across all the user's B keys. */
export interface NetworkKeyPlan {
  dailyPerUser?: number;
}

export interface LimitsConfig {
  /** Access point A operator plan (per app). */
  a?: AppPlan;
  /** Access point B plan (per user). */
  b?: NetworkKeyPlan;
}

export const DEFAULT_APP_PLAN = { perSecond: 100, daily: 100_000, monthly: 3_000_000 } as const;
export const DEFAULT_B_DAILY_PER_USER = 25_000;

/** A plan with defaults applied; 0 means "off" nowhere — `null` is off, numbers are limits. */
export interface ResolvedPlans {
  a: { perSecond: number | null; daily: number | null; monthly: number | null };
  b: { daily: number };
}

function limitValue(name: string, v: number | null | undefined, dflt: number | null): number | null {
  if (v === undefined) return dflt;
  if (v === null) return null;
  if (!Number.isSafeInteger(v) || v < 0) throw new RangeError(`limits: ${name} must be a non-negative integer or null, got ${v}`);
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
    },
    b: { daily: b ?? DEFAULT_B_DAILY_PER_USER },
  };
}
