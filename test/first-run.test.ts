// The first run as a new user does it (issue 21 item 3): `npm start` and `npx rpcgate start` in this checkout print the
// dashboard's URL, serve it, and a SIGTERM or SIGINT to the npm process stops rpcgate and both of its anvils — no
// process of the tree outlives it (npm forwards the signal only to its shell: the service must notice).
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '..');
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** Every live descendant of `pid` (from /proc), with its command line. */
function descendants(pid: number): { pid: number; cmd: string }[] {
  const children = new Map<number, number[]>();
  for (const e of readdirSync('/proc')) {
    if (!/^\d+$/.test(e)) continue;
    try {
      const stat = readFileSync(`/proc/${e}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      const list = children.get(ppid) ?? [];
      list.push(Number(e));
      children.set(ppid, list);
    } catch {
      /* gone meanwhile */
    }
  }
  const out: { pid: number; cmd: string }[] = [];
  const walk = (p: number) => {
    for (const c of children.get(p) ?? []) {
      let cmd = '';
      try {
        cmd = readFileSync(`/proc/${c}/cmdline`, 'utf8').replace(/\0/g, ' ').trim();
      } catch {
        continue;
      }
      out.push({ pid: c, cmd });
      walk(c);
    }
  };
  walk(pid);
  return out;
}

const alive = (pid: number) => {
  try {
    // A zombie still answers kill(0): read its state.
    return !/^\S+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
};

/** Starts `args`, checks the banner and the dashboard, then sends `signal` to it (or to its process group, as a
 *  terminal's Ctrl-C does) and checks that every process of its tree is gone. */
async function firstRun(args: string[], signal: NodeJS.Signals, to: 'process' | 'group' = 'process'): Promise<string> {
  const dataDir = mkdtempSync(join(tmpdir(), 'rpcgate-first-run-'));
  dirs.push(dataDir);
  const proc = spawn(args[0], args.slice(1), {
    cwd: ROOT,
    env: { ...process.env, RPCGATE_PORT: '0', RPCGATE_DATA_DIR: dataDir, RPCGATE_LOG_LEVEL: 'info' },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: to === 'group',
  });
  let out = '';
  proc.stdout!.setEncoding('utf8').on('data', (d: string) => (out += d));
  proc.stderr!.setEncoding('utf8').on('data', (d: string) => (out += d));
  const exited = new Promise<number | null>((r) => proc.once('exit', (code) => r(code)));
  try {
    const dashboard = await new Promise<string>((ok, fail) => {
      const t = setInterval(() => {
        const m = /dashboard: (http:\/\/\S+)/.exec(out);
        if (m) {
          clearInterval(t);
          ok(m[1]);
        } else if (proc.exitCode !== null) {
          clearInterval(t);
          fail(new Error(`exited before the banner: ${out}`));
        }
      }, 100);
    });
    const page = await fetch(dashboard, { headers: { accept: 'text/html' } });
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/text\/html/);
    // curl / (no HTML wanted) says where the dashboard is.
    expect(await (await fetch(dashboard)).text()).toMatch(/Dashboard: open \/ in a browser/);
    const tree = descendants(proc.pid!);
    expect(
      tree.filter((p) => /anvil/.test(p.cmd)),
      out,
    ).toHaveLength(2);
    expect(
      tree.some((p) => /src\/cli\/main\.ts|bin\/rpcgate/.test(p.cmd)),
      JSON.stringify(tree),
    ).toBe(true);
    process.kill(to === 'group' ? -proc.pid! : proc.pid!, signal);
    await exited;
    const deadline = Date.now() + 15_000;
    while (tree.some((p) => alive(p.pid)) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
    expect(
      tree.filter((p) => alive(p.pid)).map((p) => p.cmd),
      out,
    ).toEqual([]);
    // The service stopped itself (graceful: usage flushed), not only its parent.
    expect(out).toMatch(/stopping/);
    return out;
  } finally {
    for (const p of descendants(proc.pid!)) process.kill(p.pid, 'SIGKILL');
    if (proc.exitCode === null) proc.kill('SIGKILL');
  }
}

describe('first run in this checkout', () => {
  it('npm start: banner with the dashboard URL, logs for people; SIGTERM to npm stops rpcgate and its anvils', async () => {
    const out = await firstRun(['npm', 'start'], 'SIGTERM');
    // pino-pretty's lines (time, level name, message), not JSON.
    expect(out).toMatch(/^\[\d\d:\d\d:\d\d\.\d{3}\] INFO: usage flushed/m);
    expect(out).not.toMatch(/^\{"level":/m);
  }, 120_000);
  it('npm start: SIGINT to npm stops everything', () => firstRun(['npm', 'start'], 'SIGINT'), 120_000);
  it('npx rpcgate start runs from the sources without a build, JSON logs when not on a terminal; SIGTERM to npx stops everything', async () => {
    const out = await firstRun(['npx', 'rpcgate', 'start', '--dev-key'], 'SIGTERM');
    expect(out).toMatch(/^\{"level":30,.*"msg":"usage flushed"/m);
  }, 120_000);
  // A SIGINT to the npx process alone is held by npm's shell until its child exits (POSIX shells wait and exit
  // cooperatively), so it never reaches rpcgate; Ctrl-C signals the whole foreground process group, as here.
  it(
    'npx rpcgate start: Ctrl-C (SIGINT to the process group) stops everything',
    () => firstRun(['npx', 'rpcgate', 'start', '--dev-key'], 'SIGINT', 'group'),
    120_000,
  );
});
