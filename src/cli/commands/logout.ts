// `rpcgate logout`: ends the session on the server and removes it from the session file.
import type { Command } from 'commander';
import { RpcClientError } from '../../../generated/account/client.js';
import { GatewayErrorCode } from '../../gateway/errors.js';
import { addApiOptions, runApi, type ApiFlags } from '../account.js';

export function register(program: Command): void {
  addApiOptions(program.command('logout').description('log out of the server and forget the stored session')).action(
    (flags: ApiFlags) =>
      runApi(flags, async (ctx) => {
        let hadSession = ctx.session !== undefined;
        if (hadSession) {
          try {
            await ctx.api.request('account_logOut');
          } catch (e) {
            // Already over on the server (expired, logged out elsewhere): logging out is done all the same.
            if (!(e instanceof RpcClientError && e.code === GatewayErrorCode.Unauthorized)) throw e;
            hadSession = false;
          }
        }
        ctx.sessions.delete(ctx.server.origin);
        return {
          json: { loggedOut: true, server: ctx.server.origin },
          text: hadSession
            ? `logged out of ${ctx.server.origin}`
            : `no session for ${ctx.server.origin} (nothing to log out)`,
        };
      }),
  );
}
