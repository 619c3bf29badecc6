// Plans: how many requests a subject may make per period. From config; the defaults are the `default`s of the plan
// fields in contracts/config.schema.json (the one place they are defined): perSecond 100, daily 100,000, monthly
// 3,000,000 per account (A: the rate per app, the quotas shared by all apps of a user); 25,000 per user per UTC day (B).
import { configSchema } from '../../../generated/config/types.js';
import type { LimitsConfig } from '../config/config.js';

export type { AppPlan, LimitsConfig, NetworkKeyPlan } from '../config/config.js';

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
