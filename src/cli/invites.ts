// `rpcgate admin invite [--email e] [--ttl-hours n]` and `rpcgate admin invites` (issue 27 item 2): single-use sign-up
// invite links for a deployment whose `accounts.signup` is `invite`, through the account API with the CLI's session
// (an admin's). Registered under `rpcgate admin` by ./commands/admin.ts.
import type { Command } from 'commander';
import type { Invite } from '../../generated/account/client.js';
import { addApiOptions, runApi, usage, type ApiFlags } from './account.js';
import { keyValues, table } from './output.js';

export function registerInviteCommands(admin: Command): void {
  addApiOptions(
    admin
      .command('invite')
      .description('issue a single-use sign-up invite link (mailed when bound to an email and smtp is configured)')
      .option('--email <email>', 'only this email may sign up with it; the link is mailed there')
      .option('--ttl-hours <n>', 'how long it works (default: config accounts.inviteTtlHours, 72)'),
  ).action((flags: ApiFlags & { email?: string; ttlHours?: string }) =>
    runApi(flags, async (ctx) => {
      const ttl = flags.ttlHours === undefined ? undefined : Number(flags.ttlHours);
      if (ttl !== undefined && !(Number.isInteger(ttl) && ttl >= 1))
        throw usage(`--ttl-hours: a whole number of hours ≥ 1, got ${flags.ttlHours}`, { flag: '--ttl-hours' });
      const inv = await ctx.api.request('admin_createInvite', [
        { ...(flags.email !== undefined && { email: flags.email }), ...(ttl !== undefined && { ttlHours: ttl }) },
      ]);
      return {
        json: inv,
        text: [
          keyValues([
            ['id', inv.id],
            ['link', inv.url],
            ['for', inv.email ?? 'anyone holding the link'],
            ['expires', inv.expiresAt],
            ['mailed', inv.mailed ? 'yes' : 'no: pass the link on yourself'],
          ]),
          '',
          'The link works once and is shown only now.',
        ].join('\n'),
      };
    }),
  );

  addApiOptions(admin.command('invites').description('the invites issued, newest first, with their status')).action(
    (flags: ApiFlags) =>
      runApi(flags, async (ctx) => {
        const r = await ctx.api.request('admin_listInvites');
        return {
          json: r,
          text: table<Invite>(
            r.invites,
            {
              ID: 'id',
              FOR: (i) => i.email ?? '(anyone)',
              STATUS: 'status',
              EXPIRES: 'expiresAt',
              BY: (i) => i.createdBy ?? '',
              'USED BY': (i) => i.usedBy ?? '',
            },
            '(no invites)',
          ),
        };
      }),
  );

  addApiOptions(
    admin.command('revoke-invite').description('revoke a pending invite: its link stops working').argument('<id>'),
  ).action((id: string, flags: ApiFlags) =>
    runApi(flags, async (ctx) => {
      const r = await ctx.api.request('admin_revokeInvite', [{ id }]);
      return { json: r, text: r.revoked ? `revoked ${id}` : `${id} was not pending (used, expired or revoked)` };
    }),
  );
}
