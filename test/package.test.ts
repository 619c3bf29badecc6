// The package as a user gets it (issue 10, "ships as compiled JavaScript"): `npm pack` (its prepack hook builds dist/
// — tsc -p tsconfig.build.json and the dashboard), the tarball installed into an empty folder with npm, and there:
// `rpcgate --help`, `rpcgate start` serving the dashboard at / and the node API, the exports `rpcgate`,
// `@rpcgate/client`, `rpcgate/node`, `rpcgate/account` imported by plain node, and typed (tsc, NodeNext); `rpcgate generate`
// output checked and run against the installed package.
//
// The pack runs in a copy of this checkout (its tracked and untracked-but-not-ignored files, node_modules linked):
// the build it triggers must start from nothing, and must not rewrite this checkout's dist/ under the other test
// files that read dist/web.
//
// The install is offline: a package-lock.json for the empty folder is derived from this repository's (its non-dev
// entries, plus the tarballs of rpcgate, @rpcgate/client and @rpcgate/toolkit: test/helpers/pack.ts), so npm takes every
// dependency from its cache at the locked version. better-sqlite3's
// install script (prebuild-install) is given the binary this checkout's own install built — the same version for the
// same Node ABI — as a local prebuild, instead of compiling SQLite again (minutes); without one, it compiles.
import { spawn, type ChildProcess } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanEnv, copyCheckout, pack, root, run, writeAppManifest } from './helpers/pack.js';

const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
  name: string;
  version: string;
  dependencies: Record<string, string>;
};

let work: string;
let app: string;
let service: ChildProcess | undefined;
let serviceUrl: string;
let nodeUrl: string;

/** A local prebuild of better-sqlite3 from this checkout's install, when it has one of the locked version. */
async function localPrebuilds(dir: string): Promise<Record<string, string>> {
  const mod = join(root, 'node_modules', 'better-sqlite3');
  const binary = join(mod, 'build', 'Release', 'better_sqlite3.node');
  const locked = (
    JSON.parse(readFileSync(join(root, 'package-lock.json'), 'utf8')) as {
      packages: Record<string, { version?: string }>;
    }
  ).packages['node_modules/better-sqlite3']?.version;
  const installed = (JSON.parse(readFileSync(join(mod, 'package.json'), 'utf8')) as { version: string }).version;
  if (!existsSync(binary) || installed !== locked) return {};
  mkdirSync(dir, { recursive: true });
  // prebuild-install's file name: {name}-v{version}-node-v{abi}-{platform}-{arch}.tar.gz, holding build/Release/*.node.
  const name = `better-sqlite3-v${installed}-node-v${process.versions.modules}-${process.platform}-${process.arch}.tar.gz`;
  await run('tar', ['czf', join(dir, name), 'build/Release/better_sqlite3.node'], mod);
  return { npm_config_better_sqlite3_local_prebuilds: dir };
}

async function post(url: string, body: unknown): Promise<{ status: number; json: any }> {
  // eslint-disable-line @typescript-eslint/no-explicit-any
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: res.status, json: await res.json() };
}

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'rpcgate-package-'));
  const src = join(work, 'checkout');
  const out = join(work, 'out');
  app = join(work, 'app');
  for (const d of [src, out, app]) mkdirSync(d);

  await copyCheckout(src);
  // The workspaces first (the gateway's build reads their .d.ts; it depends on them, so they are installed with it).
  const client = await pack(join(src, 'packages', 'client'), out);
  const toolkit = await pack(join(src, 'packages', 'toolkit'), out);
  const gateway = await pack(src, out);
  const shipped = gateway.files;
  // What runs and what is served comes from the tarball: compiled code with types, the built dashboard, the docs.
  for (const f of [
    'bin/rpcgate.js',
    'dist/src/cli/main.js',
    'dist/src/index.d.ts',
    'dist/generated/node/client.d.ts',
    'dist/web/index.html',
    'docs/index.html',
    'openrpc.json',
    'contracts/account.openrpc.json',
    'src/gateway/chain/contracts/Token.sol',
    'LICENSE',
  ]) {
    expect(shipped, f).toContain(f);
  }
  // …and no TypeScript source, tests, build config or the workspaces (they are packages of their own).
  expect(shipped.filter((f) => /\.ts$/.test(f) && !f.endsWith('.d.ts'))).toEqual([]);
  expect(shipped.filter((f) => /^(test|bench|codegen|generated|packages)\//.test(f) || /^tsconfig/.test(f))).toEqual(
    [],
  );
  expect(pkg.dependencies).toMatchObject({ '@rpcgate/client': client.version, '@rpcgate/toolkit': toolkit.version });

  writeAppManifest(app, [gateway], [client, toolkit], 'module');
  const t0 = Date.now();
  await run(
    'npm',
    ['install', '--offline', '--no-audit', '--no-fund'],
    app,
    await localPrebuilds(join(work, 'prebuilds')),
    600_000,
  );
  const kb = Number((await run('du', ['-sk', 'node_modules'], app)).split('\t')[0]);
  console.log(
    `installed size: rpcgate (with @rpcgate/toolkit and @rpcgate/client): ${(kb / 1024).toFixed(1)} MB on disk, installed in ${((Date.now() - t0) / 1000).toFixed(1)} s`,
  );
}, 900_000);

afterAll(async () => {
  if (service?.pid !== undefined && service.exitCode === null) {
    const exited = new Promise((r) => service!.once('exit', r));
    process.kill(service.pid, 'SIGTERM'); // graceful: it stops the anvils it started
    await Promise.race([exited, new Promise((r) => setTimeout(r, 15_000))]);
  }
  if (work) rmSync(work, { recursive: true, force: true });
}, 120_000); // removing the installed tree (≈ 140 MB) took over 15 s on a loaded CI machine

describe('the installed package', () => {
  it('rpcgate --help runs the compiled CLI with plain node and lists the commands', async () => {
    const help = await run('npx', ['--offline', '--no-install', 'rpcgate', '--help'], app, {}, 60_000);
    for (const cmd of ['start', 'conformance', 'generate', 'signup', 'login', 'keys', 'apps'])
      expect(help).toMatch(new RegExp(`^\\s+${cmd}\\b`, 'm'));
    // No tsx in what runs: the installed package carries the compiled CLI, which the bin takes first (its tsx fallback is
    // for a checkout without a build), and tsx is not even installed (a devDependency) — yet --help ran above.
    expect(existsSync(join(app, 'node_modules', pkg.name, 'dist', 'src', 'cli', 'main.js'))).toBe(true);
    expect(existsSync(join(app, 'node_modules', 'tsx'))).toBe(false);
  });

  it('rpcgate start serves the dashboard at /, the docs and the node API on embedded anvils', async () => {
    const bin = join(app, 'node_modules', '.bin', 'rpcgate');
    const child = spawn(
      process.execPath,
      [bin, 'start', '--port', '0', '--host', '127.0.0.1', '--dev-key', '--data-dir', join(app, 'data')],
      {
        cwd: app,
        env: cleanEnv(),
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    service = child;
    let output = '';
    child.stdout!.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr!.on('data', (d: Buffer) => (output += d.toString()));
    await new Promise<void>((ok, fail) => {
      const timer = setTimeout(() => fail(new Error(`rpcgate start did not come up in 90 s:\n${output}`)), 90_000);
      child.on('exit', (code) => fail(new Error(`rpcgate start exited with ${code}:\n${output}`)));
      child.stdout!.on('data', () => {
        if (/Ctrl-C stops/.test(output)) {
          clearTimeout(timer);
          ok();
        }
      });
    });
    serviceUrl = /rpcgate listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(output)![1]!;
    nodeUrl = /mainnet\s+A\s+(http:\S+)/.exec(output)![1]!;

    const page = await fetch(`${serviceUrl}/`, { headers: { accept: 'text/html' } });
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    const html = await page.text();
    expect(html).toMatch(/<script type="module"[^>]*src="\/assets\//);
    const asset = /src="(\/assets\/[^"]+\.js)"/.exec(html)![1]!;
    expect((await fetch(`${serviceUrl}${asset}`)).status).toBe(200);
    expect((await fetch(`${serviceUrl}/docs/`)).status).toBe(200);

    const reply = await post(nodeUrl, { jsonrpc: '2.0', id: 1, method: 'eth_chainId', params: [] });
    expect(reply).toEqual({ status: 200, json: { jsonrpc: '2.0', id: 1, result: '0x7a69' } });
  }, 120_000);

  it('plain node imports rpcgate, @rpcgate/client, rpcgate/node and rpcgate/account and calls the node API', async () => {
    expect(nodeUrl, 'needs the service of the previous test').toBeTruthy();
    writeFileSync(
      join(app, 'client.mjs'),
      `import { startService, loadConfig } from 'rpcgate';
import { createTypedClient, RpcClientError } from '@rpcgate/client';
import { createClient, methods } from 'rpcgate/node';
import { createClient as createAccountClient } from 'rpcgate/account';
const url = process.argv[2];
const typed = createTypedClient(methods, { url });
const node = createClient({ url });
let refused;
try { await node.request('eth_getBalance', ['not an address', 'latest']); } catch (e) { refused = e instanceof RpcClientError ? e.code : String(e); }
console.log(JSON.stringify({
  chainId: await typed.request('eth_chainId'),
  block: await node.request('eth_blockNumber'),
  refused,
  exports: [typeof startService, typeof loadConfig, typeof createAccountClient],
}));
`,
    );
    const out = JSON.parse(await run(process.execPath, ['client.mjs', nodeUrl], app, {}, 30_000));
    expect(out.chainId).toBe('0x7a69');
    expect(out.block).toMatch(/^0x[0-9a-f]+$/);
    expect(out.refused).toBe(-32602); // invalid params, checked by the server against the contract
    expect(out.exports).toEqual(['function', 'function', 'function']);
  });

  // No skipLibCheck: the shipped .d.ts themselves must check with only the runtime dependencies installed.
  it('the exports carry types: tsc (strict, NodeNext) checks a program against the installed .d.ts', async () => {
    writeFileSync(
      join(app, 'typed.ts'),
      `import { createClient, type NodeClient, type Methods } from 'rpcgate/node';
import type { MethodDescriptor, ParamsOf, ResultOf } from '@rpcgate/client';
import type { Session } from 'rpcgate/account';
import type { ConfigInput } from 'rpcgate';

const client: NodeClient = createClient({ url: 'http://127.0.0.1:8545/' });
export const chainId: Promise<string> = client.request('eth_chainId');
export const balance = client.request('eth_getBalance', ['0x0000000000000000000000000000000000000000', 'latest']);
export const descriptor: MethodDescriptor = {} as Methods['eth_getBalance'];
export type BalanceParams = ParamsOf<Methods['eth_getBalance']>;
export type ChainId = ResultOf<Methods['eth_chainId']>;
export const config: ConfigInput = { port: 0 };
export type S = Session;
// @ts-expect-error -- a method the contract does not have (fails if the exports were untyped)
export const unknown = client.request('eth_noSuchMethod');
// @ts-expect-error -- eth_chainId answers a string
export const wrong: Promise<number> = client.request('eth_chainId');
`,
    );
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
        '--noEmit',
        '--types',
        'node',
        '--typeRoots',
        join(root, 'node_modules', '@types'),
        'typed.ts',
      ],
      app,
      {},
      120_000,
    );
  }, 130_000);

  // Issue 11, item 1: the output of `rpcgate generate` imports only itself and the package's exports, so it type-checks
  // (strict, NodeNext, no skipLibCheck) against the installed .d.ts and runs on the installed JavaScript.
  it('rpcgate generate writes a client that type-checks against the installed package and talks to its createServer', async () => {
    copyFileSync(
      join(root, 'node_modules/@open-rpc/examples/build/service-descriptions/petstore-openrpc.json'),
      join(app, 'petstore.json'),
    );
    const bin = join(app, 'node_modules', '.bin', 'rpcgate');
    const written = await run(
      process.execPath,
      [bin, 'generate', 'petstore.json', '--out', 'petstore'],
      app,
      {},
      60_000,
    );
    expect(written).toContain('petstore: types.ts, methods.ts, validators.ts, client.ts, index.ts');
    await run(process.execPath, [bin, 'generate', 'petstore.json', '--out', 'petstore', '--check'], app, {}, 60_000);
    writeFileSync(
      join(app, 'pets.ts'),
      `import { createServer } from '@rpcgate/toolkit';
import { createClient, RpcClientError, type Pet, type PetstoreClient } from './petstore/index.js';

const server = await createServer({
  document: 'petstore.json',
  // Handlers untyped here (createServer<Methods> would type them): params and results are checked by the document at run time.
  handlers: {
    list_pets: ([limit]: any): any => Array.from({ length: limit ?? 1 }, (_, i) => ({ id: i, name: 'pet' + i })),
    get_pet: ([id]: any): any => ({ id, name: 'rex', tag: 'dog' }),
  },
});
try {
  const client: PetstoreClient = createClient({ url: await server.listen(0, '127.0.0.1') });
  const pets: Pet[] = await client.request('list_pets', [2]);
  const pet: Pet = await client.request('get_pet', [7]);
  // @ts-expect-error -- get_pet takes a PetId (number)
  const refused = await client.request('get_pet', ['seven']).catch((e: unknown) => (e instanceof RpcClientError ? e.code : String(e)));
  console.log(JSON.stringify({ pets, pet, refused }));
} finally {
  await server.close();
}
`,
    );
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
        'pets.ts',
      ],
      app,
      {},
      120_000,
    );
    const out = JSON.parse(await run(process.execPath, [join('build', 'pets.js')], app, {}, 30_000));
    expect(out).toEqual({
      pets: [
        { id: 0, name: 'pet0' },
        { id: 1, name: 'pet1' },
      ],
      pet: { id: 7, name: 'rex', tag: 'dog' },
      refused: -32602,
    });
  }, 200_000);

  // Issue 11, items 2–4 from the installed package: docs (with the browser validators), a mock, and conformance --spec
  // of that mock against its own document (exit 0) and against another document (exit 1).
  it('rpcgate docs, mock and conformance --spec run from the installed package', async () => {
    const examples = join(root, 'node_modules/@open-rpc/examples/build/service-descriptions');
    copyFileSync(join(examples, 'petstore-expanded-openrpc.json'), join(app, 'petstore-expanded.json'));
    copyFileSync(join(examples, 'simple-math-openrpc.json'), join(app, 'simple-math.json'));
    const bin = join(app, 'node_modules', '.bin', 'rpcgate');
    await run(process.execPath, [bin, 'docs', 'petstore-expanded.json', '--out', 'site'], app, {}, 60_000);
    for (const f of ['index.html', 'assets/validators.js']) expect(existsSync(join(app, 'site', f)), f).toBe(true);
    expect(readFileSync(join(app, 'site', 'index.html'), 'utf8')).toContain('get_pets');

    const mock = spawn(process.execPath, [bin, 'mock', 'petstore-expanded.json', '--port', '0'], {
      cwd: app,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    try {
      const url = await new Promise<string>((resolveUrl, reject) => {
        let out = '';
        const timer = setTimeout(() => reject(new Error(`no URL from rpcgate mock: ${out}`)), 30_000);
        mock.stdout!.on('data', (b: Buffer) => {
          out += b.toString();
          const m = /(http:\/\/127\.0\.0\.1:\d+\/)/.exec(out);
          if (m) clearTimeout(timer), resolveUrl(m[1]);
        });
        mock.on('exit', (code) => reject(new Error(`rpcgate mock exited ${code}: ${out}`)));
      });
      const report = JSON.parse(
        await run(
          process.execPath,
          [bin, 'conformance', url, '--spec', 'petstore-expanded.json', '--json'],
          app,
          {},
          60_000,
        ),
      );
      expect(report.ok).toBe(true);
      expect(report.summary.passed).toBeGreaterThanOrEqual(4);
      const other = await run(
        process.execPath,
        [bin, 'conformance', url, '--spec', 'simple-math.json', '--json'],
        app,
        {},
        60_000,
      ).then(
        () => 0,
        () => 1,
      );
      expect(other).toBe(1);
    } finally {
      const exited = new Promise<number | null>((r) => mock.once('exit', (code) => r(code)));
      mock.kill('SIGTERM');
      expect(await exited).toBe(0);
    }
  }, 120_000);
});
