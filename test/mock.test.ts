// `createMock` and `rpcgate mock` over a corpus no one here wrote (every @open-rpc/examples document, MetaMask's
// api-specs) plus the repository's two contracts, through real HTTP: example pairings answered, generated results
// valid against the method's result validator (compiled here with compileContract, not taken from the mock), params
// refused with -32602 and a path, rpc.discover, batches and notifications, determinism by seed, example errors,
// results that cannot be generated; and the CLI as a child process (URL line, answers, SIGTERM → exit 0, bad document
// → one line, exit 1).
import { spawn, execFile, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { createServer as createHttpServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compileContract, createMock, type CompiledContract, type MockServer } from '@rpcgate/toolkit';
import { exampleParams, type MethodModel } from '../packages/toolkit/src/contract/model.js';
import { sampleParams, sampleValid } from '../packages/toolkit/src/contract/sample.js';
import { Ajv } from 'ajv';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const examplesDir = join(root, 'node_modules/@open-rpc/examples/build/service-descriptions');
const exampleDocs = readdirSync(examplesDir)
  .filter((f) => f.endsWith('.json'))
  .sort();
const corpus = [
  ...exampleDocs.map((f) => join(examplesDir, f)),
  join(root, 'node_modules/@metamask/api-specs/dist/build/openrpc.json'),
  join(root, 'openrpc.json'),
  join(root, 'contracts/account.openrpc.json'),
];
const short = (file: string) => file.slice(root.length + 1);

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

async function post(url: string, body: unknown): Promise<{ status: number; text: string; json: Json }> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: typeof body === 'string' ? body : JSON.stringify(body),
    signal: AbortSignal.timeout(10_000),
  });
  const text = await res.text();
  return { status: res.status, text, json: text ? JSON.parse(text) : undefined };
}

/** Params as a client sends them: an object for a by-name method, else the positional array. */
const asCall = (m: MethodModel, positional: unknown[]): unknown =>
  m.paramStructure === 'by-name' ? Object.fromEntries(positional.map((v, i) => [m.params[i].name, v])) : positional;

let id = 0;
const call = (method: string, params: unknown) => ({ jsonrpc: '2.0', id: ++id, method, params });

it('the corpus is there: every @open-rpc/examples document, MetaMask api-specs, both contracts', () => {
  expect(exampleDocs.length).toBeGreaterThanOrEqual(6);
  expect(corpus).toHaveLength(exampleDocs.length + 3);
});

describe.each(corpus.map((f) => [short(f), f]))('mock of %s', (_name, file) => {
  let mock: MockServer;
  let url: string;
  let c: CompiledContract;
  let methods: MethodModel[];

  beforeAll(async () => {
    mock = await createMock({ document: file });
    url = await mock.listen(0, '127.0.0.1');
    c = compileContract(mock.model);
    methods = mock.model.methods;
  });
  afterAll(() => mock?.close());

  it('rpc.discover answers the document as given', async () => {
    const r = await post(url, call('rpc.discover', []));
    expect(r.status).toBe(200);
    expect(r.json.result).toEqual(JSON.parse(readFileSync(file, 'utf8')));
  });

  it("every method called with its first example's params answers the example's result", async () => {
    let checked = 0;
    for (const m of methods.filter((x) => x.examples.length > 0 && x.name !== 'rpc.discover')) {
      const x = m.examples[0];
      const params = exampleParams(m);
      const r = await post(url, call(m.name, asCall(m, params)));
      const paramsOk = c.validators[m.name].params(params);
      if (!paramsOk) {
        // The document's own example breaks its params schema (MetaMask's "0x01" filter ids): refused like any call,
        // and said at start.
        expect(r.json.error?.code, `${m.name}: ${r.text}`).toBe(-32602);
        expect(
          mock.warnings.some((w) => w.startsWith(`${m.name}: `) && w.includes('params do not match')),
          m.name,
        ).toBe(true);
      } else if (x.result && c.validators[m.name].result(x.result.value)) {
        expect(r.json.result, `${m.name}: ${r.text}`).toEqual(x.result.value);
      } else if (x.result) {
        // An example result that breaks the result schema is never served: the generated (valid) value is.
        expect(r.json.error, `${m.name}: ${r.text}`).toBeUndefined();
        expect(c.validators[m.name].result(r.json.result), m.name).toBe(true);
        expect(
          mock.warnings.some((w) => w.startsWith(`${m.name}: `) && w.includes('result does not match')),
          m.name,
        ).toBe(true);
      }
      checked++;
    }
    expect(checked).toBe(methods.filter((x) => x.examples.length > 0 && x.name !== 'rpc.discover').length);
  });

  it('every method called with generated params answers a result its result validator accepts', async () => {
    for (const m of methods) {
      const p = sampleParams(mock.model, m.name, c.validators[m.name].params);
      expect(p, `${m.name}: no params generated`).toBeDefined();
      const r = await post(url, call(m.name, asCall(m, p!.value)));
      expect(r.status, `${m.name}: ${r.text}`).toBe(200);
      expect(r.json.error, `${m.name}: ${r.text}`).toBeUndefined();
      expect(
        c.validators[m.name].result(r.json.result),
        `${m.name}: ${r.text} ${JSON.stringify(c.validators[m.name].result.errors)}`,
      ).toBe(true);
    }
    // no warning says a result could not be generated
    expect(mock.warnings.filter((w) => w.includes('could be generated'))).toEqual([]);
  });

  it('invalid params are refused with -32602 naming the param and the path', async () => {
    // the first method with a param, given a value its schema refuses at position 0
    const bad: unknown[] = [{ 'not-a-field': [1] }, 1.5, 'not valid \u0000', true, [[[]]], null, -1];
    let tried = 0;
    for (const m of methods.filter((x) => x.params.length > 0)) {
      const rest = sampleParams(mock.model, m.name, c.validators[m.name].params)!.value;
      const value = bad.find((v) => !c.validators[m.name].params([v, ...rest.slice(1)]));
      if (value === undefined) continue;
      const r = await post(url, call(m.name, asCall(m, [value, ...rest.slice(1)])));
      expect(r.json.error?.code, r.text).toBe(-32602);
      expect(r.json.error.data.path, r.text).toMatch(/^\/0(\/|$)/);
      expect(r.json.error.data.param).toBe(m.params[0].name);
      expect(r.json.error.message, r.text).toContain(m.params[0].name);
      tried++;
      if (tried === 3) break;
    }
    if (methods.some((m) => m.params.length > 0)) expect(tried).toBeGreaterThan(0);
    // one param more than a method takes (api-with-examples has no params at all: this is its only way to be wrong)
    const m = methods.find((x) => x.paramStructure !== 'by-name')!;
    const given = sampleParams(mock.model, m.name, c.validators[m.name].params)!.value;
    const over = await post(url, call(m.name, [...given, ...Array(m.params.length + 1 - given.length).fill(1)]));
    expect(over.json.error?.code, over.text).toBe(-32602);
    expect(over.json.error.message).toMatch(new RegExp(`expected .*params?, got ${m.params.length + 1}`));
  });

  it('a batch of three with one notification answers two, in order; a notification alone answers 204', async () => {
    const m = methods.find((x) => x.name !== 'rpc.discover')!;
    const params = asCall(m, sampleParams(mock.model, m.name, c.validators[m.name].params)!.value);
    const r = await post(url, [
      { jsonrpc: '2.0', id: 'first', method: m.name, params },
      { jsonrpc: '2.0', method: m.name, params },
      { jsonrpc: '2.0', id: 'last', method: 'rpc.discover', params: [] },
    ]);
    expect(r.status).toBe(200);
    expect(r.json.map((x: Json) => x.id)).toEqual(['first', 'last']);
    expect(c.validators[m.name].result(r.json[0].result)).toBe(true);
    const n = await post(url, { jsonrpc: '2.0', method: m.name, params });
    expect(n.status).toBe(204);
    expect(n.text).toBe('');
  });
});

describe('determinism and seeds', () => {
  it('two mocks with the same seed answer every call byte for byte alike; another seed answers differently', async () => {
    const doc = join(root, 'contracts/account.openrpc.json');
    const [a, b, other] = await Promise.all([
      createMock({ document: doc, seed: 7 }),
      createMock({ document: doc, seed: 7 }),
      createMock({ document: doc, seed: 8 }),
    ]);
    try {
      const [ua, ub, uo] = await Promise.all([a.listen(0), b.listen(0), other.listen(0)]);
      const c = compileContract(a.model);
      let differs = 0;
      for (const m of a.model.methods) {
        const body = {
          jsonrpc: '2.0',
          id: 1,
          method: m.name,
          params: asCall(m, sampleParams(a.model, m.name, c.validators[m.name].params, { seed: 3 })!.value),
        };
        const [ra, ra2, rb, ro] = [
          await post(ua, body),
          await post(ua, body),
          await post(ub, body),
          await post(uo, body),
        ];
        expect(ra.text).toBe(ra2.text); // the same call, the same answer
        expect(rb.text, m.name).toBe(ra.text);
        if (ro.text !== ra.text) differs++;
      }
      expect(differs).toBeGreaterThan(0);
    } finally {
      await Promise.all([a.close(), b.close(), other.close()]);
    }
  });
});

describe('params refused inside a param', () => {
  it('names the param and the path inside it (account apps_create: app/name)', async () => {
    const mock = await createMock({ document: join(root, 'contracts/account.openrpc.json') });
    try {
      const url = await mock.listen(0);
      const c = compileContract(mock.model);
      const [app] = sampleParams(mock.model, 'apps_create', c.validators.apps_create.params)!.value as [
        Record<string, unknown>,
      ];
      const ok = await post(url, call('apps_create', [app]));
      expect(c.validators.apps_create.result(ok.json.result), ok.text).toBe(true);
      const r = await post(url, call('apps_create', [{ ...app, name: 5 }]));
      expect(r.json.error).toMatchObject({
        code: -32602,
        message: 'invalid params: app/name must be string',
        data: { param: 'app', path: '/0/name' },
      });
    } finally {
      await mock.close();
    }
  });
});

describe('by-name params (params-by-name-petstore)', () => {
  let mock: MockServer;
  let url: string;
  beforeAll(async () => {
    mock = await createMock({ document: join(examplesDir, 'params-by-name-petstore-openrpc.json') });
    url = await mock.listen(0);
  });
  afterAll(() => mock?.close());

  it('a by-name call matching the example answers its result; positional params for a by-name method are refused', async () => {
    const listPets = mock.model.methods.find((m) => m.name === 'list_pets')!;
    expect(listPets.paramStructure).toBe('by-name');
    const r = await post(url, call('list_pets', { limit: 1 }));
    expect(r.json.result).toEqual([{ id: 7, name: 'fluffy', tag: 'poodle' }]);
    const other = await post(url, call('list_pets', { limit: 2 }));
    expect(other.json.result).not.toEqual(r.json.result); // no example: generated
    expect(compileContract(mock.model).validators.list_pets.result(other.json.result)).toBe(true);
    const positional = await post(url, call('list_pets', [1]));
    expect(positional.json.error.code).toBe(-32602);
    const unknown = await post(url, call('list_pets', { limitt: 1 }));
    expect(unknown.json.error).toMatchObject({ code: -32602, data: { param: 'limitt' } });
  });
});

describe('example errors and results that cannot be generated', () => {
  const doc = {
    openrpc: '1.3.2',
    info: { title: 'edge cases', version: '0.0.1' },
    methods: [
      {
        name: 'ns:get_thing',
        params: [{ name: 'id', required: true, schema: { type: 'integer' } }],
        result: { name: 'thing', schema: { $ref: '#/components/schemas/Thing' } },
        errors: [{ $ref: '#/components/errors/NotFound' }],
        examples: [
          {
            name: 'found',
            params: [{ name: 'id', value: 1 }],
            result: { name: 'thing', value: { id: 1, label: 'one' } },
          },
          { name: 'missing', params: [{ name: 'id', value: 404 }], error: { $ref: '#/components/errors/NotFound' } },
          {
            name: 'as example object',
            params: [{ name: 'id', value: 500 }],
            error: { name: 'boom', value: { code: -32000, message: 'boom', data: { why: 'test' } } },
          },
        ],
      },
      {
        name: 'impossible',
        params: [],
        result: { name: 'never', schema: { allOf: [{ type: 'string' }, { type: 'integer' }] } },
      },
      { name: 'notify.only', params: [{ name: 'msg', schema: { type: 'string' } }] },
    ],
    components: {
      schemas: {
        Thing: {
          type: 'object',
          required: ['id', 'label'],
          additionalProperties: false,
          properties: { id: { type: 'integer' }, label: { type: 'string' }, note: { type: ['string', 'null'] } },
        },
      },
      errors: { NotFound: { code: 4004, message: 'thing not found', data: { id: 404 } } },
    },
  };
  let mock: MockServer;
  let url: string;
  beforeAll(async () => {
    mock = await createMock({ document: doc });
    url = await mock.listen(0);
  });
  afterAll(() => mock?.close());

  it("a call matching an example pairing's error answers that error", async () => {
    expect((await post(url, call('ns:get_thing', [1]))).json.result).toEqual({ id: 1, label: 'one' });
    expect((await post(url, call('ns:get_thing', [404]))).json.error).toEqual({
      code: 4004,
      message: 'thing not found',
      data: { id: 404 },
    });
    expect((await post(url, call('ns:get_thing', [500]))).json.error).toEqual({
      code: -32000,
      message: 'boom',
      data: { why: 'test' },
    });
    // other ids: a generated Thing, with its optional fields filled and `note` a string rather than null
    const g = (await post(url, call('ns:get_thing', [2]))).json.result;
    expect(Object.keys(g).sort()).toEqual(['id', 'label', 'note']);
    expect(typeof g.note).toBe('string');
  });

  it('a result that cannot be generated is a warning at start and -32603 with a clear message at call time', async () => {
    expect(mock.warnings).toEqual([
      expect.stringMatching(/^impossible: no value of its result schema could be generated/),
    ]);
    const r = await post(url, call('impossible', []));
    expect(r.json.error.code).toBe(-32603);
    expect(r.json.error.message).toContain('impossible');
    expect(r.json.error.message).toContain('could be generated');
  });

  it('a method without a result answers null', async () => {
    expect((await post(url, call('notify.only', ['hi']))).json.result).toBeNull();
  });
});

// Recursive schemas are sampled here without a model: modelDocument cannot load a document with a self-referencing
// component yet (schema-utils-js's dereference sets `components` on each component it dereferences, a cycle it then
// walks without end).
describe('generated values for recursive schemas', () => {
  const components = {
    schemas: {
      // optional children; a required link that only null can end
      Tree: {
        type: 'object',
        required: ['value'],
        additionalProperties: false,
        properties: {
          value: { type: 'integer' },
          children: { type: 'array', items: { $ref: '#/components/schemas/Tree' } },
        },
      },
      Chain: {
        type: 'object',
        required: ['next'],
        additionalProperties: false,
        properties: { next: { oneOf: [{ $ref: '#/components/schemas/Chain' }, { type: 'null' }] } },
      },
    },
  };
  const model = { raw: { components } } as unknown as Parameters<typeof sampleValid>[0];
  it.each(['Tree', 'Chain'])('%s: a finite value that validates, optional parts filled', (name) => {
    const validate = new Ajv({ strict: false }).compile({ $ref: `#/components/schemas/${name}`, components });
    const t0 = performance.now();
    const r = sampleValid(model, { $ref: `#/components/schemas/${name}` }, validate);
    expect(performance.now() - t0).toBeLessThan(2000);
    expect(r).toBeDefined();
    expect(validate(r!.value)).toBe(true);
    const v = r!.value as Json;
    if (name === 'Tree') expect(v.children.length).toBeGreaterThan(0);
    else expect(v.next).not.toBeNull(); // a link at least, not the null that ends it
    expect(JSON.stringify(v).length).toBeLessThan(64 * 1024);
  });
});

describe('rpcgate mock (child process)', () => {
  const cliArgs = ['--import', 'tsx', join(root, 'src/cli/main.ts'), 'mock'];
  const children: ChildProcess[] = [];
  // The document comes over HTTP (as `rpcgate mock https://…/openrpc.json` would): a file server on 127.0.0.1.
  let docServer: Server;
  let docBase: string;
  afterAll(async () => {
    for (const ch of children) if (ch.exitCode === null && ch.signalCode === null) ch.kill('SIGKILL');
    await new Promise<void>((resolve) => docServer.close(() => resolve()));
  });
  beforeAll(async () => {
    docServer = createHttpServer((req, res) => {
      const f = req.url === '/petstore.json' ? join(examplesDir, 'petstore-openrpc.json') : undefined;
      if (!f) return void res.writeHead(404).end('not found');
      res.writeHead(200, { 'content-type': 'application/json' }).end(readFileSync(f));
    });
    await new Promise<void>((resolve) => docServer.listen(0, '127.0.0.1', resolve));
    docBase = `http://127.0.0.1:${(docServer.address() as AddressInfo).port}`;
  });

  // A path and a URL (as `rpcgate mock https://…/openrpc.json` would), stopped by SIGTERM and by SIGINT (Ctrl-C).
  it.each([
    ['a URL', 'SIGTERM'],
    ['a path', 'SIGINT'],
  ] as const)(
    'serves a document given by %s: prints its URL, answers, and exits 0 on %s within 5 s',
    async (given, signal) => {
      const doc = join(examplesDir, 'petstore-openrpc.json');
      const source = given === 'a URL' ? `${docBase}/petstore.json` : doc;
      const child = spawn(process.execPath, [...cliArgs, source, '--port', '0', '--host', '127.0.0.1', '--seed', '3'], {
        cwd: root,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      children.push(child);
      let stdout = '';
      let stderr = '';
      child.stderr!.on('data', (d) => (stderr += d));
      const line = await new Promise<string>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no URL line in 30 s; stderr: ${stderr}`)), 30_000);
        child.stdout!.on('data', (d) => {
          stdout += d;
          if (stdout.includes('\n')) {
            clearTimeout(timer);
            resolve(stdout.split('\n')[0]);
          }
        });
        child.once('exit', (code) => reject(new Error(`exited ${code} before printing its URL; stderr: ${stderr}`)));
      });
      const { title, version } = JSON.parse(readFileSync(doc, 'utf8')).info;
      expect(line).toMatch(
        new RegExp(`^mock of "${title}" ${version.replace(/\./g, '\\.')}: 3 methods at http://127\\.0\\.0\\.1:\\d+/$`),
      );
      const url = line.slice(line.indexOf('http://'));
      const r = await post(url, call('list_pets', [1]));
      expect(r.json.result).toEqual(
        JSON.parse(readFileSync(doc, 'utf8')).methods.find((m: Json) => m.name === 'list_pets').examples[0].result
          .value,
      );
      expect(stderr).toBe(''); // petstore's examples are consistent: nothing to warn about

      const t0 = Date.now();
      const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
      child.kill(signal);
      const code = await Promise.race([
        exited,
        new Promise<'timeout'>((resolve) => setTimeout(() => resolve('timeout'), 5000)),
      ]);
      expect(code).toBe(0);
      expect(Date.now() - t0).toBeLessThan(5000);
      await expect(fetch(url, { method: 'POST', body: '{}', signal: AbortSignal.timeout(2000) })).rejects.toThrow();
    },
  );

  const fails = (args: string[]) =>
    new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
      execFile(process.execPath, [...cliArgs, ...args], { cwd: root, timeout: 30_000 }, (err, stdout, stderr) => {
        resolve({ code: err ? ((err as { code?: number }).code ?? null) : 0, stdout, stderr });
      });
    });

  it('a document that cannot be read or is not OpenRPC: one line on stderr, exit 1', async () => {
    const missing = await fails([join(root, 'no/such/doc.json'), '--port', '0']);
    expect(missing.code).toBe(1);
    expect(missing.stdout).toBe('');
    expect(missing.stderr.trimEnd().split('\n')).toHaveLength(1);
    expect(missing.stderr).toMatch(/^rpcgate mock: .*no such file/);

    const notOpenRpc = await fails([join(root, 'package.json'), '--port', '0']);
    expect(notOpenRpc.code).toBe(1);
    expect(notOpenRpc.stderr.trimEnd().split('\n')).toHaveLength(1);
    expect(notOpenRpc.stderr).toContain('not an OpenRPC document');
    expect(notOpenRpc.stderr).not.toMatch(/\n\s+at /);

    const notFound = await fails([`${docBase}/nothing.json`, '--port', '0']);
    expect(notFound.code).toBe(1);
    expect(notFound.stderr.trimEnd().split('\n')).toHaveLength(1);
    expect(notFound.stderr).toContain('HTTP 404');
  });
});
