// Builds the dashboard (vite, config in /vite.config.ts) into dist/web and writes a gzip and a brotli copy of every
// text file beside it (the server picks one by Accept-Encoding; nothing is compressed per request).
// `tsx src/gateway/web/build.ts` builds; `--if-stale` builds only when an input is newer than the last build (npm's
// prestart/pretest hooks use it, so `npm start` and `npm test` never serve an old or missing dashboard).
import { readdirSync, readFileSync, statSync, writeFileSync, existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';
import { PACKAGE_ROOT, PATHS } from '../paths.js';

const repoRoot = PACKAGE_ROOT;
/** Where the built dashboard goes (git-ignored: dist/). */
export const WEB_DIST = PATHS.webDist;
const STAMP = join(WEB_DIST, '.build-stamp');

/** What the bundle is made of: a change to any of these makes the build stale. */
const INPUTS = [
  'src/gateway/web',
  'vite.config.ts',
  'packages/client/src',
  'src/gateway/errors.ts',
  'packages/toolkit/src/rpc/errors.ts',
  'tsconfig.json', // its "paths" resolve '@rpcgate/client' in the bundle
  'generated/account/client.ts',
  'generated/account/methods.ts',
  'generated/node/examples.ts',
  'package-lock.json',
].map((p) => resolve(repoRoot, p));

const COMPRESSIBLE = /\.(?:html|js|mjs|css|svg|json|txt|map)$/;

function newestMtime(path: string): number {
  if (!existsSync(path)) return 0;
  const st = statSync(path);
  if (!st.isDirectory()) return st.mtimeMs;
  let newest = st.mtimeMs;
  for (const e of readdirSync(path)) newest = Math.max(newest, newestMtime(join(path, e)));
  return newest;
}

/** Why the dashboard needs a build, or null when dist/web is up to date. */
export function webBuildStale(): string | null {
  if (!existsSync(join(WEB_DIST, 'index.html')) || !existsSync(STAMP)) return 'dist/web is missing';
  const built = statSync(STAMP).mtimeMs;
  const newer = INPUTS.find((p) => newestMtime(p) > built);
  return newer ? `${newer.slice(repoRoot.length + 1)} changed since the last build` : null;
}

function compressTree(dir: string): number {
  let n = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) n += compressTree(p);
    else if (COMPRESSIBLE.test(e.name)) {
      const body = readFileSync(p);
      writeFileSync(`${p}.gz`, gzipSync(body, { level: 9 }));
      writeFileSync(
        `${p}.br`,
        brotliCompressSync(body, {
          params: { [constants.BROTLI_PARAM_QUALITY]: 11, [constants.BROTLI_PARAM_SIZE_HINT]: body.length },
        }),
      );
      n++;
    }
  }
  return n;
}

/** Builds dist/web (vite) and its precompressed copies. */
export async function buildWeb(): Promise<void> {
  const { build } = await import('vite');
  // Vite and the React plugin take NODE_ENV as given (vitest sets `test`): the dashboard is always a production build.
  const env = process.env.NODE_ENV;
  process.env.NODE_ENV = 'production';
  try {
    await build({ configFile: resolve(repoRoot, 'vite.config.ts'), logLevel: 'warn', mode: 'production' });
  } finally {
    if (env === undefined) delete process.env.NODE_ENV;
    else process.env.NODE_ENV = env;
  }
  compressTree(WEB_DIST);
  writeFileSync(STAMP, `${new Date().toISOString()}\n`);
}

/** Builds when stale; returns whether it built. */
export async function ensureWebBuilt(log: (m: string) => void = () => undefined): Promise<boolean> {
  const why = webBuildStale();
  if (why === null) return false;
  log(`building the dashboard (${why})…`);
  await buildWeb();
  return true;
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  const ifStale = process.argv.includes('--if-stale');
  const run = ifStale
    ? ensureWebBuilt((m) => console.error(m)).then(
        (built) => built || console.error('dashboard is up to date (dist/web)'),
      )
    : buildWeb();
  run.then(
    () => undefined,
    (e: unknown) => {
      console.error('dashboard build failed:', e);
      process.exit(1);
    },
  );
}
