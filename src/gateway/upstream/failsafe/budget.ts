// Per-upstream budgets: an upstream's own plan (a paid provider's requests and compute units per second,
// `networks.<name>.upstreams[i].rateLimit`) kept on our side, so rpcgate never trips the provider's HTTP 429; and the
// backoff after a 429 that came anyway (another client on the same key, a plan smaller than configured), which takes
// that upstream alone out until its Retry-After.
//
// The window slides: what was sent in the last second (plus `guardMs`: the upstream counts arrivals, we count sends,
// and a connection's queue or the travel may bunch them) never exceeds the plan — stricter than a token bucket, whose
// burst may put twice the rate in one second of the provider's view. Each call of a batch counts as a request (as
// providers count them). The log holds at most one entry per request sent in the window.
import {
  configSchema,
  type UpstreamRateLimit,
  type UpstreamSpec as ConfiguredUpstream,
} from '../../../../generated/config/types.js';
import type { UpstreamConfig } from '../../config/config.js';
import type { UpstreamSpec } from '../transports/index.js';

export type { ConfiguredUpstream, UpstreamRateLimit };

const defaults = configSchema.definitions.UpstreamBudgetConfig.properties;
export const BUDGET_DEFAULTS = {
  maxWaitMs: defaults.maxWaitMs.default,
  guardMs: defaults.guardMs.default,
  backoffMs: defaults.backoffMs.default,
  maxBackoffMs: defaults.maxBackoffMs.default,
};
export type BudgetSettings = { [K in keyof typeof BUDGET_DEFAULTS]: number };

export function budgetSettings(cfg: UpstreamConfig): BudgetSettings {
  return { ...BUDGET_DEFAULTS, ...cfg.budget };
}

/** A configured upstream split into how it is reached (the transport's spec) and its plan (absent = none). */
export function splitUpstream(u: ConfiguredUpstream): { spec: UpstreamSpec; rateLimit?: UpstreamRateLimit } {
  if (typeof u === 'string') return { spec: u };
  if ('url' in u) return { spec: u.url, rateLimit: u.rateLimit };
  return { spec: { http: u.http, ws: u.ws }, rateLimit: u.rateLimit };
}

/** One upstream's budget and 429 backoff. Times are performance.now() ms. */
export class UpstreamBudget {
  /** Sends in the window, oldest first: when, how many requests, how many units (parallel arrays used as a ring). */
  private readonly at: number[] = [];
  private readonly reqs: number[] = [];
  private readonly units: number[] = [];
  private head = 0;
  private sumReqs = 0;
  private sumUnits = 0;
  /** No call before this (a 429's Retry-After). */
  private backoffUntil = 0;
  private readonly windowMs: number;
  /** Calls this budget held back (tests and metrics): sent elsewhere or made to wait. */
  readonly stats = { deferred: 0, backoffs: 0 };

  constructor(
    private readonly plan: UpstreamRateLimit | undefined,
    private readonly settings: BudgetSettings,
  ) {
    this.windowMs = 1000 + settings.guardMs;
  }

  /** Whether there is anything to watch (a plan, or a backoff running). */
  get limited(): boolean {
    return this.plan !== undefined || this.backoffUntil > 0;
  }

  private expire(now: number): void {
    const from = now - this.windowMs;
    while (this.head < this.at.length && this.at[this.head] <= from) {
      this.sumReqs -= this.reqs[this.head];
      this.sumUnits -= this.units[this.head];
      this.head++;
    }
    if (this.head > 64 && this.head * 2 > this.at.length) {
      this.at.splice(0, this.head);
      this.reqs.splice(0, this.head);
      this.units.splice(0, this.head);
      this.head = 0;
    }
  }

  /** How long until `n` calls weighing `u` units fit (0 = now). A request larger than the whole plan fits an empty
   *  window (else it never would: better one over-budget request than a call that can never be sent). */
  waitMs(n: number, u: number, now = performance.now()): number {
    let wait = Math.max(0, this.backoffUntil - now);
    const plan = this.plan;
    if (plan === undefined) return wait;
    this.expire(now);
    const maxR = plan.requestsPerSecond ?? Number.POSITIVE_INFINITY;
    const maxU = plan.unitsPerSecond ?? Number.POSITIVE_INFINITY;
    let r = this.sumReqs;
    let s = this.sumUnits;
    // Walk the log until enough has left the window for this request.
    for (let i = this.head; i < this.at.length; i++) {
      if ((r + n <= maxR || r === 0) && (s + u <= maxU || s === 0)) break;
      r -= this.reqs[i];
      s -= this.units[i];
      wait = Math.max(wait, this.at[i] + this.windowMs - now);
    }
    return wait;
  }

  /** What may still be sent now: calls and units (Infinity without a plan; nothing while backing off). */
  room(now = performance.now()): { calls: number; units: number } {
    if (this.backoffUntil > now) return { calls: 0, units: 0 };
    if (this.plan === undefined) return { calls: Number.POSITIVE_INFINITY, units: Number.POSITIVE_INFINITY };
    this.expire(now);
    return {
      calls: (this.plan.requestsPerSecond ?? Number.POSITIVE_INFINITY) - this.sumReqs,
      units: (this.plan.unitsPerSecond ?? Number.POSITIVE_INFINITY) - this.sumUnits,
    };
  }

  /** Counts `n` calls weighing `u` units sent now, if they fit; false (nothing counted) otherwise. */
  take(n: number, u: number, now = performance.now()): boolean {
    if (this.waitMs(n, u, now) > 0) {
      this.stats.deferred++;
      return false;
    }
    if (this.plan === undefined) return true;
    this.at.push(now);
    this.reqs.push(n);
    this.units.push(u);
    this.sumReqs += n;
    this.sumUnits += u;
    return true;
  }

  /** The upstream answered HTTP 429: nothing more until `retryAfterMs` (the settings' backoff without one). */
  backOff(retryAfterMs: number | undefined, now = performance.now()): void {
    const ms = Math.min(retryAfterMs ?? this.settings.backoffMs, this.settings.maxBackoffMs);
    this.backoffUntil = Math.max(this.backoffUntil, now + ms);
    this.stats.backoffs++;
  }
}
