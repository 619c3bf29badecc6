// CPU profile of rpcgate's forwarding hot path under wrk load: `tsx bench/profile.ts [c|d|e] [workload]`.
// Starts one anvil (CPU 1) and bench/rpcgate-server.ts under `node --cpu-prof` (CPU 0) as (c) static key,
// (d) an account's network key with in-process limits or (e) the same with Redis limits; loads it with wrk
// (CPU 1) for BENCH_SECONDS (default 10); stops it (the profile is written on exit) and prints self time by
// function and by file. The .cpuprofile stays in bench/out/ (open it in Chrome DevTools → Performance).
// Workload: eth_blockNumber or eth_getBlockByNumber (default).
import { mkdtempSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, dirname, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { installCleanup, start, stop, stopAll, waitForOutput } from './lib/procs.js';
import { startAnvil, waitForRpc } from './lib/targets.js';
import { runWrk, writeScript, blockNumberWorkload, getBlockWorkload } from './lib/wrk.js';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..');
const which = process.argv[2] ?? 'c';
const workloadName = process.argv[3] ?? 'eth_getBlockByNumber';
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const REDIS_URL = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  startTime: number;
  endTime: number;
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** Self time per function, counting only samples inside [from, to] (µs on the monotonic clock V8 and
 *  process.hrtime share on Linux): the measured wrk run, without start-up (module loading) and warm-up. */
function report(p: Profile, from: number, to: number, requests: number): void {
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const self = new Map<number, number>();
  let t = p.startTime;
  for (let i = 0; i < p.samples.length; i++) {
    const d = p.timeDeltas[i] ?? 0;
    t += d;
    if (t < from || t > to) continue;
    self.set(p.samples[i], (self.get(p.samples[i]) ?? 0) + d);
  }
  const fn = new Map<string, number>();
  const file = new Map<string, number>();
  let total = 0;
  let idle = 0;
  for (const [id, us] of self) {
    const cf = byId.get(id)!.callFrame;
    if (cf.functionName === '(idle)') {
      idle += us;
      continue;
    }
    total += us;
    const url = cf.url.startsWith('file://') ? relative(root, fileURLToPath(cf.url)) : cf.url || '(native)';
    const f = `${cf.functionName || '(anonymous)'}  ${url}:${cf.lineNumber + 1}`;
    fn.set(f, (fn.get(f) ?? 0) + us);
    const group = url.startsWith('node_modules/')
      ? url
          .split('/')
          .slice(0, url.includes('/@') ? 3 : 2)
          .join('/')
      : url;
    file.set(group, (file.get(group) ?? 0) + us);
  }
  const top = (m: Map<string, number>, n: number) =>
    [...m]
      .sort((a, b) => b[1] - a[1])
      .slice(0, n)
      .map(([k, v]) => `  ${((v / total) * 100).toFixed(1).padStart(5)}%  ${k}`)
      .join('\n');
  console.log(
    `measured window: busy ${(total / 1e6).toFixed(2)} s, idle ${(idle / 1e6).toFixed(2)} s; ${(total / requests).toFixed(1)} µs sampled per request (profiler overhead included)`,
  );
  console.log(`\nself time by file:\n${top(file, 25)}`);
  console.log(`\nself time by function:\n${top(fn, 45)}`);
}

async function main(): Promise<void> {
  installCleanup();
  const tmp = mkdtempSync(join(tmpdir(), 'rpcgate-prof-'));
  process.on('exit', () => rmSync(tmp, { recursive: true, force: true }));
  const anvil = await startAnvil('1', 200);
  const input = {
    port: 0,
    host: '127.0.0.1',
    dataDir: join(tmp, 'data'),
    keys: ['benchDevKey0123456789'],
    strictResults: false,
    logLevel: 'warn',
    networks: { mainnet: { upstreams: [anvil.url] } },
    upstream: { coalesce: true },
    ...(which !== 'c' ? { limits: { b: { dailyPerUser: 1_000_000_000_000 } } } : {}),
    ...(which === 'e' ? { redisUrl: REDIS_URL, redisPrefix: `rpcgate-prof:${process.pid}` } : {}),
  };
  const profDir = join(tmp, 'prof');
  const args = [
    '--cpu-prof',
    `--cpu-prof-dir=${profDir}`,
    '--import',
    'tsx',
    join(here, 'rpcgate-server.ts'),
    JSON.stringify(input),
  ];
  if (which !== 'c') args.push(JSON.stringify({ networkKey: true }));
  const gate = start('rpcgate', process.execPath, args, {
    cpus: '0',
    cwd: root,
    env: { ...process.env, NODE_ENV: 'production' },
  });
  await waitForOutput(gate, (o) => /RPCGATE_READY \S+\n/.test(o), 60000);
  const url = /RPCGATE_READY (\S+)\n/.exec(gate.output())![1];
  await waitForRpc(url, gate);
  const w = workloadName === 'eth_blockNumber' ? blockNumberWorkload() : getBlockWorkload(200);
  const script = writeScript(tmp, w);
  await runWrk({ url, script, connections: 32, seconds: 2, cpus: '1' });
  const from = Number(process.hrtime.bigint() / 1000n);
  const r = await runWrk({ url, script, connections: 32, seconds: SECONDS, cpus: '1' });
  const to = Number(process.hrtime.bigint() / 1000n);
  console.log(`(${which}) ${w.name}: ${r.rps.toFixed(0)} req/s, ${r.requests} requests, bad ${r.bad}`);
  await stop(gate, 10000);
  await stopAll();
  // tsx runs the script in the node process itself (--import), so there is one profile; take the largest.
  const files = readdirSync(profDir).filter((f) => f.endsWith('.cpuprofile'));
  if (files.length === 0) throw new Error('no profile written');
  const best = files.map((f) => join(profDir, f)).sort((a, b) => readFileSync(b).length - readFileSync(a).length)[0];
  const outDir = join(here, 'out');
  mkdirSync(outDir, { recursive: true });
  const dest = join(outDir, `profile-${which}-${w.name}-${new Date().toISOString().replace(/[:.]/g, '-')}.cpuprofile`);
  renameSync(best, dest);
  report(JSON.parse(readFileSync(dest, 'utf8')) as Profile, from, to, r.requests);
  console.log(`\nwritten ${dest}`);
}

main().catch(async (e) => {
  console.error(`profile failed: ${(e as Error).stack ?? e}`);
  await stopAll();
  process.exit(1);
});
