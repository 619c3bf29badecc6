// The repository stands alone: what the tests, codegen and bench read is inside it. No tracked file of the project's
// code names a path outside the checkout (a sibling folder or a machine's absolute path), and the vendored
// execution-apis corpus is complete. `.ci/run` also runs the fixture, contract and codegen tests in a clone that has
// nothing beside it.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { EXECUTION_APIS_DIR, readRecordedExchanges } from './helpers/execution-apis.js';

const root = resolve(import.meta.dirname, '..');
// Built from pieces so that this file does not match its own search.
const OUTSIDE = new RegExp([['\\.\\.', 'shared'].join('/'), ['', 'work', ''].join('/'), ['', 'farm', ''].join('/')].join('|'));

describe('the repository stands alone', () => {
  it('no file of the project names a path outside the repository', () => {
    const files = execFileSync('git', ['ls-files', '-z', '--', 'src', 'test', 'codegen', 'bench', 'bin', '.ci', 'package.json', 'vite.config.ts', 'vitest.config.ts', 'tsconfig.json'], { cwd: root, encoding: 'utf8' })
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

  it('the vendored execution-apis corpus carries its licence, its source and its fixtures', () => {
    for (const f of ['LICENSE', 'README.md', 'src/schemas', 'src/eth', 'tests']) expect(existsSync(join(EXECUTION_APIS_DIR, f)), f).toBe(true);
    expect(readFileSync(join(EXECUTION_APIS_DIR, 'LICENSE'), 'utf8')).toMatch(/CC0|Creative Commons/i);
    expect(readFileSync(join(EXECUTION_APIS_DIR, 'README.md'), 'utf8')).toMatch(/commit `[0-9a-f]{7,}`/);
    expect(readRecordedExchanges().length).toBe(94);
  });
});
