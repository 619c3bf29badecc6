// `rpcgate conformance <url> [--json] [--only m1,m2] [--timeout ms] [--scan-blocks n]`
// Checks any JSON-RPC endpoint (a node, another provider, rpcgate) against the node contract.
// Exit code: 0 all passed (skips allowed), 1 any failure, 2 bad usage.
import { Command, InvalidArgumentError } from 'commander';
import { runNodeConformance, type NodeConformanceOptions } from '../../gateway/node-api/conformance/index.js';
import { formatReport } from '../../toolkit/conformance/index.js';

const positiveInt = (v: string) => {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError('must be a positive integer');
  return n;
};

export interface ConformanceCliOptions {
  json?: boolean;
  only?: string;
  timeout?: number;
  scanBlocks?: number;
  header?: string[];
}

/** Runs the check and prints the report; returns the process exit code. */
export async function conformanceAction(url: string, cli: ConformanceCliOptions, out: (s: string) => void = (s) => process.stdout.write(`${s}\n`)): Promise<number> {
  const headers: Record<string, string> = {};
  for (const h of cli.header ?? []) {
    const i = h.indexOf(':');
    if (i > 0) headers[h.slice(0, i).trim()] = h.slice(i + 1).trim();
  }
  const opts: NodeConformanceOptions = {
    only: cli.only?.split(',').map((s) => s.trim()).filter(Boolean),
    timeoutMs: cli.timeout,
    scanBlocks: cli.scanBlocks,
    headers,
  };
  const report = await runNodeConformance(url, opts);
  out(cli.json ? JSON.stringify(report, null, 2) : formatReport(report));
  return report.ok ? 0 : 1;
}

export function conformanceCommand(): Command {
  return new Command('conformance')
    .description('check a JSON-RPC endpoint against the node contract (openrpc.json): every method, adapted to the live chain')
    .argument('<url>', 'JSON-RPC endpoint, e.g. http://127.0.0.1:8545 or http://127.0.0.1:8080/mainnet/v2/<key>')
    .option('--json', 'print the report as JSON')
    .option('--only <methods>', 'comma-separated method names (and/or protocol:<check>) to run')
    .option('--timeout <ms>', 'per-call timeout in ms', positiveInt, 15_000)
    .option('--scan-blocks <n>', 'blocks to scan back from the head for a real log (eth_getLogs windows)', positiveInt, 100_000)
    .option('-H, --header <name:value>', 'extra HTTP header (repeatable)', (v: string, prev: string[] = []) => [...prev, v])
    .action(async (url: string, cli: ConformanceCliOptions) => {
      process.exitCode = await conformanceAction(url, cli);
    });
}

/** For a main.ts that registers commands onto its program. */
export function register(program: Command): Command {
  return program.addCommand(conformanceCommand());
}

export default conformanceCommand;
