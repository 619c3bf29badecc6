// A real rpcgate process for end-to-end and fault tests: test/helpers/limits-child.ts under tsx (startService with the
// config given as JSON), resolved once it prints `READY <url>`. stop() sends SIGTERM to its PID (SIGKILL after 5 s).
import { spawn, type ChildProcess } from 'node:child_process';
import { join, resolve } from 'node:path';

const ROOT = resolve(import.meta.dirname, '../..');

export interface RpcgateChild {
  url: string;
  proc: ChildProcess;
  /** Everything the process wrote to stderr so far (its pino log lines). */
  stderr(): string;
  stop(): Promise<void>;
}

export async function startRpcgateChild(config: object): Promise<RpcgateChild> {
  const proc = spawn(process.execPath, ['--import', 'tsx', join(ROOT, 'test/helpers/limits-child.ts'), JSON.stringify(config)], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  proc.stdout!.setEncoding('utf8').on('data', (d: string) => (out += d));
  proc.stderr!.setEncoding('utf8').on('data', (d: string) => (err += d));
  const stop = async () => {
    if (proc.exitCode === null && proc.signalCode === null) {
      const exited = new Promise((r) => proc.once('exit', r));
      process.kill(proc.pid!, 'SIGTERM');
      const t = setTimeout(() => proc.exitCode === null && process.kill(proc.pid!, 'SIGKILL'), 5000);
      await exited;
      clearTimeout(t);
    }
  };
  const url = await new Promise<string>((ok, fail) => {
    const onData = () => {
      const m = /READY (\S+)/.exec(out);
      if (m) {
        proc.stdout!.off('data', onData);
        ok(m[1]);
      }
    };
    proc.stdout!.on('data', onData);
    proc.once('exit', (code) => fail(new Error(`rpcgate child exited (${code}): ${err}`)));
  });
  return { url, proc, stderr: () => err, stop };
}
