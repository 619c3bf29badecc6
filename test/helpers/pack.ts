// Packing and installing this repository's packages as a user gets them (test/package.test.ts: the gateway;
// test/packages.test.ts: @rpcgate/client and @rpcgate/toolkit): a copy of the checkout to pack from, `npm pack`, and an
// offline install of the tarballs into an empty folder.
//
// The install is offline: a package-lock.json for the empty folder is derived from this repository's (its non-dev
// entries under node_modules/, plus the tarballs), so npm takes every dependency from its cache at the locked version
// and prunes what the tarballs do not need. CI's machine has the same cache after its own `npm install`.
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, readFileSync, realpathSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { promisify } from 'node:util';

const exec = promisify(execFile);
export const root = resolve(import.meta.dirname, '..', '..');

/** The environment of every command run here: none of this process's npm, rpcgate or store settings leak in. */
export function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env))
    if (!/^(npm_|RPCGATE_|DATABASE_URL$|REDIS_URL$)/i.test(k)) env[k] = v;
  return { ...env, ...extra };
}

/** Runs a command; a failure throws with its output (so a broken pack or install fails the test loudly). */
export async function run(
  cmd: string,
  args: string[],
  cwd: string,
  extraEnv?: Record<string, string>,
  timeout = 300_000,
): Promise<string> {
  try {
    const { stdout } = await exec(cmd, args, { cwd, env: cleanEnv(extraEnv), timeout, maxBuffer: 64 * 1024 * 1024 });
    return stdout;
  } catch (e) {
    const err = e as { message: string; stdout?: string; stderr?: string };
    throw new Error(
      `${cmd} ${args.join(' ')} failed in ${cwd}: ${err.message}\nstdout:\n${err.stdout ?? ''}\nstderr:\n${err.stderr ?? ''}`,
    );
  }
}

/** A copy of the checkout as git sees it (tracked + untracked-but-not-ignored files), node_modules linked in: a pack
 *  builds from nothing there and does not rewrite this checkout's dist/ under other test files. The workspaces' links
 *  in node_modules/@rpcgate point at packages/ of the checkout (built there by the pack's prepack) — so the copy gets
 *  its own node_modules/@rpcgate pointing at its own packages/. */
export async function copyCheckout(to: string): Promise<void> {
  const list = await run('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], root);
  const files = list.split('\0').filter((f) => f && f !== 'node_modules' && existsSync(join(root, f)));
  if (!files.includes('package.json')) throw new Error('git ls-files lists no package.json');
  for (const f of files) {
    mkdirSync(dirname(join(to, f)), { recursive: true });
    copyFileSync(join(root, f), join(to, f));
  }
  // A node_modules of links: every entry of the checkout's, but @rpcgate/* → this copy's packages/.
  const modules = join(to, 'node_modules');
  mkdirSync(join(modules, '@rpcgate'), { recursive: true });
  const real = realpathSync(join(root, 'node_modules'));
  for (const entry of await import('node:fs').then((fs) => fs.readdirSync(real))) {
    if (entry === '@rpcgate') continue;
    symlinkSync(join(real, entry), join(modules, entry));
  }
  for (const p of ['client', 'toolkit']) symlinkSync(join(to, 'packages', p), join(modules, '@rpcgate', p), 'dir');
}

export interface Packed {
  name: string;
  version: string;
  file: string;
  files: string[];
  manifest: { dependencies?: Record<string, string>; bin?: Record<string, string> };
}

/** `npm pack` of the package in `dir` (its prepack builds it) into `out`. */
export async function pack(dir: string, out: string): Promise<Packed> {
  const [info] = JSON.parse(await run('npm', ['pack', '--json', '--pack-destination', out], dir, {}, 600_000)) as {
    name: string;
    version: string;
    filename: string;
    files: { path: string }[];
  }[];
  const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as Packed['manifest'];
  return {
    name: info!.name,
    version: info!.version,
    file: join(out, info!.filename),
    files: info!.files.map((f) => f.path),
    manifest,
  };
}

/** package.json (`type` as given: none or "commonjs" = CommonJS, as `npm init -y` writes) and package-lock.json of an app depending on
 *  `direct` (installed from their tarballs) with `others` tarballs available for their dependencies. */
export function writeAppManifest(
  dir: string,
  direct: Packed[],
  others: Packed[] = [],
  type?: 'module' | 'commonjs',
): void {
  const lock = JSON.parse(readFileSync(join(root, 'package-lock.json'), 'utf8')) as {
    packages: Record<string, { dev?: boolean; link?: boolean }>;
  };
  const dependencies = Object.fromEntries(direct.map((p) => [p.name, `file:${p.file}`]));
  const packages: Record<string, unknown> = { '': { name: 'app', version: '1.0.0', dependencies } };
  for (const [path, entry] of Object.entries(lock.packages)) {
    if (path.startsWith('node_modules/') && !entry.dev && !entry.link) packages[path] = entry;
  }
  for (const p of [...direct, ...others]) {
    packages[`node_modules/${p.name}`] = {
      version: p.version,
      resolved: `file:${p.file}`,
      integrity: `sha512-${createHash('sha512').update(readFileSync(p.file)).digest('base64')}`,
      ...(p.manifest.dependencies ? { dependencies: p.manifest.dependencies } : {}),
      ...(p.manifest.bin ? { bin: p.manifest.bin } : {}),
    };
  }
  const manifest = { name: 'app', version: '1.0.0', ...(type ? { type } : {}), dependencies };
  writeFileSync(join(dir, 'package.json'), JSON.stringify(manifest, null, 2));
  writeFileSync(
    join(dir, 'package-lock.json'),
    JSON.stringify({ name: 'app', version: '1.0.0', lockfileVersion: 3, requires: true, packages }, null, 2),
  );
}
