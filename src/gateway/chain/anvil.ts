// The embedded node: anvil from npm `@foundry-rs/anvil` (the platform package ships the binary; no download).
// Bound to 127.0.0.1 on a free port, quiet (no per-request logging), stopped with the service.
import { spawn, type ChildProcess } from 'node:child_process';
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
    throw new Error(`anvil binary not found: npm package ${pkg} is not installed (it is an optional dependency of @foundry-rs/anvil)`);
  }
}

export interface AnvilOptions {
  chainId: number;
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
  stop(): Promise<void>;
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
    const args = ['--host', '127.0.0.1', '--port', String(port), '--chain-id', String(opts.chainId), '--block-time', String(opts.blockTime), '--quiet'];
    const child = spawn(bin, args, { stdio: ['ignore', 'ignore', 'pipe'] });
    running.add(child);
    let stderr = '';
    child.stderr!.setEncoding('utf8').on('data', (d: string) => {
      if (stderr.length < 4096) stderr += d;
    });
    let exited = false;
    const exitedP = new Promise<void>((r) => child.once('exit', () => {
      exited = true;
      running.delete(child);
      r();
    }));
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
