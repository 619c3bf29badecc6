// The generated code examples (the Set up tab, generated/node/examples.ts) run against the live server:
// every JavaScript example with node, every TypeScript example with tsx, each must exit 0. The web3.py examples
// must compile (python3 -m py_compile); web3.py is not installed, so they are not run. The generated Python client's
// examples (generated/python/rpcgate_node) pass `mypy --strict` and run with the plain interpreter, each exit 0.
//
// The contract's examples were recorded on another chain (their block numbers, hashes and addresses do not
// exist here, and viem/web3.js throw on a `null` block or transaction). So, exactly as `rpcgate conformance`
// does, the example VALUES are adapted to the live chain first — each literal of the contract's first example
// (quoted hex, or its `123n` bigint form) is replaced by the live value conformance would send; the code is
// otherwise run exactly as generated.
//
// The one documented exception: eth_sendRawTransaction. Its contract example is a signed transaction for the
// fixture chain (another chain id, an unfunded sender), which no live chain can accept. Its examples must run,
// reach the node, and report the node's JSON-RPC error (non-zero exit, the error in the output) — that is
// the correct behaviour of an example whose call the node refuses, so it is asserted, not skipped.
import { execFile } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { examples } from '../generated/node/examples.js';
import { methods } from '../generated/node/methods.js';
import { startService } from '../src/gateway/server/service.js';
import { adaptParams, discoverChain, type ChainFacts } from '../src/gateway/node-api/conformance/index.js';
import { firstExampleParams, RpcTransport } from '../packages/toolkit/src/conformance/index.js';
import { requireMypy } from './helpers/python.js';

const exec = promisify(execFile);
const root = resolve(import.meta.dirname, '..');
// Inside the repo (git-ignored) so that `import 'ethers'` etc. resolve from the checkout's node_modules.
const dir = join(root, 'test-output', `examples-${process.pid}`);
// Examples the embedded node refuses: the contract's fixture-chain transaction, and net_peerCount, which anvil does not
// implement (-32601 from anvil, forwarded unchanged): the example must report the node's error.
const EXPECTED_TO_FAIL = new Set(['eth_sendRawTransaction', 'net_peerCount']);

interface Example {
  id: string;
  language: 'shell' | 'javascript' | 'typescript' | 'python';
  label: string;
  code: string;
}
const all = Object.entries(examples as Record<string, Example[]>).flatMap(([method, set]) =>
  set.map((ex) => ({ method, ...ex })),
);
const runnable = all.filter((e) => e.language === 'javascript' || e.language === 'typescript');
const python = all.filter((e) => e.id === 'web3py');
const pythonClient = all.filter((e) => e.id === 'rpcgatepy');
const PYTHONPATH = join(root, 'generated', 'python');

let service: Awaited<ReturnType<typeof startService>>;
let rpcUrl: string;
/** What the node answers to eth_sendRawTransaction with the contract's example (asked directly). */
let sendRawReply: { result?: unknown; error?: { code: number; message: string } };
let contract: Parameters<typeof firstExampleParams>[0];
let facts: ChainFacts;
/** Live filter ids (made by the dev key) for the examples of the methods that take one: the contract's id is unknown here. */
const liveFilters = new Map<string, string>();

beforeAll(async () => {
  mkdirSync(dir, { recursive: true });
  service = await startService({ port: 0, strictResults: true, logLevel: 'silent', devKey: true });
  rpcUrl = service.urls.mainnet.A;
  contract = JSON.parse(readFileSync(join(root, 'openrpc.json'), 'utf8'));
  facts = await discoverChain(new RpcTransport(rpcUrl, { timeoutMs: 10_000 }), {
    scanBlocks: 10_000,
    logWindow: 64,
    txScanBlocks: 64,
  });
  sendRawReply = await askNode();
  const install = async (method: string, params: unknown[]) =>
    (
      (await (
        await fetch(rpcUrl, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
        })
      ).json()) as { result: string }
    ).result;
  liveFilters.set('eth_getFilterChanges', await install('eth_newBlockFilter', []));
  liveFilters.set('eth_getFilterLogs', await install('eth_newFilter', [{}]));
  liveFilters.set('eth_uninstallFilter', await install('eth_newBlockFilter', []));
});
afterAll(async () => {
  await service?.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** eth_sendRawTransaction with the contract's example, asked directly: the node's answer right now. Which
 * refusal it is changes with the chain (while the base fee is above the tx's gas price: "fee too low", after:
 * "insufficient funds"), so it is sampled right before and right after each example run. */
async function askNode(
  method = 'eth_sendRawTransaction',
): Promise<{ result?: unknown; error?: { code: number; message: string; data?: { source?: string } } }> {
  const params = firstExampleParams(contract, method);
  const res = await fetch(rpcUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
  return (await res.json()) as {
    result?: unknown;
    error?: { code: number; message: string; data?: { source?: string } };
  };
}

interface Outcome {
  code: number;
  stdout: string;
  stderr: string;
}

async function runFile(file: string, lang: Example['language'], python = 'python3'): Promise<Outcome> {
  // TypeScript through tsx's loader in the same node process (what `npx tsx file.ts` does, minus a second process).
  // Python without bytecode files (generated/python must stay as generated) and the generated client on its path.
  const [cmd, args] =
    lang === 'typescript'
      ? [process.execPath, ['--import', 'tsx', file]]
      : lang === 'python'
        ? [python, ['-B', file]]
        : [process.execPath, [file]];
  try {
    const env = {
      ...process.env,
      RPC_URL: rpcUrl,
      ...(lang === 'python' ? { PYTHONPATH, PYTHONDONTWRITEBYTECODE: '1' } : {}),
    };
    const { stdout, stderr } = await exec(cmd, args, { cwd: dir, timeout: 60_000, env });
    return { code: 0, stdout, stderr };
  } catch (e) {
    const err = e as { code?: number | string; stdout?: string; stderr?: string };
    return {
      code: typeof err.code === 'number' ? err.code : -1,
      stdout: err.stdout ?? '',
      stderr: err.stderr ?? String(e),
    };
  }
}

const HEX = /^0x[0-9a-fA-F]+$/;

/** Example value → live value, for every hex leaf of the contract's first example that conformance adapts. */
function liveValues(method: string): Map<string, string> {
  const map = new Map<string, string>();
  if (method === 'eth_sendRawTransaction') return map; // kept: the node's refusal is the expected outcome
  if (facts.unsupported.includes(method)) return map; // the node lacks it (net_peerCount on anvil): nothing to adapt
  const example = firstExampleParams(contract, method) ?? [];
  const adapted = adaptParams(
    method,
    methods[method as keyof typeof methods].params.map((p) => p.name),
    example,
    facts,
  );
  if ('skip' in adapted) throw new Error(`${method}: ${adapted.skip}`);
  const walk = (a: unknown, b: unknown) => {
    if (
      typeof a === 'string' &&
      typeof b === 'string' &&
      HEX.test(a) &&
      HEX.test(b) &&
      a.toLowerCase() !== b.toLowerCase()
    )
      map.set(a, b);
    else if (a && b && typeof a === 'object' && typeof b === 'object') {
      for (const k of Object.keys(a)) walk((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]);
    }
  };
  walk(example, adapted.params);
  const filter = liveFilters.get(method);
  if (filter !== undefined) map.set(String(example[0]), filter);
  return map;
}

/** Replaces quoted hex literals and, for quantities, their bigint (`123n`) and long decimal forms. */
function adaptCode(code: string, values: Map<string, string>): string {
  const forms = new Map<string, string>();
  for (const [from, to] of values) {
    forms.set(`'${from}'`, `'${to}'`);
    forms.set(`"${from}"`, `"${to}"`);
    if (from.length < 42 && to.length < 42) {
      forms.set(`${BigInt(from)}n`, `${BigInt(to)}n`);
      if (BigInt(from) >= 100n) forms.set(String(BigInt(from)), String(BigInt(to)));
    }
  }
  if (forms.size === 0) return code;
  // One pass, longest first, so a replaced value is never replaced again.
  const keys = [...forms.keys()]
    .sort((x, y) => y.length - x.length)
    .map((k) => k.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
  const re = new RegExp(`(?<![0-9A-Za-z])(?:${keys.join('|')})(?![0-9A-Za-z])`, 'gi');
  return code.replace(
    re,
    (m) => forms.get(m) ?? forms.get([...forms.keys()].find((k) => k.toLowerCase() === m.toLowerCase())!)!,
  );
}

/** Runs tasks with a fixed concurrency (the machine has 2 cores). */
async function pool<T, R>(items: T[], limit: number, fn: (t: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(limit, items.length) }, async () => {
      while (next < items.length) {
        const i = next++;
        out[i] = await fn(items[i]);
      }
    }),
  );
  return out;
}

describe('generated examples', () => {
  it('exist for every method: JavaScript (ethers, web3.js, fetch), TypeScript (viem, rpcgate client), Python, curl', () => {
    const names = Object.keys(methods);
    expect(Object.keys(examples).sort()).toEqual(names.sort());
    for (const m of names) {
      const ids = (examples as Record<string, Example[]>)[m].map((e) => e.id);
      for (const id of ['curl', 'ethers', 'web3js', 'fetch', 'viem', 'rpcgate', 'web3py', 'rpcgatepy'])
        expect(ids, m).toContain(id);
    }
    for (const e of all) expect(e.code, `${e.method}/${e.id}`).toContain('{{RPC_URL}}');
  });

  it("are adapted to the live chain (a real transaction hash replaces the contract example's)", () => {
    const txExamples = runnable.filter((e) => e.method === 'eth_getTransactionByHash');
    expect(txExamples.length).toBeGreaterThanOrEqual(4);
    for (const ex of txExamples) expect(adaptCode(ex.code, liveValues(ex.method)), ex.id).toContain(facts.tx!.hash);
  });

  it('JavaScript and TypeScript examples run against the server and succeed', async () => {
    // The node, not rpcgate, must refuse the contract's example transaction (-32601 would be rpcgate's own answer).
    const sendRawError = sendRawReply.error!;
    expect(sendRawReply.error, 'eth_sendRawTransaction with the contract example must be refused').toBeDefined();
    expect(sendRawError.code, sendRawError.message).not.toBe(-32601);
    const results = await pool(runnable, 2, async (ex) => {
      const file = join(
        dir,
        `${ex.method.replace(/\W/g, '_')}-${ex.id}.${ex.language === 'typescript' ? 'ts' : 'mjs'}`,
      );
      writeFileSync(file, adaptCode(ex.code, liveValues(ex.method)).replaceAll('{{RPC_URL}}', rpcUrl));
      if (!EXPECTED_TO_FAIL.has(ex.method)) return { ex, file, out: await runFile(file, ex.language), nodeSays: [] };
      const before = await askNode(ex.method);
      // The refusal must be the node's, passed through, not one of rpcgate's own (data.source "rpcgate").
      expect(before.error?.data?.source, `${ex.method}: ${JSON.stringify(before)}`).toBeUndefined();
      const out = await runFile(file, ex.language);
      const after = await askNode(ex.method);
      return { ex, file, out, nodeSays: [before.error?.message, after.error?.message].filter((m): m is string => !!m) };
    });
    const problems: string[] = [];
    for (const { ex, file, out, nodeSays } of results) {
      const text = `${out.stdout}\n${out.stderr}`;
      const where = `${ex.method} ${ex.id} (${file})`;
      // Errors that mean the example itself is broken, whatever the node says.
      if (/ERR_MODULE_NOT_FOUND|SyntaxError|ReferenceError|is not a function|Cannot find (module|package)/.test(text)) {
        problems.push(`${where}: broken example:\n${text.slice(0, 600)}`);
      } else if (EXPECTED_TO_FAIL.has(ex.method)) {
        // The node's refusal of the fixture-chain transaction, reported by the example.
        if (
          out.code === 0 ||
          nodeSays.length === 0 ||
          !nodeSays.some((m) => text.toLowerCase().includes(m.toLowerCase()))
        ) {
          problems.push(
            `${where}: expected the node's error (${nodeSays.join(' / ')}) to be reported, got exit ${out.code}:\n${text.slice(0, 600)}`,
          );
        }
      } else if (out.code !== 0) {
        problems.push(`${where}: exit ${out.code}:\n${text.slice(0, 600)}`);
      }
    }
    console.log(
      `${results.length} examples run: ${results.filter((r) => r.out.code === 0).length} exit 0; ` +
        `eth_sendRawTransaction's report the node's error ${sendRawError.code} "${sendRawError.message}"`,
    );
    expect(problems).toEqual([]);
    expect(results.length).toBeGreaterThanOrEqual(Object.keys(methods).length * 4);
  }, 600_000);

  it('Python examples of the generated client (rpcgate_node) pass mypy --strict and run against the server', async () => {
    const py = requireMypy('examples: the rpcgate Python client');
    if (!py) return;
    expect(pythonClient.length).toBe(Object.keys(methods).length);
    const files = pythonClient.map((ex) => {
      const file = join(dir, `${ex.method.replace(/\W/g, '_')}_${ex.id}.py`);
      writeFileSync(file, adaptCode(ex.code, liveValues(ex.method)).replaceAll('{{RPC_URL}}', rpcUrl));
      return { ex, file };
    });
    // The examples as the user gets them, with the generated package on mypy's path: the calls' types must hold.
    const checked = await exec(
      py.python,
      [
        '-m',
        'mypy',
        '--strict',
        '--no-error-summary',
        '--cache-dir',
        join(dir, '.mypy_cache'),
        ...files.map((f) => f.file),
      ],
      {
        cwd: dir,
        timeout: 300_000,
        env: { ...process.env, MYPYPATH: PYTHONPATH },
      },
    ).then(
      (r) => r.stdout + r.stderr,
      (e: { stdout?: string; stderr?: string }) => `${e.stdout ?? ''}${e.stderr ?? ''}`,
    );
    expect(checked.trim()).toBe('');
    const problems: string[] = [];
    const results = await pool(files, 2, async ({ ex, file }) => ({
      ex,
      file,
      out: await runFile(file, 'python', py.python),
    }));
    for (const { ex, file, out } of results) {
      const text = `${out.stdout}\n${out.stderr}`;
      const where = `${ex.method} ${ex.id} (${file})`;
      if (/ModuleNotFoundError|ImportError|SyntaxError|NameError|AttributeError|TypeError/.test(text))
        problems.push(`${where}: broken example:\n${text.slice(0, 600)}`);
      else if (EXPECTED_TO_FAIL.has(ex.method)) {
        // The node's refusal, raised as RpcError (its code and message in the traceback), exit non-zero.
        if (out.code === 0 || !/RpcError: -?\d+: /.test(text))
          problems.push(
            `${where}: expected the node's error raised as RpcError, got exit ${out.code}:\n${text.slice(0, 600)}`,
          );
      } else if (out.code !== 0) problems.push(`${where}: exit ${out.code}:\n${text.slice(0, 600)}`);
      else JSON.parse(out.stdout); // the result printed as JSON
    }
    expect(problems).toEqual([]);
  }, 600_000);

  it('web3.py examples compile (python3 -m py_compile)', async () => {
    const files = python.map((ex) => {
      const file = join(dir, `${ex.method.replace(/\W/g, '_')}_${ex.id}.py`);
      writeFileSync(file, ex.code);
      return file;
    });
    expect(files.length).toBe(Object.keys(methods).length);
    const { stderr } = await exec('python3', ['-m', 'py_compile', ...files], { cwd: dir });
    expect(stderr).toBe('');
  });
});
