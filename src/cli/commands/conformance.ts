// `rpcgate conformance <url> [--spec <document>] [--json] [--only m1,m2] [--timeout ms] [--scan-blocks n] [-H name:value]`
// Without --spec: any EVM JSON-RPC endpoint (a node, another provider, rpcgate) against the node contract, examples
// adapted to the live chain. With --spec: any endpoint against any OpenRPC document (src/toolkit/conformance/spec.ts).
// Exit code: 0 all passed (skips allowed), 1 any failure, 2 bad usage (or a --spec document that cannot be loaded).
import { Command, InvalidArgumentError } from 'commander';
import { runNodeConformance, type NodeConformanceOptions } from '../../gateway/node-api/conformance/index.js';
import { loadDocument } from '../../toolkit/contract/model.js';
import { documentLimits, withDocumentLimits, type DocumentLimitFlags } from '../document-limits.js';
import { formatReport, specConformance, type ConformanceReport } from '../../toolkit/conformance/index.js';

const positiveInt = (v: string) => {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError('must be a positive integer');
  return n;
};

export interface ConformanceCliOptions extends DocumentLimitFlags {
  json?: boolean;
  only?: string;
  timeout?: number;
  scanBlocks?: number;
  header?: string[];
  spec?: string;
}

/** `name:value` → header; the value may itself contain colons (URLs, tokens). */
const header = (v: string, prev: string[] = []) => {
  if (v.indexOf(':') < 1) throw new InvalidArgumentError('expected name:value');
  return [...prev, v];
};

/** Runs the check and prints the report; returns the process exit code. */
export async function conformanceAction(
  url: string,
  cli: ConformanceCliOptions,
  out: (s: string) => void = (s) => process.stdout.write(`${s}\n`),
  err: (s: string) => void = (s) => process.stderr.write(`${s}\n`),
): Promise<number> {
  const headers: Record<string, string> = {};
  for (const h of cli.header ?? []) {
    const i = h.indexOf(':');
    if (i > 0) headers[h.slice(0, i).trim()] = h.slice(i + 1).trim();
  }
  const only = cli.only?.split(',').map((s) => s.trim()).filter(Boolean);
  let report: ConformanceReport;
  if (cli.spec !== undefined) {
    let model;
    try {
      model = await loadDocument(cli.spec, undefined, documentLimits(cli));
    } catch (e) {
      err(`rpcgate conformance: cannot use --spec ${cli.spec}: ${(e as Error).message}`);
      return 2;
    }
    report = await specConformance(url, model, { only, timeoutMs: cli.timeout, headers });
  } else {
    const opts: NodeConformanceOptions = { only, timeoutMs: cli.timeout, scanBlocks: cli.scanBlocks, headers };
    report = await runNodeConformance(url, opts);
  }
  out(cli.json ? JSON.stringify(report, null, 2) : formatReport(report));
  return report.ok ? 0 : 1;
}

export function conformanceCommand(): Command {
  return withDocumentLimits(new Command('conformance')
    .description(
      'check a JSON-RPC endpoint against an OpenRPC document (--spec): every example pairing, generated params where a method has none, results against the schemas, declared errors, the envelope, batch and rpc.discover; without --spec, against the node contract (openrpc.json), adapted to the live chain',
    )
    .argument('<url>', 'JSON-RPC endpoint, e.g. http://127.0.0.1:8545 or http://127.0.0.1:8080/mainnet/v2/<key>')
    .option('--spec <document>', 'path or http(s) URL of any OpenRPC document to check the endpoint against')
    .option('--json', 'print the report as JSON')
    .option('--only <methods>', 'comma-separated method names (and/or protocol:<check>) to run')
    .option('--timeout <ms>', 'per-call timeout in ms', positiveInt, 15_000)
    .option('--scan-blocks <n>', 'without --spec: blocks to scan back from the head for a real log (eth_getLogs windows)', positiveInt, 100_000)
    .option('-H, --header <name:value>', 'extra HTTP header (repeatable)', header)
    .action(async (url: string, cli: ConformanceCliOptions) => {
      process.exitCode = await conformanceAction(url, cli);
    }));
}

/** For a main.ts that registers commands onto its program. */
export function register(program: Command): Command {
  return program.addCommand(conformanceCommand());
}

export default conformanceCommand;
