// `rpcgate start`: serve the node API (embedded anvils for networks without upstreams), print the key and URLs,
// stop everything on SIGINT/SIGTERM and exit 0. The stop is graceful (src/gateway/server/service.ts): no new connections,
// in-flight requests answered (bounded drain), usage flushed to the store, then the store closed.
import type { Command } from 'commander';
import { ConfigError, loadConfig, parseHostMap, type ConfigInput } from '../../gateway/config/config.js';
import { startService, type RunningService } from '../../gateway/server/service.js';
import { stopWhenNpmParentExits } from '@rpcgate/toolkit/cli';

export { startService } from '../../gateway/server/service.js';

interface StartFlags {
  port?: string;
  host?: string;
  config?: string;
  dataDir?: string;
  hostMap?: string;
  strictResults?: boolean;
  coalesce?: boolean;
  devKey?: boolean;
  set: string[];
}

export function register(program: Command): void {
  program
    .command('start')
    .description('start the service (embedded anvil per network unless upstreams are configured)')
    .option('-p, --port <port>', 'listen port (0 = any free port; default 8080, env RPCGATE_PORT)')
    .option('--host <host>', 'listen address (default 127.0.0.1, env RPCGATE_HOST)')
    .option('-c, --config <file>', 'JSON config file (env RPCGATE_CONFIG)')
    .option('--data-dir <dir>', 'data directory (default .data, env RPCGATE_DATA_DIR)')
    .option('--host-map <list>', 'host=network,… : serve a network on a host name without the network path segment')
    .option('--strict-results', 'validate node results against the contract')
    .option('--dev-key', 'dev mode: generate a development key at start and print it (valid everywhere, no limits)')
    .option('--no-coalesce', 'send every call to the node on its own (no batching/dedupe)')
    .option(
      '--set <path=value>',
      'set any config field by its path in contracts/config.schema.json, e.g. --set upstream.maxBatch=50 --set networks.holesky.chainId=17000 (repeatable; highest priority)',
      (v: string, prev: string[]) => [...prev, v],
      [] as string[],
    )
    .action(async (flags: StartFlags) => {
      await runStart(flags);
    });
}

async function runStart(flags: StartFlags): Promise<void> {
  let service: RunningService;
  try {
    const overrides: ConfigInput = {};
    if (flags.port !== undefined) {
      if (!/^\d+$/.test(flags.port)) throw new ConfigError(`--port must be a number, got "${flags.port}"`);
      overrides.port = Number(flags.port);
    }
    if (flags.host !== undefined) overrides.host = flags.host;
    if (flags.dataDir !== undefined) overrides.dataDir = flags.dataDir;
    if (flags.hostMap !== undefined) overrides.hostMap = parseHostMap(flags.hostMap);
    if (flags.strictResults) overrides.strictResults = true;
    if (flags.devKey) overrides.devKey = true;
    if (flags.coalesce === false) overrides.upstream = { coalesce: false };
    const config = loadConfig({ configFile: flags.config, overrides, overridesLabel: 'flags', assignments: flags.set });
    const embedded = Object.entries(config.networks)
      .filter(([, n]) => n.upstreams.length === 0)
      .map(([n]) => n);
    if (embedded.length) console.log(`starting embedded anvil for ${embedded.join(', ')} …`);
    service = await startService(config);
  } catch (e) {
    console.error(`rpcgate: ${e instanceof ConfigError ? e.message : ((e as Error).stack ?? String(e))}`);
    process.exit(1);
  }

  const lines: string[] = ['', `rpcgate listening on ${service.url}`, ''];
  for (const [name, n] of Object.entries(service.networks)) {
    lines.push(
      n.embedded
        ? `${name}: embedded anvil (chain id ${n.chainId}, pid ${n.pid})`
        : `${name}: ${n.upstreams.length} upstream node(s)`,
    );
  }
  // Without a dev or static key, keys come from accounts: show the URL shapes and how to get one.
  const key = service.key || '<API_KEY>';
  if (service.key)
    lines.push('', `${service.devKey ? 'development key (generated at start)' : 'API key'}: ${service.key}`, '');
  else
    lines.push(
      '',
      `API keys come from accounts: rpcgate signup --server ${service.url} …, then rpcgate keys create / apps create`,
      '',
    );
  for (const [name, u] of Object.entries(service.urls)) {
    lines.push(
      `  ${name.padEnd(8)} A  ${u.A.replace(/[^/]*$/, key)}`,
      `  ${name.padEnd(8)} B  ${u.B.replace(/[^/]*$/, key)}`,
    );
  }
  for (const [host, net] of Object.entries(service.config.hostMap)) {
    lines.push(`  ${host} → ${net}: http://${host}:${new URL(service.url).port}/v2/${key}`);
  }
  const m = service.config.metrics;
  const metricsLine = !m.enabled
    ? 'metrics: off'
    : `metrics: ${service.url}/metrics (${m.token ? 'Bearer token' : 'loopback clients only'})`;
  lines.push(
    '',
    `dashboard: ${service.url}/  (sign up, then create an app or an API key)`,
    `docs: ${service.docsUrl}`,
    metricsLine,
    'Ctrl-C stops the service and the nodes it started (usage is flushed first).',
    '',
  );
  console.log(lines.join('\n'));

  let stopping = false;
  const shutdown = (signal: string) => {
    if (stopping) return;
    stopping = true;
    console.log(`${signal}: stopping …`);
    // A second signal or a stuck close must not keep the process alive.
    setTimeout(() => process.exit(1), 10_000).unref();
    service.stop().then(
      () => process.exit(0),
      (e: unknown) => {
        console.error(`rpcgate: error while stopping: ${(e as Error).message}`);
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', () => shutdown('SIGINT'));
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  stopWhenNpmParentExits(shutdown);
}
