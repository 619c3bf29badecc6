// Wiring: config → embedded chains (for networks without upstreams) → upstream pools → keys → engine → HTTP.
// `startService` is what `rpcgate start` runs and what tests call (port 0 = a free port).
import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { pino, type Logger } from 'pino';
import { methods } from '../../generated/node/methods.js';
import { validators } from '../../generated/node/validators.js';
import { ConfigKeyStore, generateDevKey, type KeyStore } from '../access/keys.js';
import { startEmbeddedChain, compileToken, type EmbeddedChain, type SeededChain } from '../chain/index.js';
import { loadConfig, type Config, type ConfigInput } from '../config/config.js';
import { createNodeHandlers } from '../node-api/handlers.js';
import { createEngine } from '../rpc/engine.js';
import { createUpstreams, type UpstreamPool } from '../upstream/index.js';
import { createHttpServer } from './http.js';

export interface NetworkInfo {
  name: string;
  /** true when served by an embedded anvil. */
  embedded: boolean;
  /** Upstream node URLs (the embedded anvil's URL when embedded). */
  upstreams: string[];
  /** Chain id of the embedded chain (undefined for external upstreams: ask the node). */
  chainId?: number;
  /** PID of the embedded anvil. */
  pid?: number;
}

export interface RunningService {
  /** Base URL, e.g. http://127.0.0.1:8080 */
  url: string;
  /** Per network, the two node API URLs including the key: A `/{network}/v2/{key}`, B `/{network}/{key}`. */
  urls: Record<string, { A: string; B: string }>;
  docsUrl: string;
  /** The development key (or the first configured key). */
  key: string;
  /** True when `key` was generated at start. */
  devKey: boolean;
  networks: Record<string, NetworkInfo>;
  /** What was seeded into each embedded chain. */
  seeded: Record<string, SeededChain>;
  pools: ReadonlyMap<string, UpstreamPool>;
  keys: KeyStore;
  config: Config;
  logger: Logger;
  stop(): Promise<void>;
}

function readContract(path: string, logger: Logger): string {
  try {
    // Minified once; rpc.discover splices it in as raw JSON.
    return JSON.stringify(JSON.parse(readFileSync(path, 'utf8')));
  } catch (e) {
    throw new Error(`cannot read the node contract ${path}: ${(e as Error).message}`);
  } finally {
    logger.debug({ path }, 'contract loaded');
  }
}

/**
 * Starts the service. `input` is a full Config or a partial one (merged onto the embedded defaults, without env);
 * the CLI passes a config already loaded from defaults, file, env and flags. `networks`, when given, is the
 * complete set of networks (entries are completed from the defaults).
 */
export async function startService(input: Config | ConfigInput = {}): Promise<RunningService> {
  const config = loadConfig({ overrides: input as ConfigInput, env: {} });
  // Networks given here are the complete set (a test with one stand-in network starts no anvil for the other).
  if (input.networks) for (const name of Object.keys(config.networks)) if (!(name in input.networks) || input.networks[name] === null) delete config.networks[name];
  const logger = pino({ level: config.logLevel, base: undefined }, pino.destination({ fd: 2, sync: false }));
  const contractJson = readContract(config.openrpcPath, logger);

  const chains: EmbeddedChain[] = [];
  const pools = new Map<string, UpstreamPool>();
  let server: ReturnType<typeof createHttpServer> | undefined;
  let stopped: Promise<void> | undefined;

  const stop = (): Promise<void> =>
    (stopped ??= (async () => {
      if (server) {
        const s = server;
        await new Promise<void>((r) => {
          s.close(() => r());
          // Idle keep-alive sockets would hold close() open; in-flight requests get a moment to finish.
          s.closeIdleConnections();
          setTimeout(() => s.closeAllConnections(), 2000).unref();
        });
      }
      await Promise.all([...pools.values()].map((p) => p.close()));
      await Promise.all(chains.map((c) => c.stop()));
      logger.flush();
    })());

  try {
    // Embedded chains: one compile shared by all, anvils started and seeded in parallel.
    const embedded = Object.entries(config.networks).filter(([, n]) => n.upstreams.length === 0);
    if (embedded.length) {
      const artifact = compileToken(config.dataDir);
      const started = await Promise.allSettled(
        embedded.map(([name, n]) => startEmbeddedChain({ network: name, chainId: n.chainId, blockTime: n.blockTime, dataDir: config.dataDir, artifact })),
      );
      for (const r of started) if (r.status === 'fulfilled') chains.push(r.value);
      const failed = started.find((r) => r.status === 'rejected');
      if (failed) throw (failed as PromiseRejectedResult).reason;
    }
    const networks: Record<string, NetworkInfo> = {};
    const urlsByNetwork: Record<string, string[]> = {};
    for (const [name, n] of Object.entries(config.networks)) {
      const chain = chains.find((c) => c.network === name);
      const upstreams = chain ? [chain.url] : n.upstreams;
      urlsByNetwork[name] = upstreams;
      networks[name] = chain
        ? { name, embedded: true, upstreams, chainId: chain.chainId, pid: chain.pid }
        : { name, embedded: false, upstreams };
    }
    for (const [name, pool] of createUpstreams(urlsByNetwork, config.upstream, (network, url, healthy, reason) => {
      if (healthy) logger.info({ network, upstream: redact(url) }, 'upstream healthy again');
      else logger.warn({ network, upstream: redact(url), reason }, 'upstream marked down');
    })) pools.set(name, pool);

    const keys = new ConfigKeyStore(config.keys);
    let key: string;
    let devKey = false;
    if (keys.size === 0) {
      key = generateDevKey();
      keys.addDevelopmentKey(key);
      devKey = true;
    } else {
      const first = config.keys[0];
      key = typeof first === 'string' ? first : first.key;
    }

    const engine = createEngine({
      methods,
      validators,
      handlers: createNodeHandlers({ pools, contractJson }),
      options: { maxBatchSize: config.maxBatchSize, strictResults: config.strictResults },
      onError: (err, info) => logger.error({ err, method: info.method, rid: info.ctx.requestId }, 'unexpected error in a call'),
    });

    server = createHttpServer({
      engine,
      keys,
      networks: Object.keys(config.networks),
      hostMap: config.hostMap,
      maxBodyBytes: config.maxBodyBytes,
      docsDir: config.docsDir,
      logger,
      health: () => {
        const detail: Record<string, { healthy: number; total: number; embedded: boolean }> = {};
        let ok = true;
        for (const [name, pool] of pools) {
          const st = pool.status();
          const healthy = st.filter((s) => s.healthy).length;
          if (healthy === 0) ok = false;
          detail[name] = { healthy, total: st.length, embedded: networks[name].embedded };
        }
        return { ok, detail: { networks: detail } };
      },
    });
    const srv = server;
    await new Promise<void>((resolveListen, reject) => {
      srv.once('error', reject);
      srv.listen(config.port, config.host, () => {
        srv.off('error', reject);
        resolveListen();
      });
    });
    srv.on('error', (e) => logger.error({ err: e }, 'server error'));
    const addr = srv.address() as AddressInfo;
    const host = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address;
    const url = `http://${host === '0.0.0.0' ? '127.0.0.1' : host === '[::]' ? '[::1]' : host}:${addr.port}`;
    const urls: RunningService['urls'] = {};
    for (const name of Object.keys(config.networks)) urls[name] = { A: `${url}/${name}/v2/${key}`, B: `${url}/${name}/${key}` };
    const seeded: Record<string, SeededChain> = {};
    for (const c of chains) seeded[c.network] = c.seeded;
    return { url, urls, docsUrl: `${url}/docs/`, key, devKey, networks, seeded, pools, keys, config, logger, stop };
  } catch (e) {
    await stop().catch(() => undefined);
    throw e;
  }
}

/** An upstream URL for logs: no credentials, no path (provider keys often live there). */
function redact(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return '(invalid url)';
  }
}
