// `rpcgate networks`: the deployment's networks (networks_list: its config, no login needed) — what
// `keys create --network` takes.
import type { Command } from 'commander';
import { addApiOptions, runApi, type ApiFlags } from '../account.js';
import { table } from '../output.js';

export function register(program: Command): void {
  addApiOptions(program.command('networks').description("list the deployment's networks (names, chain ids)")).action(
    (flags: ApiFlags) =>
      runApi(flags, async (ctx) => {
        const networks = await ctx.api.request('networks_list');
        return {
          json: { networks },
          text: table(
            networks,
            { NETWORK: 'network', NAME: 'label', 'CHAIN ID': 'chainId', LOCAL: (r) => (r.local ? 'yes' : 'no') },
            '(no networks)',
          ),
        };
      }),
  );
}
