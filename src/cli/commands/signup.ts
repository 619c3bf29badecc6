// `rpcgate signup --email <e> [--password <p>]`: creates an account, logs it in (sign-up answers the same for a
// registered email and starts no session: the log-in that follows tells whether the password is the account's) and keeps the session for the
// following commands (src/cli/session.ts).
import type { Command } from 'commander';
import { addApiOptions, readEmail, readPassword, runApi, type ApiFlags } from '../account.js';
import { sessionOutput } from './login.js';

interface Flags extends ApiFlags {
  email?: string;
  password?: string;
}

export function register(program: Command): void {
  addApiOptions(
    program
      .command('signup')
      .description('create an account (free) and log in; the session is kept for the following commands')
      .option('--email <email>', 'email address (env RPCGATE_EMAIL; prompted on a terminal)')
      .option('--password <password>', 'password, 8–128 characters (env RPCGATE_PASSWORD; prompted on a terminal)'),
  ).action((flags: Flags) =>
    runApi(
      flags,
      async (ctx) => {
        const email = await readEmail(flags.email);
        const password = await readPassword(flags.password, true);
        await ctx.api.request('account_signUp', [{ email, password }]);
        const session = await ctx.api.request('account_logIn', [{ email, password }]);
        ctx.user = { ...session.user, expiresAt: session.expiresAt };
        return sessionOutput(ctx, session, 'signed up');
      },
      { newSession: true },
    ),
  );
}
