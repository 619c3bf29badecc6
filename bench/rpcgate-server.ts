// Runs rpcgate in its own process for the benchmark, so it can be pinned with taskset and its CPU time read
// from /proc/<pid>/stat. Usage: node --import tsx bench/rpcgate-server.ts '<ConfigInput as JSON>'
// Prints `RPCGATE_READY <B-style mainnet URL>` once listening; SIGUSR2 prints pool counters; SIGTERM/SIGINT stop it.
import { startService, type RunningService } from '../src/server/index.js';

const input = JSON.parse(process.argv[2] ?? '{}');
let svc: RunningService | undefined;
const shutdown = async () => {
  try {
    await svc?.stop();
  } finally {
    process.exit(0);
  }
};
process.once('SIGTERM', () => void shutdown());
process.once('SIGINT', () => void shutdown());
// The upstream pool's counters (HTTP requests sent upstream, calls, deduped), read by run.ts around each run.
process.on('SIGUSR2', () => {
  process.stdout.write(`RPCGATE_STATS ${JSON.stringify(svc?.pools.get('mainnet')?.stats ?? null)}\n`);
});

// startService merges onto the embedded defaults without the environment: only the benchmark's settings apply.
svc = await startService(input);
process.stdout.write(`RPCGATE_READY ${svc.urls.mainnet.B}\n`);
