// `conformance <url> --spec <document> [--json] [--only m1,m2] [--timeout ms] [-H name:value]`: any endpoint against any
// OpenRPC document (../conformance/spec.ts). A program built on the toolkit may give a profile to run without --spec
// (`rpcgate conformance <url>` checks an EVM node against its node contract) and options of its own.
// Exit code: 0 all passed (skips allowed), 1 any failure, 2 bad usage (or a --spec document that cannot be loaded).
import { Command, InvalidArgumentError } from 'commander';
import { loadDocument, type ContractModel } from '../contract/model.js';
import {
  documentLimits,
  loadOptions,
  printWarnings,
  withDocumentLimits,
  type DocumentLimitFlags,
} from './document-limits.js';
import { errorLine } from './output.js';
import { formatReport, specConformance, type ConformanceReport } from '../conformance/index.js';

const positiveInt = (v: string) => {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError('must be a positive integer');
  return n;
};

export interface ConformanceCliOptions extends DocumentLimitFlags {
  json?: boolean;
  only?: string;
  timeout?: number;
  header?: string[];
  spec?: string;
  /** Options a profile added (e.g. the gateway's `--scan-blocks`). */
  [option: string]: unknown;
}

/** What runs without --spec: a program's own profile (the toolkit alone requires --spec). */
export interface DefaultProfile {
  /** The command's description. */
  description: string;
  /** Adds the profile's own options to the command. */
  options?: (command: Command) => Command;
  run(
    url: string,
    common: { only?: string[]; timeoutMs?: number; headers: Record<string, string> },
    cli: ConformanceCliOptions,
  ): Promise<ConformanceReport>;
}

export const positiveIntOption = positiveInt;

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
  profile?: DefaultProfile,
): Promise<number> {
  const headers: Record<string, string> = {};
  for (const h of cli.header ?? []) {
    const i = h.indexOf(':');
    if (i > 0) headers[h.slice(0, i).trim()] = h.slice(i + 1).trim();
  }
  const only = cli.only
    ?.split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  let report: ConformanceReport;
  if (cli.spec !== undefined) {
    let model: ContractModel;
    try {
      model = await loadDocument(cli.spec, undefined, documentLimits(cli), loadOptions(cli));
    } catch (e) {
      err(`rpcgate conformance: cannot use --spec ${cli.spec}: ${errorLine(e)}`);
      return 2;
    }
    printWarnings(model.warnings, err);
    report = await specConformance(url, model, { only, timeoutMs: cli.timeout, headers });
  } else if (profile) {
    report = await profile.run(url, { only, timeoutMs: cli.timeout, headers }, cli);
  } else {
    err('conformance: --spec <document> is required');
    return 2;
  }
  out(cli.json ? JSON.stringify(report, null, 2) : formatReport(report));
  return report.ok ? 0 : 1;
}

const SPEC_DESCRIPTION =
  'check a JSON-RPC endpoint against an OpenRPC document (--spec): every example pairing, generated params where a method has none, results against the schemas, declared errors, the envelope, batch and rpc.discover';

export function conformanceCommand(profile?: DefaultProfile): Command {
  const command = withDocumentLimits(new Command('conformance'))
    .description(profile ? `${SPEC_DESCRIPTION}; ${profile.description}` : SPEC_DESCRIPTION)
    .argument('<url>', 'JSON-RPC endpoint, e.g. http://127.0.0.1:8545 or http://127.0.0.1:8080/mainnet/v2/<key>')
    .option('--spec <document>', 'path or http(s) URL of any OpenRPC document to check the endpoint against')
    .option('--json', 'print the report as JSON')
    .option('--only <methods>', 'comma-separated method names (and/or protocol:<check>) to run')
    .option('--timeout <ms>', 'per-call timeout in ms', positiveInt, 15_000)
    .option('-H, --header <name:value>', 'extra HTTP header (repeatable)', header);
  return (profile?.options?.(command) ?? command).action(async (url: string, cli: ConformanceCliOptions) => {
    process.exitCode = await conformanceAction(url, cli, undefined, undefined, profile);
  });
}

/** For a main.ts that registers commands onto its program. */
export function register(program: Command): Command {
  return program.addCommand(conformanceCommand());
}

export default conformanceCommand;
