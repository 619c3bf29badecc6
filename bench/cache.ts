// Response cache benchmark (`npx tsx bench/cache.ts`): cache hits side by side, one run, ratios printed.
// One anvil with 20 transactions in blocks far below its finalized block (anvil: head - 64); wrk -t1 load of three
// workloads that a cache answers — eth_getBlockByNumber rotating over finalized blocks 0x1..0x64, eth_getTransactionReceipt
// rotating over the 20 transactions, eth_chainId — against (a) anvil directly, (b) nginx proxy_pass to anvil (upstream
// keep-alive), (c) rpcgate with its response cache (default config; a static key: access, metering on) and (c0) rpcgate
// with the cache off, for reference.
// Goals (issue 13): (c) ≥ 1.5 × (b) and ≥ 0.6 × (a).
// Core budget (2 cores): the system under test alone on CPU 0 (anvil in (a), nginx in (b), rpcgate in (c)/(c0)); wrk and
// — whenever it is the upstream — anvil on CPU 1. Env: BENCH_SECONDS (default 5), BENCH_WARMUP (2), BENCH_CONNECTIONS (32),
// BENCH_ONLY (e.g. "a,c"), BENCH_ROUNDS (3: the systems take turns, medians compared).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir, cpus as osCpus } from 'node:os';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  cpuMicros,
  have,
  installCleanup,
  pin,
  start,
  stop,
  stopAll,
  waitForOutput,
  type Managed,
} from './lib/procs.js';
import { anvilSystem, nginxSystem, rpc, startAnvil, waitForRpc, type System } from './lib/targets.js';
import { getBlockWorkload, runWrk, writeScript, type Workload } from './lib/wrk.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const num = (v: string | undefined, d: number) => (v && Number.isFinite(Number(v)) ? Number(v) : d);
const SECONDS = num(process.env.BENCH_SECONDS, 5);
const WARMUP = num(process.env.BENCH_WARMUP, 2);
const CONNECTIONS = num(process.env.BENCH_CONNECTIONS, 32);
const ONLY = process.env.BENCH_ONLY?.split(',').map((s) => s.trim());
/** The systems take turns this many times; the median req/s of each counts (a shared machine's load drifts). */
const ROUNDS = Math.max(1, Math.floor(num(process.env.BENCH_ROUNDS, 3)));
const SUT_CPU = '0';
const LOAD_CPU = '1';
const DEV_KEY = 'benchCacheKey0123456789';
const TXS = 20;

function receiptWorkload(hashes: string[]): Workload {
  const table = hashes.map((h) => `"${h}"`).join(',');
  return {
    name: 'eth_getTransactionReceipt',
    bodyLua: `string.format('{"jsonrpc":"2.0","id":%d,"method":"eth_getTransactionReceipt","params":["%s"]}', i, ({${table}})[1 + (i % ${hashes.length})])`,
    note: `receipt of one of ${hashes.length} transactions in finalized blocks, rotating`,
  };
}

const chainIdWorkload: Workload = {
  name: 'eth_chainId',
  bodyLua: `string.format('{"jsonrpc":"2.0","id":%d,"method":"eth_chainId","params":[]}', i)`,
  note: 'identical call every time',
};

async function main(): Promise<void> {
  for (const cmd of ['nginx', 'wrk', 'taskset']) {
    if (!have(cmd)) {
      console.error(`bench/cache: missing ${cmd} (apt-get install -y nginx wrk; taskset is in util-linux)`);
      process.exit(2);
    }
  }
  if (osCpus().length < 2) {
    console.error('bench/cache: needs 2 CPUs');
    process.exit(2);
  }
  installCleanup();
  pin(process.pid, LOAD_CPU);
  const tmp = mkdtempSync(join(tmpdir(), 'rpcgate-bench-cache-'));
  process.on('exit', () => rmSync(tmp, { recursive: true, force: true }));

  const anvil = await startAnvil(LOAD_CPU, 1);
  const accounts = (await rpc(anvil.url, 'eth_accounts')) as string[];
  const hashes: string[] = [];
  for (let i = 0; i < TXS; i++)
    hashes.push(
      (await rpc(anvil.url, 'eth_sendTransaction', [{ from: accounts[0], to: accounts[1], value: '0x1' }])) as string,
    );
  await rpc(anvil.url, 'anvil_mine', ['0xc8']);
  const finalized = Number(
    ((await rpc(anvil.url, 'eth_getBlockByNumber', ['finalized', false])) as { number: string }).number,
  );
  const receipt = (await rpc(anvil.url, 'eth_getTransactionReceipt', [hashes[TXS - 1]])) as { blockNumber: string };
  if (Number(receipt.blockNumber) > finalized || 100 > finalized)
    throw new Error('bench/cache: the workload blocks are not finalized');
  console.log(
    `rpcgate cache bench: wrk -t1 -c${CONNECTIONS} -d${SECONDS}s (after ${WARMUP}s warm-up); anvil ${anvil.url}, finalized block ${finalized}`,
  );
  console.log(
    `  cores: system under test alone on CPU ${SUT_CPU}; wrk (and anvil when it is the upstream) on CPU ${LOAD_CPU}`,
  );

  const workloads = [getBlockWorkload(100), receiptWorkload(hashes), chainIdWorkload];
  const scripts = new Map(workloads.map((w) => [w.name, writeScript(tmp, w)]));

  let gate: Managed | undefined;
  const rpcgate = (id: string, label: string, cache: boolean): System => ({
    id,
    label,
    async up() {
      const input = {
        port: 0,
        host: '127.0.0.1',
        dataDir: join(tmp, `data-${id}`),
        keys: [DEV_KEY],
        logLevel: 'warn',
        networks: { mainnet: { upstreams: [anvil.url] } },
        cache: { enabled: cache },
      };
      gate = start(
        label,
        process.execPath,
        ['--import', 'tsx', join(root, 'bench', 'rpcgate-server.ts'), JSON.stringify(input)],
        {
          cpus: SUT_CPU,
          cwd: root,
          env: { ...process.env, NODE_ENV: 'production' },
        },
      );
      await waitForOutput(gate, (o) => /RPCGATE_READY \S+\n/.test(o), 60000);
      const url = /RPCGATE_READY (\S+)\n/.exec(gate.output())![1];
      await waitForRpc(url, gate, 10000);
      return { url, proc: gate };
    },
    async down() {
      if (gate) await stop(gate);
      gate = undefined;
    },
  });
  const systems: System[] = [
    anvilSystem(anvil, SUT_CPU, LOAD_CPU, 'anvil directly'),
    nginxSystem(tmp, anvil.port, SUT_CPU, 'nginx proxy_pass'),
    rpcgate('c', 'rpcgate, cache on', true),
    rpcgate('c0', 'rpcgate, cache off', false),
  ].filter((s) => !ONLY || ONLY.includes(s.id));

  const runs = new Map<string, number[]>();
  for (let round = 1; round <= ROUNDS; round++) {
    for (const sys of systems) {
      const target = await sys.up();
      console.log(`\n(${sys.id}) ${sys.label} at ${target.url}${ROUNDS > 1 ? ` — round ${round}/${ROUNDS}` : ''}`);
      try {
        for (const w of workloads) {
          const script = scripts.get(w.name)!;
          await runWrk({ url: target.url, script, connections: CONNECTIONS, seconds: WARMUP, cpus: LOAD_CPU });
          const c0 = cpuMicros(target.proc.pid);
          const r = await runWrk({
            url: target.url,
            script,
            connections: CONNECTIONS,
            seconds: SECONDS,
            cpus: LOAD_CPU,
          });
          const cpu = (cpuMicros(target.proc.pid) - c0) / Math.max(1, r.requests);
          const key = `${sys.id}/${w.name}`;
          runs.set(key, [...(runs.get(key) ?? []), r.rps]);
          console.log(
            `  ${w.name.padEnd(26)} ${r.rps.toFixed(0).padStart(7)} req/s  p50 ${(r.p50us / 1000).toFixed(2)} ms  p99 ${(r.p99us / 1000).toFixed(2)} ms  ${cpu.toFixed(0)} µs CPU/req${r.bad + r.socketErrors > 0 ? `  BAD ${r.bad} socket ${r.socketErrors}` : ''}`,
          );
        }
      } finally {
        await sys.down();
      }
    }
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const rps = new Map([...runs].map(([k, xs]) => [k, median(xs)]));

  console.log(`\nratios (median req/s of ${ROUNDS} round${ROUNDS > 1 ? 's' : ''}):`);
  for (const w of workloads) {
    const c = rps.get(`c/${w.name}`);
    const parts: string[] = [];
    const ratio = (other: string, goal: number) => {
      const o = rps.get(`${other}/${w.name}`);
      if (c !== undefined && o !== undefined)
        parts.push(
          `rpcgate/${other === 'a' ? 'anvil' : other === 'b' ? 'nginx' : 'no-cache'} ${(c / o).toFixed(2)}×${goal > 0 ? ` (goal ≥ ${goal}: ${c / o >= goal ? 'met' : 'NOT met'})` : ''}`,
        );
    };
    ratio('b', 1.5);
    ratio('a', 0.6);
    ratio('c0', 0);
    console.log(`  ${w.name.padEnd(26)} ${parts.join('   ')}`);
  }
  await stopAll();
}

main().catch(async (e: unknown) => {
  console.error(e);
  await stopAll();
  process.exit(1);
});
