// `rpcgate conformance <url> --spec <document>` over real HTTP: servers built with the toolkit's createServer from a
// document's own examples (test/helpers/example-handlers.ts) must pass against that document, for every document of
// a corpus no one here wrote plus the repository's two contracts; a server of another document, a wrong result shape,
// undeclared errors and a broken envelope must fail, by name and with the reason.
import { execFile } from 'node:child_process';
import { createServer as createHttpServer, type Server } from 'node:http';
import { readdirSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compileContract, type CompiledContract } from '../packages/toolkit/src/contract/compile.js';
import { loadDocument, modelDocument } from '../packages/toolkit/src/contract/model.js';
import { formatReport, specConformance, type ConformanceReport } from '../packages/toolkit/src/conformance/index.js';
import type { CallContext } from '../packages/toolkit/src/rpc/engine.js';
import { RpcError } from '../packages/toolkit/src/rpc/errors.js';
import { createServer, type RpcServer } from '../packages/toolkit/src/server/index.js';
import { exampleHandlers, type ExampleHandlerOptions } from './helpers/example-handlers.js';

const root = resolve(import.meta.dirname, '..');
const examplesDir = resolve(root, 'node_modules/@open-rpc/examples/build/service-descriptions');
const exampleDocs = readdirSync(examplesDir)
  .filter((f) => f.endsWith('.json'))
  .sort();
const corpus = [
  ...exampleDocs.map((f) => resolve(examplesDir, f)),
  resolve(root, 'node_modules/@metamask/api-specs/dist/build/openrpc.json'),
  resolve(root, 'openrpc.json'),
  resolve(root, 'contracts/account.openrpc.json'),
];
const petstore = resolve(examplesDir, 'petstore-openrpc.json');
const simpleMath = resolve(examplesDir, 'simple-math-openrpc.json');

const run = promisify(execFile);
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

const servers: RpcServer[] = [];
async function serve(
  contract: CompiledContract,
  opts: ExampleHandlerOptions & {
    strictResults?: boolean;
    wrap?: (h: ReturnType<typeof exampleHandlers>) => ReturnType<typeof exampleHandlers>;
  } = {},
): Promise<string> {
  const handlers = exampleHandlers(contract, opts);
  const server = await createServer({
    document: contract.model,
    handlers: opts.wrap ? opts.wrap(handlers) : handlers,
    strictResults: opts.strictResults,
  });
  servers.push(server);
  return server.listen(0, '127.0.0.1');
}
afterAll(async () => {
  await Promise.all(servers.map((s) => s.close()));
});

const rows = (r: ConformanceReport) => [...r.methods, ...r.protocol];
const failures = (r: ConformanceReport) => rows(r).filter((x) => x.status === 'FAIL');

/** Example pairings per method, counted from the JSON itself (not from the model under test). */
function pairingsPerMethod(file: string): Map<string, string[]> {
  const doc = JSON.parse(readFileSync(file, 'utf8')) as {
    methods: { name: string; examples?: { name?: string; $ref?: string }[] }[];
    components?: {
      examplePairingObjects?: Record<string, { name: string }>;
      examplePairings?: Record<string, { name: string }>;
    };
  };
  const byRef = (ref: string) => {
    const [, kind, key] = /^#\/components\/([^/]+)\/(.+)$/.exec(ref) ?? [];
    return (
      (doc.components as Record<string, Record<string, { name: string }>> | undefined)?.[kind]?.[key] ?? { name: ref }
    ).name;
  };
  return new Map(doc.methods.map((m) => [m.name, (m.examples ?? []).map((x) => (x.$ref ? byRef(x.$ref) : x.name!))]));
}

describe('a server built from a document passes against that document', () => {
  it('the corpus is there: the @open-rpc/examples documents, MetaMask api-specs, the repository contracts', () => {
    expect(exampleDocs.length).toBeGreaterThanOrEqual(6);
    expect(exampleDocs).toContain('simple-math-openrpc.json');
    expect(corpus).toHaveLength(exampleDocs.length + 3);
  });

  for (const file of corpus) {
    const label = file.slice(root.length + 1);
    it(`${label}: every pairing and method passes, envelope and protocol checks included`, async () => {
      const contract = compileContract(await loadDocument(file));
      const url = await serve(contract);
      const report = await specConformance(url, contract, { timeoutMs: 10_000 });
      if (!report.ok) console.log(formatReport(report));
      expect(failures(report)).toEqual([]);
      expect(report.ok).toBe(true);

      // One row per example pairing; a method without examples is one row with generated params.
      const pairings = pairingsPerMethod(file);
      const expected = [...pairings.values()].reduce((n, xs) => n + Math.max(1, xs.length), 0);
      expect(report.methods).toHaveLength(expected);
      for (const [method, names] of pairings) {
        const mine = report.methods.filter((m) => m.name === method);
        if (names.length) {
          expect(
            mine.map((m) => m.example),
            method,
          ).toEqual(names);
          for (const m of mine) expect(m.detail).toContain(`params from example "${m.example}"`);
        } else {
          expect(mine, method).toHaveLength(1);
          expect(mine[0].detail).toMatch(/no example: params generated from the schemas/);
        }
      }
      const passed = report.methods.filter((m) => m.status === 'PASS');
      expect(passed.length).toBeGreaterThan(0);
      // Skips are allowed only with a reason (no generated params); none happen in this corpus.
      expect(report.summary).toEqual({ passed: expected + 4, failed: 0, skipped: 0, warnings: 0 });
      expect(report.protocol.map((p) => [p.name, p.status])).toEqual([
        ['protocol:unknown-method', 'PASS'],
        ['protocol:invalid-json', 'PASS'],
        ['protocol:batch', 'PASS'],
        ['protocol:rpc.discover', 'PASS'],
      ]);
      expect(report.protocol.find((p) => p.name === 'protocol:rpc.discover')?.detail).toContain(
        `(${pairings.size} of the spec's ${pairings.size})`,
      );
    });
  }

  it("MetaMask: the document's own invalid example params are answered -32602, which passes and says why", async () => {
    const file = resolve(root, 'node_modules/@metamask/api-specs/dist/build/openrpc.json');
    const contract = compileContract(await loadDocument(file));
    const report = await specConformance(await serve(contract), contract, {
      only: ['eth_getFilterChanges', 'eth_blockNumber'],
    });
    const filter = report.methods.find((m) => m.name === 'eth_getFilterChanges')!;
    expect(filter.status).toBe('PASS');
    expect(filter.detail).toMatch(
      /^error -32602 .*standard answer to params that fail the method's params schema.*the document's own example params fail its params schema: \/0 must match pattern/,
    );
    expect(report.methods.find((m) => m.name === 'eth_blockNumber')?.status).toBe('PASS');
    expect(report.protocol).toEqual([]);
  });
});

describe('failures', () => {
  let petstoreContract: CompiledContract;
  let petstoreUrl: string;
  beforeAll(async () => {
    petstoreContract = compileContract(await loadDocument(petstore));
    petstoreUrl = await serve(petstoreContract);
  });

  it("petstore's server against simple-math's document: the CLI exits 1 and the failing rows are simple-math's methods", async () => {
    const out = await cli(petstoreUrl, '--spec', simpleMath, '--json');
    expect(out.code).toBe(1);
    const report = JSON.parse(out.stdout) as ConformanceReport;
    expect(report.ok).toBe(false);
    const failed = failures(report);
    expect(failed.map((f) => `${f.name} [${f.example}]`)).toEqual([
      'addition [simpleMathAdditionTwo]',
      'addition [simpleMathAdditionFour]',
      'subtraction [examplesSubtractFourTwo]',
      'subtraction [examplesSubtractEightFour]',
    ]);
    for (const f of failed) expect(f.detail).toMatch(/^method not found, but the document declares this method/);
    expect(report.summary).toEqual({ passed: 4, failed: 4, skipped: 0, warnings: 0 });
    // The protocol checks need no knowledge of the API: petstore's server passes them.
    expect(report.protocol.every((p) => p.status === 'PASS')).toBe(true);
  });

  it('the CLI table names the pairings; a document that cannot be loaded is exit 2', async () => {
    const out = await cli(petstoreUrl, '--spec', simpleMath);
    expect(out.code).toBe(1);
    expect(out.stdout).toMatch(/^addition \[simpleMathAdditionTwo\]\s+FAIL\s/m);
    expect(out.stdout).toMatch(/^protocol:invalid-json\s+PASS\s/m);
    expect(out.stdout).toMatch(/4 passed, 4 failed, 0 skipped\s*$/);
    const bad = await cli(petstoreUrl, '--spec', resolve(root, 'package.json'));
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/not an OpenRPC document/);
  });

  it('a wrong result shape fails that method only, with the instance and schema paths', async () => {
    const url = await serve(petstoreContract, {
      strictResults: false,
      override: { get_pet: () => ({ id: 'seven', name: 'fluffy' }) },
    });
    const report = await specConformance(url, petstoreContract);
    expect(failures(report).map((f) => f.name)).toEqual(['get_pet']);
    const detail = failures(report)[0].detail;
    expect(detail).toMatch(
      /^result fails the contract: \/id must be integer \(schema #\/components\/schemas\/PetId\/type\)/,
    );
    expect(detail).toContain('got {"id":"seven","name":"fluffy"}');
  });

  it('errors: a declared code passes, an undeclared one, -32603 and -32601 fail', async () => {
    const url = await serve(petstoreContract, {
      wrap: (h) => ({
        ...h,
        list_pets: () => {
          throw new RpcError(100, 'pets busy');
        },
        create_pet: () => {
          throw new RpcError(-32000, 'server error');
        },
        get_pet: () => {
          throw new RpcError(-32603, 'internal');
        },
      }),
    });
    const report = await specConformance(url, petstoreContract);
    const byName = (n: string) => report.methods.find((m) => m.name === n)!;
    expect(byName('list_pets')).toMatchObject({
      status: 'PASS',
      detail: expect.stringMatching(/^error 100 "pets busy": declared by the method \("pets busy"\)/),
    });
    expect(byName('create_pet')).toMatchObject({
      status: 'FAIL',
      detail: expect.stringMatching(
        /^error -32000 is not an answer the document allows here \(the method declares no errors\)/,
      ),
    });
    expect(byName('get_pet')).toMatchObject({
      status: 'FAIL',
      detail: expect.stringMatching(/^error -32603 is not an answer the document allows here/),
    });
    expect(report.ok).toBe(false);
  });

  it('an example pairing that shows an error wants that code', async () => {
    const doc = {
      openrpc: '1.3.2',
      info: { title: 'divider', version: '1.0.0' },
      methods: [
        {
          name: 'divide',
          params: [
            { name: 'a', required: true, schema: { type: 'integer' } },
            { name: 'b', required: true, schema: { type: 'integer' } },
          ],
          result: { name: 'quotient', schema: { type: 'integer' } },
          errors: [{ code: 4000, message: 'division by zero' }],
          examples: [
            {
              name: 'six by three',
              params: [
                { name: 'a', value: 6 },
                { name: 'b', value: 3 },
              ],
              result: { name: 'quotient', value: 2 },
            },
            {
              name: 'by zero',
              params: [
                { name: 'a', value: 6 },
                { name: 'b', value: 0 },
              ],
              error: { code: 4000, message: 'division by zero' },
            },
          ],
        },
      ],
    };
    const contract = compileContract(await modelDocument(doc, { name: 'divider', file: '<divider>' }));
    const good = await specConformance(await serve(contract), contract);
    expect(good.methods.map((m) => [m.example, m.status])).toEqual([
      ['six by three', 'PASS'],
      ['by zero', 'PASS'],
    ]);
    expect(good.methods[1].detail).toMatch(/^error 4000 "division by zero" as the example shows/);
    // A server that divides by zero anyway (answers a valid integer) fails the error pairing.
    const lenient = await serve(contract, {
      wrap: (h) => ({
        ...h,
        divide: (p: unknown) => Math.trunc((p as number[])[0] / ((p as number[])[1] || 1)) as never,
      }),
    });
    const bad = await specConformance(lenient, contract);
    expect(bad.methods.map((m) => [m.example, m.status])).toEqual([
      ['six by three', 'PASS'],
      ['by zero', 'FAIL'],
    ]);
    expect(bad.methods[1].detail).toMatch(/^expected error 4000 \(the example shows it\), got result 6/);
  });

  it('by-name methods are called with an object; --only limits the run; an unreachable endpoint fails every row', async () => {
    const byNameDoc = resolve(examplesDir, 'params-by-name-petstore-openrpc.json');
    const contract = compileContract(await loadDocument(byNameDoc));
    const report = await specConformance(await serve(contract), contract, {
      only: ['list_pets', 'get_pet', 'protocol:batch', 'no_such'],
    });
    expect(report.methods.map((m) => [m.name, m.status, m.byName ?? false])).toEqual([
      ['list_pets', 'PASS', true], // paramStructure by-name: the engine refuses an array for it
      ['get_pet', 'PASS', false], // by-position
      ['no_such', 'FAIL', false],
    ]);
    expect(report.protocol.map((p) => p.name)).toEqual(['protocol:batch']);

    const down = await specConformance('http://127.0.0.1:9/', contract, { timeoutMs: 2000 });
    expect(down.ok).toBe(false);
    expect(down.summary.passed).toBe(0);
    expect(down.methods.every((m) => m.status === 'FAIL' && /fetch failed|ECONNREFUSED/.test(m.detail))).toBe(true);
  });

  describe('an endpoint with a broken envelope', () => {
    // Answers every POST with the same body: wrong id, jsonrpc "1.0", both result and error.
    let broken: Server;
    let url: string;
    beforeAll(async () => {
      broken = createHttpServer((req, res) => {
        req.resume();
        req.on('end', () =>
          res
            .writeHead(200, { 'content-type': 'application/json' })
            .end('{"jsonrpc":"1.0","id":999,"result":4,"error":{"code":1,"message":"x"}}'),
        );
      });
      await new Promise<void>((r) => broken.listen(0, '127.0.0.1', r));
      url = `http://127.0.0.1:${(broken.address() as { port: number }).port}/`;
    });
    afterAll(() => new Promise<void>((r) => broken.close(() => r())));

    it('fails every method and protocol check, naming the envelope problems', async () => {
      const contract = compileContract(await loadDocument(simpleMath));
      const report = await specConformance(url, contract);
      expect(report.summary).toEqual({ passed: 0, failed: 8, skipped: 0, warnings: 0 });
      const first = report.methods[0];
      expect(first.detail).toContain('jsonrpc is "1.0", not "2.0"');
      expect(first.detail).toMatch(/id 999 does not echo/);
      expect(first.detail).toContain('exactly one of result and error');
      expect(report.protocol.find((p) => p.name === 'protocol:batch')?.detail).toMatch(
        /expected an array of 2 replies/,
      );
      expect(report.protocol.find((p) => p.name === 'protocol:invalid-json')?.detail).toMatch(
        /envelope: .*id 999 does not echo null/,
      );
    });
  });

  it('-H headers reach the server on every call (via the CLI)', async () => {
    const seen: { method: string; auth?: string; trace?: string }[] = [];
    const url = await serve(petstoreContract, {
      wrap: (h) =>
        Object.fromEntries(
          Object.entries(h).map(([method, fn]) => [
            method,
            (params: unknown, ctx: CallContext) => {
              seen.push({
                method,
                auth: ctx.headers?.authorization as string | undefined,
                trace: ctx.headers?.['x-trace'] as string | undefined,
              });
              return fn(params as never, ctx);
            },
          ]),
        ),
    });
    const out = await cli(url, '--spec', petstore, '--json', '-H', 'Authorization: Bearer a:b:c', '-H', 'x-trace:t-42');
    expect(out.code).toBe(0);
    expect((JSON.parse(out.stdout) as ConformanceReport).summary.failed).toBe(0);
    // Three method rows plus the batch of two list_pets calls.
    expect(seen.map((s) => s.method).sort()).toEqual(['create_pet', 'get_pet', 'list_pets', 'list_pets', 'list_pets']);
    for (const s of seen) expect(s).toMatchObject({ auth: 'Bearer a:b:c', trace: 't-42' });
  });
});
