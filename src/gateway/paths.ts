// Where rpcgate's own files are at run time. The package root is the folder holding rpcgate's package.json, found by
// walking up from this module: the same code runs from src/gateway (tsx, a clone) and from dist/src/gateway (the built
// or installed package), so no file counts '../' levels to the root.
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

function findPackageRoot(from: string): string {
  for (let dir = from; ; dir = dirname(dir)) {
    const manifest = join(dir, 'package.json');
    if (existsSync(manifest) && (JSON.parse(readFileSync(manifest, 'utf8')) as { name?: unknown }).name === 'rpcgate')
      return dir;
    if (dirname(dir) === dir) throw new Error(`rpcgate: no package.json named "rpcgate" above ${from}`);
  }
}

/** The folder holding rpcgate's package.json (the repository root in a clone, the package folder when installed). */
export const PACKAGE_ROOT = findPackageRoot(dirname(fileURLToPath(import.meta.url)));

/** A path inside the package (every file named here ships: package.json "files"). */
export const packagePath = (...parts: string[]): string => resolve(PACKAGE_ROOT, ...parts);

/** The files the service reads at run time. */
export const PATHS = {
  /** The node API contract. */
  openrpc: packagePath('openrpc.json'),
  /** The generated reference served at /docs/. */
  docs: packagePath('docs'),
  /** The built dashboard (src/gateway/web/build.ts writes it; the packed package carries it). */
  webDist: packagePath('dist', 'web'),
  /** The seed token compiled at start (src/gateway/chain/compile.ts); read from source, also when installed. */
  tokenSource: packagePath('src', 'gateway', 'chain', 'contracts', 'Token.sol'),
} as const;
