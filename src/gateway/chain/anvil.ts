// The embedded node: anvil from npm `@foundry-rs/anvil` (the platform package ships the binary; no download).
// Bound to 127.0.0.1 on a free port, quiet (no per-request logging), stopped with the service.
//
// It also dies with this process when no stop and no exit hook can run (SIGKILL, OOM kill; issue 26 item 9): on Linux
// it is started through util-linux `setpriv --pdeathsig KILL`, which asks the kernel to SIGKILL it when its parent
// (this process) dies, then execs anvil (so the PID is anvil's). Without setpriv (other systems, minimal images), a
// small sh wrapper runs it and a watcher reading the wrapper's stdin — a pipe only this process writes to — SIGKILLs
// anvil when that pipe closes, which the kernel does when this process dies, however it dies.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';

const require = createRequire(import.meta.url);

/** Path of the anvil binary in `@foundry-rs/anvil-<platform>-<arch>`. */
export function anvilBinary(): string {
  const arch = process.arch === 'x64' ? 'amd64' : process.arch;
  const exe = process.platform === 'win32' ? 'anvil.exe' : 'anvil';
  const pkg = `@foundry-rs/anvil-${process.platform}-${arch}`;
  try {
    return require.resolve(`${pkg}/bin/${exe}`);
  } catch {
    throw new Error(
      `anvil binary not found: npm package ${pkg} is not installed (it is an optional dependency of @foundry-rs/anvil)`,
    );
  }
}

export interface AnvilOptions {
  chainId: number;
  /** How anvil is tied to this process's life (default: `setpriv` where it runs, else `pipe`; see the top). */
  deathGuard?: DeathGuard;
  /** Seconds between blocks. */
  blockTime: number;
  /** How long to wait for the node to answer (ms). */
  startTimeoutMs?: number;
}

export interface Anvil {
  url: string;
  port: number;
  pid: number;
  chainId: number;
  /** The guard that kills it with this process. */
  deathGuard: DeathGuard;
  stop(): Promise<void>;
}

export type DeathGuard = 'setpriv' | 'pipe';

// sh -c WRAPPER anvil args…: anvil in the background with no stdin; a watcher reading fd 3 (the wrapper's stdin, the
// pipe from rpcgate) kills it at end of file; SIGTERM/SIGINT are passed on, and the wrapper waits for anvil to end.
const WRAPPER = [
  'exec 3<&0',
  '"$0" "$@" </dev/null 3<&- &',
  'a=$!',
  "trap 'kill -TERM $a 2>/dev/null' TERM INT",
  '{ cat <&3 >/dev/null; kill -KILL $a 2>/dev/null; } &',
  'exec 3<&-',
  'while kill -0 $a 2>/dev/null; do wait $a; done',
].join('\n');

let setprivWorks: boolean | undefined;
/** `setpriv --pdeathsig` runs here (Linux with util-linux): checked once. */
function hasSetpriv(): boolean {
  if (setprivWorks === undefined) {
    const r =
      process.platform === 'linux'
        ? spawnSync('setpriv', ['--pdeathsig', 'KILL', '--', 'true'], { stdio: 'ignore', timeout: 5000 })
        : undefined;
    setprivWorks = r !== undefined && r.status === 0;
  }
  return setprivWorks;
}

/** The command that starts anvil under `guard`. */
function launch(guard: DeathGuard, bin: string, args: string[]): ChildProcess {
  if (guard === 'setpriv')
    return spawn('setpriv', ['--pdeathsig', 'KILL', '--', bin, ...args], { stdio: ['ignore', 'ignore', 'pipe'] });
  return spawn('sh', ['-c', WRAPPER, bin, ...args], { stdio: ['pipe', 'ignore', 'pipe'] });
}

// Every anvil this process started, so an unexpected exit still takes them down.
const running = new Set<ChildProcess>();
let exitHook = false;
function installExitHook(): void {
  if (exitHook) return;
  exitHook = true;
  process.on('exit', () => {
    for (const c of running) c.kill('SIGKILL');
  });
}

function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const srv = createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const port = (srv.address() as { port: number }).port;
      srv.close(() => resolvePort(port));
    });
  });
}

async function answers(url: string): Promise<string | undefined> {
  try {
    const res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[]}',
      signal: AbortSignal.timeout(1000),
    });
    const json = (await res.json()) as { result?: string };
    return json.result;
  } catch {
    return undefined;
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Starts anvil and resolves once it answers eth_chainId. Retries on another port if the chosen one was taken. */
export async function startAnvil(opts: AnvilOptions): Promise<Anvil> {
  const bin = anvilBinary();
  installExitHook();
  let lastError = '';
  for (let attempt = 0; attempt < 3; attempt++) {
    const port = await freePort();
    const args = [
      '--host',
      '127.0.0.1',
      '--port',
      String(port),
      '--chain-id',
      String(opts.chainId),
      '--block-time',
      String(opts.blockTime),
      '--quiet',
    ];
    const guard = opts.deathGuard ?? (hasSetpriv() ? 'setpriv' : 'pipe');
    const child = launch(guard, bin, args);
    child.stdin?.on('error', () => undefined); // the pipe is never written to; its end is the signal
    running.add(child);
    let stderr = '';
    child.stderr!.setEncoding('utf8').on('data', (d: string) => {
      if (stderr.length < 4096) stderr += d;
    });
    let exited = false;
    const exitedP = new Promise<void>((r) =>
      child.once('exit', () => {
        exited = true;
        running.delete(child);
        r();
      }),
    );
    child.once('error', (e) => {
      lastError = e.message;
    });
    const url = `http://127.0.0.1:${port}/`;
    const deadline = Date.now() + (opts.startTimeoutMs ?? 20_000);
    while (!exited && Date.now() < deadline) {
      const id = await answers(url);
      if (id !== undefined) {
        if (Number(id) !== opts.chainId) {
          // Something else answered on this port (raced us to it): not our node.
          child.kill('SIGKILL');
          await exitedP;
          lastError = `port ${port} answered with chain id ${id}`;
          break;
        }
        return {
          url,
          port,
          pid: child.pid!,
          chainId: opts.chainId,
          deathGuard: guard,
          stop: async () => {
            if (exited) return;
            child.kill('SIGTERM');
            const t = setTimeout(() => child.kill('SIGKILL'), 3000);
            await exitedP;
            clearTimeout(t);
          },
        };
      }
      await sleep(50);
    }
    if (!exited) {
      child.kill('SIGKILL');
      await exitedP;
      lastError ||= 'anvil did not answer in time';
    } else lastError = stderr.trim() || lastError || `anvil exited with code ${child.exitCode}`;
  }
  throw new Error(`cannot start anvil (chain id ${opts.chainId}): ${lastError}`);
}
