// A real rpcgate process for the fault tests: test/helpers/limits-child.ts (startService with a JSON config, prints
// `READY <url>`, SIGTERM = graceful stop) under tsx, so a test can SIGKILL it by PID and start it again on the same store.
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { createClient } from '../../generated/account/client.js';
import { cookieFetch, signUpAndLogIn } from './account.js';

const ROOT = join(import.meta.dirname, '../..');

export interface RpcgateChild {
  url: string;
  proc: ChildProcess;
  /** stderr so far (logs), for failure messages. */
  log(): string;
  /** SIGKILL by PID; resolves once the process is gone. */
  kill9(): Promise<void>;
  /** SIGTERM (graceful: drains and flushes) by PID; SIGKILL after 10 s. */
  stop(): Promise<void>;
}

/** `env`: added to this process's environment for the child (e.g. OTEL_* variables). */
export async function startRpcgateChild(config: object, env?: Record<string, string>): Promise<RpcgateChild> {
  const proc = spawn(
    process.execPath,
    ['--import', 'tsx', join(ROOT, 'test/helpers/limits-child.ts'), JSON.stringify(config)],
    {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: env === undefined ? undefined : { ...process.env, ...env },
    },
  );
  let out = '';
  let err = '';
  proc.stdout!.setEncoding('utf8').on('data', (d: string) => (out += d));
  proc.stderr!.setEncoding('utf8').on('data', (d: string) => (err += d));
  const exited = new Promise<void>((r) => proc.once('exit', () => r()));
  const alive = () => proc.exitCode === null && proc.signalCode === null;
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
  return {
    url,
    proc,
    log: () => err,
    async kill9() {
      if (alive()) process.kill(proc.pid!, 'SIGKILL');
      await exited;
    },
    async stop() {
      if (!alive()) return;
      process.kill(proc.pid!, 'SIGTERM');
      const t = setTimeout(() => alive() && process.kill(proc.pid!, 'SIGKILL'), 10_000);
      await exited;
      clearTimeout(t);
    },
  };
}

/** Signs a new user up on `url` and creates a network key for `network`: the key, its id and the user's id. */
export async function newNetworkKey(
  url: string,
  network: string,
): Promise<{ key: string; keyId: string; userId: string }> {
  const client = createClient({ url: `${url}/api`, fetch: cookieFetch() });
  const email = `dur-${Date.now()}-${Math.random().toString(36).slice(2)}@example.com`;
  await signUpAndLogIn(client, { email, password: 'correct horse battery staple' });
  const me = await client.request('account_me', []);
  const k = await client.request('keys_create', [{ name: 'durability', network }]);
  return { key: k.key, keyId: k.id, userId: me.id };
}
