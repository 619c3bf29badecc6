// Issue 19 item 8: `generate` and `docs` on a large document (1.25 MB, 240 methods: a Filecoin Lotus `full.json`-size
// document) against the bars of 5 s and 500 MB peak RSS. Each command runs as the user runs it (`rpcgate generate` /
// `rpcgate docs` in its own process, through tsx from the sources), timed by /usr/bin/time (wall, peak RSS, CPU).
//   tsx bench/toolkit-large.ts [document.json]
// Without an argument it writes a synthetic document of that size (bench/lib/large-document.ts: seeded, components
// referring to one another in layers as published documents do). Prints a table
// and the ratio of each figure to its bar. Not a test: figures depend on the machine and its load (it prints the load
// average, and CPU time next to wall time, so a busy machine shows as wall ≫ CPU).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { syntheticLargeDocument } from './lib/large-document.js';

const root = resolve(import.meta.dirname, '..');
const work = mkdtempSync(join(tmpdir(), 'rpcgate-bench-large-'));
const BAR_S = 5;
const BAR_MB = 500;

const doc = process.argv[2] ? resolve(process.argv[2]) : join(work, 'large.json');
if (!process.argv[2]) writeFileSync(doc, JSON.stringify(syntheticLargeDocument(), null, 2));
const size = statSync(doc).size;
const methodCount = (JSON.parse(readFileSync(doc, 'utf8')) as { methods: unknown[] }).methods.length;

const tsx = join(root, 'node_modules/.bin/tsx');
const cli = join(root, 'src/cli/main.ts');
const rows: { what: string; wall: number; cpu: number; mb: number; ok: boolean }[] = [];
for (const [what, args] of [
  ['generate', ['generate', doc, '--out', join(work, 'gen')]],
  ['generate --lang python', ['generate', doc, '--lang', 'python', '--out', join(work, 'gen_py')]],
  ['docs', ['docs', doc, '--out', join(work, 'docs')]],
] as const) {
  const r = spawnSync(
    '/usr/bin/time',
    ['-f', '%e %U %S %M', tsx, '--tsconfig', join(root, 'tsconfig.json'), cli, ...args],
    {
      cwd: root,
      encoding: 'utf8',
      timeout: 300_000,
    },
  );
  const last = r.stderr.trim().split('\n').at(-1) ?? '';
  const [wall, user, sys, kb] = last.split(' ').map(Number);
  rows.push({ what, wall, cpu: user + sys, mb: Math.round(kb / 1024), ok: r.status === 0 });
  if (r.status !== 0) console.error(`${what} failed:\n${r.stderr}`);
}
rmSync(work, { recursive: true, force: true });

console.log(`document: ${process.argv[2] ?? 'synthetic'} — ${(size / 1048576).toFixed(2)} MB, ${methodCount} methods`);
console.log(`load average (1 min) at the end: ${loadavg()[0].toFixed(1)} on ${availableParallelism()} CPUs`);
console.log('command                   | ok | wall s | CPU s | peak RSS MB | wall/5 s | RSS/500 MB');
for (const r of rows)
  console.log(
    `${r.what.padEnd(25)} | ${r.ok ? 'ok' : 'NO'} | ${r.wall.toFixed(2).padStart(6)} | ${r.cpu.toFixed(2).padStart(5)} | ${String(r.mb).padStart(11)} | ${(r.wall / BAR_S).toFixed(2).padStart(8)} | ${(r.mb / BAR_MB).toFixed(2).padStart(10)}`,
  );
