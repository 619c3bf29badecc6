// The architecture's layer rule and the absence of folder cycles, read from the import graph of the tracked sources
// (ARCHITECTURE.md). A wrong import fails here, so CI fails.
//   toolkit (src/toolkit/*)   imports only the toolkit: it knows nothing of keys, quotas or EVM.
//   generated (generated/*)   imports generated code and the toolkit (through the package's own exports).
//   codegen/                  imports codegen and the toolkit.
//   gateway (src/gateway/*)   imports the gateway, the toolkit and generated code.
//   cli (src/cli)             may import everything.
//   src/index.ts              the package's entry (`rpcgate`): re-exports of the gateway.
// Folders are compared at the granularity src/toolkit/<x>, src/gateway/<x>, generated/<api>, codegen, src/cli; two
// folders that import each other (directly or around a loop) are a cycle.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const root = join(import.meta.dirname, '..');
const files = execFileSync('git', ['ls-files', 'src', 'codegen', 'generated'], { cwd: root, encoding: 'utf8' })
  .split('\n')
  .filter((f) => /\.(ts|tsx)$/.test(f) && !f.endsWith('.d.ts'));

/** The package's own exports, as the folders they resolve to. */
const SELF: Record<string, string> = {
  rpcgate: 'src',
  'rpcgate/client': 'src/toolkit/client',
  'rpcgate/toolkit': 'src/toolkit',
  'rpcgate/node': 'generated/node',
  'rpcgate/account': 'generated/account',
};

function folderOf(file: string): string {
  const parts = file.split('/');
  if (parts[0] === 'src' && (parts[1] === 'toolkit' || parts[1] === 'gateway')) {
    return parts.length > 3 ? parts.slice(0, 3).join('/') : `${parts[0]}/${parts[1]}`;
  }
  if (parts[0] === 'generated') return parts.length > 2 ? parts.slice(0, 2).join('/') : 'generated';
  if (parts[0] === 'src') return parts.length > 2 ? 'src/' + parts[1] : 'src';
  return parts[0];
}

function layerOf(folder: string): string {
  if (folder.startsWith('src/toolkit')) return 'toolkit';
  if (folder.startsWith('src/gateway')) return 'gateway';
  if (folder.startsWith('generated')) return 'generated';
  if (folder === 'codegen') return 'codegen';
  if (folder === 'src/cli') return 'cli';
  if (folder === 'src') return 'entry';
  return 'other';
}

const ALLOWED: Record<string, readonly string[]> = {
  toolkit: ['toolkit'],
  generated: ['generated', 'toolkit'],
  codegen: ['codegen', 'toolkit'],
  gateway: ['gateway', 'toolkit', 'generated'],
  cli: ['cli', 'gateway', 'toolkit', 'generated', 'codegen'],
  entry: ['gateway', 'toolkit', 'generated'],
  other: [],
};

interface Edge {
  from: string;
  to: string;
  file: string;
  spec: string;
}

function edges(): Edge[] {
  const out: Edge[] = [];
  for (const file of files) {
    const info = ts.preProcessFile(readFileSync(join(root, file), 'utf8'), true, true);
    for (const { fileName: spec } of info.importedFiles) {
      let target: string | undefined;
      if (spec.startsWith('.')) target = normalize(join(dirname(file), spec));
      else if (SELF[spec]) target = SELF[spec] + '/index.ts';
      if (!target || !/^(src|codegen|generated)\//.test(target)) continue;
      out.push({ from: folderOf(file), to: folderOf(target), file, spec });
    }
  }
  return out;
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

describe('architecture', () => {
  const all = edges();

  it('reads a real import graph', () => {
    expect(files.length).toBeGreaterThan(100);
    expect(all.length).toBeGreaterThan(200);
    expect(new Set(all.map((e) => layerOf(e.from)))).toEqual(new Set(['toolkit', 'gateway', 'generated', 'codegen', 'cli', 'entry']));
  });

  it('each layer imports only the layers below it', () => {
    const wrong = all
      .filter((e) => !ALLOWED[layerOf(e.from)].includes(layerOf(e.to)))
      .map((e) => `${e.file} imports ${e.spec} (${layerOf(e.from)} → ${layerOf(e.to)})`);
    expect(wrong).toEqual([]);
  });

  it('has no folder cycles', () => {
    const graph = new Map<string, Set<string>>();
    for (const e of all) {
      if (e.from === e.to) continue;
      if (!graph.has(e.from)) graph.set(e.from, new Set());
      graph.get(e.from)!.add(e.to);
    }
    const found = cycles(graph).map((scc) => {
      const inside = all.filter((e) => e.from !== e.to && scc.includes(e.from) && scc.includes(e.to));
      return `${scc.join(' ↔ ')}: ${inside.map((e) => `${e.file} → ${e.spec}`).join('; ')}`;
    });
    expect(found).toEqual([]);
  });

  it('the rule bites: a gateway import from the toolkit would be refused', () => {
    expect(ALLOWED.toolkit.includes(layerOf(folderOf('src/gateway/access/keys.ts')))).toBe(false);
    expect(cycles(new Map([['a', new Set(['b'])], ['b', new Set(['a'])]]))).toEqual([['a', 'b']]);
  });
});
