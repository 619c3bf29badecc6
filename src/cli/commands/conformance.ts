// `rpcgate conformance <url> [--spec <document>] [--json] [--only m1,m2] [--timeout ms] [--scan-blocks n] [-H name:value]`
// The toolkit's command (@rpcgate/toolkit/cli: any endpoint against any OpenRPC document with --spec) with the
// gateway's profile without --spec: any EVM JSON-RPC endpoint (a node, another provider, rpcgate) against the node
// contract, examples adapted to the live chain.
// Exit code: 0 all passed (skips allowed), 1 any failure, 2 bad usage (or a --spec document that cannot be loaded).
import type { Command } from 'commander';
import { conformanceCommand, positiveIntOption, type DefaultProfile } from '@rpcgate/toolkit/cli';
import { runNodeConformance } from '../../gateway/node-api/conformance/index.js';

export const nodeProfile: DefaultProfile = {
  description: 'without --spec, against the node contract (openrpc.json), adapted to the live chain',
  options: (command) =>
    command.option(
      '--scan-blocks <n>',
      'without --spec: blocks to scan back from the head for a real log (eth_getLogs windows)',
      positiveIntOption,
      100_000,
    ),
  run: (url, common, cli) => runNodeConformance(url, { ...common, scanBlocks: cli.scanBlocks as number | undefined }),
};

export function register(program: Command): Command {
  return program.addCommand(conformanceCommand(nodeProfile));
}
