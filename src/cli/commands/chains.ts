// `rpcgate chains [query]`: the deployment's chains and their networks (what `apps create --chain` takes).
import type { Command } from 'commander';
import { addApiOptions, runApi, type ApiFlags } from '../account.js';
import { table } from '../output.js';

export function register(program: Command): void {
  addApiOptions(
    program
      .command('chains')
      .description("list the deployment's chains and networks")
      .argument('[query]', 'search by id or name'),
  ).action((query: string | undefined, flags: ApiFlags) =>
    runApi(flags, async (ctx) => {
      const chains = await ctx.api.request('chains_list', query === undefined ? [] : [query]);
      const rows = chains.flatMap((c) => c.networks.map((n) => ({ chain: c.id, name: c.name, ...n })));
      return {
        json: { chains },
        text: table(
          rows,
          {
            CHAIN: 'chain',
            NAME: 'name',
            NETWORK: 'label',
            'CHAIN ID': 'chainId',
            LOCAL: (r) => (r.local ? 'yes' : 'no'),
          },
          '(no chains)',
        ),
      };
    }),
  );
}
