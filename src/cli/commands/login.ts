// `rpcgate login --email <e> [--password <p>]`: logs in and keeps the session for the following commands.
import type { Command } from 'commander';
import type { Session } from '../../../generated/account/client.js';
import {
  addApiOptions,
  readEmail,
  readPassword,
  runApi,
  type ApiContext,
  type ApiFlags,
  type Output,
} from '../account.js';
import { keyValues } from '../output.js';

interface Flags extends ApiFlags {
  email?: string;
  password?: string;
}

/** JSON: `{ user, expiresAt, server }`. */
export function sessionOutput(ctx: ApiContext, session: Session, verb: string): Output {
  return {
    json: { ...session, server: ctx.server.origin },
    text: `${verb}: ${session.user.email} on ${ctx.server.origin}\n${keyValues([
      ['user', session.user.id],
      ['session expires', session.expiresAt],
      ['session file', ctx.sessions.file],
    ])}`,
  };
}

export function register(program: Command): void {
  addApiOptions(
    program
      .command('login')
      .description('log in; the session is kept for the following commands (per server)')
      .option('--email <email>', 'email address (env RPCGATE_EMAIL; prompted on a terminal)')
      .option('--password <password>', 'password (env RPCGATE_PASSWORD; prompted on a terminal)'),
  ).action((flags: Flags) =>
    runApi(
      flags,
      async (ctx) => {
        const email = await readEmail(flags.email);
        const password = await readPassword(flags.password);
        const session = await ctx.api.request('account_logIn', [{ email, password }]);
        ctx.user = { ...session.user, expiresAt: session.expiresAt };
        return sessionOutput(ctx, session, 'logged in');
      },
      { newSession: true },
    ),
  );
}
