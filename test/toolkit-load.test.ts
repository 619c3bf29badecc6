// Issue 19 deliverable 1 (loading), as a unit: packages/toolkit/src/contract/load.ts through the library
// (loadDocument) and through the CLI (`rpcgate generate|docs|mock`). Every document is written here into a temporary
// folder: relative refs against the referring file and the working-directory fallback; chains and recursion kept
// finite; http(s) refs refused without allowRemoteRefs and fetched with it from a server this test starts on 127.0.0.1;
// file refs outside the document's folder tree refused (an absolute path, a `../` escape, a symlink inside the tree
// pointing out) unless refRoots widens it; YAML; `$id` refs; refs under keys that are no schema keyword; a broken ref
// named by method and pointer; a JSON syntax error by line:column; lenient warnings by pointer, errors with --strict;
// and a split document → generate → tsc --strict.
import { execFile, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateAction } from '../packages/toolkit/src/cli/generate.js';
import { loadDocument } from '../packages/toolkit/src/contract/model.js';
import { createMock } from '../packages/toolkit/src/mock/index.js';
import { specConformance } from '../packages/toolkit/src/conformance/spec.js';
import { DocumentError } from '../packages/toolkit/src/contract/parse.js';

const exec = promisify(execFile);
const root = resolve(import.meta.dirname, '..');
const TSC = join(root, 'node_modules', 'typescript', 'bin', 'tsc');
// by path: the CLI also runs from folders outside the repository, where the bare name 'tsx' does not resolve
const TSX = pathToFileURL(join(root, 'node_modules', 'tsx', 'dist', 'loader.mjs')).href;
// the repository's tsconfig (its paths map @rpcgate/* to the sources) whatever the working directory
const CLI_ENV = { ...process.env, TSX_TSCONFIG_PATH: join(root, 'tsconfig.json') };
let work: string;

const write = (rel: string, content: unknown): string => {
  const file = join(work, rel);
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, typeof content === 'string' ? content : JSON.stringify(content, null, 2));
  return file;
};

/** The problems a load refuses with (fails the test when it loads). */
async function refusal(p: Promise<unknown>): Promise<DocumentError> {
  const e = await p.then(
    () => undefined,
    (x) => x,
  );
  expect(e, 'expected the load to be refused').toBeInstanceOf(DocumentError);
  return e as DocumentError;
}

const method = (name: string, result: unknown, params: unknown[] = []) => ({
  name,
  params,
  result: { name: 'result', schema: result },
});
const doc = (methods: unknown[], extra: Record<string, unknown> = {}) => ({
  openrpc: '1.3.2',
  info: { title: 'load test', version: '1.0.0' },
  methods,
  ...extra,
});

/** Runs the CLI (`src/cli/main.ts` under tsx, as a user's `rpcgate`); never throws: the exit code is asserted. */
async function cli(args: string[], cwd = root): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const r = await exec(process.execPath, ['--import', TSX, join(root, 'src/cli/main.ts'), ...args], {
      cwd,
      timeout: 90_000,
      env: CLI_ENV,
    });
    return { code: 0, stdout: r.stdout, stderr: r.stderr };
  } catch (e) {
    const x = e as { code: number; stdout: string; stderr: string };
    return { code: x.code, stdout: x.stdout, stderr: x.stderr };
  }
}

/** `rpcgate mock`: the first stdout line (it listens), or the exit code and stderr when it refuses. The child is ended
 *  by its PID. */
async function mockCli(args: string[], cwd: string): Promise<{ code: number | null; line: string; stderr: string }> {
  const child = spawn(
    process.execPath,
    ['--import', TSX, join(root, 'src/cli/main.ts'), 'mock', ...args, '--port', '0', '--host', '127.0.0.1'],
    { cwd, stdio: ['ignore', 'pipe', 'pipe'], env: CLI_ENV },
  );
  let stdout = '';
  let stderr = '';
  child.stderr.on('data', (d) => (stderr += d));
  try {
    return await new Promise((res, rej) => {
      const timer = setTimeout(() => rej(new Error(`mock: no line in 90 s; stderr: ${stderr}`)), 90_000);
      child.stdout.on('data', (d) => {
        stdout += d;
        if (stdout.includes('\n')) {
          clearTimeout(timer);
          res({ code: null, line: stdout.split('\n')[0], stderr });
        }
      });
      child.once('exit', (code) => {
        clearTimeout(timer);
        res({ code, line: stdout, stderr });
      });
    });
  } finally {
    if (child.exitCode === null && child.pid) {
      const gone = new Promise((r) => child.once('exit', r));
      process.kill(child.pid, 'SIGTERM');
      await gone;
    }
  }
}

beforeAll(() => {
  work = mkdtempSync(join(tmpdir(), 'rpcgate-load-'));
});
afterAll(() => {
  if (work) rmSync(work, { recursive: true, force: true });
});

describe('relative refs, chains, recursion, $id, refs under any key', () => {
  let file: string;
  beforeAll(() => {
    write('split/schemas/common.json', {
      components: {
        schemas: {
          Hash: { type: 'string', pattern: '^0x[0-9a-f]{64}$' },
          Quantity: { $ref: 'quantity.json' },
        },
      },
    });
    // declared by $id, referred to by that URI only (never fetched: example.test is not a host)
    write('split/schemas/quantity.json', {
      $id: 'https://example.test/schemas/quantity.json',
      type: 'string',
      pattern: '^0x[0-9a-f]+$',
    });
    write('split/schemas/block.json', {
      Block: {
        type: 'object',
        required: ['hash'],
        properties: {
          // relative to block.json, not to the root document
          hash: { $ref: 'common.json#/components/schemas/Hash' },
          parent: { $ref: '#/Block' },
          txs: { type: 'array', items: { $ref: '#/Tx' } },
        },
      },
      Tx: { type: 'object', properties: { block: { $ref: '#/Block' }, value: { $ref: '#/Chain1' } } },
      // a chain of three refs ending in another file
      Chain1: { $ref: '#/Chain2' },
      Chain2: { $ref: 'common.json#/components/schemas/Quantity' },
    });
    file = write(
      'split/api.json',
      doc(
        [
          method('get_block', { $ref: './schemas/block.json#/Block' }, [
            { name: 'hash', required: true, schema: { $ref: './schemas/common.json#/components/schemas/Hash' } },
          ]),
          method('get_balance', { $ref: 'https://example.test/schemas/quantity.json' }),
          // refs under keys that are no schema keyword: a property map under `items`, a content descriptor in a oneOf
          method('get_odd', {
            type: 'object',
            properties: {
              list: { type: 'array', items: { blockHash: { $ref: '#/components/schemas/LocalHash' } } },
              either: { oneOf: [{ name: 'x', schema: { $ref: './schemas/common.json#/components/schemas/Hash' } }] },
            },
          }),
          method('get_alias', { $ref: '#/components/schemas/Alias' }),
        ],
        {
          components: {
            schemas: {
              LocalHash: { type: 'string' },
              Alias: { $ref: './schemas/block.json#/Chain1' },
            },
          },
        },
      ),
    );
  });

  it('loads: each ref resolved against its own file, chains collapsed, recursion a finite $ref cycle, $id by URI', async () => {
    const m = await loadDocument(file, 'split', undefined, { cwd: work });
    expect(m.methods.map((x) => x.name)).toEqual(['get_block', 'get_balance', 'get_odd', 'get_alias']);
    expect(m.warnings).toEqual([]);
    const schemas = m.document.components.schemas;
    // every ref of the bundle is local, and resolves in it
    const refs: string[] = [];
    JSON.stringify(m.document, (k, v) => {
      if (k === '$ref') refs.push(v);
      return v;
    });
    expect(refs.length).toBeGreaterThan(5);
    for (const r of refs) {
      expect(r).toMatch(/^#\/components\/schemas\/[A-Za-z0-9_-]+$/);
      expect(schemas[decodeURIComponent(r.split('/')[3])], r).toBeDefined();
    }
    // Block imported once, its recursion a $ref to itself (a finite document: stringify above did not overflow)
    const blockRef = m.document.methods[0].result.schema.$ref as string;
    const blockName = blockRef.split('/')[3];
    expect(schemas[blockName].properties.parent.$ref).toBe(blockRef);
    expect(schemas[blockName].properties.hash.$ref).toBe(m.document.methods[0].params[0].schema.$ref);
    // the chain Chain1 → Chain2 → Quantity → quantity.json ($id) ends at the $id schema, the same one get_balance names
    const quantity = schemas[m.document.methods[1].result.schema.$ref.split('/')[3]];
    expect(quantity).toEqual({ type: 'string', pattern: '^0x[0-9a-f]+$' });
    expect(schemas.Alias).toEqual(quantity);
    // refs under non-schema keys rewritten: the local one kept local, the cross-file one imported
    const odd = m.document.methods[2].result.schema.properties;
    expect(odd.list.items.blockHash.$ref).toBe('#/components/schemas/LocalHash');
    expect(odd.either.oneOf[0].schema.$ref).toBe('#/components/schemas/Hash');
    expect(schemas.Hash).toEqual({ type: 'string', pattern: '^0x[0-9a-f]{64}$' });
    // and the dereferenced model has them inlined
    expect(m.methods[0].params[0].deref).toEqual({ type: 'string', pattern: '^0x[0-9a-f]{64}$' });
    expect(m.methods[3].result?.deref ?? m.deref.methods[3].result.schema).toEqual(quantity);
  });

  it('generate (library and CLI) → tsc --strict NodeNext passes on the split document', async () => {
    const out = join(work, 'split-gen', 'split');
    const err: string[] = [];
    expect(
      await generateAction(
        file,
        { out, name: 'split' },
        () => {},
        (s) => err.push(s),
      ),
      err.join('\n'),
    ).toBe(0);
    // and the CLI, run from elsewhere, writes the same files
    const viaCli = await cli(['generate', file, '--out', join(work, 'split-gen-cli', 'split'), '--name', 'split']);
    expect(viaCli.code, viaCli.stderr).toBe(0);
    const same = await cli(['generate', file, '--out', out, '--name', 'split', '--check']);
    expect(same.code, same.stdout + same.stderr).toBe(0);
    write('split-gen/package.json', { name: 'app', private: true, type: 'module' });
    write(
      'split-gen/usage.ts',
      `import { createClient } from './split/index.js';
const client = createClient({ url: 'http://127.0.0.1:1/' });
export async function use(): Promise<string> {
  const block = await client.request('get_block', ['0x${'0'.repeat(64)}']);
  const parentHash: string | undefined = block.parent?.hash;
  return parentHash ?? block.hash;
}
`,
    );
    write('split-gen/tsconfig.json', {
      compilerOptions: {
        strict: true,
        module: 'NodeNext',
        moduleResolution: 'NodeNext',
        target: 'ES2022',
        lib: ['ES2023', 'DOM'],
        types: [],
        noEmit: true,
        paths: { '@rpcgate/client': [join(root, 'packages/client/src/index.ts')] },
      },
      include: ['split/*.ts', 'usage.ts'],
    });
    const tsc = await exec(process.execPath, [TSC, '-p', join(work, 'split-gen/tsconfig.json')], {
      cwd: join(work, 'split-gen'),
      timeout: 120_000,
    }).catch((e) => e);
    expect(`${tsc.stdout ?? ''}${tsc.stderr ?? ''}`).toBe('');
    expect(tsc.code ?? 0).toBe(0);
  }, 180_000);
});

describe('the working-directory fallback', () => {
  it('a relative ref with no file beside the referring document resolves against the working directory', async () => {
    // doc at cwdcase/api/doc.json says "defs/x.json"; no cwdcase/api/defs/x.json: cwdcase/api/lib/defs/x.json is found
    // only when the working directory is cwdcase/api/lib
    write('cwdcase/api/lib/defs/x.json', { X: { type: 'integer', minimum: 7 } });
    const file = write('cwdcase/api/doc.json', doc([method('x', { $ref: 'defs/x.json#/X' })]));
    const m = await loadDocument(file, 'cwd', undefined, { cwd: join(work, 'cwdcase/api/lib') });
    expect(m.methods[0].result?.deref ?? m.deref.methods[0].result.schema).toEqual({ type: 'integer', minimum: 7 });

    // elsewhere, it does not resolve, and the message says which files were tried, in order
    const e = await refusal(loadDocument(file, 'cwd', undefined, { cwd: work }));
    expect(e.problems).toHaveLength(1);
    expect(e.problems[0].pointer).toBe('#/methods/0/result/schema/$ref');
    expect(e.message).toMatch(/in method x: \$ref "defs\/x\.json#\/X" does not resolve: no such file: .*defs\/x\.json/);
    expect(e.message).toContain('tried in this order');

    // the CLI's working directory is the fallback too
    const ok = await cli(['generate', file, '--out', join(work, 'cwdcase/out')], join(work, 'cwdcase/api/lib'));
    expect(ok.code, ok.stderr).toBe(0);
    const refused = await cli(['generate', file, '--out', join(work, 'cwdcase/out2')], work);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/#\/methods\/0\/result\/schema\/\$ref.*no such file/);
  }, 120_000);
});

describe('remote refs', () => {
  let server: Server;
  let base: string;
  let requests = 0;
  beforeAll(async () => {
    server = createServer((req, res) => {
      requests++;
      if (req.url === '/remote.json') {
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify({ Remote: { type: 'string', enum: ['from-http'] } }));
      } else {
        res.statusCode = 404;
        res.end();
      }
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise((r) => server.close(r));
  });

  it('are refused without allowRemoteRefs (nothing fetched) and fetched with it', async () => {
    const file = write('remote/doc.json', doc([method('r', { $ref: `${base}/remote.json#/Remote` })]));
    const e = await refusal(loadDocument(file, 'remote', undefined, { cwd: work }));
    expect(e.problems[0].pointer).toBe('#/methods/0/result/schema/$ref');
    expect(e.message).toMatch(/remote refs are fetched only with --allow-remote-refs/);
    expect(requests).toBe(0);

    const m = await loadDocument(file, 'remote', undefined, { cwd: work, allowRemoteRefs: true });
    expect(requests).toBe(1);
    expect(m.methods[0].result?.deref ?? m.deref.methods[0].result.schema).toEqual({
      type: 'string',
      enum: ['from-http'],
    });

    // the CLI: refused by default, loaded with --allow-remote-refs
    const before = requests;
    const refused = await cli(['generate', file, '--out', join(work, 'remote/out')]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/--allow-remote-refs/);
    expect(requests).toBe(before);
    const allowed = await cli(['generate', file, '--out', join(work, 'remote/out'), '--allow-remote-refs']);
    expect(allowed.code, allowed.stderr).toBe(0);
    expect(requests).toBe(before + 1);
  }, 120_000);
});

describe('file refs outside the folder tree', () => {
  it('an absolute path, a ../ escape and a symlink pointing out are refused; --ref-root widens the tree', async () => {
    write('outside/secret.json', { S: { type: 'boolean' } });
    mkdirSync(join(work, 'tree'), { recursive: true });
    symlinkSync(join(work, 'outside/secret.json'), join(work, 'tree/link.json'));
    const all = write(
      'tree/all.json',
      doc([
        method('passwd', { $ref: '/etc/passwd' }),
        method('escape', { $ref: '../outside/secret.json#/S' }),
        method('symlink', { $ref: 'link.json#/S' }),
      ]),
    );
    const e = await refusal(loadDocument(all, 'tree', undefined, { cwd: work }));
    const byPointer = Object.fromEntries(e.problems.map((p) => [p.pointer, p.message]));
    expect(Object.keys(byPointer).sort()).toEqual([
      '#/methods/0/result/schema/$ref',
      '#/methods/1/result/schema/$ref',
      '#/methods/2/result/schema/$ref',
    ]);
    expect(byPointer['#/methods/0/result/schema/$ref']).toMatch(
      /in method passwd: .*outside the document's folder tree/,
    );
    expect(byPointer['#/methods/1/result/schema/$ref']).toMatch(
      /in method escape: .*outside the document's folder tree/,
    );
    expect(byPointer['#/methods/2/result/schema/$ref']).toMatch(
      /in method symlink: .*outside the document's folder tree/,
    );
    expect(e.message).toContain('--ref-root');

    // --ref-root outside: the escape and the symlink load; /etc/passwd stays refused
    const some = write(
      'tree/some.json',
      doc([method('escape', { $ref: '../outside/secret.json#/S' }), method('symlink', { $ref: 'link.json#/S' })]),
    );
    await refusal(loadDocument(some, 'tree', undefined, { cwd: work }));
    const m = await loadDocument(some, 'tree', undefined, { cwd: work, refRoots: [join(work, 'outside')] });
    expect(m.deref.methods.map((x: { result: { schema: unknown } }) => x.result.schema)).toEqual([
      { type: 'boolean' },
      { type: 'boolean' },
    ]);
    const still = await refusal(loadDocument(all, 'tree', undefined, { cwd: work, refRoots: [join(work, 'outside')] }));
    expect(still.problems.map((p) => p.pointer)).toEqual(['#/methods/0/result/schema/$ref']);

    // the CLI
    const refused = await cli(['docs', some, '--out', join(work, 'tree-docs')]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/in method escape: .*outside the document's folder tree/);
    const widened = await cli(['docs', some, '--out', join(work, 'tree-docs'), '--ref-root', join(work, 'outside')]);
    expect(widened.code, widened.stderr).toBe(0);
  }, 120_000);
});

describe('YAML, broken refs, syntax errors', () => {
  it('a YAML document with a ref into a YAML file loads', async () => {
    write('yaml/defs.yaml', 'Name:\n  type: string\n  minLength: 2\n');
    const file = write(
      'yaml/api.yaml',
      `openrpc: 1.3.2
info:
  title: yaml
  version: 1.0.0
methods:
  - name: hello
    params:
      - name: who
        required: true
        schema:
          $ref: './defs.yaml#/Name'
    result:
      name: greeting
      schema:
        type: string
`,
    );
    const m = await loadDocument(file, undefined, undefined, { cwd: work });
    expect(m.spec.name).toBe('api');
    expect(m.methods[0].params[0].deref).toEqual({ type: 'string', minLength: 2 });
  });

  it('an OpenRPC 1.4 YAML document (test/fixtures/openrpc/lenient-1.4x.openrpc.yaml) end to end: its warnings, generate → tsc --strict, its mock passes conformance', async () => {
    // no published 1.4 document exists to vendor (test/fixtures/openrpc-corpus/README.md): this hand-written one stands
    // in — checked against the 1.4 meta-schema, with a YAML anchor, a relative server URL and a loose version string
    const file = join(root, 'test/fixtures/openrpc/lenient-1.4x.openrpc.yaml');
    const m = await loadDocument(file, 'lenient14');
    expect(m.warnings.map((w) => `${w.pointer} ${w.line}:${w.column}`)).toEqual([
      '#/openrpc 2:10',
      '#/methods/0/tag-line 20:15',
    ]);
    expect(m.warnings[0].message).toMatch(/read as 1\.4\.0/);
    expect(m.methods.map((x) => x.name)).toEqual(['pet_get']);
    // the YAML anchor (&origin … *origin) is read as its value
    expect(JSON.stringify(m.methods[0].result?.deref)).toContain('"const":"hand-written"');

    const out = join(work, 'gen14', 'lenient14');
    const err: string[] = [];
    expect(
      await generateAction(
        file,
        { out, name: 'lenient14' },
        () => {},
        (x) => err.push(x),
      ),
      err.join('\n'),
    ).toBe(0);
    expect(err.join('\n')).toMatch(/warning: .*#\/openrpc: "1\.4\.x" is not an OpenRPC version number/);
    write('gen14/package.json', { name: 'app', private: true, type: 'module' });
    write(
      'gen14/usage.ts',
      `import { createClient } from './lenient14/index.js';
const client = createClient({ url: 'http://127.0.0.1:1/' });
export async function use(): Promise<string> {
  const pet = await client.request('pet_get', [1]);
  const origin: 'hand-written' | undefined = pet.origin;
  return origin ?? pet.name;
}
`,
    );
    write('gen14/tsconfig.json', {
      compilerOptions: {
        strict: true,
        module: 'NodeNext',
        moduleResolution: 'NodeNext',
        target: 'ES2022',
        lib: ['ES2023', 'DOM'],
        types: [],
        noEmit: true,
        paths: { '@rpcgate/client': [join(root, 'packages/client/src/index.ts')] },
      },
      include: ['lenient14/*.ts', 'usage.ts'],
    });
    const tsc = await exec(process.execPath, [TSC, '-p', join(work, 'gen14/tsconfig.json')], {
      cwd: join(work, 'gen14'),
      timeout: 120_000,
    }).catch((e) => e);
    expect(`${tsc.stdout ?? ''}${tsc.stderr ?? ''}`).toBe('');

    const mock = await createMock({ document: m, seed: 1 });
    try {
      const report = await specConformance(await mock.listen(0, '127.0.0.1'), m, { timeoutMs: 10_000 });
      expect([...report.methods, ...report.protocol].filter((r) => r.status === 'FAIL')).toEqual([]);
      expect(report.ok).toBe(true);
      // rpc.discover answers the document as written: its meta-schema breaks are the document's defects (WARN, named)
      const discover = report.protocol.find((r) => r.name === 'protocol:rpc.discover');
      expect(discover?.status).toBe('WARN');
      expect(discover?.detail).toMatch(/^document defect: .*#\/openrpc: .*#\/methods\/0\/tag-line: /);
    } finally {
      await mock.close();
    }

    // an rpc.discover answer that no reader could use (a method without a name) still fails
    const broken = createServer((req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        const { id } = JSON.parse(body);
        res.setHeader('content-type', 'application/json');
        const doc = { openrpc: '1.4.0', info: { title: 'broken', version: '1' }, methods: [{ params: [] }] };
        res.end(JSON.stringify({ jsonrpc: '2.0', id, result: doc }));
      });
    });
    await new Promise<void>((r) => broken.listen(0, '127.0.0.1', r));
    try {
      const port = (broken.address() as AddressInfo).port;
      const r = await specConformance(`http://127.0.0.1:${port}/`, m, { only: ['protocol:rpc.discover'] });
      expect(r.protocol.map((x) => [x.name, x.status])).toEqual([['protocol:rpc.discover', 'FAIL']]);
      expect(r.protocol[0].detail).toMatch(
        /^rpc\.discover answered an invalid OpenRPC 1\.4\.0 document: #\/methods\/0/,
      );
    } finally {
      await new Promise((r) => broken.close(r));
    }
  }, 180_000);

  it('a broken $ref names the method and the pointer (and line:column)', async () => {
    const file = write(
      'broken/doc.json',
      doc([
        method('fine', { type: 'string' }),
        method('broken', { type: 'object', properties: { a: { $ref: '#/components/schemas/Nope' } } }),
      ]),
    );
    const e = await refusal(loadDocument(file, 'broken', undefined, { cwd: work }));
    expect(e.problems).toHaveLength(1);
    expect(e.problems[0]).toMatchObject({
      file: 'broken/doc.json',
      pointer: '#/methods/1/result/schema/properties/a/$ref',
    });
    expect(e.problems[0].message).toMatch(/^in method broken: \$ref "#\/components\/schemas\/Nope" does not resolve/);
    expect(e.problems[0].line).toBeGreaterThan(1);
    const viaCli = await cli(['generate', file, '--out', join(work, 'broken/out')], work);
    expect(viaCli.code).toBe(1);
    expect(viaCli.stderr).toMatch(
      /broken\/doc\.json:\d+:\d+ #\/methods\/1\/result\/schema\/properties\/a\/\$ref: in method broken/,
    );
  }, 120_000);

  it('a JSON syntax error gives file:line:column', async () => {
    // line 4, column 14: the second comma after "1.0.0"
    const file = write(
      'syntax/bad.json',
      '{\n  "openrpc": "1.3.2",\n  "info": {\n    "title": ,\n    "version": "1.0.0"\n  },\n  "methods": []\n}\n',
    );
    const e = await refusal(loadDocument(file, 'bad', undefined, { cwd: work }));
    expect(e.problems[0]).toMatchObject({ file: 'syntax/bad.json', line: 4, column: 14 });
    expect(e.message).toMatch(/^syntax\/bad\.json:4:14/);
    const viaCli = await cli(['docs', file, '--out', join(work, 'syntax/out')], work);
    expect(viaCli.code).toBe(1);
    expect(viaCli.stderr).toContain('syntax/bad.json:4:14');
  }, 60_000);
});

describe('lenient warnings and --strict', () => {
  // 1.4.x: a loose version string and a required param after an optional one (a relative server URL is fine in 1.4)
  const loose = {
    ...doc([
      method('late', { type: 'string' }, [
        { name: 'opt', schema: { type: 'string' } },
        { name: 'req', required: true, schema: { type: 'string' } },
      ]),
    ]),
    openrpc: '1.4.x',
  };
  // 1.2.6: a relative server URL and a method without the result 1.2 requires
  const old = {
    ...doc([{ name: 'noresult', params: [] }, method('ok', { type: 'integer' })]),
    openrpc: '1.2.6',
    servers: [{ name: 'here', url: '/v1/rpc' }],
  };
  const expectedLoose = [
    ['#/openrpc', /"1\.4\.x" is not an OpenRPC version number; read as 1\.4\.0/],
    ['#/methods/0/params/0', /in method late: optional param "opt" comes before required param "req"/],
  ] as const;
  const expectedOld = [
    ['#/methods/0', /method "noresult" has no "result", which OpenRPC 1\.2\.6 requires/],
    ['#/servers/0/url', /server URL "\/v1\/rpc" is relative/],
  ] as const;
  let looseFile: string;
  let oldFile: string;
  beforeAll(() => {
    looseFile = write('lenient/loose.json', loose);
    oldFile = write('lenient/old.json', old);
  });

  it('the library: warnings name the pointer; strict makes them errors', async () => {
    for (const [file, expected] of [
      [looseFile, expectedLoose],
      [oldFile, expectedOld],
    ] as const) {
      const m = await loadDocument(file, 'lenient', undefined, { cwd: work });
      expect(m.warnings.map((w) => w.pointer).sort()).toEqual(expected.map(([p]) => p).sort());
      for (const [pointer, message] of expected) {
        const w = m.warnings.find((x) => x.pointer === pointer);
        expect(w?.message).toMatch(message);
        expect(w?.line).toBeGreaterThan(0);
      }
      const e = await refusal(loadDocument(file, 'lenient', undefined, { cwd: work, strict: true }));
      expect(e.problems.map((p) => p.pointer).sort()).toEqual(expected.map(([p]) => p).sort());
      expect(e.message).toMatch(/--strict/);
    }
  });

  it('the CLI: generate, docs and mock print the warnings and refuse with --strict', async () => {
    const runs = await Promise.all([
      cli(['generate', looseFile, '--out', join(work, 'lenient/g1')], work),
      cli(['generate', looseFile, '--out', join(work, 'lenient/g2'), '--strict'], work),
      cli(['docs', oldFile, '--out', join(work, 'lenient/d1')], work),
      cli(['docs', oldFile, '--out', join(work, 'lenient/d2'), '--strict'], work),
    ]);
    const mocks = [await mockCli([oldFile], work), await mockCli([looseFile, '--strict'], work)];
    const cases = [
      { run: runs[0], expected: expectedLoose, strict: false },
      { run: runs[1], expected: expectedLoose, strict: true },
      { run: runs[2], expected: expectedOld, strict: false },
      { run: runs[3], expected: expectedOld, strict: true },
      { run: mocks[0], expected: expectedOld, strict: false },
      { run: mocks[1], expected: expectedLoose, strict: true },
    ];
    for (const { run, expected, strict } of cases) {
      if (strict) expect(run.code, run.stderr).toBe(1);
      else expect(run.code, run.stderr).not.toBe(1);
      for (const [pointer, message] of expected) {
        const line = run.stderr.split('\n').find((l) => l.includes(` ${pointer}: `));
        expect(line, `${pointer} in:\n${run.stderr}`).toBeDefined();
        expect(line).toMatch(message);
        if (!strict) expect(line).toMatch(/^warning: lenient\/(loose|old)\.json:\d+:\d+ /);
      }
    }
    expect(runs[0].code).toBe(0);
    expect(runs[2].code).toBe(0);
    expect((mocks[0] as { line: string }).line).toMatch(/^mock of .* 2 methods at http:\/\/127\.0\.0\.1:\d+/);
  }, 240_000);

  it('the CLI: conformance --spec prints the warnings and refuses with --strict', async () => {
    const mock = await createMock({ document: await loadDocument(oldFile, 'lenient', undefined, { cwd: work }) });
    try {
      const url = await mock.listen(0, '127.0.0.1');
      const [lenient, strict] = await Promise.all([
        cli(['conformance', url, '--spec', oldFile], work),
        cli(['conformance', url, '--spec', oldFile, '--strict'], work),
      ]);
      // it ran (0: passed, 1: a check failed) and printed each warning with file:line:col and pointer
      expect([0, 1], lenient.stderr).toContain(lenient.code);
      expect(lenient.stdout).toMatch(/noresult|ok/);
      for (const [pointer, message] of expectedOld) {
        const line = lenient.stderr.split('\n').find((l) => l.includes(` ${pointer}: `));
        expect(line, `${pointer} in:\n${lenient.stderr}`).toMatch(/^warning: lenient\/old\.json:\d+:\d+ /);
        expect(line).toMatch(message);
      }
      // --strict: the document is refused (exit 2, nothing checked), naming the problems
      expect(strict.code, strict.stderr).toBe(2);
      expect(strict.stdout).toBe('');
      expect(strict.stderr).toMatch(/cannot use --spec .*--strict/s);
      for (const [pointer] of expectedOld) expect(strict.stderr).toContain(pointer);
    } finally {
      await mock.close();
    }
  }, 240_000);
});

describe('x-extensions', () => {
  // the plain meta-schemas are precompiled (contract/generated/meta-validators.ts); a document's x-extensions extend
  // its meta-schema, which is compiled when such a document is loaded
  const withCost = (cost: unknown) =>
    doc(
      [
        { ...method('a', {}), 'x-cost': cost },
        { ...method('b', {}), 'x-other': 1 },
      ],
      {
        'x-extensions': [
          {
            openrpcExtension: '0.0.0-development',
            name: 'x-cost',
            version: '1.0.0',
            description: 'what a call costs',
            summary: 'cost',
            restricted: ['methodObject'],
            schema: { type: 'integer' },
          },
        ],
      },
    );
  it('a declared extension is checked against its schema; other x- properties stay free', async () => {
    const ok = await loadDocument(write('ext/ok.json', withCost(3)), 'ext', undefined, { cwd: work });
    expect(ok.warnings).toEqual([]);
    const e = await refusal(loadDocument(write('ext/bad.json', withCost('three')), 'ext', undefined, { cwd: work }));
    expect(e.problems).toHaveLength(1);
    expect(e.problems[0]).toMatchObject({ pointer: '#/methods/0/x-cost', message: 'in method a: must be integer' });
  });
});
