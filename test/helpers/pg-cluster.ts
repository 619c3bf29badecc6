// A PostgreSQL server of the test's own, so a fault test can stop it and start it again (never the machine's shared
// one on 5432): initdb into a temp dir owned by the `postgres` OS user (the server refuses to run as root), pg_ctl
// start on a free port (socket dir in the temp dir), `pg_ctl stop -m immediate` (a crash: backends killed, no
// shutdown checkpoint), start again on the same port and data.
import { execFileSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';

/** The newest installed PostgreSQL's bin dir (Debian layout), or undefined. */
export function pgBinDir(): string | undefined {
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return undefined;
  const versions = readdirSync(root)
    .filter((v) => existsSync(join(root, v, 'bin', 'pg_ctl')))
    .sort((a, b) => Number(b) - Number(a));
  return versions.length ? join(root, versions[0], 'bin') : undefined;
}

export interface PgCluster {
  url: string;
  port: number;
  /** pg_ctl stop -m immediate: every backend killed at once, as in a crash. */
  crash(): void;
  start(): void;
  /** SIGSTOP to the server and all its processes: connections stay open but nothing answers (a stalled database). */
  freeze(): void;
  /** SIGCONT: the frozen server carries on. */
  thaw(): void;
  /** Stops (fast) and deletes the data dir. */
  destroy(): void;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

export async function startPgCluster(bin: string): Promise<PgCluster> {
  const dir = mkdtempSync(join(tmpdir(), 'rpcgate-pg-'));
  const data = join(dir, 'data');
  const asRoot = userInfo().uid === 0;
  if (asRoot) {
    const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim());
    const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim());
    chownSync(dir, uid, gid);
  }
  const run = (cmd: string, args: string[]) =>
    execFileSync(
      asRoot ? 'runuser' : join(bin, cmd),
      asRoot ? ['-u', 'postgres', '--', join(bin, cmd), ...args] : args,
      { stdio: 'pipe', timeout: 60_000 },
    );
  run('initdb', ['-D', data, '-A', 'trust', '-U', 'postgres', '--no-sync', '-E', 'UTF8']);
  const port = await freePort();
  const opts = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off`;
  const start = () => void run('pg_ctl', ['-D', data, '-o', opts, '-l', join(dir, 'log'), '-w', '-t', '30', 'start']);
  start();
  const signalAll = (sig: NodeJS.Signals) => {
    const pid = Number(readFileSync(join(data, 'postmaster.pid'), 'utf8').split('\n')[0]);
    const children = execFileSync('ps', ['-o', 'pid=', '--ppid', String(pid)], { encoding: 'utf8' })
      .split('\n')
      .map(Number)
      .filter((n) => n > 0);
    for (const p of sig === 'SIGSTOP' ? [pid, ...children] : [...children, pid]) process.kill(p, sig);
  };
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    port,
    crash: () => void run('pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop']),
    start,
    freeze: () => signalAll('SIGSTOP'),
    thaw: () => signalAll('SIGCONT'),
    destroy() {
      try {
        signalAll('SIGCONT');
      } catch {
        // not running
      }
      try {
        run('pg_ctl', ['-D', data, '-m', 'fast', '-w', 'stop']);
      } catch {
        // already stopped
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
