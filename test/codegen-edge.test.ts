// Issue 19 items 2 and 5: constructs that published OpenRPC documents use and a code generator must express
// (test/fixtures/openrpc/codegen-edge.openrpc.json): result `schema: false` / `true`, components that are only a `$ref`
// to another, recursive and mutually recursive components, names that clash after case folding, `*/`, backticks and
// `${` in descriptions, titles and examples, params named by keywords or by no identifier, 2020-12 tuples. The output
// compiles with tsc --strict under NodeNext and under Bundler with a typed usage file, the Python package passes mypy
// --strict, what generate cannot express fails naming file and pointer (never a success that does not compile), and
// createServer gives a by-name method's handler an object while a result that breaks the contract names its path.
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateAction, generateFiles } from '../packages/toolkit/src/cli/generate.js';
import { createServer, type RpcServer } from '../packages/toolkit/src/server/index.js';

const exec = promisify(execFile);
const root = resolve(import.meta.dirname, '..');
const TSC = join(root, 'node_modules', 'typescript', 'bin', 'tsc');
const EDGE = join(root, 'test/fixtures/openrpc/codegen-edge.openrpc.json');
const edgeDoc = () => JSON.parse(readFileSync(EDGE, 'utf8'));

let work: string;

async function gen(doc: string, out: string, lang?: string): Promise<{ code: number; err: string[] }> {
  const err: string[] = [];
  const code = await generateAction(
    doc,
    { out, name: 'edge', lang },
    () => {},
    (s) => err.push(s),
  );
  return { code, err };
}

async function tsc(project: string): Promise<string> {
  return exec(process.execPath, [TSC, '-p', project], { cwd: work, timeout: 120_000 }).then(
    () => '',
    (e: { stdout: string }) => e.stdout || 'tsc failed',
  );
}

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'rpcgate-codegen-edge-'));
  writeFileSync(join(work, 'package.json'), JSON.stringify({ name: 'app', private: true, type: 'module' }));
  const r = await gen(EDGE, join(work, 'edge'));
  // `schema: false` is legal and typed `never`; the satisfiability check still tells the author (issue 19 item 3).
  expect(r.err).toEqual([
    expect.stringMatching(/^warning: never_returns: its result schema admits no value .*#\/methods\/0\/result\/schema/),
    expect.stringMatching(/^warning: nothing_param: its result schema admits no value .*#\/components\/schemas\/Never/),
  ]);
  expect(r.code).toBe(0);
}, 120_000);

afterAll(() => {
  if (work) rmSync(work, { recursive: true, force: true });
});

describe('generate: constructs of published documents', () => {
  it('type-checks its own output before reporting success (typescript is installed here)', async () => {
    const files = await generateFiles(EDGE, 'edge');
    expect((files as { typeChecked?: string }).typeChecked).toBe('ok');
  }, 60_000);

  it('declares every construct as a readable named type', () => {
    const types = readFileSync(join(work, 'edge/types.ts'), 'utf8');
    // a component that is only a $ref to another, and chains of them
    expect(types).toContain('export type Tipset = TipsetInner;');
    expect(types).toContain('export type Cid = CidInner;');
    expect(types).toMatch(/export type TipSetKey = Cids;/);
    expect(types).toContain('Cids?: Cid[];');
    // schema false / true
    expect(types).toContain('export type NeverReturnsResult = never;');
    expect(types).toContain('export type Never = never;');
    expect(types).toContain('export type AnythingResult = unknown;');
    expect(types).toContain('export type Anything = unknown;');
    // recursion, direct and through another component
    expect(types).toContain('children?: Node[];');
    expect(types).toContain('export type Expr = number | Sum;');
    expect(types).toContain('tail?: LinkedList;');
    // names that clash after case folding keep apart with a suffix, in document order
    expect(types).toContain('export interface Block {\n  lower?: string;');
    expect(types).toContain('export interface Block2 {\n  upper?: string;');
    expect(types).toContain("export type FooBar = 'snake';");
    expect(types).toContain("export type FooBar2 = 'camel';");
    expect(types).toContain('export type ClashParams = [a: Block, b: Block2, c: FooBar, d: FooBar2, e: FOOBAR];');
    // keywords and non-identifiers as tuple labels and as by-name keys
    expect(types).toMatch(/class_: string,\s+default_: number,\s+withDash: boolean,\s+_1st: string/);
    expect(types).toContain("'with-dash': boolean;");
    expect(types).toContain("'${x}'?: string;");
    // 2020-12 tuple: prefixItems, no more items
    expect(types).toContain('export type NsSubMethodV2LambdaParam = [] | [string] | [string, number];');
    // `${` and backticks stay text; every comment is closed where it should be (tsc below proves the rest)
    expect(types).toContain('${template}');
    for (const block of types.match(/\/\*\*[\s\S]*?\*\//g) ?? []) expect(block.slice(3, -2)).not.toContain('*/');
  });

  it('compiles with tsc --strict under NodeNext and under Bundler, with a typed usage file', async () => {
    writeFileSync(
      join(work, 'usage.ts'),
      `import { createClient, type Tipset, type Node, type Expr, type Block, type Block2, type KeywordsParamsByName } from './edge/index.js';

const c = createClient({ url: 'http://127.0.0.1:1/' });
export const tipset: Promise<Tipset> = c.request('chain_head', [[{ '/': 'bafy' }]]);
export const height = tipset.then((t) => t.Height + 1);
const tree: Node = { value: 'root', children: [{ value: 'leaf', parent: { value: 'root' } }] };
const sum: Expr = { left: 1, right: { left: 2, right: 3 } };
export const list = c.request('tree_walk', [tree, sum]).then((l) => (l === null ? [] : [l.head]));
export const nothing: Promise<never> = c.request('never_returns');
export const anything: Promise<unknown> = c.request('anything', [{ any: 1 }]);
const named: KeywordsParamsByName = { class: 'c', default: 1, 'with-dash': true, '1st': 'x', '\${x}': 'y' };
export const text = c.request('keywords', named).then((r) => r['*/']);
export const both: [Block, Block2] = [{ lower: 'a' }, { upper: 'b' }];
export const clash = c.request('clash', [{ lower: 'a' }, { upper: 'b' }, 'snake', 'camel', 'kebab']);
// @ts-expect-error -- Block2 has no member lower
export const wrongBlock: Block2 = { lower: 'a' };
// @ts-expect-error -- foo_bar is 'snake', not 'camel'
c.request('clash', [{}, {}, 'camel', 'camel', 'kebab']);
// @ts-expect-error -- a required by-name param is missing
c.request('keywords', { class: 'c', default: 1, 'with-dash': true });
// @ts-expect-error -- the tuple takes at most two items
c.request('ns.sub-method:v2', [1, ['a', 1, 2]]);
`,
    );
    const config = (module: object) => ({
      compilerOptions: {
        strict: true,
        ...module,
        target: 'ES2022',
        lib: ['ES2023', 'DOM'],
        types: [],
        noEmit: true,
        paths: { '@rpcgate/client': [join(root, 'packages/client/src/index.ts')] },
      },
      include: ['edge/*.ts', 'usage.ts'],
    });
    writeFileSync(
      join(work, 'tsconfig.nodenext.json'),
      JSON.stringify(config({ module: 'NodeNext', moduleResolution: 'NodeNext' })),
    );
    writeFileSync(
      join(work, 'tsconfig.bundler.json'),
      JSON.stringify(config({ module: 'preserve', moduleResolution: 'Bundler' })),
    );
    expect(await tsc(join(work, 'tsconfig.nodenext.json'))).toBe('');
    expect(await tsc(join(work, 'tsconfig.bundler.json'))).toBe('');
  }, 240_000);

  it("createServer<Methods> types a by-name method's handler params as its named object, and results (tsc --strict)", async () => {
    writeFileSync(
      join(work, 'server-usage.ts'),
      `import { createServer } from '@rpcgate/toolkit';
import type { Methods } from './edge/methods.js';

export const server = createServer<Methods>({
  document: 'codegen-edge.openrpc.json',
  handlers: {
    keywords: (p) => {
      const cls: string = p.class;
      const dflt: number = p.default;
      const dash: boolean = p['with-dash'];
      // @ts-expect-error -- a by-name method's handler gets an object, not the positional tuple
      const first = p[0];
      // @ts-expect-error -- class is a string
      const wrong: number = p.class;
      return { '*/': \`\${cls}\${dflt}\${dash}\${String(first)}\${wrong}\` };
    },
    tree_walk: ([tree]) => ({ head: tree.value }),
    // @ts-expect-error -- Height is an integer in the result schema
    chain_head: () => ({ Height: 'not a number', Cids: [] }),
  },
});
`,
    );
    // the repository's own settings (its paths map @rpcgate/* to the sources), over the generated files and this one
    writeFileSync(
      join(work, 'tsconfig.server.json'),
      JSON.stringify({
        extends: join(root, 'tsconfig.json'),
        compilerOptions: {
          noEmit: true,
          declaration: false,
          sourceMap: false,
          rootDir: '/',
          typeRoots: [join(root, 'node_modules/@types')],
        },
        include: [join(work, 'edge/*.ts'), join(work, 'server-usage.ts')],
        exclude: [],
      }),
    );
    expect(await tsc(join(work, 'tsconfig.server.json'))).toBe('');
  }, 240_000);

  it('fails naming file and pointer for what it cannot express, and writes nothing', async () => {
    const selfUnion = edgeDoc();
    selfUnion.components.schemas.SelfUnion = {
      oneOf: [{ type: 'string' }, { $ref: '#/components/schemas/SelfUnion' }],
    };
    writeFileSync(join(work, 'self-union.json'), JSON.stringify(selfUnion));
    let r = await gen(join(work, 'self-union.json'), join(work, 'out-self-union'));
    expect(r.code).toBe(1);
    expect(r.err.join('\n')).toMatch(
      /self-union\.json#\/components\/schemas\/SelfUnion: the generated TypeScript does not compile .*circularly references itself/,
    );
    expect(() => readFileSync(join(work, 'out-self-union/types.ts'))).toThrow();

    const foreign = edgeDoc();
    foreign.components.contentDescriptors = { CD: { name: 'cd', schema: { type: 'string' } } };
    foreign.methods[0].result.schema = {
      type: 'object',
      properties: { x: { $ref: '#/components/contentDescriptors/CD' } },
    };
    writeFileSync(join(work, 'foreign-ref.json'), JSON.stringify(foreign));
    r = await gen(join(work, 'foreign-ref.json'), join(work, 'out-foreign'));
    expect(r.code).toBe(1);
    expect(r.err.join('\n')).toContain(
      'foreign-ref.json#/methods/0/result/schema/properties/x/$ref: reference "#/components/contentDescriptors/CD" does not name a schema',
    );
  }, 120_000);

  it('the Python package of the same document passes mypy --strict', async (ctx) => {
    const mypy = await exec('/usr/bin/python3', ['-m', 'mypy', '--version']).then(
      () => true,
      () => false,
    );
    if (!mypy) {
      // CI installs mypy (Debian python3-mypy): there a missing mypy is a failure, elsewhere a skip that says so
      if (process.env.CI) throw new Error('mypy is not installed (/usr/bin/python3 -m mypy)');
      ctx.skip();
    }
    const r = await gen(EDGE, join(work, 'edge_py'), 'python');
    expect(r.err.filter((l: string) => !/admits no value/.test(l))).toEqual([]);
    writeFileSync(
      join(work, 'use_edge.py'),
      `from edge_py import types\n\ntip: types.Tipset = {"Height": 1, "Cids": [{"/": "bafy"}]}\nnode: types.Node = {"value": "r", "children": [{"value": "l"}]}\n`,
    );
    const out = await exec(
      '/usr/bin/python3',
      ['-m', 'mypy', '--strict', '--no-incremental', 'edge_py', 'use_edge.py'],
      { cwd: work, timeout: 120_000 },
    ).then(
      (x) => x.stdout,
      (e: { stdout: string }) => e.stdout,
    );
    expect(out).toContain('Success: no issues found');
  }, 180_000);
});

describe('createServer: by-name handlers and result violations', () => {
  let server: RpcServer;
  let url: string;
  const reported: { err: unknown; method: string }[] = [];
  const seen: unknown[] = [];

  beforeAll(async () => {
    server = await createServer({
      document: EDGE,
      handlers: {
        keywords: (params) => {
          seen.push(params);
          return { '*/': String((params as unknown as Record<string, unknown>).class) };
        },
        chain_head: () => ({ Height: 'not a number', Cids: [] }),
        tree_walk: (params) => ({
          head: ((params as readonly unknown[])[0] as { value: string }).value,
          tail: { head: 7 },
        }),
      },
      onError: (err, method) => reported.push({ err, method }),
    });
    url = await server.listen(0, '127.0.0.1');
  });
  afterAll(() => server?.close());

  const call = async (method: string, params: unknown) =>
    (await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
    }).then((r) => r.json())) as { result?: unknown; error?: { code: number; message: string; data: Json } };
  type Json = Record<string, unknown>;

  it("a by-name method's handler gets one object of named params (omitted optional ones absent)", async () => {
    const params = { class: 'k', default: 2, 'with-dash': true, '1st': 'a', __proto__: 'p', '${x}': 'y' };
    const body = `{"jsonrpc":"2.0","id":1,"method":"keywords","params":{"class":"k","default":2,"with-dash":true,"1st":"a","__proto__":"p","*/":"c","\${x}":"y"}}`;
    const r = (await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body }).then((x) =>
      x.json(),
    )) as { result: unknown };
    expect(r).toMatchObject({ result: { '*/': 'k' } });
    const got = seen.at(-1) as Record<string, unknown>;
    // the omitted optional `await` is absent, not undefined
    expect(Object.keys(got)).toEqual(['class', 'default', 'with-dash', '1st', '__proto__', '*/', '${x}']);
    expect(Object.getOwnPropertyDescriptor(got, '__proto__')?.value).toBe('p');
    expect(Object.getPrototypeOf(got)).toBe(Object.prototype);
    expect(got['${x}']).toBe(params['${x}']);
  });

  it('a result that breaks the contract: -32603 with data.path and schemaPath, reported to onError', async () => {
    reported.length = 0;
    const r = await call('chain_head', [[{ '/': 'bafy' }]]);
    expect(r.error?.code).toBe(-32603);
    expect(r.error?.data).toMatchObject({ path: '/Height', reason: 'must be integer' });
    expect(String(r.error?.data.schemaPath)).toMatch(/properties\/Height\/type$/);
    expect(r.error?.message).toBe('internal error: result violates the contract at /Height: must be integer');
    expect(reported).toHaveLength(1);
    expect(reported[0].method).toBe('chain_head');
    expect((reported[0].err as { data: Json }).data).toEqual(r.error?.data);

    // deeper, through a recursive component: the path goes down the chain
    const deep = await call('tree_walk', [{ value: 'root' }]);
    expect(deep.error?.data).toMatchObject({ path: '/tail/head' });
  });
});
