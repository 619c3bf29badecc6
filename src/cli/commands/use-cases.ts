// `rpcgate use-cases`: the use cases the dashboard offers for `apps create --use-case` (any other short text works too).
import type { Command } from 'commander';
import { addApiOptions, runApi, type ApiFlags } from '../account.js';

export function register(program: Command): void {
  addApiOptions(program.command('use-cases').description('list the offered app use cases')).action((flags: ApiFlags) =>
    runApi(flags, async (ctx) => {
      const useCases = await ctx.api.request('useCases_list');
      return { json: { useCases }, text: useCases.join('\n') };
    }),
  );
}
