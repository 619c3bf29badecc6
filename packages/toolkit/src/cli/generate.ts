// `rpcgate generate <document> --out <dir> [--lang typescript|python] [--check] [--name <n>]`
// Writes the TypeScript client of any OpenRPC document (a path or an http(s) URL): types.ts, methods.ts, validators.ts,
// client.ts and index.ts, importing nothing but themselves and `@rpcgate/client`; with `--lang python`, a typed Python
// package (standard library only; the folder's name is its import name). `--check` regenerates in memory and
// compares byte-for-byte with the folder instead of writing.
// Exit code: 0 written / up to date, 1 bad document or (with --check) the folder differs.
import { mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { Command } from 'commander';
import { loadDocument, type ContractModel, type LoadOptions } from '../contract/model.js';
import { generateClient, isGenerated } from '../codegen/index.js';
import { generatePythonClient, isGeneratedPython } from '../codegen/python.js';
import { errorLine } from './output.js';
import {
  documentLimits,
  loadOptions,
  printWarnings,
  withDocumentLimits,
  type DocumentLimitFlags,
} from './document-limits.js';
import type { DocumentLimits } from '../contract/bounds.js';

export interface GenerateCliOptions extends DocumentLimitFlags {
  out: string;
  check?: boolean;
  name?: string;
  lang?: string;
}

const LANGS = ['typescript', 'python'] as const;
type Lang = (typeof LANGS)[number];

/** How the document is named in the files' headers: a URL as given, a file by its base name (so where the command
 *  runs from does not change the output). */
const displaySource = (source: string): string => (/^https?:\/\//i.test(source) ? source : path.basename(source));

/** The files for `source`, keyed by path relative to the output folder. */
export async function generateFiles(
  source: string,
  name?: string,
  lang: Lang = 'typescript',
  out?: string,
  limits?: DocumentLimits,
  load?: LoadOptions,
  warn?: (line: string) => void,
): Promise<Map<string, string>> {
  const loaded = await loadDocument(source, name, limits, load);
  if (warn) printWarnings(loaded.warnings, warn);
  const model: ContractModel = { ...loaded, spec: { name: loaded.spec.name, file: displaySource(source) } };
  if (lang === 'python')
    return generatePythonClient(model, {
      command: 'rpcgate generate --lang python',
      packageName: out && path.basename(path.resolve(out)),
    });
  return generateClient(model, { command: 'rpcgate generate', importPath: './index.js' });
}

/** Files in `dir` (not recursive) that carry the generator's header (of `lang`). */
async function generatedIn(dir: string, lang: Lang = 'typescript'): Promise<Map<string, string>> {
  const [ext, generated] = lang === 'python' ? ['.py', isGeneratedPython] : ['.ts', isGenerated];
  const out = new Map<string, string>();
  let names: string[];
  try {
    names = await readdir(dir);
  } catch {
    return out;
  }
  for (const f of names.sort()) {
    if (!f.endsWith(ext)) continue;
    const text = await readFile(path.join(dir, f), 'utf8').catch(() => undefined);
    if (text !== undefined && generated(text)) out.set(f, text);
  }
  return out;
}

/** Compares what would be written with the folder: differing, missing, and extra (generated files no longer produced). */
export async function checkFolder(
  files: Map<string, string>,
  dir: string,
  lang: Lang = 'typescript',
): Promise<string[]> {
  const present = await generatedIn(dir, lang);
  const problems: string[] = [];
  for (const [rel, text] of files) {
    const actual = await readFile(path.join(dir, rel)).catch(() => undefined);
    if (actual === undefined) problems.push(`missing: ${rel}`);
    else if (!actual.equals(Buffer.from(text))) problems.push(`changed: ${rel}`);
  }
  for (const rel of present.keys())
    if (!files.has(rel)) problems.push(`extra (not generated from this document): ${rel}`);
  return problems;
}

/** Runs the command; returns the exit code. */
export async function generateAction(
  source: string,
  cli: GenerateCliOptions,
  out: (s: string) => void = (s) => process.stdout.write(`${s}\n`),
  err: (s: string) => void = (s) => process.stderr.write(`${s}\n`),
): Promise<number> {
  const lang = (cli.lang ?? 'typescript').toLowerCase();
  if (!(LANGS as readonly string[]).includes(lang)) {
    err(`rpcgate generate: --lang must be one of ${LANGS.join(', ')} (got ${JSON.stringify(cli.lang)})`);
    return 1;
  }
  // The folder is the Python package: its name is what `import` takes.
  const pkg = path.basename(path.resolve(cli.out));
  if (lang === 'python' && !/^[A-Za-z_][A-Za-z0-9_]*$/.test(pkg)) {
    err(
      `rpcgate generate: with --lang python the --out folder is the package, so its name must be a Python identifier (got ${JSON.stringify(pkg)}; e.g. ${pkg.replace(/\W/g, '_').replace(/^(\d)/, '_$1')})`,
    );
    return 1;
  }
  let files: Map<string, string>;
  try {
    files = await generateFiles(source, cli.name, lang as Lang, cli.out, documentLimits(cli), loadOptions(cli), err);
  } catch (e) {
    err(`rpcgate generate: ${errorLine(e)}`);
    return 1;
  }
  const dir = path.resolve(cli.out);
  if (cli.check) {
    const problems = await checkFolder(files, dir, lang as Lang);
    if (problems.length) {
      err(
        `${cli.out} is not up to date with ${source} (${problems.length} file(s)) — run \`rpcgate generate ${source}${lang === 'python' ? ' --lang python' : ''} --out ${cli.out}\`:`,
      );
      for (const p of problems) err(`  ${p}`);
      return 1;
    }
    out(`${cli.out}: up to date (${files.size} files)`);
    return 0;
  }
  await mkdir(dir, { recursive: true });
  // Generated files this document no longer produces go; anything else in the folder is left alone.
  for (const rel of (await generatedIn(dir, lang as Lang)).keys()) if (!files.has(rel)) await rm(path.join(dir, rel));
  for (const [rel, text] of files) await writeFile(path.join(dir, rel), text);
  out(`${cli.out}: ${[...files.keys()].join(', ')}`);
  return 0;
}

export function generateCommand(): Command {
  return withDocumentLimits(
    new Command('generate')
      .description(
        'write a typed client for any OpenRPC document: TypeScript (types, method descriptor, validators, client) or, with --lang python, a typed Python package',
      )
      .argument('<document>', 'OpenRPC document: a file path or an http(s) URL')
      .requiredOption('--out <dir>', 'folder to write into (created if missing)')
      .option(
        '--lang <lang>',
        'typescript (default) or python (a package for Python 3.11+, standard library only; the --out folder is the package)',
      )
      .option('--check', 'write nothing; exit 1 when the folder differs from what would be generated')
      .option('--name <name>', 'API name (types <Name>Methods, <Name>Client); default: the document file name')
      .action(async (source: string, cli: GenerateCliOptions) => {
        process.exitCode = await generateAction(source, cli);
      }),
  );
}

export function register(program: Command): Command {
  return program.addCommand(generateCommand());
}

export default generateCommand;
