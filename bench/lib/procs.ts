// Process bookkeeping for the benchmark: every child is spawned through here, recorded by PID and
// ended by PID (TERM, then KILL) on normal exit, on errors and on Ctrl-C. Also CPU-time readers.
import { spawn, spawnSync, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import net from 'node:net';

export interface Managed {
  name: string;
  pid: number;
  child: ChildProcess;
  exited: Promise<number | null>;
  /** Recent stdout+stderr (for error messages). */
  output(): string;
}

const live = new Map<number, Managed>();

/** Spawn a process (optionally pinned with `taskset -c <cpus>`, which execs, so the PID is the program's own). */
export function start(name: string, cmd: string, args: string[], opts: SpawnOptions & { cpus?: string } = {}): Managed {
  const { cpus, ...spawnOpts } = opts;
  const [file, argv] = cpus !== undefined ? ['taskset', ['-c', cpus, cmd, ...args]] : [cmd, args];
  const child = spawn(file, argv, { stdio: ['ignore', 'pipe', 'pipe'], ...spawnOpts });
  if (child.pid === undefined) throw new Error(`${name}: could not spawn ${cmd}`);
  let buf = '';
  const keep = (d: Buffer) => {
    buf = (buf + d.toString()).slice(-8000);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const m: Managed = { name, pid: child.pid, child, exited, output: () => buf };
  live.set(child.pid, m);
  void exited.then(() => live.delete(m.pid));
  return m;
}

/** Wait until `pred(output)` holds, or fail if the process exits / the time runs out. */
export async function waitForOutput(m: Managed, pred: (out: string) => boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let dead = false;
  void m.exited.then(() => (dead = true));
  while (!pred(m.output())) {
    if (dead) throw new Error(`${m.name} exited early:\n${m.output()}`);
    if (Date.now() > deadline) throw new Error(`${m.name} not ready after ${timeoutMs} ms:\n${m.output()}`);
    await sleep(50);
  }
}

/** Descendants of a PID (nginx workers, a tsx child, …), found by scanning /proc for parent PIDs. */
export function descendants(root: number): number[] {
  const parent = new Map<number, number>();
  for (const e of readdirSync('/proc')) {
    if (!/^\d+$/.test(e)) continue;
    try {
      const f = statFields(Number(e));
      parent.set(Number(e), Number(f[1]));
    } catch {
      /* gone */
    }
  }
  const out: number[] = [];
  const walk = (p: number) => {
    for (const [c, pp] of parent) if (pp === p) out.push(c), walk(c);
  };
  walk(root);
  return out;
}

// Fields of /proc/<pid>/stat after the `(comm)`: index 0 = state (field 3), 1 = ppid, 11 = utime, 12 = stime.
function statFields(pid: number): string[] {
  const s = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return s.slice(s.lastIndexOf(')') + 2).split(' ');
}

const CLK_TCK = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout.trim()) || 100;

/** utime+stime of a process and all its live descendants, in µs (clock-tick resolution). */
export function cpuMicros(pid: number): number {
  let ticks = 0;
  for (const p of [pid, ...descendants(pid)]) {
    try {
      const f = statFields(p);
      ticks += Number(f[11]) + Number(f[12]);
    } catch {
      /* exited between listing and reading */
    }
  }
  return (ticks * 1e6) / CLK_TCK;
}

/** Busy time (everything but idle and iowait) of one CPU so far, in µs, from /proc/stat. */
export function cpuBusyMicros(cpu: number): number {
  const line = readFileSync('/proc/stat', 'utf8')
    .split('\n')
    .find((l) => l.startsWith(`cpu${cpu} `));
  if (!line) return 0;
  const [user, nice, system, , , irq, softirq, steal] = line.trim().split(/\s+/).slice(1).map(Number);
  return ((user + nice + system + irq + softirq + steal) * 1e6) / CLK_TCK;
}

/** Re-pin a running process, all its threads (`taskset -a`), to the given CPUs. */
export function pin(pid: number, cpus: string): void {
  const r = spawnSync('taskset', ['-a', '-p', '-c', cpus, String(pid)], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`taskset -p ${cpus} ${pid} failed: ${r.stderr}`);
}

export async function stop(m: Managed, graceMs = 3000): Promise<void> {
  if (!live.has(m.pid)) return;
  const kids = descendants(m.pid);
  try {
    process.kill(m.pid, 'SIGTERM');
  } catch {
    /* already gone */
  }
  const done = await Promise.race([m.exited.then(() => true), sleep(graceMs).then(() => false)]);
  if (!done) killHard(m.pid);
  // Children it left behind (e.g. an nginx worker whose master was killed hard).
  for (const k of kids) killHard(k);
  live.delete(m.pid);
}

function killHard(pid: number): void {
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    /* gone */
  }
}

export async function stopAll(): Promise<void> {
  await Promise.all([...live.values()].reverse().map((m) => stop(m)));
}

let stopping = false;
/** True once a signal asked us to stop (errors after that are the stop itself, not failures). */
export function isStopping(): boolean {
  return stopping;
}

let hooked = false;
/** Make sure every process started here ends with us: normal exit, thrown errors, Ctrl-C, SIGTERM. */
export function installCleanup(): void {
  if (hooked) return;
  hooked = true;
  const onSignal = (sig: NodeJS.Signals) => {
    stopping = true;
    process.stderr.write(`\n${sig}: stopping benchmark processes…\n`);
    void stopAll().finally(() => process.exit(sig === 'SIGINT' ? 130 : 143));
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  process.once('SIGHUP', onSignal);
  // Last resort, synchronous: nothing outlives the script.
  process.on('exit', () => {
    for (const m of live.values()) {
      for (const k of descendants(m.pid)) killHard(k);
      killHard(m.pid);
    }
  });
}

export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.unref();
    s.on('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as net.AddressInfo;
      s.close(() => resolve(port));
    });
  });
}

/** Is a command on PATH? */
export function have(cmd: string): boolean {
  return spawnSync('sh', ['-c', `command -v ${cmd}`], { stdio: 'ignore' }).status === 0;
}
