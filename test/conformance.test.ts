// `rpcgate conformance` against real endpoints: anvil directly (seeded with the embedded chain's token and
// transfers), rpcgate on its embedded defaults, and a deliberately broken endpoint that must fail.
import { execFile } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import { mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compileToken, seedChain, startAnvil, type Anvil, type SeededChain } from '../src/gateway/chain/index.js';
import { runNodeConformance as runConformance, type ChainFacts } from '../src/gateway/node-api/conformance/index.js';
import {
  formatReport,
  summaryLine,
  type ConformanceReport as GenericReport,
} from '../packages/toolkit/src/conformance/index.js';

type ConformanceReport = GenericReport<ChainFacts>;
import { methods } from '../generated/node/methods.js';
import { startService } from '../src/gateway/server/service.js';

const run = promisify(execFile);
const root = resolve(import.meta.dirname, '..');
// The service's data dir (git-ignored): the compiled seed token is cached there and shared with other tests.
const dataDir = resolve(root, '.data');

/** Runs the real CLI in a subprocess; returns exit code and output. */
async function cli(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run('npx', ['tsx', 'src/cli/main.ts', 'conformance', ...args], {
      cwd: root,
      timeout: 120_000,
    });
    return { code: 0, stdout, stderr };
  } catch (e) {
    const err = e as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof err.code === 'number' ? err.code : -1, stdout: err.stdout ?? '', stderr: err.stderr ?? '' };
  }
}

const byName = (r: ConformanceReport, name: string) => [...r.methods, ...r.protocol].find((m) => m.name === name);
const failures = (r: ConformanceReport) => [...r.methods, ...r.protocol].filter((m) => m.status === 'FAIL');

let anvil: Anvil;
let seeded: SeededChain;

beforeAll(async () => {
  mkdirSync(dataDir, { recursive: true });
  anvil = await startAnvil({ chainId: 31_999, blockTime: 2 });
  seeded = await seedChain(anvil.url, compileToken(dataDir), 'conformance');
});
afterAll(async () => {
  await anvil?.stop();
});

describe('conformance against anvil directly', () => {
  let report: ConformanceReport;
  beforeAll(async () => {
    report = await runConformance(anvil.url);
    console.log(formatReport(report));
  });

  it('passes every method (rpc.discover skipped: a plain node has none; net_peerCount: anvil does not implement it)', () => {
    expect(failures(report)).toEqual([]);
    expect(report.ok).toBe(true);
    const names = report.methods.map((m) => m.name);
    expect(names.sort()).toEqual(Object.keys(methods).sort());
    expect(byName(report, 'rpc.discover')?.status).toBe('SKIP');
    expect(report.facts?.unsupported).toEqual(['net_peerCount']);
    expect(byName(report, 'net_peerCount')).toMatchObject({
      status: 'SKIP',
      detail: expect.stringMatching(/does not implement net_peerCount \(-32601/),
    });
    expect(report.summary.skipped).toBe(2);
    expect(report.summary.passed).toBe(report.methods.length - 2 + report.protocol.length);
  });

  it('adapted the examples to the live chain: a real log, its transaction, its block', () => {
    expect(report.facts?.chainId).toBe('0x7cff'); // 31999
    // The only logs on this chain are the seed token's (mint, transfers, approval): the tx is one of the seed's.
    expect(report.facts?.log?.address.toLowerCase()).toBe(seeded.token.address.toLowerCase());
    expect(seeded.transactions.map((h) => h.toLowerCase())).toContain(report.facts?.tx?.hash.toLowerCase());
    expect(report.facts?.log?.transactionHash).toBe(report.facts?.tx?.hash);
    const byHash = byName(report, 'eth_getTransactionByHash');
    expect(byHash?.params).toEqual([report.facts?.tx?.hash]);
    const logs = byName(report, 'eth_getLogs');
    expect((logs?.params?.[0] as { address?: string } | undefined)?.address).toBe(report.facts?.log?.address);
    expect(byName(report, 'eth_call')?.params?.[0]).toMatchObject({ to: report.facts?.log?.address });
  });

  it('the remaining standard reads of issue 12 pass, adapted to the live chain', () => {
    const reads = [
      'eth_accounts',
      'eth_getProof',
      'eth_createAccessList',
      'net_listening',
      'web3_sha3',
      'eth_protocolVersion',
      'eth_getUncleByBlockHashAndIndex',
      'eth_getUncleByBlockNumberAndIndex',
      'eth_getUncleCountByBlockHash',
      'eth_getUncleCountByBlockNumber',
      'eth_blobBaseFee',
    ];
    for (const m of reads) expect(byName(report, m)?.status, `${m}: ${byName(report, m)?.detail}`).toBe('PASS');
    const token = report.facts!.log!.address;
    // The proof is of the token (a real contract) at the head; the access list is of a real call to it.
    expect(byName(report, 'eth_getProof')?.params?.[0]).toBe(token);
    expect(byName(report, 'eth_createAccessList')?.params?.[0]).toMatchObject({ to: token, input: '0x18160ddd' });
    expect(byName(report, 'eth_getUncleCountByBlockHash')?.params).toEqual([report.facts?.tx?.blockHash]);
    expect(byName(report, 'web3_sha3')?.detail).toContain(
      '0x47173285a8d7341e5e972fc677286384f802f8ef42a5ec5f03bbfa254cb01fad',
    );
  });

  it('eth_sendRawTransaction: the invalid raw tx is refused by the node, which is the conformant answer', () => {
    const send = byName(report, 'eth_sendRawTransaction');
    expect(send?.status).toBe('PASS');
    expect(send?.params).toEqual(['0x00']);
    expect(send?.detail).toMatch(/^error -?\d+ ".+" as expected/);
  });

  it('protocol checks: unknown method -32601, invalid params -32602, batch', () => {
    expect(report.protocol.map((p) => [p.name, p.status])).toEqual([
      ['protocol:unknown-method', 'PASS'],
      ['protocol:invalid-params', 'PASS'],
      ['protocol:missing-params', 'PASS'],
      ['protocol:batch', 'PASS'],
    ]);
  });

  it('--only limits the run; an unknown name fails', async () => {
    const r = await runConformance(anvil.url, { only: ['eth_chainId', 'eth_getLogs', 'eth_noSuch'] });
    expect(r.methods.map((m) => [m.name, m.status])).toEqual([
      ['eth_chainId', 'PASS'],
      ['eth_getLogs', 'PASS'],
      ['eth_noSuch', 'FAIL'],
    ]);
    expect(r.protocol).toEqual([]);
    expect(r.ok).toBe(false);
  });

  it('the CLI exits 0 and prints the table and the summary line', async () => {
    const out = await cli(anvil.url);
    expect(out.stderr).not.toMatch(/Error/);
    expect(out.code).toBe(0);
    expect(out.stdout).toMatch(/^eth_getBlockByHash\s+PASS\s/m);
    expect(out.stdout).toMatch(/^rpc\.discover\s+SKIP\s/m);
    expect(out.stdout).toMatch(/^net_peerCount\s+SKIP\s/m);
    for (const m of [
      'eth_getProof',
      'eth_createAccessList',
      'web3_sha3',
      'eth_getUncleByBlockNumberAndIndex',
      'eth_blobBaseFee',
    ])
      expect(out.stdout).toMatch(new RegExp(`^${m}\\s+PASS\\s`, 'm'));
    expect(out.stdout).toMatch(/\d+ passed, 0 failed, 2 skipped\s*$/);
  });

  it('the CLI --json prints the report', async () => {
    const out = await cli(anvil.url, '--json', '--only', 'eth_blockNumber,eth_getBalance');
    expect(out.code).toBe(0);
    const r = JSON.parse(out.stdout) as ConformanceReport;
    expect(r.ok).toBe(true);
    expect(r.methods.map((m) => m.name)).toEqual(['eth_blockNumber', 'eth_getBalance']);
    expect(r.summary).toEqual({ passed: 2, failed: 0, skipped: 0 });
  });
});

describe('conformance against a broken endpoint', () => {
  // A stand-in that forwards to the same anvil but returns malformed blocks (number as a JSON number,
  // logsBloom truncated): everything else is the real node, so exactly the block methods must fail.
  let broken: Server;
  let url: string;
  beforeAll(async () => {
    broken = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', async () => {
        const body = Buffer.concat(chunks).toString();
        const upstream = await fetch(anvil.url, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body,
        });
        const json = (await upstream.json()) as unknown;
        const calls = JSON.parse(body) as unknown;
        const corrupt = (reply: { result?: Record<string, unknown> | null }, call: { method?: string }) => {
          if (/^eth_getBlockBy(Number|Hash)$/.test(call?.method ?? '') && reply.result) {
            reply.result.number = Number(reply.result.number);
            reply.result.logsBloom = '0x00';
          }
        };
        if (Array.isArray(json) && Array.isArray(calls)) for (const [i, r] of json.entries()) corrupt(r, calls[i]);
        else corrupt(json as { result?: Record<string, unknown> }, calls as { method?: string });
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(json));
      });
    });
    await new Promise<void>((r) => broken.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(broken.address() as { port: number }).port}/`;
  });
  afterAll(() => new Promise<void>((r) => broken.close(() => r())));

  it('fails the block methods with the validator saying why, and the report is not ok', async () => {
    const report = await runConformance(url);
    console.log(formatReport(report));
    expect(report.ok).toBe(false);
    const failed = failures(report)
      .map((f) => f.name)
      .sort();
    expect(failed).toEqual(['eth_getBlockByHash', 'eth_getBlockByNumber'].filter((m) => m in methods));
    expect(byName(report, 'eth_getBlockByNumber')?.detail).toMatch(/result fails the contract/);
    expect(summaryLine(report)).toMatch(/, 2 failed, /);
  });

  it('the CLI exits non-zero', async () => {
    const out = await cli(url);
    expect(out.code).toBe(1);
    expect(out.stdout).toMatch(/^eth_getBlockByNumber\s+FAIL\s/m);
    expect(out.stdout).toMatch(/, 2 failed, /);
  });

  it('an endpoint that does not answer fails every method (discovery error), CLI exit 1', async () => {
    const report = await runConformance('http://127.0.0.1:9/', { timeoutMs: 2000 });
    expect(report.ok).toBe(false);
    expect(report.discoveryError).toBeTruthy();
    expect(report.summary.passed).toBe(0);
  });
});

describe('conformance against rpcgate (embedded defaults)', () => {
  let service: Awaited<ReturnType<typeof startService>>;
  beforeAll(async () => {
    service = await startService({ port: 0, strictResults: true, logLevel: 'silent', devKey: true });
  });
  afterAll(async () => {
    await service?.stop();
  });

  it('passes every method on both networks and both URL shapes, rpc.discover included (net_peerCount: the embedded anvil has none)', async () => {
    const urls = Object.values(service.urls).flatMap((u) => [u.A, u.B]);
    expect(urls).toHaveLength(4);
    for (const u of urls) {
      const report = await runConformance(u);
      console.log(formatReport(report));
      expect(failures(report), u).toEqual([]);
      expect(byName(report, 'rpc.discover')?.status).toBe('PASS');
      for (const m of [
        'eth_getProof',
        'eth_createAccessList',
        'web3_sha3',
        'eth_getUncleCountByBlockHash',
        'eth_blobBaseFee',
      ])
        expect(byName(report, m)?.status, m).toBe('PASS');
      expect(byName(report, 'net_peerCount')?.status).toBe('SKIP');
      expect(report.summary.skipped).toBe(1);
      expect(report.facts?.log).toBeTruthy();
    }
  });

  it('the CLI exits 0 against rpcgate', async () => {
    const out = await cli(service.urls.mainnet.A);
    expect(out.code).toBe(0);
    expect(out.stdout).toMatch(/\d+ passed, 0 failed, 1 skipped\s*$/);
  });
});
