// The toolkit's document layer (packages/toolkit/src/contract) on documents it did not write: loading from a path and an http URL,
// every OpenRPC version of the corpus, refs that point into a schema, errors that say what is wrong, and validators
// compiled at start that answer exactly like the generated standalone ones.
import { createServer as createHttpServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadDocument, modelDocument } from '../packages/toolkit/src/contract/model.js';
import { compileContract, compileValidators } from '../packages/toolkit/src/contract/compile.js';
import { sampleParams, sampleResult } from '../packages/toolkit/src/contract/sample.js';
import { validators as generated } from '../generated/node/validators.js';
import { corpus11 as corpus } from './helpers/openrpc-corpus.js';
import { readRecordedExchanges } from './helpers/execution-apis.js';

const root = join(import.meta.dirname, '..');

/** A document whose refs point into a schema's properties, an array's items and a oneOf member, with a recursive schema. */
const innerRefs = {
  openrpc: '1.3.2',
  info: { title: 'inner refs', version: '1.0.0' },
  methods: [
    {
      name: 'engine_timestamp',
      params: [
        {
          name: 'ts',
          required: true,
          schema: { $ref: '#/components/schemas/PayloadAttributesV1/properties/timestamp' },
        },
      ],
      result: { name: 'item', schema: { $ref: '#/components/schemas/List/items' } },
    },
    {
      name: 'tree_get',
      params: [{ name: 'choice', schema: { $ref: '#/components/schemas/Choice/oneOf/1' } }],
      result: { name: 'tree', schema: { $ref: '#/components/schemas/Tree' } },
    },
  ],
  components: {
    schemas: {
      PayloadAttributesV1: { type: 'object', properties: { timestamp: { type: 'string', pattern: '^0x[0-9a-f]+$' } } },
      List: { type: 'array', items: { type: 'integer', minimum: 0 } },
      Choice: { oneOf: [{ type: 'boolean' }, { type: 'string', enum: ['a', 'b'] }] },
      Tree: {
        type: 'object',
        required: ['name'],
        properties: {
          name: { type: 'string' },
          children: { type: 'array', items: { $ref: '#/components/schemas/Tree' } },
        },
      },
    },
  },
};

describe('toolkit document layer', () => {
  let server: Server;
  let base: string;
  beforeAll(async () => {
    server = createHttpServer((req, res) => {
      if (req.url === '/petstore.json') {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(
          readFileSync(join(root, 'node_modules/@open-rpc/examples/build/service-descriptions/petstore-openrpc.json')),
        );
      } else res.writeHead(404).end('no');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  it('loads every corpus document (OpenRPC 1.0.0-rc0 … 1.3.2), compiles its validators and generates values for every method', async () => {
    const versions = new Set<string>();
    let methods = 0;
    for (const d of corpus()) {
      const m = await loadDocument(d.file, d.name);
      const c = compileContract(m);
      versions.add(m.document.openrpc);
      expect(Object.keys(c.methods).length, d.name).toBe(m.methods.length);
      for (const meth of m.methods) {
        methods++;
        const v = c.validators[meth.name];
        const r = sampleResult(m, meth.name, v.result);
        if (r) expect(v.result(r.value), `${d.name} ${meth.name}`).toBe(true);
        const p = sampleParams(m, meth.name, v.params);
        if (p) expect(v.params(p.value), `${d.name} ${meth.name}`).toBe(true);
      }
    }
    expect([...versions].sort()).toEqual(expect.arrayContaining(['1.0.0', '1.0.0-rc0', '1.0.0-rc1', '1.2.4', '1.3.2']));
    expect(methods).toBeGreaterThan(170);
  });

  it('reads a document from an http URL, and says what is wrong with a bad one', async () => {
    const m = await loadDocument(`${base}/petstore.json`);
    expect(m.spec.name).toBe('petstore');
    expect(m.methods.map((x) => x.name)).toEqual(['list_pets', 'create_pet', 'get_pet']);
    await expect(loadDocument(`${base}/missing.json`)).rejects.toThrow(/HTTP 404/);
    await expect(modelDocument({ info: {} }, { name: 'x', file: 'x.json' })).rejects.toThrow(/not an OpenRPC document/);
    await expect(
      modelDocument({ openrpc: '1.3.2', info: { title: 't' }, methods: [{ name: 1 }] }, { name: 'x', file: 'x.json' }),
    ).rejects.toThrow(/x\.json: invalid OpenRPC 1\.3\.2 document/);
  });

  it('inlines refs into properties, items and oneOf members; keeps recursive component refs', async () => {
    const m = await modelDocument(structuredClone(innerRefs), { name: 'inner', file: 'inner.json' });
    const c = compileContract(m);
    expect(m.methods[0].params[0].schema).toEqual({ type: 'string', pattern: '^0x[0-9a-f]+$' });
    expect(m.methods[0].result!.schema).toEqual({ type: 'integer', minimum: 0 });
    expect(m.methods[1].params[0].schema).toEqual({ type: 'string', enum: ['a', 'b'] });
    expect(m.methods[1].result!.schema).toEqual({ $ref: '#/components/schemas/Tree' });
    expect(m.document.methods[0].params[0].schema.$ref).toBe(
      '#/components/schemas/PayloadAttributesV1/properties/timestamp',
    );
    expect(c.validators.engine_timestamp.params(['0x1f'])).toBe(true);
    expect(c.validators.engine_timestamp.params(['0xZZ'])).toBe(false);
    expect(c.validators.engine_timestamp.result(-1)).toBe(false);
    expect(c.validators.tree_get.params(['c'])).toBe(false);
    expect(c.validators.tree_get.result({ name: 'a', children: [{ name: 'b', children: [{ name: 'c' }] }] })).toBe(
      true,
    );
    expect(c.validators.tree_get.result({ name: 'a', children: [{ children: [] }] })).toBe(false);
  });

  it('validators compiled at start (fast checks + ajv) answer like the generated standalone ones on every recorded exchange', async () => {
    const m = await loadDocument(join(root, 'openrpc.json'), 'node');
    const runtime = compileValidators(m);
    const plain = compileValidators(m, { fast: false });
    let compared = 0;
    for (const x of readRecordedExchanges((method) => method in generated)) {
      const gen = generated[x.request.method as keyof typeof generated];
      const params = x.request.params ?? [];
      expect(runtime[x.request.method].params(params), x.file).toBe(gen.params(params));
      expect(plain[x.request.method].params(params), x.file).toBe(gen.params(params));
      if ('result' in x.response) {
        expect(runtime[x.request.method].result(x.response.result), x.file).toBe(gen.result(x.response.result));
        expect(plain[x.request.method].result(x.response.result), x.file).toBe(gen.result(x.response.result));
      }
      compared++;
    }
    expect(compared).toBeGreaterThan(90);
    // A refusal still carries ajv's errors (the fast check only ever says yes).
    expect(runtime.eth_getBalance.params(['0x12', 'latest'])).toBe(false);
    expect(runtime.eth_getBalance.params.errors?.[0]?.instancePath).toBe('/0');
  });
});

describe('the library API on a document it did not write', () => {
  it('load → createServer({ document, handlers }) → createClient(transport, methods): HTTP and an in-process transport', async () => {
    const { createServer, compileContract: compile, loadDocument: load } = await import('@rpcgate/toolkit');
    const { createClient, httpTransport, RpcClientError } = await import('@rpcgate/client');
    const model = await load(
      join(root, 'node_modules/@open-rpc/examples/build/service-descriptions/petstore-openrpc.json'),
    );
    const pets = [{ id: 1, name: 'rex', tag: 'dog' }];
    const server = await createServer({
      document: model,
      handlers: {
        list_pets: () => pets,
        get_pet: (params) => pets.find((p) => p.id === (params as [number])[0]) ?? null,
      },
    });
    const url = await server.listen(0);
    try {
      const { methods } = compile(model);
      const http = createClient(httpTransport({ url }), methods);
      expect(await http.request('list_pets', [])).toEqual(pets);
      expect(await http.request('get_pet', [1])).toEqual(pets[0]);
      // params fail the document: -32602 naming the param
      await expect(http.request('get_pet', ['one'])).rejects.toMatchObject({ code: -32602 });
      // a method without a handler: -32601
      await expect(http.request('create_pet', ['cat', 'x'])).rejects.toBeInstanceOf(RpcClientError);
      // the same client shape over the engine in process: no HTTP, no status
      const local = createClient(
        {
          send: async (m) => ({
            payload: JSON.parse((await server.engine.handle(JSON.stringify(m), {})).body ?? 'null'),
          }),
        },
        methods,
      );
      expect(await local.request('get_pet', [1])).toEqual(pets[0]);
      const [a, b] = await local.batch([
        { method: 'list_pets', params: [] },
        { method: 'get_pet', params: ['x'] },
      ] as const);
      expect(a).toEqual(pets);
      expect(b).toBeInstanceOf(RpcClientError);
    } finally {
      await server.close();
    }
  });
});
