// `rpcgate signup --email <e> [--password <p>] [--invite <link|token>]`: creates an account, logs it in (sign-up
// answers the same for a registered email and starts no session: the log-in that follows tells whether the password
// is the account's) and keeps the session for the following commands (src/cli/session.ts). It asks the server's
// sign-up mode first (account_signUpMode: config accounts.signup) and says it when sign-up is closed or needs an invite.
import type { Command } from 'commander';
import { GatewayErrorCode } from '../../gateway/errors.js';
import { addApiOptions, CliError, readEmail, readPassword, runApi, type ApiFlags } from '../account.js';
import { sessionOutput } from './login.js';

interface Flags extends ApiFlags {
  email?: string;
  password?: string;
  invite?: string;
}

/** The token of an invite: the link an admin sent (`…/signup?invite=<token>`) or the token itself. */
export function inviteToken(s: string): string {
  const t = s.trim();
  if (!/^https?:\/\//i.test(t)) return t;
  const u = new URL(t);
  return u.searchParams.get('invite') ?? decodeURIComponent(u.hash.split('/').pop() ?? '');
}

export function register(program: Command): void {
  addApiOptions(
    program
      .command('signup')
      .description('create an account (free) and log in; the session is kept for the following commands')
      .option('--email <email>', 'email address (env RPCGATE_EMAIL; prompted on a terminal)')
      .option('--password <password>', 'password, 8–128 characters (env RPCGATE_PASSWORD; prompted on a terminal)')
      .option('--invite <link>', 'the invite link (or its token) an admin sent: needed when sign-up is by invite'),
  ).action((flags: Flags) =>
    runApi(
      flags,
      async (ctx) => {
        const invite = flags.invite === undefined ? undefined : inviteToken(flags.invite);
        // Before any prompt: a closed or invite-only server says so at once.
        const { mode } = await ctx.api.request('account_signUpMode');
        if (mode === 'closed')
          throw new CliError(
            GatewayErrorCode.Forbidden,
            `sign-up is closed on ${ctx.server.origin} (sign-up mode: closed): ask its operator for an account`,
            { reason: 'signup-closed', mode },
          );
        if (mode === 'invite' && invite === undefined)
          throw new CliError(
            GatewayErrorCode.Forbidden,
            `sign-up on ${ctx.server.origin} is by invite only (sign-up mode: invite): pass --invite <the link an admin sent you>`,
            { reason: 'invite-required', mode },
          );
        const email = await readEmail(flags.email);
        const password = await readPassword(flags.password, true);
        await ctx.api.request('account_signUp', [{ email, password, ...(invite !== undefined && { invite }) }]);
        const session = await ctx.api.request('account_logIn', [{ email, password }]);
        ctx.user = { ...session.user, expiresAt: session.expiresAt };
        return sessionOutput(ctx, session, 'signed up');
      },
      { newSession: true },
    ),
  );
}
