// Compiles the seed token with solc-js (bundled compiler, works offline). The artifact is cached in the data
// dir keyed by a hash of source + compiler version + settings, so restarts skip the (slow) compiler load.
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync, renameSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { PATHS } from '../paths.js';

const require = createRequire(import.meta.url);

export const TOKEN_SOURCE_PATH = PATHS.tokenSource;

export interface Artifact {
  contract: string;
  abi: unknown[];
  /** Deployment bytecode, 0x-prefixed. */
  bytecode: `0x${string}`;
  /** Function signature → 4-byte selector (hex, no 0x), from solc's methodIdentifiers. */
  methodIdentifiers: Record<string, string>;
  compilerVersion: string;
  sourceHash: string;
}

const SETTINGS = {
  optimizer: { enabled: true, runs: 200 },
  // Shanghai: widely supported by real nodes and by anvil's default hardfork.
  evmVersion: 'shanghai',
  outputSelection: { '*': { '*': ['abi', 'evm.bytecode.object', 'evm.methodIdentifiers'] } },
};

export function compileToken(dataDir: string): Artifact {
  const source = readFileSync(TOKEN_SOURCE_PATH, 'utf8');
  const solcVersion = (require('solc/package.json') as { version: string }).version;
  const hash = createHash('sha256')
    .update(source)
    .update(solcVersion)
    .update(JSON.stringify(SETTINGS))
    .digest('hex')
    .slice(0, 16);
  const cachePath = join(dataDir, 'artifacts', `Token-${hash}.json`);
  try {
    const cached = JSON.parse(readFileSync(cachePath, 'utf8')) as Artifact;
    if (cached.sourceHash === hash && cached.bytecode.length > 2) return cached;
  } catch {
    // not cached yet (or unreadable): compile
  }
  const solc = require('solc') as { compile(input: string): string; version(): string };
  const input = { language: 'Solidity', sources: { 'Token.sol': { content: source } }, settings: SETTINGS };
  const output = JSON.parse(solc.compile(JSON.stringify(input))) as {
    errors?: { severity: string; formattedMessage: string }[];
    contracts?: Record<
      string,
      Record<
        string,
        { abi: unknown[]; evm: { bytecode: { object: string }; methodIdentifiers: Record<string, string> } }
      >
    >;
  };
  const errors = (output.errors ?? []).filter((e) => e.severity === 'error');
  if (errors.length)
    throw new Error(`Token.sol does not compile:\n${errors.map((e) => e.formattedMessage).join('\n')}`);
  const c = output.contracts?.['Token.sol']?.Token;
  if (!c) throw new Error('solc produced no Token contract');
  const artifact: Artifact = {
    contract: 'Token',
    abi: c.abi,
    bytecode: `0x${c.evm.bytecode.object}`,
    methodIdentifiers: c.evm.methodIdentifiers,
    compilerVersion: solc.version(),
    sourceHash: hash,
  };
  mkdirSync(dirname(cachePath), { recursive: true });
  // Write-then-rename: two services starting at once never read a half-written file.
  const tmp = `${cachePath}.${process.pid}.tmp`;
  writeFileSync(tmp, JSON.stringify(artifact, null, 2));
  renameSync(tmp, cachePath);
  return artifact;
}
