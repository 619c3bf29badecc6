// The embedded chain of one network: anvil + seeded activity. Used when a network has no upstream configured.
import { startAnvil, type Anvil } from './anvil.js';
import { compileToken, type Artifact } from './compile.js';
import { seedChain, type SeededChain } from './seed.js';

export { anvilBinary, startAnvil, type Anvil, type AnvilOptions } from './anvil.js';
export { compileToken, TOKEN_SOURCE_PATH, type Artifact } from './compile.js';
export { seedChain, rpc, type SeededChain } from './seed.js';

export interface EmbeddedChain {
  network: string;
  url: string;
  pid: number;
  chainId: number;
  seeded: SeededChain;
  stop(): Promise<void>;
}

export interface EmbeddedChainOptions {
  network: string;
  chainId: number;
  blockTime: number;
  dataDir: string;
  /** Compiled token (pass one to share a single compile between networks). */
  artifact?: Artifact;
}

export async function startEmbeddedChain(opts: EmbeddedChainOptions): Promise<EmbeddedChain> {
  const artifact = opts.artifact ?? compileToken(opts.dataDir);
  const anvil: Anvil = await startAnvil({ chainId: opts.chainId, blockTime: opts.blockTime });
  try {
    const seeded = await seedChain(anvil.url, artifact, opts.network);
    return { network: opts.network, url: anvil.url, pid: anvil.pid, chainId: anvil.chainId, seeded, stop: anvil.stop };
  } catch (e) {
    await anvil.stop();
    throw e;
  }
}
