// `rpcgate admin …`: the operator's commands (issue 27 item 1).
//
// On the server host, against the store itself — no running service needed, the store named as `rpcgate start`
// names it (DATABASE_URL / --database-url, else SQLite in --data-dir / RPCGATE_DATA_DIR / the config file's dataDir):
//   rpcgate admin grant <email>     give the account the admin role (recorded in its activity: admin_granted)
//   rpcgate admin revoke <email>    take it back (an email of config accounts.admins stays an admin by config)
// Through the account API with the CLI's session (`rpcgate login` as an admin first), like the other account commands:
//   rpcgate admin users [--search s] [--status active|suspended] [--limit n]
//   rpcgate admin suspend <userId|email> --reason <text>
//   rpcgate admin unsuspend <userId|email>
//   rpcgate admin plan <userId|email> [<name>] [--override <json>|none] [--clear]
//   rpcgate admin usage [--since YYYY-MM-DD] [--until YYYY-MM-DD] [--user <userId|email>]
//   rpcgate admin activity [--user <userId|email>] [--action a] [--limit n]
//   rpcgate admin invite [--email e] [--ttl-hours n] | invites | revoke-invite <id>   (sign-up invites: ../invites.ts)
// Every one takes --json: exactly one JSON object on stdout (the result, or { "error": { code, message, data } }).
import type { Command } from 'commander';
import type {
  AccountClient,
  AdminAccount,
  AdminActivityEntry,
  AdminActivityQuery,
  PlanLimits,
} from '../../../generated/account/client.js';
import { ErrorCode } from '@rpcgate/toolkit/errors';
import { ConfigError, loadConfig, type ConfigInput } from '../../gateway/config/config.js';
import * as store from '../../gateway/store/index.js';
import { addApiOptions, CliError, need, runApi, usage, type ApiFlags } from '../account.js';
import { registerInviteCommands } from '../invites.js';
import { errorLine, keyValues, table } from '../output.js';

/** The account API's not-found code (-32010): the same answer for an unknown email here. */
const NOT_FOUND = -32010;

interface StoreFlags {
  config?: string;
  dataDir?: string;
  databaseUrl?: string;
  json?: boolean;
}

/** Runs a store command: opens the store the config names, prints the result (or the error), closes it. */
async function runStore(
  flags: StoreFlags,
  body: (s: store.Store, adminsByConfig: Set<string>) => Promise<{ json: object; text: string }>,
) {
  const json = flags.json === true;
  let s: store.Store | undefined;
  try {
    const overrides: ConfigInput = {};
    if (flags.dataDir !== undefined) overrides.dataDir = flags.dataDir;
    if (flags.databaseUrl !== undefined) overrides.databaseUrl = flags.databaseUrl;
    const config = loadConfig({ configFile: flags.config, overrides, overridesLabel: 'flags' });
    s = await store.openStore({ dataDir: config.dataDir, databaseUrl: config.databaseUrl });
    const out = await body(s, new Set((config.accounts?.admins ?? []).map(store.normalizeEmail)));
    process.stdout.write(json ? `${JSON.stringify(out.json, null, 2)}\n` : `${out.text}\n`);
  } catch (e) {
    const err =
      e instanceof CliError
        ? e
        : new CliError(ErrorCode.InternalError, e instanceof ConfigError ? e.message : errorLine(e));
    if (json)
      process.stdout.write(
        `${JSON.stringify({ error: { code: err.code, message: err.message, ...(err.data === undefined ? {} : { data: err.data }) } }, null, 2)}\n`,
      );
    else process.stderr.write(`error: ${err.message}\n`);
    process.exitCode = 1;
  } finally {
    await s?.close();
  }
}

function addStoreOptions(cmd: Command): Command {
  return cmd
    .option('-c, --config <file>', 'JSON config file (env RPCGATE_CONFIG): where the store is')
    .option('--data-dir <dir>', 'data directory of the SQLite store (default .data, env RPCGATE_DATA_DIR)')
    .option('--database-url <url>', 'PostgreSQL store (env DATABASE_URL)')
    .option('--json', 'print exactly one JSON object on stdout');
}

/** Grants or revokes the role; recorded in the account's activity as done on the server host (actor `cli`). */
async function setRole(s: store.Store, email: string, role: store.UserRole, byConfig: Set<string>) {
  const u = await store.setUserRole(s.db, email, role);
  if (u === undefined)
    throw new CliError(NOT_FOUND, `no account with the email ${store.normalizeEmail(email)}`, {
      what: 'account',
      email: store.normalizeEmail(email),
    });
  await store.recordAudit(s.db, {
    userId: u.id,
    action: role === 'admin' ? 'admin_granted' : 'admin_revoked',
    actorId: 'cli',
    detail: { via: 'rpcgate admin' },
  });
  const adminByConfig = byConfig.has(u.email);
  const admin = role === 'admin' || adminByConfig;
  return {
    json: { userId: u.id, email: u.email, role: u.role, admin, adminByConfig },
    text:
      `${u.email} (${u.id}): role ${u.role}` +
      (role === 'user' && adminByConfig ? ' — still an admin: config accounts.admins names this email' : ''),
  };
}

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

/** A user id, or an email looked up among the accounts (exactly that email). */
async function userIdOf(api: AccountClient, who: string): Promise<string> {
  if (who.startsWith('usr_')) return who;
  if (!EMAIL.test(who)) throw usage(`not a user id (usr_…) or an email: ${who}`, { value: who });
  const email = who.trim().toLowerCase();
  const page = await api.request('admin_listAccounts', [{ search: email, limit: 200 }]);
  const a = page.accounts.find((x) => x.email === email);
  if (a === undefined) throw new CliError(NOT_FOUND, `no account with the email ${email}`, { what: 'account', email });
  return a.id;
}

const status = (a: AdminAccount) => (a.suspended === null ? 'active' : `suspended (${a.suspended.reason})`);
const limitText = (v: number | null) => (v === null ? 'off' : String(v));

function accountText(a: AdminAccount): string {
  return keyValues([
    ['id', a.id],
    ['email', a.email],
    ['created', a.createdAt],
    ['admin', a.admin ? 'yes' : 'no'],
    ['status', status(a)],
    ['plan', a.plan ?? '(default)'],
    ['override', a.planOverride === null ? '-' : JSON.stringify(a.planOverride)],
    [
      'limits',
      `apps: ${limitText(a.limits.perSecond)}/s, ${limitText(a.limits.daily)}/day, ${limitText(a.limits.monthly)}/month; keys: ${a.limits.keysDaily}/day; at most ${a.limits.maxApps} apps, ${a.limits.maxKeys} keys`,
    ],
    ['apps', a.apps],
    ['keys', a.keys],
    ['requests', `${a.usage.today} today, ${a.usage.month} this month`],
  ]);
}

function parseOverride(v: string): PlanLimits | null {
  if (v === 'none' || v === 'null') return null;
  try {
    const o = JSON.parse(v) as unknown;
    if (o !== null && typeof o === 'object' && !Array.isArray(o)) return o as PlanLimits;
  } catch {
    // reported below
  }
  throw usage(`--override: a JSON object of limits (e.g. '{"daily":5000}') or none, got ${v}`, {
    flag: '--override',
    value: v,
  });
}

const DAY = 86_400_000;
const dayString = (t: number) => new Date(t).toISOString().slice(0, 10);

export function register(program: Command): void {
  const admin = program
    .command('admin')
    .description('operators: admin role (on the server host), accounts, suspension, plans, usage, audit trail');

  addStoreOptions(
    admin
      .command('grant')
      .description('give an account the admin role, in the store (no running service needed)')
      .argument('<email>'),
  ).action((email: string, flags: StoreFlags) =>
    runStore(flags, (s, byConfig) => setRole(s, email, 'admin', byConfig)),
  );

  addStoreOptions(
    admin
      .command('revoke')
      .description('take the admin role back, in the store (no running service needed)')
      .argument('<email>'),
  ).action((email: string, flags: StoreFlags) => runStore(flags, (s, byConfig) => setRole(s, email, 'user', byConfig)));

  addApiOptions(
    admin
      .command('users')
      .description('list and search accounts with their usage today and this month')
      .option('--search <text>', 'part of the email, or a user id')
      .option('--status <status>', 'active or suspended')
      .option('--limit <n>', 'accounts per page (1-200, default 50)')
      .option('--cursor <cursor>', 'the next page (printed after a full page)'),
  ).action((flags: ApiFlags & { search?: string; status?: string; limit?: string; cursor?: string }) =>
    runApi(flags, async (ctx) => {
      if (flags.status !== undefined && flags.status !== 'active' && flags.status !== 'suspended')
        throw usage(`--status: active or suspended, got ${flags.status}`, { flag: '--status' });
      const page = await ctx.api.request('admin_listAccounts', [
        {
          ...(flags.search !== undefined && { search: flags.search }),
          ...(flags.status !== undefined && { status: flags.status as 'active' | 'suspended' }),
          ...(flags.limit !== undefined && { limit: Number(flags.limit) }),
          ...(flags.cursor !== undefined && { cursor: flags.cursor }),
        },
      ]);
      return {
        json: page,
        text: [
          table<AdminAccount>(
            page.accounts,
            {
              ID: 'id',
              EMAIL: 'email',
              ADMIN: (a) => (a.admin ? 'yes' : ''),
              STATUS: (a) => (a.suspended === null ? 'active' : 'suspended'),
              PLAN: (a) => a.plan ?? '(default)',
              APPS: 'apps',
              KEYS: 'keys',
              TODAY: (a) => a.usage.today,
              MONTH: (a) => a.usage.month,
            },
            '(no accounts)',
          ),
          ...(page.next === null ? [] : ['', `more: --cursor ${page.next}`]),
        ].join('\n'),
      };
    }),
  );

  addApiOptions(
    admin
      .command('suspend')
      .description(
        'suspend an account: its keys and apps refused everywhere within 2 s, sessions ended; nothing deleted',
      )
      .argument('<user>', 'user id (usr_…) or email')
      .option('--reason <text>', 'why (required; shown in the audit trail)'),
  ).action((who: string, flags: ApiFlags & { reason?: string }) =>
    runApi(flags, async (ctx) => {
      const reason = need(flags.reason, '--reason');
      const a = await ctx.api.request('admin_suspend', [{ userId: await userIdOf(ctx.api, who), reason }]);
      return { json: a, text: accountText(a) };
    }),
  );

  addApiOptions(
    admin
      .command('unsuspend')
      .description('lift a suspension: the keys and apps work again')
      .argument('<user>', 'user id (usr_…) or email'),
  ).action((who: string, flags: ApiFlags) =>
    runApi(flags, async (ctx) => {
      const a = await ctx.api.request('admin_unsuspend', [{ userId: await userIdOf(ctx.api, who) }]);
      return { json: a, text: accountText(a) };
    }),
  );

  addApiOptions(
    admin
      .command('plan')
      .description("set an account's plan (a name of config plans) and/or its per-account override")
      .argument('<user>', 'user id (usr_…) or email')
      .argument('[name]', 'plan name (rpcgate admin plans lists them); left out = unchanged')
      .option(
        '--override <json>',
        'per-account limits over the plan, e.g. \'{"daily":5000,"maxKeys":10}\'; none removes it',
      )
      .option('--clear', 'back to the default plan (accounts.defaultPlan)'),
  ).action((who: string, name: string | undefined, flags: ApiFlags & { override?: string; clear?: boolean }) =>
    runApi(flags, async (ctx) => {
      if (name !== undefined && flags.clear) throw usage('give a plan name or --clear, not both');
      if (name === undefined && !flags.clear && flags.override === undefined)
        throw usage('give a plan name, --clear or --override');
      const userId = await userIdOf(ctx.api, who);
      const plan = flags.clear ? null : (name ?? (await ctx.api.request('admin_getAccount', [{ userId }])).plan);
      const a = await ctx.api.request('admin_setPlan', [
        { userId, plan, ...(flags.override !== undefined && { override: parseOverride(flags.override) }) },
      ]);
      return { json: a, text: accountText(a) };
    }),
  );

  addApiOptions(admin.command('plans').description("the deployment's named plans and their limits")).action(
    (flags: ApiFlags) =>
      runApi(flags, async (ctx) => {
        const r = await ctx.api.request('admin_plans');
        const rows = [
          { name: '(none)', e: r.base, d: r.defaultPlan === null },
          ...r.plans.map((p) => ({ name: p.name, e: p.effective, d: p.default })),
        ];
        return {
          json: r,
          text: table(rows, {
            PLAN: (x) => `${x.name}${x.d ? ' (default)' : ''}`,
            'PER SECOND': (x) => limitText(x.e.perSecond),
            DAILY: (x) => limitText(x.e.daily),
            MONTHLY: (x) => limitText(x.e.monthly),
            'KEYS DAILY': (x) => x.e.keysDaily,
            'MAX APPS': (x) => x.e.maxApps,
            'MAX KEYS': (x) => x.e.maxKeys,
          }),
        };
      }),
  );

  addApiOptions(
    admin
      .command('usage')
      .description('requests per UTC day across accounts (or of one)')
      .option('--since <day>', 'first day, YYYY-MM-DD (default: 29 days before --until)')
      .option('--until <day>', 'last day, YYYY-MM-DD (default: today, UTC)')
      .option('--user <user>', 'only this account (user id or email)'),
  ).action((flags: ApiFlags & { since?: string; until?: string; user?: string }) =>
    runApi(flags, async (ctx) => {
      const until = flags.until ?? dayString(Date.now());
      const since = flags.since ?? dayString(Date.parse(`${until}T00:00:00Z`) - 29 * DAY);
      if (Number.isNaN(Date.parse(`${since}T00:00:00Z`))) throw usage(`--since/--until: YYYY-MM-DD days`);
      const userId = flags.user === undefined ? undefined : await userIdOf(ctx.api, flags.user);
      const r = await ctx.api.request('admin_usage', [{ since, until, ...(userId !== undefined && { userId }) }]);
      const total = r.days.reduce((n, d) => n + d.requests, 0);
      return {
        json: r,
        text: [
          table(r.days, { DAY: 'day', REQUESTS: 'requests', SUCCESS: 'success', UNITS: 'units', ACCOUNTS: 'accounts' }),
          '',
          `${total} requests from ${since} to ${until}`,
        ].join('\n'),
      };
    }),
  );

  addApiOptions(
    admin
      .command('activity')
      .description('the audit trail of every account (or of one), newest first')
      .option('--user <user>', 'only this account (user id or email)')
      .option('--action <action>', 'only this action (e.g. suspended, logged_in)')
      .option('--limit <n>', 'entries (1-200, default 50)')
      .option('--cursor <cursor>', 'the next page'),
  ).action((flags: ApiFlags & { user?: string; action?: string; limit?: string; cursor?: string }) =>
    runApi(flags, async (ctx) => {
      const userId = flags.user === undefined ? undefined : await userIdOf(ctx.api, flags.user);
      const q: AdminActivityQuery = {
        ...(userId !== undefined && { userId }),
        ...(flags.action !== undefined && { action: flags.action as AdminActivityQuery['action'] }),
        ...(flags.limit !== undefined && { limit: Number(flags.limit) }),
        ...(flags.cursor !== undefined && { cursor: flags.cursor }),
      };
      const r = await ctx.api.request('admin_activity', [q]);
      return {
        json: r,
        text: [
          table<AdminActivityEntry>(
            r.entries,
            {
              TIME: 'time',
              ACCOUNT: (e) => e.email ?? e.userId,
              ACTION: 'action',
              BY: (e) => (e.actor === undefined ? '' : (e.actor.email ?? e.actor.id)),
              IP: 'ip',
              DETAIL: (e) => (e.detail === undefined ? '' : JSON.stringify(e.detail)),
            },
            '(no activity)',
          ),
          ...(r.next === null ? [] : ['', `more: --cursor ${r.next}`]),
        ].join('\n'),
      };
    }),
  );

  registerInviteCommands(admin);
}
