// @rpcgate/client and @rpcgate/toolkit as a user gets them (issue 20, item 3): each package packed (`npm pack`, whose
// prepack builds it) in a copy of the checkout, the tarballs installed offline into empty folders, the installed sizes
// and install times printed and bounded, no install scripts; then the toolkit's bin writes a client of a document and
// serves its mock, and that client runs with @rpcgate/client alone from an ES module project and from a CommonJS one
// (`npm init -y`; Node ≥ 20.19 loads the ES module package through require(esm)).
import { spawn, type ChildProcess } from 'node:child_process';
import {
  copyFileSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { copyCheckout, pack, root, run, writeAppManifest, type Packed } from './helpers/pack.js';

const MB = 1024 * 1024;
const CLIENT_MAX = 2 * MB;
const TOOLKIT_MAX = 40 * MB;

let work: string;
let client: Packed;
let toolkit: Packed;
const apps = { esm: '', cjs: '', toolkit: '' };
const installed: Record<keyof typeof apps, { bytes: number; diskBytes: number; ms: number; packages: number }> =
  {} as never;
let mock: ChildProcess | undefined;
let mockUrl = '';

/** Apparent bytes and disk usage of a folder (du: blocks, as a user's disk sees it). */
async function sizeOf(dir: string): Promise<{ bytes: number; diskBytes: number }> {
  let bytes = 0;
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.isFile()) bytes += statSync(p).size;
    }
  };
  walk(dir);
  const diskBytes = Number((await run('du', ['-sk', dir], dir)).split('\t')[0]) * 1024;
  return { bytes, diskBytes };
}

/** Installed packages (every package.json one level under node_modules or a scope) with an install-time script. */
function installScripts(modules: string): { packages: number; scripts: string[] } {
  const dirs: string[] = [];
  const scan = (nm: string) => {
    if (!existsSync(nm)) return;
    for (const e of readdirSync(nm)) {
      if (e.startsWith('.')) continue;
      if (e.startsWith('@')) for (const s of readdirSync(join(nm, e))) dirs.push(join(nm, e, s));
      else dirs.push(join(nm, e));
    }
  };
  scan(modules);
  for (let i = 0; i < dirs.length; i++) scan(join(dirs[i]!, 'node_modules'));
  const scripts: string[] = [];
  for (const d of dirs) {
    const file = join(d, 'package.json');
    if (!existsSync(file)) continue;
    const m = JSON.parse(readFileSync(file, 'utf8')) as { name: string; scripts?: Record<string, string> };
    for (const s of ['preinstall', 'install', 'postinstall'])
      if (m.scripts?.[s]) scripts.push(`${m.name}: ${s}: ${m.scripts[s]}`);
    // npm runs `node-gyp rebuild` for a binding.gyp without an install script
    if (existsSync(join(d, 'binding.gyp'))) scripts.push(`${m.name}: binding.gyp`);
  }
  return { packages: dirs.length, scripts };
}

async function install(name: keyof typeof apps): Promise<void> {
  const t0 = Date.now();
  await run(
    'npm',
    ['install', '--offline', '--no-audit', '--no-fund', '--ignore-scripts=false'],
    apps[name],
    {},
    600_000,
  );
  const ms = Date.now() - t0;
  const { packages } = installScripts(join(apps[name], 'node_modules'));
  installed[name] = { ...(await sizeOf(join(apps[name], 'node_modules'))), ms, packages };
}

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'rpcgate-packages-'));
  const src = join(work, 'checkout');
  const out = join(work, 'out');
  for (const d of [src, out]) mkdirSync(d);
  for (const k of Object.keys(apps) as (keyof typeof apps)[]) mkdirSync((apps[k] = join(work, `app-${k}`)));

  await copyCheckout(src);
  client = await pack(join(src, 'packages', 'client'), out); // first: the toolkit's build reads the client's .d.ts
  toolkit = await pack(join(src, 'packages', 'toolkit'), out);

  writeAppManifest(apps.esm, [client], [], 'module');
  // `npm init -y`: .js files are CommonJS (npm 11 writes "type": "commonjs", older ones no "type")
  await run('npm', ['init', '-y'], apps.cjs);
  const initType = JSON.parse(readFileSync(join(apps.cjs, 'package.json'), 'utf8')).type as 'commonjs' | undefined;
  expect([undefined, 'commonjs']).toContain(initType);
  writeAppManifest(apps.cjs, [client], [], initType);
  writeAppManifest(apps.toolkit, [toolkit], [client], 'module');
  await Promise.all((Object.keys(apps) as (keyof typeof apps)[]).map(install));
  console.log(
    'installed sizes:\n' +
      (Object.entries(installed) as [string, (typeof installed)['esm']][])
        .map(
          ([k, v]) =>
            `  ${k === 'toolkit' ? '@rpcgate/toolkit (with @rpcgate/client)' : `@rpcgate/client alone (${k})`}: ${(v.diskBytes / MB).toFixed(2)} MB on disk (${(v.bytes / MB).toFixed(2)} MB in files), ${v.packages} package(s), installed in ${(v.ms / 1000).toFixed(1)} s`,
        )
        .join('\n'),
  );
}, 900_000);

afterAll(async () => {
  if (mock?.exitCode === null) {
    const exited = new Promise((r) => mock!.once('exit', r));
    mock.kill('SIGTERM');
    await Promise.race([exited, new Promise((r) => setTimeout(r, 5_000))]);
  }
  if (work) rmSync(work, { recursive: true, force: true });
}, 30_000);

describe('the packed packages', () => {
  it('ship compiled code with types, a LICENSE and a CHANGELOG, and no sources or build config', () => {
    for (const p of [client, toolkit]) {
      for (const f of ['package.json', 'LICENSE', 'CHANGELOG.md', 'README.md', 'dist/index.js', 'dist/index.d.ts'])
        expect(p.files, `${p.name}: ${f}`).toContain(f);
      expect(
        p.files.filter((f) => (/\.ts$/.test(f) && !f.endsWith('.d.ts')) || /^(src|test)\/|tsconfig/.test(f)),
        p.name,
      ).toEqual([]);
    }
    expect(toolkit.files).toContain('bin/rpcgate-toolkit.js');
    expect(readFileSync(join(root, 'packages/client/LICENSE'), 'utf8')).toMatch(/^MIT License/);
  });

  it(`@rpcgate/client installs alone in ≤ ${CLIENT_MAX / MB} MB with no install scripts`, () => {
    for (const app of ['esm', 'cjs'] as const) {
      // The client and its one dependency, re2js (pure JS: the linear-time pattern engine of generated validators).
      expect(readdirSync(join(apps[app], 'node_modules')).filter((e) => !e.startsWith('.'))).toEqual([
        '@rpcgate',
        're2js',
      ]);
      expect(readdirSync(join(apps[app], 'node_modules', '@rpcgate'))).toEqual(['client']);
      expect(installed[app].diskBytes).toBeLessThanOrEqual(CLIENT_MAX);
      expect(installScripts(join(apps[app], 'node_modules')).scripts).toEqual([]);
    }
  });

  it(`@rpcgate/toolkit installs (with the client) in ≤ ${TOOLKIT_MAX / MB} MB with no install scripts and no gateway dependency`, () => {
    const modules = join(apps.toolkit, 'node_modules');
    expect(installed.toolkit.diskBytes).toBeLessThanOrEqual(TOOLKIT_MAX);
    expect(installScripts(modules).scripts).toEqual([]);
    for (const heavy of [
      '@foundry-rs',
      'solc',
      'better-sqlite3',
      'pg',
      'ioredis',
      'kysely',
      '@node-rs',
      'react',
      'rpcgate',
    ])
      expect(existsSync(join(modules, heavy)), heavy).toBe(false);
    expect(existsSync(join(modules, '@rpcgate', 'client', 'dist', 'index.js'))).toBe(true);
  });

  it('the toolkit bin writes a client that imports only itself and @rpcgate/client, and serves the mock', async () => {
    copyFileSync(
      join(root, 'node_modules/@open-rpc/examples/build/service-descriptions/petstore-openrpc.json'),
      join(apps.toolkit, 'petstore.json'),
    );
    const bin = join(apps.toolkit, 'node_modules', '.bin', 'rpcgate-toolkit');
    expect(await run(process.execPath, [bin, '--help'], apps.toolkit)).toMatch(
      /generate[\s\S]*docs[\s\S]*mock[\s\S]*conformance/,
    );
    const written = await run(
      process.execPath,
      [bin, 'generate', 'petstore.json', '--out', 'gen'],
      apps.toolkit,
      {},
      60_000,
    );
    expect(written).toContain('gen: types.ts, methods.ts, validators.ts, client.ts, index.ts');
    for (const f of readdirSync(join(apps.toolkit, 'gen'))) {
      const specs = [...readFileSync(join(apps.toolkit, 'gen', f), 'utf8').matchAll(/from '([^']+)'/g)].map(
        (m) => m[1],
      );
      expect(
        specs.filter((s) => s !== '@rpcgate/client' && !s!.startsWith('./')),
        f,
      ).toEqual([]);
    }

    mock = spawn(process.execPath, [bin, 'mock', 'petstore.json', '--port', '0'], {
      cwd: apps.toolkit,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    mockUrl = await new Promise<string>((resolveUrl, reject) => {
      let out = '';
      const timer = setTimeout(() => reject(new Error(`no URL from rpcgate-toolkit mock: ${out}`)), 30_000);
      mock!.stdout!.on('data', (b: Buffer) => {
        out += b.toString();
        const m = /(http:\/\/127\.0\.0\.1:\d+\/)/.exec(out);
        if (m) clearTimeout(timer), resolveUrl(m[1]!);
      });
      mock!.on('exit', (code) => reject(new Error(`rpcgate-toolkit mock exited ${code}: ${out}`)));
    });
    const report = JSON.parse(
      await run(
        process.execPath,
        [bin, 'conformance', mockUrl, '--spec', 'petstore.json', '--json'],
        apps.toolkit,
        {},
        60_000,
      ),
    );
    expect(report.ok).toBe(true);
  }, 120_000);

  // One usage program, compiled by tsc (strict, NodeNext, against the installed .d.ts, no skipLibCheck) into an ES
  // module in one project and CommonJS in the other, run by plain node against the mock.
  const usage = `import { createClient, RpcClientError, type Pet, type PetstoreClient } from './gen/index.js';

async function main(): Promise<void> {
  const client: PetstoreClient = createClient({ url: process.argv[2]! });
  const pets: Pet[] = await client.request('list_pets', [2]);
  const batch = await client.batch([
    { method: 'list_pets', params: [1] },
    { method: 'get_pet', params: [1] },
  ]);
  let refused: unknown;
  // @ts-expect-error -- get_pet takes a PetId (number)
  try { await client.request('get_pet', ['seven']); } catch (e) { refused = e instanceof RpcClientError ? e.code : String(e); }
  console.log(JSON.stringify({ pets: Array.isArray(pets), batch: batch.map((r) => (r instanceof RpcClientError ? r.code : typeof r)), refused, moduleSystem: typeof require === 'function' ? 'commonjs' : 'esm' }));
}
main().catch((e) => {
  console.error(e);
  process.exit(1);
});
`;
  it.each(['esm', 'cjs'] as const)(
    'a generated client runs with @rpcgate/client alone from a %s project',
    async (kind) => {
      expect(mockUrl, 'needs the mock of the previous test').toBeTruthy();
      const app = apps[kind];
      cpSync(join(apps.toolkit, 'gen'), join(app, 'gen'), { recursive: true });
      writeFileSync(join(app, 'usage.ts'), usage);
      const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');
      await run(
        process.execPath,
        [
          tsc,
          '--strict',
          '--module',
          'NodeNext',
          '--moduleResolution',
          'NodeNext',
          '--target',
          'ES2022',
          '--outDir',
          'build',
          '--types',
          'node',
          '--typeRoots',
          join(root, 'node_modules', '@types'),
          'usage.ts',
        ],
        app,
        {},
        120_000,
      );
      const compiled = readFileSync(join(app, 'build', 'gen', 'client.js'), 'utf8');
      if (kind === 'cjs') expect(compiled).toMatch(/require\("@rpcgate\/client"\)/);
      else expect(compiled).toMatch(/from '@rpcgate\/client'/);
      const out = JSON.parse(await run(process.execPath, [join('build', 'usage.js'), mockUrl], app, {}, 30_000));
      expect(out).toEqual({
        pets: true,
        batch: ['object', 'object'],
        refused: -32602,
        moduleSystem: kind === 'cjs' ? 'commonjs' : 'esm',
      });
    },
    150_000,
  );
});
