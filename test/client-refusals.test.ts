// Issue 21 items 1–2: every refusal reaches the user of ethers v6, viem and web3.js v4, over HTTP and WebSocket.
// One rpcgate (in this process, SQLite, limits in a Redis of the test's own, stand-in nodes) and one child process per
// library × transport (test/helpers/client-refusals-child.mjs), each running every refusal as a dApp would meet it.
// For each case: the message the library throws names the cause, within 10 s, and the child is alive at the end
// (ethers' WebSocketProvider used to die of an unhandled 'error' on a refused upgrade). A client that retries a
// per-second rate and then succeeds is fine. The matrix (case × library × transport → the message's first 80
// characters) is printed and saved to test-output/client-refusals.md.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { exportSPKI, generateKeyPair, SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startService, type RunningService } from '../src/gateway/server/index.js';
import {
  addJwtKey,
  createApp,
  createNetworkKey,
  createUser,
  deleteNetworkKey,
  setAllowlist,
  updateApp,
} from '../src/gateway/store/index.js';
import { haveRedisServer, ownRedis, type OwnRedis } from './helpers/redis-server.js';

const root = resolve(import.meta.dirname, '..');
const CHAIN = { mainnet: 31337, testnet: 31338 } as const;
const STATIC_KEY = 'clientmatrixstatickey';

/** A stand-in node: chain id, a block, no logs, and an eth_getCode answer far over upstream.maxResponseBytes. */
function startNode(chainId: number): Promise<{ url: string; server: Server }> {
  const block = {
    number: '0x10',
    hash: `0x${'11'.repeat(32)}`,
    parentHash: `0x${'10'.repeat(32)}`,
    timestamp: '0x6553f100',
    transactions: [],
    gasLimit: '0x1c9c380',
    gasUsed: '0x0',
    baseFeePerGas: '0x1',
    miner: `0x${'00'.repeat(20)}`,
    difficulty: '0x0',
    nonce: '0x0000000000000000',
    extraData: '0x',
    logsBloom: `0x${'00'.repeat(256)}`,
    size: '0x200',
    stateRoot: `0x${'22'.repeat(32)}`,
    receiptsRoot: `0x${'33'.repeat(32)}`,
    transactionsRoot: `0x${'44'.repeat(32)}`,
    sha3Uncles: `0x${'55'.repeat(32)}`,
    uncles: [],
    mixHash: `0x${'66'.repeat(32)}`,
    totalDifficulty: '0x0',
  };
  const big = `0x${'ab'.repeat(20_000)}`;
  const result = (m: { method: string }) =>
    m.method === 'eth_chainId'
      ? `0x${chainId.toString(16)}`
      : m.method === 'eth_blockNumber'
        ? '0x10'
        : m.method === 'eth_getBlockByNumber' || m.method === 'eth_getBlockByHash'
          ? block
          : m.method === 'eth_getLogs'
            ? []
            : m.method === 'eth_getCode'
              ? big
              : '0x1';
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const msg = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      const one = (m: { id?: unknown; method: string }) => ({ jsonrpc: '2.0', id: m.id, result: result(m) });
      const body = JSON.stringify(Array.isArray(msg) ? msg.map(one) : one(msg));
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }).end(body);
    });
  });
  return new Promise((ok) =>
    server.listen(0, '127.0.0.1', () =>
      ok({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server }),
    ),
  );
}

interface Case {
  name: string;
  /** What the thrown message must name. */
  cause: RegExp;
  path: string;
  call: 'blockNumber' | 'balance' | 'logs' | 'code';
  headers?: Record<string, string>;
  parallel?: number;
  /** A retry that ends in success is right for this case. */
  okIfSucceeds?: true;
  /** Runs after the limits backend is stopped. */
  phase?: 2;
  /** Not applicable to this library × transport, and why. */
  na?: (lib: string, transport: string) => string | undefined;
}

interface Line {
  case: string;
  ok: boolean;
  message: string;
  ms: number;
}

const LIBS = ['ethers', 'viem', 'web3'] as const;
const TRANSPORTS = ['http', 'ws'] as const;

let dataDir: string;
let svc: RunningService;
let redis: OwnRedis;
const nodes: Server[] = [];
const results = new Map<string, Map<string, Line | string>>(); // case → "lib/transport" → line or n/a reason
let cases: Case[] = [];
const rateKeys: Record<string, string> = {};

beforeAll(async () => {
  // Under CI and here the Redis binary is there; never skipped silently.
  expect(haveRedisServer(), 'redis-server is needed for the limits-backend case').toBe(true);
  redis = await ownRedis();
  const main = await startNode(CHAIN.mainnet);
  const test = await startNode(CHAIN.testnet);
  nodes.push(main.server, test.server);
  dataDir = mkdtempSync(join(tmpdir(), 'rpcgate-client-refusals-'));
  svc = await startService({
    port: 0,
    logLevel: 'silent',
    dataDir,
    devKey: false,
    keys: [STATIC_KEY],
    redisUrl: redis.url,
    redisPrefix: 'client-refusals',
    limits: { a: { perSecond: 1, daily: null, monthly: null }, b: { dailyPerUser: 3 } },
    networks: {
      mainnet: { upstreams: [main.url], chainId: CHAIN.mainnet },
      testnet: { upstreams: [test.url], chainId: CHAIN.testnet },
    },
    upstream: { getLogsMaxBlockRange: 100, maxResponseBytes: 4096 },
  });
  const db = svc.store.db;
  const userId = (await createUser(db, { email: 'matrix@example.com', passwordHash: 'x' })).id;
  const appInput = { name: 'matrix', useCase: 'Defi', chain: 'ethereum', services: ['node-api'] };
  // More apps than an account may create through the API (accounts.maxAppsPerUser): this store call says so.
  const app = () => createApp(db, svc.secret, userId, { ...appInput }, { maxPerUser: 100 });
  const plain = await app();
  const origin = await app();
  await setAllowlist(db, userId, origin.id, 'origin', ['https://dapp.example.com']);
  const ip = await app();
  await setAllowlist(db, userId, ip.id, 'ip', ['10.0.0.0/8']);
  const method = await app();
  await setAllowlist(db, userId, method.id, 'method', ['eth_chainId']);
  const jwtApp = await app();
  const { publicKey, privateKey } = await generateKeyPair('ES256');
  const jwk = await addJwtKey(db, userId, jwtApp.id, { alg: 'ES256', publicKeyPem: await exportSPKI(publicKey) });
  await updateApp(db, svc.secret, userId, jwtApp.id, { requireJwt: true });
  const now = Math.floor(Date.now() / 1000);
  const expired = await new SignJWT({ iat: now - 7200, exp: now - 3600 })
    .setProtectedHeader({ alg: 'ES256', kid: jwk!.id })
    .sign(privateKey);
  // Each library × transport has its own per-second app (1 call a second), so the six children do not share a second.
  for (const lib of LIBS) for (const t of TRANSPORTS) rateKeys[`${lib}/${t}`] = (await app()).key;
  const limitsDown = await app();
  const testnetKey = await createNetworkKey(db, svc.secret, userId, { name: 'testnet', network: 'testnet' });
  const gone = await createNetworkKey(db, svc.secret, userId, { name: 'gone', network: 'mainnet' });
  await deleteNetworkKey(db, userId, gone.id);
  // A user whose daily quota (plan B: 3 per day) is used up.
  const quotaUser = (await createUser(db, { email: 'quota@example.com', passwordHash: 'x' })).id;
  const quota = await createNetworkKey(db, svc.secret, quotaUser, { name: 'quota', network: 'mainnet' });
  await svc.access.sync();
  for (let i = 0; i < 3; i++) {
    const r = await fetch(`${svc.url}/mainnet/${quota.key}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: i, method: 'eth_chainId', params: [] }),
    });
    expect(r.status).toBe(200);
  }
  const viemWsHeaders = (lib: string, t: string) =>
    lib === 'viem' && t === 'ws' ? "viem's webSocket transport cannot send headers" : undefined;
  cases = [
    { name: 'wrong key', cause: /invalid API key/, path: '/mainnet/v2/nosuchkey1234567890', call: 'blockNumber' },
    { name: 'deleted key', cause: /invalid API key/, path: `/mainnet/${gone.key}`, call: 'blockNumber' },
    {
      name: 'key on another network',
      cause: /valid only for network testnet/,
      path: `/mainnet/${testnetKey.key}`,
      call: 'blockNumber',
    },
    {
      name: 'wrong URL shape',
      cause: /app key: use \/mainnet\/v2/,
      path: `/mainnet/${plain.key}`,
      call: 'blockNumber',
    },
    { name: 'origin not allowed', cause: /Origin/, path: `/mainnet/v2/${origin.key}`, call: 'blockNumber' },
    {
      name: 'IP not allowed',
      cause: /IP address 127\.0\.0\.1 is not on this app's allowlist/,
      path: `/mainnet/v2/${ip.key}`,
      call: 'blockNumber',
    },
    { name: 'JWT missing', cause: /requires a JWT/, path: `/mainnet/v2/${jwtApp.key}`, call: 'blockNumber' },
    {
      name: 'JWT expired',
      cause: /JWT has expired/,
      path: `/mainnet/v2/${jwtApp.key}`,
      call: 'blockNumber',
      headers: { authorization: `Bearer ${expired}` },
      na: viemWsHeaders,
    },
    {
      name: 'method not allowed',
      cause: /method not allowed for this key: eth_blockNumber/,
      path: `/mainnet/v2/${method.key}`,
      call: 'blockNumber',
    },
    {
      name: 'eth_getLogs range too large',
      cause: /block range too large/,
      path: `/mainnet/${STATIC_KEY}`,
      call: 'logs',
    },
    { name: 'response too large', cause: /response too large/, path: `/mainnet/${STATIC_KEY}`, call: 'code' },
    {
      name: 'per-second rate',
      cause: /limit exceeded: 1 requests per second/,
      path: '',
      call: 'balance',
      parallel: 3,
      okIfSucceeds: true,
    },
    {
      name: 'daily quota',
      cause: /daily quota of 3 requests used up/,
      path: `/mainnet/${quota.key}`,
      call: 'blockNumber',
    },
    {
      name: 'limits backend down',
      cause: /limits backend unavailable/,
      path: `/mainnet/v2/${limitsDown.key}`,
      call: 'blockNumber',
      phase: 2,
    },
  ];
}, 60_000);

afterAll(async () => {
  await svc?.stop();
  for (const s of nodes) s.close();
  await redis?.kill();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

interface Child {
  proc: ChildProcess;
  lines: Line[];
  out(): string;
  err(): string;
  /** Resolves true when the child printed `marker` (PAUSE / END), false if it exited first (a crash: reported). */
  reached(marker: string): Promise<boolean>;
}

function startChild(lib: string, transport: string): Child {
  const base = svc.url.replace(/^http/, transport === 'ws' ? 'ws' : 'http');
  const list = cases
    .filter((c) => c.na?.(lib, transport) === undefined)
    .map((c) => ({
      name: c.name,
      url: base + (c.path === '' ? `/mainnet/v2/${rateKeys[`${lib}/${transport}`]}` : c.path),
      call: c.call,
      headers: c.headers,
      parallel: c.parallel,
      phase: c.phase ?? 1,
    }));
  const proc = spawn(
    process.execPath,
    [
      join(root, 'test/helpers/client-refusals-child.mjs'),
      JSON.stringify({ lib, transport, chainId: CHAIN.mainnet, cases: list }),
    ],
    { cwd: root, stdio: ['pipe', 'pipe', 'pipe'] },
  );
  let out = '';
  let err = '';
  const lines: Line[] = [];
  proc.stdout!.setEncoding('utf8').on('data', (d: string) => {
    out += d;
  });
  proc.stderr!.setEncoding('utf8').on('data', (d: string) => (err += d));
  const reached = (marker: string) =>
    new Promise<boolean>((ok) => {
      const t = setInterval(() => {
        if (out.split('\n').includes(marker)) {
          clearInterval(t);
          ok(true);
        } else if (proc.exitCode !== null || proc.signalCode !== null) {
          clearInterval(t);
          ok(false);
        }
      }, 50);
    });
  return {
    proc,
    lines,
    out: () => out,
    err: () => err,
    reached,
  };
}

const parse = (out: string): Line[] =>
  out
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Line);

/** The first 80 characters of a message (whitespace collapsed); the cause's context after them if it comes later. */
function cell(l: Line | string | undefined, cause: RegExp): string {
  if (l === undefined) return '(no line)';
  if (typeof l === 'string') return `n/a: ${l}`;
  const flat = l.message.replace(/\s+/g, ' ').replace(/\|/g, '\\|');
  const head = flat.slice(0, 80);
  const m = cause.exec(flat);
  const tail =
    m !== null && m.index + m[0].length > 80
      ? ` … ${flat.slice(Math.max(80, m.index - 20), m.index + m[0].length + 10)}`
      : '';
  return `${l.ok ? '✓ ' : ''}${head}${tail} (${l.ms} ms)`;
}

describe('every refusal reaches ethers v6, viem and web3.js v4 over HTTP and WebSocket', () => {
  it('each library × transport names the cause of each refusal within 10 s and stays alive', async () => {
    const children = new Map<string, Child>();
    for (const lib of LIBS) for (const t of TRANSPORTS) children.set(`${lib}/${t}`, startChild(lib, t));
    const problems: string[] = [];
    try {
      await Promise.all([...children.values()].map((c) => c.reached('PAUSE')));
      // Phase 2: the limits backend goes down.
      await redis.kill();
      for (const c of children.values()) if (c.proc.exitCode === null) c.proc.stdin!.write('go\n');
      await Promise.all([...children.values()].map((c) => c.reached('END')));
      // A crash after the last answer (an unhandled 'error' on a closed socket) would show within this second.
      await new Promise((r) => setTimeout(r, 1500));
      for (const [name, c] of children) {
        if (c.proc.exitCode !== null || c.proc.signalCode !== null)
          problems.push(
            `${name} died (${c.proc.exitCode ?? c.proc.signalCode}): ${
              c
                .err()
                .split('\n')
                .find((l) => /Error/.test(l)) ?? c.err().slice(0, 300)
            }`,
          );
        c.lines.push(...parse(c.out()));
      }
    } finally {
      for (const c of children.values()) if (c.proc.exitCode === null) c.proc.kill('SIGTERM');
    }

    for (const c of cases) {
      const row = new Map<string, Line | string>();
      results.set(c.name, row);
      for (const lib of LIBS) {
        for (const t of TRANSPORTS) {
          const na = c.na?.(lib, t);
          if (na !== undefined) {
            row.set(`${lib}/${t}`, na);
            continue;
          }
          const l = children.get(`${lib}/${t}`)!.lines.find((x) => x.case === c.name);
          if (l === undefined) {
            problems.push(`${c.name} ${lib}/${t}: no result`);
            continue;
          }
          row.set(`${lib}/${t}`, l);
          if (l.ms > 10_000) problems.push(`${c.name} ${lib}/${t}: ${l.ms} ms`);
          if (l.ok ? !c.okIfSucceeds : !c.cause.test(l.message))
            problems.push(
              `${c.name} ${lib}/${t}: ${l.ok ? 'succeeded' : `does not name the cause ${c.cause}`}: ${l.message.slice(0, 400)}`,
            );
        }
      }
    }

    const cols = LIBS.flatMap((lib) => TRANSPORTS.map((t) => `${lib}/${t}`));
    const table = [
      `| case | ${cols.join(' | ')} |`,
      `|---|${cols.map(() => '---').join('|')}|`,
      ...cases.map((c) => `| ${c.name} | ${cols.map((k) => cell(results.get(c.name)?.get(k), c.cause)).join(' | ')} |`),
    ].join('\n');
    const doc = `# Client refusal matrix (test/client-refusals.test.ts)\n\nethers v6 (static network), viem (http / webSocket), web3.js v4; each cell: the thrown message's first 80 characters (… the cause when it comes later), ✓ = the calls succeeded after the library's own retries.\n\n${table}\n`;
    mkdirSync(join(root, 'test-output'), { recursive: true });
    writeFileSync(join(root, 'test-output/client-refusals.md'), doc);
    console.log(doc);
    expect(problems).toEqual([]);
  }, 110_000);
});
