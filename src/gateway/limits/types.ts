// The limiter's public types: who is counted (subject), what a check answers (decision), and the backend interface.
// LimitSubject is declared here only: the access index builds one per principal, the account API asks for a user's.
import type { LimitPeriod } from './periods.js';
import type { ResolvedPlans } from './plans.js';

/** Who a request is counted against. */
export type LimitSubject =
  /** Access point A (provider-style app), from the operator plan: the per-second rate counted per app, the daily and
   *  monthly quotas per account (the user: all their apps together, as a provider's monthly units are). */
  | { kind: 'A'; appId: string; userId: string; plans?: ResolvedPlans }
  /** Access point B (network-style keys): one daily quota per user, shared by all the user's B keys. */
  | { kind: 'B'; userId: string; plans?: ResolvedPlans };
// `plans`: the account's own limits (its plan and override, resolved by PlanCatalog) when they differ from the
// limiter's; absent = the deployment's. The access index builds it with the principal, so no request resolves a plan.

/** The subject of an app's calls (access point A): its rate under the app, its quotas under the user. */
export function appSubject(appId: string, userId: string, plans?: ResolvedPlans): LimitSubject {
  return plans === undefined ? { kind: 'A', appId, userId } : { kind: 'A', appId, userId, plans };
}

/** The subject of a user's network keys (access point B): one daily quota shared by all of them. */
export function userSubject(userId: string, plans?: ResolvedPlans): LimitSubject {
  return plans === undefined ? { kind: 'B', userId } : { kind: 'B', userId, plans };
}

export type { LimitPeriod };

export interface LimitDecision {
  allowed: boolean;
  /** true: the limit counts compute units (x-gateway.units), not requests — `limit` and `remaining` are units. */
  units?: true;
  /** The limit this decision describes (the tightest one on success, the refusing one on refusal). */
  limit: number;
  /** What is left of that limit after this call (on refusal: what was left, untouched). */
  remaining: number;
  /** When that limit's window resets, epoch ms (UTC second / day / month boundary). */
  resetAt: number;
  period: LimitPeriod;
  /** Whole seconds until `resetAt`, at least 1; set when refused. */
  retryAfterSec?: number;
}

export interface Limiter {
  /** Where the counters live (a label for traces and logs). */
  readonly backend: 'memory' | 'redis';
  /**
   * Counts `n` requests (a batch counts each item) weighing `units` compute units (default n) against every limit of
   * the subject, all or nothing: either all counters grow (request limits by n, unit limits by units), or (refused)
   * none changes.
   */
  consume(subject: LimitSubject, n: number, now?: number, units?: number): Promise<LimitDecision>;
  /**
   * consume, answered without a Promise when the backend can (in-process counters): the node API's admission hook
   * then returns synchronously. May throw (in-process) or reject (Redis) as consume does.
   */
  consumeNow(subject: LimitSubject, n: number, units?: number): LimitDecision | Promise<LimitDecision>;
  /** peek, likewise without a Promise when the backend can. */
  peekNow(subject: LimitSubject): LimitDecision | Promise<LimitDecision>;
  /** The subject's state without counting anything (dashboard / account API "today's usage"). */
  peek(subject: LimitSubject, now?: number): Promise<LimitDecision>;
  /** One decision per configured limit of the subject, shortest period first (usage per period). */
  peekAll(subject: LimitSubject, now?: number): Promise<LimitDecision[]>;
  close(): Promise<void>;
}
