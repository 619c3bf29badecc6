// The repository stands alone: what the tests, codegen and bench read is inside it. No tracked file of the project's
// code names a path outside the checkout (a sibling folder or a machine's absolute path), and the vendored
// execution-apis corpus is complete. `.ci/run` also runs the fixture, contract and codegen tests in a clone that has
// nothing beside it.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { EXECUTION_APIS_DIR, readRecordedExchanges } from './helpers/execution-apis.js';

const root = resolve(import.meta.dirname, '..');
// Built from pieces so that this file does not match its own search.
const OUTSIDE = new RegExp(
  [['\\.\\.', 'shared'].join('/'), ['', 'work', ''].join('/'), ['', 'farm', ''].join('/')].join('|'),
);

describe('the repository stands alone', () => {
  it('no file of the project names a path outside the repository', () => {
    const files = execFileSync(
      'git',
      [
        'ls-files',
        '-z',
        '--',
        'src',
        'packages',
        'test',
        'codegen',
        'bench',
        'bin',
        '.ci',
        'package.json',
        'vite.config.ts',
        'vitest.config.ts',
        'tsconfig.json',
      ],
      { cwd: root, encoding: 'utf8' },
    )
      .split('\0')
      .filter((f) => f !== '' && !f.startsWith('test/fixtures/'));
    expect(files.length).toBeGreaterThan(100);
    const found: string[] = [];
    for (const f of files) {
      const lines = readFileSync(join(root, f), 'utf8').split('\n');
      lines.forEach((line, i) => {
        if (OUTSIDE.test(line)) found.push(`${f}:${i + 1}: ${line.trim().slice(0, 120)}`);
      });
    }
    expect(found).toEqual([]);
  });

  it('comments and documents cite only files that exist in the repository', () => {
    const files = execFileSync(
      'git',
      ['ls-files', '-z', '--', 'src', 'packages', 'test', 'codegen', 'bench', 'bin', '.ci', '*.md'],
      { cwd: root, encoding: 'utf8' },
    )
      .split('\0')
      .filter((f) => /\.(ts|tsx|js|mjs|md)$/.test(f) && !f.startsWith('test/fixtures/'));
    // A repository path (src/…, docs/…) or a Markdown file's name.
    const CITE =
      /(?<![\w./@-])((?:\.{1,2}\/)*(?:src|packages|codegen|test|bench|generated|docs|contracts|bin)\/[\w./-]*[\w-]|[\w-]+\.md)\b/g;
    const exists = (f: string, p: string) =>
      [p, p.replace(/\.js$/, '.ts'), p.replace(/\.js$/, '.tsx')].some(
        (q) => existsSync(join(root, q)) || existsSync(join(root, dirname(f), q)),
      );
    const ignored = (p: string) => {
      try {
        execFileSync('git', ['check-ignore', '-q', `${p}/x`], { cwd: root, stdio: 'ignore' });
        return true;
      } catch {
        return false;
      }
    };
    const missing: string[] = [];
    let cited = 0;
    for (const f of files) {
      readFileSync(join(root, f), 'utf8')
        .split('\n')
        .forEach((line, i) => {
          // In code, only the comment part of a line: a string may name a path of generated output or a test's scratch file.
          const text = f.endsWith('.md')
            ? line
            : /^\s*(\*|\/\*)/.test(line)
              ? line
              : line.includes('//')
                ? line.slice(line.indexOf('//'))
                : '';
          for (const m of text.matchAll(CITE)) {
            // a folder a command is told to write (`generate … --out src/gen`) is the user's, not a citation
            if (/--out\s+$/.test(text.slice(0, m.index))) continue;
            cited++;
            if (!exists(f, m[1]) && !ignored(m[1])) missing.push(`${f}:${i + 1}: ${m[1]}`);
          }
        });
    }
    expect(cited).toBeGreaterThan(50);
    expect(missing).toEqual([]);
  });

  it('the vendored execution-apis corpus carries its licence, its source and its fixtures', () => {
    for (const f of ['LICENSE', 'README.md', 'src/schemas', 'src/eth', 'tests'])
      expect(existsSync(join(EXECUTION_APIS_DIR, f)), f).toBe(true);
    expect(readFileSync(join(EXECUTION_APIS_DIR, 'LICENSE'), 'utf8')).toMatch(/CC0|Creative Commons/i);
    expect(readFileSync(join(EXECUTION_APIS_DIR, 'README.md'), 'utf8')).toMatch(/commit `[0-9a-f]{7,}`/);
    expect(readRecordedExchanges().length).toBe(94);
  });
});
