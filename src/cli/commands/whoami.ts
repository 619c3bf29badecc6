// `rpcgate whoami`: the user of the stored session.
import type { Command } from 'commander';
import { addApiOptions, runApi, type ApiFlags } from '../account.js';
import { keyValues } from '../output.js';

export function register(program: Command): void {
  addApiOptions(program.command('whoami').description('show the logged-in user')).action((flags: ApiFlags) =>
    runApi(flags, async (ctx) => {
      const user = await ctx.api.request('account_me');
      return {
        json: { ...user, server: ctx.server.origin },
        text: keyValues([
          ['email', user.email],
          ['id', user.id],
          ['created', user.createdAt],
          ['server', ctx.server.origin],
        ]),
      };
    }),
  );
}
