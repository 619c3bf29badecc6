// The architecture's layer rule as package boundaries, and the absence of folder cycles, read from the import graph of
// the tracked sources (ARCHITECTURE.md). A wrong import fails here, so CI fails.
//   client (packages/client)    @rpcgate/client imports only itself and the one library it declares, re2js (a pure-JS
//                               linear-time pattern engine: generated validators must not let a document's pattern
//                               stall the process, issue 26); no other package, no node: builtin (it runs in browsers).
//   toolkit (packages/toolkit)  @rpcgate/toolkit imports itself, @rpcgate/client (by its package name) and the libraries
//                               its own package.json lists; never the gateway: it knows nothing of keys, quotas or EVM.
//   generated (generated/*)     imports generated code and @rpcgate/client.
//   codegen/                    this repository's driver of the toolkit's writers: codegen, the toolkit and the client
//                               (their sources by path: it is not published).
//   gateway (src/gateway/*)     imports the gateway, generated code, and the packages through their package names and
//                               narrow exported entry points only (@rpcgate/toolkit/engine, /errors, /conformance,
//                               /http, /ws; @rpcgate/client): not the toolkit's main entry (codegen, docs, mock).
//   cli (src/cli)               may import everything, the packages through their entry points.
//   src/index.ts                the root package's entry (`rpcgate`): re-exports of the gateway.
// Folders are compared at the granularity packages/<pkg>/<x>, src/gateway/<x>, generated/<api>, codegen, src/cli; two
// folders that import each other (directly or around a loop) are a cycle.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { dirname, join, normalize } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const root = join(import.meta.dirname, '..');
const files = execFileSync('git', ['ls-files', 'src', 'codegen', 'generated', 'packages'], {
  cwd: root,
  encoding: 'utf8',
})
  .split('\n')
  .filter((f) => /\.(ts|tsx|js)$/.test(f) && !f.endsWith('.d.ts'));

interface Manifest {
  name: string;
  exports: Record<string, string | { types?: string; default: string }>;
  dependencies?: Record<string, string>;
  /** Optional peers (typescript: generate's type check runs when the user has it). */
  peerDependencies?: Record<string, string>;
}
const PACKAGES = ['client', 'toolkit'] as const;
const manifests = Object.fromEntries(
  PACKAGES.map((p) => [p, JSON.parse(readFileSync(join(root, 'packages', p, 'package.json'), 'utf8')) as Manifest]),
);

/** Bare specifier → the source file it resolves to: the root package's own exports (tsconfig "paths"), and each
 *  package's "exports" (./dist/<x>.js ↔ packages/<pkg>/src/<x>.ts). Anything else bare is a library. */
const SELF: Record<string, string> = {
  rpcgate: 'src/index.ts',
  'rpcgate/node': 'generated/node/client.ts',
  'rpcgate/account': 'generated/account/client.ts',
};
for (const p of PACKAGES) {
  for (const [sub, target] of Object.entries(manifests[p].exports)) {
    const js = typeof target === 'string' ? target : target.default;
    if (!js.endsWith('.js')) continue;
    SELF[manifests[p].name + sub.slice(1)] =
      `packages/${p}/src/${js.replace(/^\.\/dist\//, '').replace(/\.js$/, '.ts')}`;
  }
}

function folderOf(file: string): string {
  const parts = file.split('/');
  if (parts[0] === 'packages') {
    // packages/<pkg>/src/<x>/… → packages/<pkg>/<x>; the package's index and bin → packages/<pkg>
    return parts[2] === 'src' && parts.length > 4 ? `packages/${parts[1]}/${parts[3]}` : `packages/${parts[1]}`;
  }
  if (parts[0] === 'src' && parts[1] === 'gateway')
    return parts.length > 3 ? parts.slice(0, 3).join('/') : 'src/gateway';
  if (parts[0] === 'generated') return parts.length > 2 ? parts.slice(0, 2).join('/') : 'generated';
  if (parts[0] === 'src') return parts.length > 2 ? `src/${parts[1]}` : 'src';
  return parts[0];
}

function layerOf(folder: string): string {
  if (folder.startsWith('packages/')) return folder.split('/')[1];
  if (folder.startsWith('src/gateway')) return 'gateway';
  if (folder.startsWith('generated')) return 'generated';
  if (folder === 'codegen') return 'codegen';
  if (folder === 'src/cli') return 'cli';
  if (folder === 'src') return 'entry';
  return 'other';
}

const ALLOWED: Record<string, readonly string[]> = {
  client: ['client'],
  toolkit: ['toolkit', 'client'],
  generated: ['generated', 'client'],
  codegen: ['codegen', 'toolkit', 'client'],
  gateway: ['gateway', 'toolkit', 'client', 'generated'],
  cli: ['cli', 'gateway', 'toolkit', 'client', 'generated', 'codegen'],
  entry: ['gateway', 'toolkit', 'client', 'generated'],
  other: [],
};
/** Layers that may reach into a package's sources by relative path (unpublished repository tooling). */
const BY_PATH = new Set(['codegen']);
const isPackage = (layer: string) => (PACKAGES as readonly string[]).includes(layer);
const builtins = new Set(builtinModules.flatMap((m) => [m, `node:${m}`]));
/** The library a bare specifier names (`@scope/name/sub` → `@scope/name`). */
const libraryOf = (spec: string) =>
  spec
    .split('/')
    .slice(0, spec.startsWith('@') ? 2 : 1)
    .join('/');

interface Edge {
  from: string;
  to: string;
  file: string;
  spec: string;
}

/** The import graph of `sources` (path → text) and the imports that break a rule, as readable lines. */
function check(sources: Iterable<[file: string, text: string]>): { edges: Edge[]; wrong: string[] } {
  const edges: Edge[] = [];
  const wrong: string[] = [];
  for (const [file, text] of sources) {
    const from = folderOf(file);
    const layer = layerOf(from);
    const info = ts.preProcessFile(text, true, true);
    for (const { fileName: spec } of info.importedFiles) {
      let target: string | undefined;
      if (spec.startsWith('.')) target = normalize(join(dirname(file), spec));
      else if (SELF[spec]) target = SELF[spec];
      else if (spec.startsWith('@rpcgate/') || spec === 'rpcgate' || spec.startsWith('rpcgate/')) {
        wrong.push(`${file} imports ${spec}: not an exported entry point`);
        continue;
      } else {
        // A library or a builtin: the client takes none; a package takes only what its package.json declares.
        if (layer === 'client' && (builtins.has(spec) || !manifests.client.dependencies?.[libraryOf(spec)])) {
          wrong.push(`${file} imports ${spec}: @rpcgate/client depends on nothing but re2js`);
        } else if (
          layer === 'toolkit' &&
          !builtins.has(spec) &&
          !manifests.toolkit.dependencies?.[libraryOf(spec)] &&
          !manifests.toolkit.peerDependencies?.[libraryOf(spec)]
        ) {
          wrong.push(`${file} imports ${spec}: not a dependency in packages/toolkit/package.json`);
        }
        continue;
      }
      if (!/^(src|codegen|generated|packages)\//.test(target)) continue;
      // The gateway runs (and its errors table is bundled into the dashboard) on the narrow entry points: the main one
      // loads codegen, docs and the mock (prettier, json-schema-to-typescript) too.
      if ((layer === 'gateway' || layer === 'entry') && spec === '@rpcgate/toolkit')
        wrong.push(`${file} imports ${spec}: the whole toolkit, use a narrower entry point`);
      const to = folderOf(target);
      const toLayer = layerOf(to);
      edges.push({ from, to, file, spec });
      if (!ALLOWED[layer].includes(toLayer)) wrong.push(`${file} imports ${spec} (${layer} → ${toLayer})`);
      // Into a package from outside it: by its name and exports only (the relative path works in the repository and
      // breaks once installed), except for the repository's own tooling.
      else if (isPackage(toLayer) && toLayer !== layer && spec.startsWith('.') && !BY_PATH.has(layer)) {
        wrong.push(`${file} imports ${spec}: into @rpcgate/${toLayer} by path, not by its package name`);
      }
    }
  }
  return { edges, wrong };
}

/** Strongly connected components of more than one folder (Tarjan). */
function cycles(graph: Map<string, Set<string>>): string[][] {
  let index = 0;
  const idx = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const on = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string) => {
    idx.set(v, index);
    low.set(v, index++);
    stack.push(v);
    on.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!idx.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (on.has(w)) low.set(v, Math.min(low.get(v)!, idx.get(w)!));
    }
    if (low.get(v) === idx.get(v)) {
      const scc: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        on.delete(w);
        scc.push(w);
      } while (w !== v);
      if (scc.length > 1) found.push(scc.sort());
    }
  };
  for (const v of graph.keys()) if (!idx.has(v)) visit(v);
  return found;
}

function folderCycles(edges: Edge[]): string[] {
  const graph = new Map<string, Set<string>>();
  for (const e of edges) {
    if (e.from === e.to) continue;
    if (!graph.has(e.from)) graph.set(e.from, new Set());
    graph.get(e.from)!.add(e.to);
  }
  return cycles(graph).map((scc) => {
    const inside = edges.filter((e) => e.from !== e.to && scc.includes(e.from) && scc.includes(e.to));
    return `${scc.join(' ↔ ')}: ${inside.map((e) => `${e.file} → ${e.spec}`).join('; ')}`;
  });
}

describe('architecture', () => {
  const { edges: all, wrong } = check(files.map((f) => [f, readFileSync(join(root, f), 'utf8')]));

  it('reads a real import graph', () => {
    expect(files.length).toBeGreaterThan(100);
    expect(all.length).toBeGreaterThan(200);
    expect(new Set(all.map((e) => layerOf(e.from)))).toEqual(
      new Set(['client', 'toolkit', 'gateway', 'generated', 'codegen', 'cli', 'entry']),
    );
    // the package entry points the gateway uses resolve to real files
    for (const [spec, file] of Object.entries(SELF)) expect(() => readFileSync(join(root, file)), spec).not.toThrow();
  });

  it('each layer imports only what its package boundary allows', () => {
    expect(wrong).toEqual([]);
  });

  it('has no folder cycles', () => {
    expect(folderCycles(all)).toEqual([]);
  });

  it("the engine's call context carries no gateway word: a host (rpcgate: the network) extends it", () => {
    const file = 'packages/toolkit/src/rpc/engine.ts';
    const sf = ts.createSourceFile(file, readFileSync(join(root, file), 'utf8'), ts.ScriptTarget.Latest, true);
    const decl = sf.statements.find(
      (s): s is ts.InterfaceDeclaration => ts.isInterfaceDeclaration(s) && s.name.text === 'CallContext',
    );
    expect(decl).toBeDefined();
    const members = decl!.members.map((m) => (m.name !== undefined && ts.isIdentifier(m.name) ? m.name.text : '?'));
    expect(members.sort()).toEqual(['headers', 'ip', 'principal', 'requestId', 'startedAt']);
  });

  it('the toolkit declares no gateway dependency and the client only re2js (pure JS, no install script)', () => {
    expect(Object.keys(manifests.client.dependencies ?? {})).toEqual(['re2js']);
    const gatewayOnly = [
      '@foundry-rs/anvil',
      'solc',
      'better-sqlite3',
      'pg',
      'ioredis',
      'kysely',
      '@node-rs/argon2',
      'react',
      'react-dom',
      'jose',
      'rpcgate',
    ];
    expect(Object.keys(manifests.toolkit.dependencies ?? {}).filter((d) => gatewayOnly.includes(d))).toEqual([]);
  });

  // The rule bites: each kind of wrong import, written as a file would be, is reported.
  it.each([
    ['packages/client/src/x.ts', `import { RpcError } from '@rpcgate/toolkit';`, 'client → toolkit'],
    ['packages/client/src/x.ts', `import Ajv from 'ajv';`, '@rpcgate/client depends on nothing'],
    ['packages/client/src/x.ts', `import { request } from 'node:http';`, '@rpcgate/client depends on nothing'],
    [
      'packages/toolkit/src/rpc/x.ts',
      `import { GatewayErrorCode } from '../../../../src/gateway/errors.js';`,
      'toolkit → gateway',
    ],
    ['packages/toolkit/src/rpc/x.ts', `import { startService } from 'rpcgate';`, 'toolkit → entry'],
    ['packages/toolkit/src/rpc/x.ts', `import { createClient } from 'rpcgate/node';`, 'toolkit → generated'],
    [
      'packages/toolkit/src/rpc/x.ts',
      `import { RpcClientError } from '../../../client/src/runtime.js';`,
      'into @rpcgate/client by path',
    ],
    ['packages/toolkit/src/rpc/x.ts', `import pg from 'pg';`, 'not a dependency in packages/toolkit/package.json'],
    [
      'packages/toolkit/src/rpc/x.ts',
      `import { x } from '@rpcgate/client/dist/runtime.js';`,
      'not an exported entry point',
    ],
    [
      'src/gateway/access/x.ts',
      `import { Router } from '../../../packages/toolkit/src/http/router.js';`,
      'into @rpcgate/toolkit by path',
    ],
    ['src/gateway/access/x.ts', `import { x } from '@rpcgate/toolkit/contract';`, 'not an exported entry point'],
    ['src/gateway/access/x.ts', `import { RpcError } from '@rpcgate/toolkit';`, 'the whole toolkit'],
    ['generated/node/x.ts', `import { RpcError } from '@rpcgate/toolkit';`, 'generated → toolkit'],
  ])('refuses %s: %s', (file, text, reason) => {
    const found = check([[file, text]]).wrong;
    expect(found).toHaveLength(1);
    expect(found[0]).toContain(reason);
  });

  it('allows what the boundaries allow', () => {
    expect(
      check([
        [
          'packages/toolkit/src/rpc/x.ts',
          `import { RpcClientError } from '@rpcgate/client';\nimport Ajv from 'ajv';\nimport { readFile } from 'node:fs/promises';`,
        ],
        [
          'src/gateway/access/x.ts',
          `import { RpcError } from '@rpcgate/toolkit/errors';\nimport { Router } from '@rpcgate/toolkit/http';`,
        ],
        ['src/cli/x.ts', `import { loadDocument } from '@rpcgate/toolkit';`],
        ['codegen/x.ts', `import { tsHeader } from '../packages/toolkit/src/codegen/schema.js';`],
      ]).wrong,
    ).toEqual([]);
    expect(
      cycles(
        new Map([
          ['a', new Set(['b'])],
          ['b', new Set(['a'])],
        ]),
      ),
    ).toEqual([['a', 'b']]);
  });
});
