// `rpcgate keys …`: network API keys of access point B (a key bound to one network, its URL `…/<network>/<key>`),
// at most 4 per user, sharing the user's daily request limit.
//
// `--network` is one of the deployment's networks (`rpcgate networks`), any case; it defaults to the deployment's only
// network when there is one.
import { addLogsCommand } from './logs.js';
import type { Command } from 'commander';
import type { NetworkKey, NetworkKeyDetail, NetworkKeySummary } from '../../../generated/account/client.js';
import { addApiOptions, need, parseNetwork, runApi, usage, type ApiContext, type ApiFlags } from '../account.js';
import { keyValues, table } from '../output.js';

interface CreateFlags extends ApiFlags {
  name?: string;
  network?: string;
  description?: string;
}

const keyText = (k: NetworkKey) =>
  keyValues([
    ['id', k.id],
    ['name', k.name],
    ['network', k.networkLabel],
    ['description', k.description],
    ['created', k.createdAt],
    ['key', k.key],
    ['url', k.url],
  ]);

/** `--network` checked against the deployment's networks (networks_list); absent = the only one, if there is one. */
async function networkFlag(ctx: ApiContext, flag: string | undefined): Promise<string> {
  const networks = await ctx.api.request('networks_list');
  if (flag !== undefined) return parseNetwork(flag, networks);
  if (networks.length === 1) return networks[0].network;
  throw usage(`--network is required: one of ${networks.map((n) => n.network).join(', ')}`, {
    flag: '--network',
    choices: networks.map((n) => n.network),
  });
}

export function register(program: Command): void {
  const keys = program
    .command('keys')
    .description('network API keys (access point B): one network each, at most 4 per user');

  addApiOptions(
    keys
      .command('create')
      .description('create a network key; prints the key and its URL')
      .option('--name <name>', 'key name (required)')
      .option(
        '--network <network>',
        "one of the deployment's networks (rpcgate networks), any case (default: the only network)",
      )
      .option('--description <text>', 'description'),
  ).action((flags: CreateFlags) =>
    runApi(flags, async (ctx) => {
      const name = need(flags.name, '--name');
      const network = await networkFlag(ctx, flags.network);
      const k = await ctx.api.request('keys_create', [
        { name, network, ...(flags.description !== undefined && { description: flags.description }) },
      ]);
      return { json: k, text: keyText(k) };
    }),
  );

  addApiOptions(keys.command('list').description("list your network keys (without the keys) and today's usage")).action(
    (flags: ApiFlags) =>
      runApi(flags, async (ctx) => {
        const r = await ctx.api.request('keys_list');
        const u = r.usage;
        return {
          json: r,
          text: [
            table<NetworkKeySummary>(
              r.keys,
              { ID: 'id', NAME: 'name', NETWORK: 'networkLabel', DESCRIPTION: 'description', CREATED: 'createdAt' },
              '(no keys)',
            ),
            '',
            `keys: ${r.keys.length} of ${r.maxKeys}; requests today: ${u.used} of ${u.limit} (${u.remaining} left, resets ${u.resetAt})`,
          ].join('\n'),
        };
      }),
  );

  addApiOptions(
    keys.command('get').description('show a network key with its URL (and a curl example)').argument('<keyId>'),
  ).action((keyId: string, flags: ApiFlags) =>
    runApi(flags, async (ctx) => {
      const k: NetworkKeyDetail = await ctx.api.request('keys_get', [keyId]);
      const curl =
        k.examples.find((x) => x.id === 'curl' && x.method === 'eth_blockNumber') ??
        k.examples.find((x) => x.id === 'curl');
      return {
        json: k,
        text: `${keyText(k)}${curl ? `\n\nexample (${curl.label}, ${curl.method}):\n${curl.code.trimEnd()}` : ''}\n\n(${k.examples.length} examples with --json)`,
      };
    }),
  );

  addApiOptions(
    keys.command('delete').description('delete a network key (it stops working)').argument('<keyId>'),
  ).action((keyId: string, flags: ApiFlags) =>
    runApi(flags, async (ctx) => {
      const r = await ctx.api.request('keys_delete', [keyId]);
      return { json: r, text: `deleted ${r.id}` };
    }),
  );
  addLogsCommand(keys, 'keys');
}
