// Issue 14.5 / 13.4: what a SIGKILL of a real rpcgate process loses. The meter flushes every
// durability.usageFlushIntervalMs (default 5 s), the current minute included as a partial row, exactly once per batch.
// Per store (SQLite file, PostgreSQL scratch database): a child process serves N calls, waits past one flush interval,
// is SIGKILLed by PID → the store holds exactly N. Restarted on the same store, M more calls and a graceful stop →
// exactly N + M (nothing counted twice across the restart). Restarted again, under continuous traffic, SIGKILLed
// mid-flight → the store holds every call completed before (kill − documented window) and never more than were made;
// the measured window (kill time − completion time of the oldest call not stored) is printed.
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { usageSeries, type Store } from '../src/gateway/store/index.js';
import { newNetworkKey, startRpcgateChild, type RpcgateChild } from './helpers/rpcgate-child.js';
import { storeTargets } from './helpers/store-targets.js';
import { startStubNode, type StubNode } from './helpers/stub-node.js';

const ROOT = join(import.meta.dirname, '..');
const FLUSH_MS = 5_000; // the documented default (contracts/config.schema.json durability.usageFlushIntervalMs)
const MIN = 60_000;
const targets = await storeTargets('faults-kill');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** `n` eth_blockNumber calls, `concurrency` at a time (stops early when `stopAt()` says so); completion times, in order. */
async function calls(url: string, n: number, concurrency = 8, stopAt?: () => boolean): Promise<number[]> {
  const done: number[] = [];
  let next = 0;
  const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_blockNumber', params: [] });
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < n && !(stopAt?.() ?? false)) {
        next++;
        try {
          const r = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
          const j = (await r.json()) as { result?: string };
          if (r.status === 200 && j.result === '0x10') done.push(Date.now());
        } catch {
          return; // the process was killed under this call: it was not answered, so it is not counted as made
        }
      }
    }),
  );
  return done.sort((a, b) => a - b);
}

for (const target of targets) {
  describe.skipIf(target.skip)(`SIGKILL of a real rpcgate process (${target.dialect})`, () => {
    let node: StubNode;
    let store: Store | undefined;
    let dataDir: string;
    const children: RpcgateChild[] = [];

    afterAll(async () => {
      await Promise.all(children.map((c) => c.kill9()));
      await store?.close();
      await node?.close();
      await target.teardown();
      if (dataDir) rmSync(dataDir, { recursive: true, force: true });
    });

    it('usage survives kill -9 within the documented window; a restart counts nothing twice', {
      timeout: 120_000,
    }, async () => {
      await target.setup();
      node = await startStubNode();
      dataDir = mkdtempSync(join(tmpdir(), 'rpcgate-faults-kill-'));
      const config = {
        port: 0,
        logLevel: 'warn',
        dataDir: target.dialect === 'sqlite' ? target.dataDir : dataDir,
        ...(target.dialect === 'postgres' ? { databaseUrl: target.url } : {}),
        devKey: false,
        networks: { mainnet: { upstreams: [node.url] } },
        // Far above what the runs make: on a fast machine run 3 alone passes the default 25,000 a day, and its
        // refused calls (metered, but not counted as made here) would read as usage stored twice.
        limits: { b: { dailyPerUser: 100_000_000 } },
      };
      const start = async () => {
        const c = await startRpcgateChild(config);
        children.push(c);
        return c;
      };
      const t0 = Date.now();
      store = await target.open();
      const stored = async (userId: string, keyId: string) =>
        (
          await usageSeries(store!.db, {
            userId,
            keyId,
            from: t0 - MIN,
            to: Date.now() + 2 * MIN,
            granularity: 'minute',
            fill: false,
          })
        ).summary.total;

      // Run 1: N calls, a wait past one flush interval, kill -9 → all N stored.
      const first = await start();
      const { key, keyId, userId } = await newNetworkKey(first.url, 'mainnet');
      const url1 = `${first.url}/mainnet/${key}`;
      const N = 500;
      expect((await calls(url1, N)).length).toBe(N);
      await sleep(FLUSH_MS + 2_500);
      await first.kill9();
      expect(first.proc.signalCode).toBe('SIGKILL');
      expect(await stored(userId, keyId)).toBe(N);

      // Run 2: restarted on the same store; M more calls, graceful stop → exactly N + M.
      const second = await start();
      const M = 300;
      expect((await calls(`${second.url}/mainnet/${key}`, M)).length).toBe(M);
      await second.stop();
      expect(second.proc.exitCode).toBe(0);
      expect(await stored(userId, keyId)).toBe(N + M);

      // Run 3: continuous traffic, kill -9 mid-flight, late in the third flush interval (the flush timer starts with the
      // process, just before the traffic): close to the worst case, which is one interval plus a flush's duration
      // (issue 26: the audit measured 3.85 s lost where the README claimed 1.6–1.8 s, the figure of an early kill).
      const third = await start();
      const url3 = `${third.url}/mainnet/${key}`;
      let killedAt = 0;
      const traffic = calls(url3, 1_000_000, 4, () => killedAt !== 0);
      await sleep(2 * FLUSH_MS + 4_000);
      killedAt = Date.now();
      await third.kill9();
      const done = await traffic;
      const made = done.length;
      const after = (await stored(userId, keyId)) - N - M;
      // Never more than was made; everything completed before (kill − interval − slack) is there.
      const SLACK_MS = 3_000; // a flush's own duration and timer lateness on a loaded 2-core machine
      const mustHave = done.filter((t) => t < killedAt - FLUSH_MS - SLACK_MS).length;
      expect(after).toBeLessThanOrEqual(made);
      expect(after).toBeGreaterThanOrEqual(mustHave);
      // Calls complete in time order; the oldest one not stored bounds the loss window.
      const window = after >= made ? 0 : killedAt - done[after];
      console.log(
        `[faults-kill ${target.dialect}] run 1: ${N}/${N} stored after kill -9; run 2: +${M} exact after restart; ` +
          `run 3: ${after}/${made} stored, ${made - after} lost, measured loss window ${window} ms (flush interval ${FLUSH_MS} ms)`,
      );
      expect(window).toBeLessThanOrEqual(FLUSH_MS + SLACK_MS);
    });
  });
}

// Issue 26 item 9 (finding 16): the embedded anvil must not outlive an rpcgate that is SIGKILLed (no exit hook runs).
/** Linux process table: pid → [parent pid, command name, state]. */
function processes(): Map<number, [number, string, string]> {
  const out = new Map<number, [number, string, string]>();
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = readFileSync(`/proc/${d}/stat`, 'utf8');
      const close = stat.lastIndexOf(')');
      const [state, ppid] = stat.slice(close + 2).split(' ');
      out.set(Number(d), [Number(ppid), stat.slice(stat.indexOf('(') + 1, close), state]);
    } catch {
      // gone meanwhile
    }
  }
  return out;
}
/** The anvil processes below `root` (children, grandchildren…). */
function anvilsUnder(root: number): number[] {
  const ps = processes();
  const below = new Set([root]);
  for (let grew = true; grew; ) {
    grew = false;
    for (const [pid, [ppid]] of ps) if (below.has(ppid) && !below.has(pid)) below.add(pid), (grew = true);
  }
  return [...below].filter((p) => p !== root && ps.get(p)?.[1] === 'anvil');
}
/** Still running (a zombie counts as gone: it holds no port and no memory). */
const running = (pid: number) => {
  const p = processes().get(pid);
  return p !== undefined && p[2] !== 'Z';
};

async function goneWithin(pids: number[], ms: number): Promise<number> {
  const t0 = Date.now();
  while (pids.some(running) && Date.now() - t0 < ms) await sleep(50);
  const left = pids.filter(running);
  for (const p of left) process.kill(p, 'SIGKILL'); // the test's own anvils: never leave them behind
  return left.length > 0 ? Infinity : Date.now() - t0;
}

describe.skipIf(process.platform !== 'linux' && !process.env.CI)(
  'SIGKILL of rpcgate with embedded chains: no orphaned anvil',
  () => {
    it('rpcgate (embedded mainnet and testnet) SIGKILLed: its anvil processes are gone within a few seconds', {
      timeout: 120_000,
    }, async () => {
      const dataDir = mkdtempSync(join(tmpdir(), 'rpcgate-faults-kill-anvil-'));
      try {
        const child = await startRpcgateChild({
          port: 0,
          logLevel: 'warn',
          dataDir,
          devKey: true,
          networks: { mainnet: { blockTime: 1 }, testnet: { blockTime: 1 } },
        });
        const anvils = anvilsUnder(child.proc.pid!);
        expect(anvils).toHaveLength(2);
        await child.kill9();
        const ms = await goneWithin(anvils, 5_000);
        console.log(
          `[faults-kill] rpcgate SIGKILLed: its ${anvils.length} anvil processes gone after ${ms} ms (before the fix: orphaned, still running)`,
        );
        expect(ms).toBeLessThan(5_000);
      } finally {
        rmSync(dataDir, { recursive: true, force: true });
      }
    });

    it('without setpriv (the sh wrapper watching its stdin pipe): the same', { timeout: 60_000 }, async () => {
      const script = `const { startAnvil } = await import(${JSON.stringify(join(ROOT, 'src/gateway/chain/anvil.ts'))});
const a = await startAnvil({ chainId: 31999, blockTime: 1, deathGuard: 'pipe' });
process.stdout.write('READY ' + a.deathGuard + '\\n');
setInterval(() => undefined, 1000);`;
      const proc = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
        cwd: ROOT,
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      let out = '';
      const exited = new Promise((r) => proc.once('exit', r));
      let anvils: number[] = [];
      let ms = 0;
      try {
        await new Promise<void>((ok, fail) => {
          proc.stdout!.on('data', (d: Buffer) => (out += d.toString()).includes('READY') && ok());
          proc.once('exit', (c) => fail(new Error(`child exited ${c}: ${out}`)));
        });
        anvils = anvilsUnder(proc.pid!);
        expect(out).toContain('READY pipe');
        expect(anvils).toHaveLength(1);
      } finally {
        if (proc.exitCode === null && proc.signalCode === null) process.kill(proc.pid!, 'SIGKILL');
        await exited;
        ms = await goneWithin(anvils, 5_000); // also cleans up after a failed expectation
      }
      console.log(`[faults-kill] sh-wrapper guard: anvil gone ${ms} ms after its parent was SIGKILLed`);
      expect(ms).toBeLessThan(5_000);
    });
  },
);
