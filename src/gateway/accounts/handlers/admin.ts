// The account API's `admin_…` methods (contracts/account.openrpc.json; issue 27 items 1 and 5): operators list and
// search accounts with their usage, suspend and unsuspend them, set their plan, read usage across accounts by day and
// every account's audit trail. ./index.ts gates the whole namespace (only an admin gets here: `c.admin` is set).
// Suspension and plan changes go through the store's key events (store/admin.ts), so every replica's access index
// applies them within its poll interval — this replica at once (the `onChange` sync after every changing method).
import type * as T from '../../../../generated/account/types.js';
import type { AccountLimits, PlanLimits } from '../../limits/plans.js';
import * as store from '../../store/index.js';
import { badValue, notFound } from '../errors.js';
import type { InviteMethods } from './invites.js';
import { iso, type Caller, type Kit, type Namespace } from './kit.js';

const DAY = 86_400_000;
/** Most days one admin_usage answer covers. */
export const MAX_USAGE_DAYS = 366;

/** An account's limits after every fall-back, as the contract's EffectivePlan. */
export function effectivePlan(l: AccountLimits): T.EffectivePlan {
  return {
    perSecond: l.plans.a.perSecond,
    daily: l.plans.a.daily,
    monthly: l.plans.a.monthly,
    dailyUnits: l.plans.a.dailyUnits,
    monthlyUnits: l.plans.a.monthlyUnits,
    keysDaily: l.plans.b.daily,
    keysDailyUnits: l.plans.b.dailyUnits,
    maxKeys: l.maxKeys,
    maxApps: l.maxApps,
  };
}

/** `YYYY-MM-DD` → the UTC day's start, or -32602 at `path` (impossible dates such as 2025-02-30 too). */
function parseDay(s: string, path: string): number {
  const [y, m, d] = s.split('-').map(Number);
  const t = Date.UTC(y, m - 1, d);
  const back = new Date(t);
  if (back.getUTCFullYear() !== y || back.getUTCMonth() !== m - 1 || back.getUTCDate() !== d)
    throw badValue('query', path, `not a valid day: ${JSON.stringify(s)} (YYYY-MM-DD)`);
  return t;
}

const dayOf = (t: number) => new Date(t).toISOString().slice(0, 10);

/** The invites' admin_ methods are ./invites.ts's. */
export function adminHandlers(kit: Kit): Omit<Namespace<'admin'>, keyof InviteMethods> {
  const { db, deps, isAdmin, limitsOf, plans } = kit;

  /** AdminAccount for each user (counts and usage in two queries for the whole page). */
  async function accounts(users: store.User[]): Promise<T.AdminAccount[]> {
    const ids = users.map((u) => u.id);
    const [counts, usage] = await Promise.all([store.countKeysOf(db, ids), store.usageTotalsByUser(db, ids)]);
    return users.map((u) => ({
      id: u.id,
      email: u.email,
      createdAt: iso(u.createdAt),
      emailVerified: u.emailVerifiedAt !== undefined,
      admin: isAdmin(u),
      suspended: u.suspended === undefined ? null : { at: iso(u.suspended.at), reason: u.suspended.reason },
      plan: u.plan ?? null,
      planOverride: (u.planOverride as PlanLimits | undefined) ?? null,
      limits: effectivePlan(limitsOf(u)),
      apps: counts.get(u.id)?.apps ?? 0,
      keys: counts.get(u.id)?.keys ?? 0,
      usage: usage.get(u.id) ?? { today: 0, month: 0 },
    }));
  }
  const account = async (u: store.User) => (await accounts([u]))[0];

  /** An operator's action on an account, in its audit trail (actor: the admin). Logged, never thrown, on failure. */
  async function audit(c: Caller, action: store.AuditAction, userId: string, detail?: Record<string, unknown>) {
    await store
      .recordAudit(db, { userId, action, actorId: c.admin!.id, ip: c.ip, detail })
      .catch((e: unknown) =>
        deps.logger?.error({ err: { message: (e as Error).message }, action }, 'audit event not recorded'),
      );
  }

  return {
    async admin_listAccounts([query], _c) {
      const { users, next } = await store.listUsers(db, {
        search: query?.search,
        status: query?.status,
        limit: query?.limit ?? 50,
        cursor: query?.cursor,
      });
      return { accounts: await accounts(users), next: next ?? null };
    },
    async admin_getAccount([{ userId }], _c) {
      const u = await store.getUser(db, userId);
      if (u === undefined) throw notFound('account', userId);
      const [a, keys] = await Promise.all([account(u), store.listKeysOf(db, userId)]);
      return {
        ...a,
        appList: keys.apps.map((x) => ({ id: x.id, name: x.name, chain: x.chain, createdAt: iso(x.createdAt) })),
        keyList: keys.keys.map((x) => ({ id: x.id, name: x.name, network: x.network, createdAt: iso(x.createdAt) })),
      };
    },
    async admin_suspend([s], c) {
      if (s.userId === c.userId)
        throw badValue('suspension', '/0/userId', 'is your own account: an admin cannot suspend itself');
      const u = await store.suspendUser(db, s.userId, s.reason);
      if (u === undefined) throw notFound('account', s.userId);
      await audit(c, 'suspended', u.id, { reason: s.reason });
      return account(u);
    },
    async admin_unsuspend([{ userId }], c) {
      const before = await store.getUser(db, userId);
      if (before === undefined) throw notFound('account', userId);
      if (before.suspended === undefined) return account(before);
      const u = await store.unsuspendUser(db, userId);
      if (u === undefined) throw notFound('account', userId);
      await audit(c, 'unsuspended', u.id, { reason: before.suspended.reason });
      return account(u);
    },
    async admin_setPlan([ch], c) {
      if (ch.plan !== null && !plans.has(ch.plan))
        throw badValue(
          'change',
          '/0/plan',
          `unknown plan "${ch.plan}" (this deployment's plans: ${plans.names().join(', ') || 'none configured'})`,
        );
      const override = ch.override === undefined || ch.override === null ? ch.override : { ...ch.override };
      const u = await store.setUserPlan(
        db,
        ch.userId,
        ch.plan,
        override !== null && override !== undefined && Object.keys(override).length === 0 ? null : override,
      );
      if (u === undefined) throw notFound('account', ch.userId);
      await audit(c, 'plan_changed', u.id, {
        plan: u.plan ?? null,
        ...(ch.override === undefined ? {} : { override: u.planOverride ?? null }),
      });
      return account(u);
    },
    async admin_plans(_p, _c) {
      return {
        plans: plans.names().map((name) => ({
          name,
          limits: plans.config.plans?.[name] ?? {},
          effective: effectivePlan(plans.plan(name)!),
          default: name === plans.defaultPlan,
        })),
        defaultPlan: plans.defaultPlan ?? null,
        base: effectivePlan(plans.base),
      };
    },
    async admin_usage([q], _c) {
      const from = parseDay(q.since, '/0/since');
      const last = parseDay(q.until, '/0/until');
      if (last < from) throw badValue('query', '/0/until', '`until` must not be before `since`');
      const days = (last - from) / DAY + 1;
      if (days > MAX_USAGE_DAYS)
        throw badValue('query', '/0/until', `at most ${MAX_USAGE_DAYS} days per answer (${days} asked)`);
      const rows = await store.usageByDay(db, { from, to: last + DAY, userId: q.userId });
      return { days: rows.map((r) => ({ ...r, day: dayOf(r.day) })) };
    },
    async admin_activity([query], _c) {
      const limit = query?.limit ?? 50;
      const rows = await store.listAuditAll(db, {
        limit: limit + 1,
        before: query?.cursor === undefined ? undefined : Number(query.cursor),
        userId: query?.userId,
        action: query?.action,
      });
      const page = rows.slice(0, limit);
      const emails = await store.emailsOf(db, [
        ...page.map((e) => e.userId),
        ...page.flatMap((e) => (e.actorId === undefined ? [] : [e.actorId])),
      ]);
      return {
        entries: page.map((e) => {
          const byOperator = e.actorId !== undefined && e.actorId !== e.userId;
          return {
            time: iso(e.at),
            action: e.action,
            byOperator,
            ...(e.ip === undefined ? {} : { ip: e.ip }),
            ...(e.detail === undefined ? {} : { detail: e.detail }),
            userId: e.userId,
            email: emails.get(e.userId) ?? null,
            ...(byOperator ? { actor: { id: e.actorId!, email: emails.get(e.actorId!) ?? null } } : {}),
          };
        }),
        next: rows.length > limit ? String(page[page.length - 1].id) : null,
      };
    },
  };
}
