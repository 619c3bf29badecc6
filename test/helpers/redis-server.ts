// A redis-server of the test's own on a free port (never the machine's shared 6379), for fault tests: started, stalled
// (SIGSTOP), resumed, killed and restarted by its PID. No persistence (`--save '' --appendonly no`): a restart starts empty.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { Redis } from 'ioredis';

export function haveRedisServer(): boolean {
  return spawnSync('redis-server', ['--version'], { stdio: 'ignore' }).status === 0;
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

export interface OwnRedis {
  port: number;
  url: string;
  pid(): number | undefined;
  /** Starts (again) on the same port; resolves once it answers PING. */
  start(): Promise<void>;
  /** SIGKILL by PID (a crash: connections reset at once); resolves when the process is gone. */
  kill(): Promise<void>;
  /** SIGSTOP / SIGCONT: alive but silent (commands time out instead of failing). */
  stall(): void;
  resume(): void;
}

export async function ownRedis(): Promise<OwnRedis> {
  const port = await freePort();
  const url = `redis://127.0.0.1:${port}`;
  let proc: ChildProcess | undefined;
  const start = async () => {
    const p = spawn(
      'redis-server',
      ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
      { stdio: 'ignore' },
    );
    proc = p;
    const deadline = Date.now() + 10_000;
    for (;;) {
      if (p.exitCode !== null) throw new Error(`redis-server on ${port} exited (${p.exitCode})`);
      const r = new Redis(url, {
        lazyConnect: true,
        maxRetriesPerRequest: 0,
        connectTimeout: 500,
        retryStrategy: () => null,
      });
      r.on('error', () => {});
      try {
        await r.connect();
        if ((await r.ping()) === 'PONG') return;
      } catch {
        if (Date.now() > deadline) throw new Error(`redis-server on ${port} did not answer`);
        await new Promise((res) => setTimeout(res, 50));
      } finally {
        r.disconnect();
      }
    }
  };
  const kill = async () => {
    const p = proc;
    if (p === undefined || p.exitCode !== null || p.signalCode !== null) return;
    const gone = new Promise((r) => p.once('exit', r));
    process.kill(p.pid!, 'SIGCONT');
    process.kill(p.pid!, 'SIGKILL');
    await gone;
  };
  await start();
  return {
    port,
    url,
    pid: () => proc?.pid,
    start,
    kill,
    stall: () => process.kill(proc!.pid!, 'SIGSTOP'),
    resume: () => process.kill(proc!.pid!, 'SIGCONT'),
  };
}
