// `rpcgate generate <document> --out <dir> [--check] [--name <n>]`
// Writes the TypeScript client of any OpenRPC document (a path or an http(s) URL): types.ts, methods.ts, validators.ts,
// client.ts and index.ts, importing nothing but themselves and `rpcgate/client`. `--check` regenerates in memory and
// compares byte-for-byte with the folder instead of writing.
// Exit code: 0 written / up to date, 1 bad document or (with --check) the folder differs.
import { mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { Command } from 'commander';
import { loadDocument, type ContractModel } from '../../toolkit/contract/model.js';
import { generateClient, isGenerated } from '../../toolkit/codegen/index.js';
import { errorLine } from '../output.js';
import { documentLimits, withDocumentLimits, type DocumentLimitFlags } from '../document-limits.js';
import type { DocumentLimits } from '../../toolkit/contract/bounds.js';

export interface GenerateCliOptions extends DocumentLimitFlags {
  out: string;
  check?: boolean;
  name?: string;
}

/** How the document is named in the files' headers: a URL as given, a file by its base name (so where the command
 *  runs from does not change the output). */
const displaySource = (source: string): string => (/^https?:\/\//i.test(source) ? source : path.basename(source));

/** The files for `source`, keyed by path relative to the output folder. */
export async function generateFiles(source: string, name?: string, limits?: DocumentLimits): Promise<Map<string, string>> {
  const loaded = await loadDocument(source, name, limits);
  const model: ContractModel = { ...loaded, spec: { name: loaded.spec.name, file: displaySource(source) } };
  return generateClient(model, { command: 'rpcgate generate', importPath: './index.js' });
}

/** Files in `dir` (not recursive) that carry the generator's header. */
async function generatedIn(dir: string): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  let names: string[];
  try {
    names = await readdir(dir);
  } catch {
    return out;
  }
  for (const f of names.sort()) {
    if (!f.endsWith('.ts')) continue;
    const text = await readFile(path.join(dir, f), 'utf8').catch(() => undefined);
    if (text !== undefined && isGenerated(text)) out.set(f, text);
  }
  return out;
}

/** Compares what would be written with the folder: differing, missing, and extra (generated files no longer produced). */
export async function checkFolder(files: Map<string, string>, dir: string): Promise<string[]> {
  const present = await generatedIn(dir);
  const problems: string[] = [];
  for (const [rel, text] of files) {
    const actual = await readFile(path.join(dir, rel)).catch(() => undefined);
    if (actual === undefined) problems.push(`missing: ${rel}`);
    else if (!actual.equals(Buffer.from(text))) problems.push(`changed: ${rel}`);
  }
  for (const rel of present.keys()) if (!files.has(rel)) problems.push(`extra (not generated from this document): ${rel}`);
  return problems;
}

/** Runs the command; returns the exit code. */
export async function generateAction(
  source: string,
  cli: GenerateCliOptions,
  out: (s: string) => void = (s) => process.stdout.write(`${s}\n`),
  err: (s: string) => void = (s) => process.stderr.write(`${s}\n`),
): Promise<number> {
  let files: Map<string, string>;
  try {
    files = await generateFiles(source, cli.name, documentLimits(cli));
  } catch (e) {
    err(`rpcgate generate: ${errorLine(e)}`);
    return 1;
  }
  const dir = path.resolve(cli.out);
  if (cli.check) {
    const problems = await checkFolder(files, dir);
    if (problems.length) {
      err(`${cli.out} is not up to date with ${source} (${problems.length} file(s)) — run \`rpcgate generate ${source} --out ${cli.out}\`:`);
      for (const p of problems) err(`  ${p}`);
      return 1;
    }
    out(`${cli.out}: up to date (${files.size} files)`);
    return 0;
  }
  await mkdir(dir, { recursive: true });
  // Generated files this document no longer produces go; anything else in the folder is left alone.
  for (const rel of (await generatedIn(dir)).keys()) if (!files.has(rel)) await rm(path.join(dir, rel));
  for (const [rel, text] of files) await writeFile(path.join(dir, rel), text);
  out(`${cli.out}: ${[...files.keys()].join(', ')}`);
  return 0;
}

export function generateCommand(): Command {
  return withDocumentLimits(new Command('generate')
    .description('write a typed TypeScript client (types, method descriptor, validators, client) for any OpenRPC document')
    .argument('<document>', 'OpenRPC document: a file path or an http(s) URL')
    .requiredOption('--out <dir>', 'folder to write into (created if missing)')
    .option('--check', 'write nothing; exit 1 when the folder differs from what would be generated')
    .option('--name <name>', 'API name (types <Name>Methods, <Name>Client); default: the document file name')
    .action(async (source: string, cli: GenerateCliOptions) => {
      process.exitCode = await generateAction(source, cli);
    }));
}

export function register(program: Command): Command {
  return program.addCommand(generateCommand());
}

export default generateCommand;
