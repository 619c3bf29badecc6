// docs/client/: typedoc of the generated client(s) (generated/<api>/client.ts and the runtime types they
// re-export), and docs/packages/<package>/: typedoc of the public API of @rpcgate/client, @rpcgate/toolkit and rpcgate
// (their package.json exports), through typedoc's programmatic API. Options that would make the output depend on the machine,
// the checkout or the clock are off: no source links (paths, git revision), no generator banner, no cache
// busting, no .nojekyll, no syntax highlighting of comment code blocks (see below); `--check` diffs two runs.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Application, LogLevel, OptionDefaults } from 'typedoc';
import { resetReflectionID } from 'typedoc/models';
import type { ContractModel } from '../packages/toolkit/src/contract/model.js';

export async function writeClientDocs(out: string, models: ContractModel[]): Promise<void> {
  await typedoc(
    out,
    'rpcgate client',
    path.join(out, 'docs', 'client'),
    models.map((c) => path.join(out, 'generated', c.spec.name, 'client.ts')),
  );
}

/** The public API of each package (issue 20): its package.json "exports", read from the sources. */
export const PACKAGE_DOCS: readonly { name: string; dir: string; entryPoints: readonly string[] }[] = [
  { name: '@rpcgate/client', dir: 'client', entryPoints: ['packages/client/src/index.ts'] },
  {
    name: '@rpcgate/toolkit',
    dir: 'toolkit',
    entryPoints: [
      'index',
      'rpc/engine',
      'rpc/errors',
      'conformance/index',
      'server/log-throttle',
      'http/index',
      'ws/index',
      'cli/index',
    ].map((f) => `packages/toolkit/src/${f}.ts`),
  },
  { name: 'rpcgate', dir: 'rpcgate', entryPoints: ['src/index.ts'] },
];

/** docs/packages/<dir>/: typedoc of each package's entry points (`rpcgate/node` and `rpcgate/account` are docs/client). */
export async function writePackageDocs(out: string): Promise<void> {
  for (const p of PACKAGE_DOCS) {
    await typedoc(
      out,
      p.name,
      path.join(out, 'docs', 'packages', p.dir),
      p.entryPoints.map((f) => path.join(out, f)),
    );
  }
}

async function typedoc(out: string, name: string, outDir: string, entryPoints: string[]): Promise<void> {
  // A throw-away tsconfig that extends the project's but compiles only the entry points (and what they import):
  // typedoc would otherwise build a program of the whole tree (tests, bench, …), several times slower.
  const tmp = await mkdtemp(path.join(os.tmpdir(), 'rpcgate-typedoc-'));
  const tsconfig = path.join(tmp, 'tsconfig.json');
  await writeFile(
    tsconfig,
    JSON.stringify({
      extends: path.join(out, 'tsconfig.json'),
      compilerOptions: { rootDir: out, noEmit: true },
      files: entryPoints,
      include: [],
    }),
  );
  try {
    await run(name, outDir, entryPoints, tsconfig);
  } finally {
    await rm(tmp, { recursive: true, force: true });
  }
}

async function run(name: string, outDir: string, entryPoints: string[], tsconfig: string): Promise<void> {
  const app = await Application.bootstrapWithPlugins({
    entryPoints,
    tsconfig,
    name,
    readme: 'none',
    disableSources: true,
    disableGit: true,
    sourceLinkTemplate: '',
    gitRevision: 'main',
    hideGenerator: true,
    cacheBust: false,
    githubPages: false,
    includeVersion: false,
    cleanOutputDir: true,
    // The code is type-checked by `tsc --noEmit`; typedoc only documents it.
    skipErrorChecking: true,
    excludePrivate: true,
    excludeInternal: true,
    plugin: [],
    logLevel: LogLevel.Warn,
    validation: { notExported: false, invalidLink: true, notDocumented: false },
    navigation: { includeCategories: false, includeGroups: true, includeFolders: false },
    sort: ['kind', 'alphabetical'],
    // json-schema-to-typescript writes @minItems/@maxItems on array types: known tags, not warnings.
    blockTags: [...OptionDefaults.blockTags, '@minItems', '@maxItems'],
    // Shiki's tokenizer has a wall-clock limit per line (its grammar is compiled lazily, inside that budget),
    // so on a busy machine the same code block can come out tokenized differently, and typedoc numbers its
    // colour classes in order of first use: code blocks in comments stay plain text to keep output stable.
    // Signatures are still rendered (and coloured) by typedoc itself.
    ignoredHighlightLanguages: ['ts', 'typescript', 'json', 'js', 'javascript', 'sh', 'shell', 'bash'],
  });
  // Reflection ids (rendered as data-refl) come from a module-level counter: start from 0 on every run so a
  // second run in the same process (tests, watch) renders the same ids.
  resetReflectionID();
  const project = await app.convert();
  if (!project) throw new Error('typedoc: conversion failed');
  await app.generateDocs(project, outDir);
  if (app.logger.hasErrors()) throw new Error('typedoc reported errors');
}
