// Contract → generated/<api>/ and docs/ (ARCHITECTURE.md, "Contract first").
//
//   npm run generate            write generated/ and docs/
//   npm run check-generated     regenerate into a temp folder, compare byte-for-byte, exit 1 on any difference
//   npm run docs                regenerate docs/ only
//   flags: --code-only (generated/ only), --docs-only, --root <repo>, --out <dir> (write elsewhere),
//          --contract <name>=<file> (development: generate from another document)
//
// Why not @open-rpc/generator: its custom-component hooks were evaluated as the driver. Its pipeline re-parses
// the document itself (parseOpenRPCDocument), always builds @open-rpc/typings for it (a second, unused
// json-schema→TS conversion of every schema, which also dereferences every `$ref` so named types are lost),
// copies a static template folder, and hands templates only the dereferenced document — while every output
// here needs the `$ref`-intact schemas (named types, shared ajv schemas) plus the normalised model below, and
// must go to several folders (generated/<api>/, docs/api/<api>/, docs/client/) deterministically. The hooks
// would only wrap the writers below in its fs-extra copy/lodash-template machinery, so codegen uses
// @open-rpc/schema-utils-js (validation + dereferencing, which is what the generator itself uses) and its
// own writers, one module per output.
import { mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadContract, type ContractModel, type ContractSpec } from '../packages/toolkit/src/contract/model.js';
import { generateClient } from '../packages/toolkit/src/codegen/index.js';
import { generatePythonClient } from '../packages/toolkit/src/codegen/python.js';
import { PYTHON_PACKAGES, writeExamples } from './examples.js';
import { writeApiDocs, writeDocsIndex } from './docs-html.js';
import { writeClientDocs, writePackageDocs } from './docs-client.js';
import { CONFIG_SCHEMA_FILE, generateConfig } from './config.js';
import { META_VALIDATORS_FILE, writeMetaValidators } from './meta-validators.js';

/** The contracts codegen reads. Adding an API is one line here. */
export const CONTRACTS: readonly ContractSpec[] = [
  { name: 'node', file: 'openrpc.json' },
  { name: 'account', file: 'contracts/account.openrpc.json' },
];

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

export interface GenerateOptions {
  /** Repository root: contracts are read from here, and src/ + node_modules are used for typedoc. */
  root?: string;
  /** Where generated/ and docs/ are written (default: root). */
  out?: string;
  contracts?: readonly ContractSpec[];
  code?: boolean;
  docs?: boolean;
  /** Write the OpenRPC meta-schema validators (codegen/meta-validators.ts) with the code (default: with code). */
  meta?: boolean;
  log?: (msg: string) => void;
}

/** Files (relative to `out`) produced for one contract's generated/ folder (and its Python package, if any). */
export async function generateCode(c: ContractModel): Promise<Map<string, string>> {
  const dir = `generated/${c.spec.name}`;
  // The same writer as `rpcgate generate`; the repository's folders have no index.ts (package.json exports client.ts)
  // and add examples.ts (the dashboard's code samples).
  const [client, examples] = await Promise.all([generateClient(c, { index: false }), writeExamples(c)]);
  const files = new Map<string, string>();
  for (const [rel, text] of client) files.set(`${dir}/${rel}`, text);
  files.set(`${dir}/examples.ts`, examples);
  const pkg = PYTHON_PACKAGES[c.spec.name];
  if (pkg)
    for (const [rel, text] of generatePythonClient(c, { packageName: pkg }))
      files.set(`generated/python/${pkg}/${rel}`, text);
  return files;
}

async function writeFiles(out: string, files: Map<string, string>): Promise<void> {
  for (const [rel, text] of [...files].sort(([a], [b]) => (a < b ? -1 : 1))) {
    const file = path.join(out, rel);
    await mkdir(path.dirname(file), { recursive: true });
    await writeFile(file, text);
  }
}

export async function generate(opts: GenerateOptions = {}): Promise<void> {
  const root = opts.root ?? REPO_ROOT;
  const out = opts.out ?? root;
  const contracts = opts.contracts ?? CONTRACTS;
  const log = opts.log ?? (() => {});
  const code = opts.code ?? true;
  const docs = opts.docs ?? true;
  const models: ContractModel[] = [];
  for (const spec of contracts) {
    const t0 = Date.now();
    models.push(await loadContract(root, spec));
    log(`${spec.name}: ${spec.file} validated and dereferenced (${Date.now() - t0} ms)`);
  }
  if (code) {
    for (const c of models) {
      const t0 = Date.now();
      const files = await generateCode(c);
      await rm(path.join(out, 'generated', c.spec.name), { recursive: true, force: true });
      if (PYTHON_PACKAGES[c.spec.name])
        await rm(path.join(out, 'generated', 'python', PYTHON_PACKAGES[c.spec.name]), { recursive: true, force: true });
      await writeFiles(out, files);
      log(`${c.spec.name}: generated/${c.spec.name}/ (${files.size} files, ${Date.now() - t0} ms)`);
    }
    await rm(path.join(out, 'generated', 'config'), { recursive: true, force: true });
    await writeFiles(out, await generateConfig(root));
    log('config: generated/config/types.ts');
    if (opts.meta ?? true) {
      await writeFiles(out, new Map([[META_VALIDATORS_FILE, writeMetaValidators()]]));
      log(`${META_VALIDATORS_FILE}: the OpenRPC meta-schemas, precompiled`);
    }
  }
  if (docs) {
    const t0 = Date.now();
    await rm(path.join(out, 'docs'), { recursive: true, force: true });
    const files = new Map<string, string>([['docs/index.html', writeDocsIndex(models)]]);
    for (const c of models) for (const [rel, text] of await writeApiDocs(c, models)) files.set(rel, text);
    await writeFiles(out, files);
    log(`docs/api: ${files.size} files (${Date.now() - t0} ms)`);
    const t1 = Date.now();
    await writeClientDocs(out, models);
    log(`docs/client: typedoc (${Date.now() - t1} ms)`);
    const t2 = Date.now();
    await writePackageDocs(out);
    log(`docs/packages: typedoc of @rpcgate/client, @rpcgate/toolkit, rpcgate (${Date.now() - t2} ms)`);
  }
}

async function listFiles(dir: string, base = dir): Promise<string[]> {
  if (!existsSync(dir)) return [];
  const out: string[] = [];
  for (const e of await readdir(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) out.push(...(await listFiles(p, base)));
    else out.push(path.relative(base, p));
  }
  return out.sort();
}

/** Byte-for-byte comparison of two trees: the differing, missing and extra files (relative paths). */
export async function compareTrees(
  expected: string,
  actual: string,
): Promise<{ changed: string[]; missing: string[]; extra: string[] }> {
  const [exp, act] = await Promise.all([listFiles(expected), listFiles(actual)]);
  const actSet = new Set(act);
  const expSet = new Set(exp);
  const changed: string[] = [];
  for (const f of exp) {
    if (!actSet.has(f)) continue;
    const [a, b] = await Promise.all([readFile(path.join(expected, f)), readFile(path.join(actual, f))]);
    if (!a.equals(b)) changed.push(f);
  }
  return { changed, missing: exp.filter((f) => !actSet.has(f)), extra: act.filter((f) => !expSet.has(f)) };
}

/**
 * A scratch root for regeneration: its own generated/ and docs/, with src/, node_modules, package.json and
 * tsconfig.json linked from the repository so generated imports (@rpcgate/client: packages/) resolve for typedoc.
 */
export async function scratchRoot(root: string, contracts: readonly ContractSpec[] = CONTRACTS): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'rpcgate-codegen-'));
  const links = [
    'src',
    'packages',
    'node_modules',
    'package.json',
    'tsconfig.json',
    CONFIG_SCHEMA_FILE,
    ...contracts.filter((c) => !path.isAbsolute(c.file)).map((c) => c.file),
  ];
  for (const name of links) {
    if (!existsSync(path.join(root, name))) continue;
    await mkdir(path.dirname(path.join(dir, name)), { recursive: true });
    await symlink(path.resolve(root, name), path.join(dir, name));
  }
  return dir;
}

/** Regenerates into a scratch root and compares generated/ and docs/ with the repository's. */
export async function check(opts: Omit<GenerateOptions, 'out'> = {}): Promise<string[]> {
  const root = opts.root ?? REPO_ROOT;
  const tmp = await scratchRoot(root, opts.contracts);
  try {
    // meta: false — the scratch root's packages/ is a link to the repository's; compared in memory below
    await generate({ ...opts, root, out: tmp, meta: false });
    const problems: string[] = [];
    if (opts.code !== false) {
      const current = await readFile(path.join(root, META_VALIDATORS_FILE), 'utf8').catch(() => undefined);
      if (current === undefined) problems.push(`missing: ${META_VALIDATORS_FILE}`);
      else if (current !== writeMetaValidators()) problems.push(`changed: ${META_VALIDATORS_FILE}`);
    }
    const dirs = [...(opts.code !== false ? ['generated'] : []), ...(opts.docs !== false ? ['docs'] : [])];
    for (const dir of dirs) {
      const r = await compareTrees(path.join(tmp, dir), path.join(root, dir));
      problems.push(
        ...r.changed.map((f) => `changed: ${dir}/${f}`),
        ...r.missing.map((f) => `missing: ${dir}/${f}`),
        ...r.extra.map((f) => `extra (not generated): ${dir}/${f}`),
      );
    }
    return problems;
  } finally {
    await rm(tmp, { recursive: true, force: true });
  }
}

async function cli(argv: string[]): Promise<number> {
  const has = (f: string) => argv.includes(f);
  const value = (f: string) => (argv.includes(f) ? argv[argv.indexOf(f) + 1] : undefined);
  let contracts: ContractSpec[] = [...CONTRACTS];
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] !== '--contract') continue;
    const [name, file] = argv[i + 1].split('=');
    contracts = contracts.filter((c) => c.name !== name);
    contracts.push({ name, file: path.resolve(file) });
  }
  const log = (m: string) => console.log(m);
  const t0 = Date.now();
  const root = value('--root') ? path.resolve(value('--root')!) : REPO_ROOT;
  const code = !has('--docs-only');
  const docs = !has('--code-only');
  if (has('--check')) {
    const problems = await check({ root, contracts, code, docs });
    if (problems.length) {
      console.error(`generated output is stale (${problems.length} file(s)) — run \`npm run generate\`:`);
      for (const p of problems) console.error(`  ${p}`);
      return 1;
    }
    console.log(
      `${[code && 'generated/', docs && 'docs/'].filter(Boolean).join(' and ')} up to date (${Date.now() - t0} ms)`,
    );
    return 0;
  }
  const out = value('--out');
  if (out) await mkdir(out, { recursive: true });
  await generate({ root, contracts, out: out ? path.resolve(out) : undefined, code, docs, log });
  console.log(`done in ${Date.now() - t0} ms`);
  return 0;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  cli(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (err) => {
      console.error(err instanceof Error ? (err.stack ?? err.message) : err);
      process.exit(1);
    },
  );
}
