// The embedded chain of one network: anvil + seeded activity. Used when a network has no upstream configured.
import { configSchema } from '../../../generated/config/types.js';
import { startActivity, type Activity, type ActivityStats } from './activity.js';
import { startAnvil, type Anvil } from './anvil.js';
import { compileToken, type Artifact } from './compile.js';
import { seedChain, type SeededChain } from './seed.js';

export { anvilBinary, startAnvil, type Anvil, type AnvilOptions } from './anvil.js';
export { compileToken, TOKEN_SOURCE_PATH, type Artifact } from './compile.js';
export { seedChain, rpc, type SeededChain } from './seed.js';
export { startActivity, type Activity, type ActivityOptions, type ActivityStats } from './activity.js';

/** The schema's default of `networks.<n>.activityIntervalMs` (one source of truth for the default). */
export const DEFAULT_ACTIVITY_INTERVAL_MS: number =
  configSchema.definitions.NetworkConfig.properties.activityIntervalMs.default;

export interface EmbeddedChain {
  network: string;
  url: string;
  pid: number;
  chainId: number;
  seeded: SeededChain;
  /** The ongoing activity's counters; undefined when it is off. */
  activity?: () => ActivityStats;
  /** Stops the activity (waiting for the round in flight), then anvil. */
  stop(): Promise<void>;
}

export interface EmbeddedChainOptions {
  network: string;
  chainId: number;
  blockTime: number;
  dataDir: string;
  /** Compiled token (pass one to share a single compile between networks). */
  artifact?: Artifact;
  /** Milliseconds between activity rounds after the seed; 0 = off. Default DEFAULT_ACTIVITY_INTERVAL_MS. */
  activityIntervalMs?: number;
  /** A failed activity round (the chain keeps running; the next round tries again). */
  onActivityError?: (err: Error) => void;
}

export async function startEmbeddedChain(opts: EmbeddedChainOptions): Promise<EmbeddedChain> {
  const artifact = opts.artifact ?? compileToken(opts.dataDir);
  const anvil: Anvil = await startAnvil({ chainId: opts.chainId, blockTime: opts.blockTime });
  try {
    const seeded = await seedChain(anvil.url, artifact, opts.network);
    const intervalMs = opts.activityIntervalMs ?? DEFAULT_ACTIVITY_INTERVAL_MS;
    const activity: Activity | undefined =
      intervalMs > 0
        ? startActivity({
            url: anvil.url,
            seeded,
            artifact,
            intervalMs,
            receiptTimeoutMs: Math.max(10_000, opts.blockTime * 3000),
            onError: opts.onActivityError,
          })
        : undefined;
    const stop = async () => {
      await activity?.stop();
      await anvil.stop();
    };
    return {
      network: opts.network,
      url: anvil.url,
      pid: anvil.pid,
      chainId: anvil.chainId,
      seeded,
      activity: activity?.stats,
      stop,
    };
  } catch (e) {
    await anvil.stop();
    throw e;
  }
}
