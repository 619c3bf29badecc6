// The account commands of the CLI as an operator scripts them: a real service (startService, SQLite, embedded
// chains) and the CLI's sources (src/cli/main.ts under tsx; test/package.test.ts runs the built bin/rpcgate.js) run as
// subprocesses with --server and --json, the session kept in a temporary RPCGATE_CONFIG_DIR. Every --json stdout must
// be exactly one JSON object. One CLI process at a time.
import { execFile } from 'node:child_process';
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startService, type RunningService } from '../src/gateway/server/index.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const cliArgs = ['--import', 'tsx', join(root, 'src', 'cli', 'main.ts')];

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

let configDir: string;

function cli(args: string[], env: Record<string, string | undefined> = {}): Promise<Run> {
  return new Promise((resolve) => {
    const childEnv: NodeJS.ProcessEnv = {
      ...process.env,
      RPCGATE_CONFIG_DIR: configDir,
      RPCGATE_PASSWORD: undefined,
      RPCGATE_EMAIL: undefined,
      RPCGATE_SERVER: undefined,
      ...env,
    };
    for (const [k, v] of Object.entries(childEnv)) if (v === undefined) delete childEnv[k];
    // stdin is not a TTY here: nothing may prompt.
    execFile(
      process.execPath,
      [...cliArgs, ...args],
      { cwd: root, env: childEnv, timeout: 30_000 },
      (err, stdout, stderr) => {
        const code = err
          ? typeof (err as { code?: unknown }).code === 'number'
            ? (err as { code: number }).code
            : -1
          : 0;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

/** stdout must be exactly one JSON object (not an array, nothing before or after). */
function one(r: Run): Record<string, any> {
  let v: unknown;
  try {
    v = JSON.parse(r.stdout);
  } catch {
    throw new Error(`stdout is not one JSON value (exit ${r.code}):\n${r.stdout}\nstderr:\n${r.stderr}`);
  }
  expect(v !== null && typeof v === 'object' && !Array.isArray(v), `not an object: ${r.stdout}`).toBe(true);
  return v as Record<string, any>;
}

/** A --json run that must succeed; returns its object. */
async function ok(args: string[], env?: Record<string, string | undefined>): Promise<Record<string, any>> {
  const r = await cli([...args, '--json'], env);
  if (r.code !== 0)
    throw new Error(`rpcgate ${args.join(' ')} exited ${r.code}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`);
  const o = one(r);
  expect(o.error).toBeUndefined();
  return o;
}

/** A --json run that must fail with exit 1 and `{ error: { code, message } }` on stdout. */
async function fails(
  args: string[],
  env?: Record<string, string | undefined>,
): Promise<{ code: number; message: string; data?: any }> {
  const r = await cli([...args, '--json'], env);
  expect(r.code, `stdout: ${r.stdout}\nstderr: ${r.stderr}`).toBe(1);
  const o = one(r);
  expect(Object.keys(o)).toEqual(['error']);
  expect(typeof o.error.code).toBe('number');
  expect(typeof o.error.message).toBe('string');
  return o.error;
}

async function blockNumber(url: string): Promise<{ status: number; result?: string }> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_blockNumber', params: [] }),
  });
  const body = (await res.json()) as { result?: string };
  return { status: res.status, result: body.result };
}

/** A port nothing listens on (bound, then released). */
async function closedPort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as { port: number }).port;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

describe('rpcgate CLI against a running service', () => {
  let svc: RunningService;
  let dataDir: string;
  let server: string[];
  const email = `cli-${randomBytes(4).toString('hex')}@example.com`;
  const password = 'a long enough password';

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'rpcgate-cli-data-'));
    configDir = mkdtempSync(join(tmpdir(), 'rpcgate-cli-config-'));
    // A third network beside the embedded defaults (on a closed port: listed and keyed, never called here).
    svc = await startService({
      port: 0,
      dataDir,
      logLevel: 'silent',
      devKey: false,
      networks: { mainnet: {}, testnet: {}, holesky: { upstreams: ['http://127.0.0.1:9'], chainId: 17000 } },
    });
    server = ['--server', svc.url];
  }, 120_000);

  afterAll(async () => {
    await svc?.stop();
    for (const d of [dataDir, configDir]) if (d) rmSync(d, { recursive: true, force: true });
  });

  it('signup → login → apps → keys (4, the 5th refused) → node API at the printed URLs → delete → logout', async () => {
    const origin = new URL(svc.url).origin;
    const sessionFile = join(configDir, 'sessions.json');

    // Without a password and without a terminal: a clear error, no prompt.
    const noPw = await fails(['signup', ...server, '--email', email]);
    expect(noPw.message).toMatch(/--password is required/);

    const signed = await ok(['signup', ...server, '--email', email, '--password', password]);
    expect(signed.user.email).toBe(email);
    expect(signed.server).toBe(origin);
    expect(statSync(sessionFile).mode & 0o777).toBe(0o600);
    expect(Object.keys(JSON.parse(readFileSync(sessionFile, 'utf8')).sessions)).toEqual([origin]);

    // A wrong password is the server's -32016; the password may also come from RPCGATE_PASSWORD.
    const bad = await fails(['login', ...server, '--email', email, '--password', 'not the password']);
    expect(bad.code).toBe(-32016);
    const logged = await ok(['login', ...server, '--email', email], { RPCGATE_PASSWORD: password });
    expect(logged.user.id).toBe(signed.user.id);
    // The server may also come from RPCGATE_SERVER.
    expect((await ok(['whoami'], { RPCGATE_SERVER: svc.url })).email).toBe(email);

    // Access point A. The chain and services default (one chain, one service); the use case matches in any case.
    const chains = await ok(['chains', ...server]);
    expect(chains.chains).toHaveLength(1);
    const app = await ok([
      'apps',
      'create',
      ...server,
      '--name',
      'cli app',
      '--description',
      'from the CLI',
      '--use-case',
      'defi',
    ]);
    expect(app).toMatchObject({
      name: 'cli app',
      description: 'from the CLI',
      useCase: 'Defi',
      chain: chains.chains[0].id,
      services: ['node-api'],
    });
    expect(app.key).toMatch(/^[1-9A-HJ-NP-Za-km-z]{20,64}$/);
    const got = await ok(['apps', 'get', ...server, app.id]);
    expect(Object.keys(got.urls).sort()).toEqual(['holesky', 'mainnet', 'testnet']);
    for (const network of ['mainnet', 'testnet']) expect(got.urls[network]).toBe(`${svc.url}/${network}/v2/${app.key}`);
    expect(got.key).toBe(app.key);
    expect((await ok(['apps', 'list', ...server])).apps.map((a: { id: string }) => a.id)).toEqual([app.id]);
    // The account's quotas, shared by all its apps.
    expect(await ok(['apps', 'usage', ...server])).toMatchObject({
      apps: 1,
      maxApps: 10,
      perSecond: 100,
      quotas: [
        { period: 'day', used: 0, limit: 100_000 },
        { period: 'month', used: 0, limit: 3_000_000 },
      ],
    });
    expect((await cli(['apps', 'usage', ...server])).stdout).toMatch(
      /^apps: 1 of 10; 100 requests per second each\nrequests today, all apps: 0 of 100000 \(100000 left, resets /,
    );
    expect((await ok(['apps', 'update', ...server, app.id, '--name', 'renamed'])).name).toBe('renamed');
    const missingUseCase = await fails(['apps', 'create', ...server, '--name', 'x']);
    expect(missingUseCase.message).toMatch(/--use-case is required: one of .*Defi/);

    // Human output: key: value lines with the key and one URL per network; nothing on stderr.
    const human = await cli(['apps', 'get', ...server, app.id]);
    expect(human.code).toBe(0);
    expect(human.stderr).toBe('');
    expect(human.stdout).toMatch(new RegExp(`^key: +${app.key}$`, 'm'));
    expect(human.stdout).toMatch(new RegExp(`^url \\(testnet\\): +${got.urls.testnet.replace(/[.]/g, '\\.')}$`, 'm'));

    // Access point B: four keys (network in any case), the fifth refused with the server's clear message.
    const keys: Record<string, any>[] = [];
    for (const network of ['testnet', 'Testnet', 'MAINNET', 'HOLESKY'])
      keys.push(await ok(['keys', 'create', ...server, '--name', `key ${keys.length + 1}`, '--network', network]));
    for (const k of keys) expect(k.url).toBe(`${svc.url}/${k.network}/${k.key}`);
    expect(keys.map((k) => [k.network, k.networkLabel])).toEqual([
      ['testnet', 'Testnet'],
      ['testnet', 'Testnet'],
      ['mainnet', 'Mainnet'],
      ['holesky', 'Holesky'],
    ]);
    const fifth = await fails(['keys', 'create', ...server, '--name', 'key 5', '--network', 'testnet']);
    expect(fifth.code).toBe(-32005);
    expect(fifth.message).toMatch(/at most 4 network API keys/);
    expect(fifth.data).toMatchObject({ limit: 4 });
    const fifthHuman = await cli(['keys', 'create', ...server, '--name', 'key 5', '--network', 'testnet']);
    expect(fifthHuman.code).toBe(1);
    expect(fifthHuman.stdout).toBe('');
    expect(fifthHuman.stderr).toMatch(
      /^error: limit reached: at most 4 network API keys per user; delete one first \(limit=4/,
    );
    const badNetwork = await fails(['keys', 'create', ...server, '--name', 'k', '--network', 'devnet']);
    expect(badNetwork.message).toBe(
      `--network: unknown network "devnet": this deployment's networks are mainnet, testnet, holesky`,
    );
    expect(badNetwork.data).toMatchObject({ choices: ['mainnet', 'testnet', 'holesky'] });
    // The deployment's networks come from its config (networks_list, no login needed), any case on --network.
    const networks = await ok(['networks', '--server', svc.url]);
    expect(networks.networks).toEqual([
      { network: 'mainnet', label: 'Mainnet', chainId: 31337, local: true },
      { network: 'testnet', label: 'Testnet', chainId: 31338, local: true },
      { network: 'holesky', label: 'Holesky', chainId: 17000, local: false },
    ]);

    const listed = await ok(['keys', 'list', ...server]);
    expect(listed.keys.map((k: { id: string }) => k.id).sort()).toEqual(keys.map((k) => k.id).sort());
    expect(listed.maxKeys).toBe(4);
    const detail = await ok(['keys', 'get', ...server, keys[0].id]);
    expect(detail).toMatchObject({ id: keys[0].id, key: keys[0].key, url: keys[0].url });
    expect(detail.examples.length).toBeGreaterThan(0);

    // The printed URLs serve the node API.
    for (const url of [keys[0].url, keys[2].url, got.urls.mainnet, got.urls.testnet]) {
      const r = await blockNumber(url);
      expect(r.status, url).toBe(200);
      expect(r.result).toMatch(/^0x[0-9a-f]+$/);
    }

    // Allowlist and JWT keys on the app.
    const entry = await ok([
      'apps',
      'allowlist',
      'add',
      ...server,
      app.id,
      '--kind',
      'method',
      '--value',
      'eth_chainId',
    ]);
    expect(
      (await ok(['apps', 'allowlist', 'list', ...server, app.id])).entries.map((e: { id: string }) => e.id),
    ).toEqual([entry.id]);
    expect((await blockNumber(got.urls.mainnet)).status).toBe(403); // only eth_chainId allowed now
    expect(await ok(['apps', 'allowlist', 'remove', ...server, app.id, entry.id])).toEqual({
      id: entry.id,
      deleted: true,
    });
    const noJwtKey = await fails(['apps', 'require-jwt', ...server, app.id, 'on']);
    expect(noJwtKey.code).toBe(-32011);
    const pemFile = join(configDir, 'jwt.pem');
    writeFileSync(
      pemFile,
      generateKeyPairSync('ec', { namedCurve: 'P-256' }).publicKey.export({ type: 'spki', format: 'pem' }),
    );
    const jwk = await ok(['apps', 'jwt', 'add', ...server, app.id, '--alg', 'es256', '--public-key-pem', pemFile]);
    expect(jwk.id).toMatch(/^kid_/);
    expect((await ok(['apps', 'jwt', 'list', ...server, app.id])).jwtKeys.map((k: { id: string }) => k.id)).toEqual([
      jwk.id,
    ]);
    expect((await ok(['apps', 'require-jwt', ...server, app.id, 'on'])).requireJwt).toBe(true);
    expect((await blockNumber(got.urls.mainnet)).status).toBe(401); // no token
    expect((await ok(['apps', 'require-jwt', ...server, app.id, 'off'])).requireJwt).toBe(false);
    expect(await ok(['apps', 'jwt', 'remove', ...server, app.id, jwk.id])).toEqual({ id: jwk.id, deleted: true });

    // Rotate: the old key stops, the new one works.
    const rotated = await ok(['apps', 'rotate-key', ...server, app.id]);
    expect(rotated.key).not.toBe(app.key);
    expect((await blockNumber(got.urls.mainnet)).status).toBe(401);
    expect((await blockNumber(rotated.urls.mainnet)).status).toBe(200);

    // Delete: the app and the key stop working.
    expect(await ok(['apps', 'delete', ...server, app.id])).toEqual({ id: app.id, deleted: true });
    expect((await blockNumber(rotated.urls.testnet)).status).toBe(401);
    expect(await ok(['keys', 'delete', ...server, keys[0].id])).toEqual({ id: keys[0].id, deleted: true });
    expect((await blockNumber(keys[0].url)).status).toBe(401);
    expect((await fails(['keys', 'get', ...server, keys[0].id])).code).toBe(-32010);

    // Logout removes the stored session; the next command fails with the session error.
    expect(await ok(['logout', ...server])).toEqual({ loggedOut: true, server: origin });
    expect(JSON.parse(readFileSync(sessionFile, 'utf8')).sessions).toEqual({});
    const after = await fails(['keys', 'list', ...server]);
    expect(after.code).toBe(-32016);
    expect(after.message).toMatch(/not logged in/);
    const afterHuman = await cli(['apps', 'list', ...server]);
    expect(afterHuman.code).toBe(1);
    expect(afterHuman.stdout).toBe('');
    expect(afterHuman.stderr).toMatch(/^error: not logged in.*\nhint: rpcgate login --server /);
  }, 90_000);

  it('an unreachable server is a clear error, exit 1', async () => {
    const url = `http://127.0.0.1:${await closedPort()}`;
    const e = await fails(['whoami', '--server', url]);
    expect(e.message).toMatch(/^cannot reach rpcgate at http:\/\/127\.0\.0\.1:\d+\/api \(ECONNREFUSED\)/);
    const human = await cli(['apps', 'list', '--server', url]);
    expect(human.code).toBe(1);
    expect(human.stdout).toBe('');
    expect(human.stderr).toMatch(/^error: cannot reach rpcgate at /);
  }, 30_000);
});
