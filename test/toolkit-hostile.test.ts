// Issue 26 item 8: the toolkit against hostile OpenRPC documents, attacked as the audit did.
//   - "billion laughs": components that each refer to the next four times (2.3 KB) — loading stops with an error
//     naming the limit and how to raise it, within 2 s of CPU and 200 MB (measured in a child process), while every
//     document of the corpus loads under the defaults;
//   - the mock on result schemas demanding 1e8 items / characters, nested demands that multiply, and a param pattern
//     that backtracks exponentially (`^(a+)+$`): it starts, answers -32603 naming the method and pointer, answers the
//     pattern in milliseconds, and SIGTERM stops it with a hostile request in flight;
//   - `generate` on 1,000 and 4,000 methods: time and peak RSS measured in a child process;
//   - methods and schemas named __proto__, constructor, toString, hasOwnProperty, valueOf: generate → tsc → the tables
//     list them → createServer and the mock serve them → the generated client calls them.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMock, DEFAULT_DOCUMENT_LIMITS, loadDocument } from '@rpcgate/toolkit';
import { generateAction } from '../packages/toolkit/src/cli/generate.js';
import { SAMPLE_BOUNDS } from '../packages/toolkit/src/contract/sample-bounds.js';
import { corpus11 as corpus } from './helpers/openrpc-corpus.js';
import { syntheticLargeDocument } from '../bench/lib/large-document.js';
import { DerefBudget } from '../packages/toolkit/src/contract/bounds.js';
import { dereference, inlineInnerRefs } from '../packages/toolkit/src/contract/model.js';

const exec = promisify(execFile);
const root = resolve(import.meta.dirname, '..');
const TSX = join(root, 'node_modules', '.bin', 'tsx');
const TSC = join(root, 'node_modules', 'typescript', 'bin', 'tsc');
const src = (p: string) => JSON.stringify(pathToFileURL(join(root, 'packages', p)).href);

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

let work: string;
const children: ChildProcess[] = [];
beforeAll(() => {
  work = mkdtempSync(join(tmpdir(), 'rpcgate-hostile-'));
  writeFileSync(join(work, 'package.json'), JSON.stringify({ name: 'app', private: true, type: 'module' }));
});
afterAll(() => {
  for (const ch of children) if (ch.exitCode === null && ch.signalCode === null) ch.kill('SIGKILL');
  if (work) rmSync(work, { recursive: true, force: true });
});

const writeDoc = (name: string, doc: Json): string => {
  const file = join(work, name);
  writeFileSync(file, JSON.stringify(doc));
  return file;
};

/** n components, each referring to the next k times (the last a string), and one method using the first. */
function laughs(n: number, k: number): Json {
  const schemas: Json = {};
  for (let i = 0; i < n; i++) {
    schemas[`L${i}`] =
      i === n - 1
        ? { type: 'string' }
        : {
            type: 'object',
            properties: Object.fromEntries(
              Array.from({ length: k }, (_, j) => [`p${j}`, { $ref: `#/components/schemas/L${i + 1}` }]),
            ),
          };
  }
  const ref = { $ref: '#/components/schemas/L0' };
  return {
    openrpc: '1.2.6',
    info: { title: 'laughs', version: '1' },
    methods: [{ name: 'boom', params: [{ name: 'a', schema: ref }], result: { name: 'r', schema: ref } }],
    components: { schemas },
  };
}

/** Runs `body` (an ES module's code, with `doc` = argv[2]) in a child node process; it prints a JSON line with its CPU
 *  and wall time and peak RSS (process.resourceUsage: the whole process, measured by the kernel). */
async function measured(
  name: string,
  body: string,
  doc: string,
): Promise<{ cpuMs: number; wallMs: number; maxRssMB: number; out: Json }> {
  const script = join(work, `${name}.mts`);
  writeFileSync(
    script,
    `const doc = process.argv[2];
const cpu0 = process.cpuUsage();
const t0 = performance.now();
let out;
try {
${body}
} catch (e) {
  out = { error: e.message };
}
const cpu = process.cpuUsage(cpu0);
process.stdout.write(JSON.stringify({ cpuMs: (cpu.user + cpu.system) / 1000, wallMs: performance.now() - t0, maxRssMB: process.resourceUsage().maxRSS / 1024, out }) + '\\n');
`,
  );
  const { stdout } = await exec(process.execPath, ['--import', 'tsx', script, doc], {
    cwd: root,
    timeout: 240_000,
    maxBuffer: 16 << 20,
  });
  return JSON.parse(stdout.trim().split('\n').pop()!);
}

describe('billion laughs: loading is bounded', () => {
  it('a 2.3 KB document of 11 components × 4 refs stops within 2 s of CPU and 200 MB, naming the limit and how to raise it', async () => {
    const file = writeDoc('laughs-11x4.json', laughs(11, 4));
    const r = await measured(
      'load-laughs',
      `const { loadDocument } = await import(${src('toolkit/src/contract/model.ts')});\nawait loadDocument(doc);\nout = { loaded: true };`,
      file,
    );
    console.log(`billion laughs (11 × 4 refs, 2.3 KB): ${JSON.stringify(r)}`);
    expect(r.out.error).toMatch(/more than 100000 references inlined/);
    expect(r.out.error).toMatch(/maxRefExpansions = 100000/);
    expect(r.out.error).toMatch(/limits\.maxRefExpansions or the CLI flag --max-ref-expansions <n>/);
    expect(r.cpuMs).toBeLessThan(2000);
    expect(r.wallMs).toBeLessThan(10_000); // slack for a loaded machine; CPU time is the measure
    expect(r.maxRssMB).toBeLessThan(200);
  }, 240_000);

  it('a wide document (one 2,000-property component referenced 1,200 times) stops at maxDerefNodes within 2 s of CPU and 200 MB', async () => {
    const big = {
      type: 'object',
      properties: Object.fromEntries(Array.from({ length: 2000 }, (_, i) => [`f${i}`, { type: 'string' }])),
    };
    const ref = { $ref: '#/components/schemas/Big' };
    const methods = Array.from({ length: 600 }, (_, i) => ({
      name: `m${i}`,
      params: [{ name: 'a', schema: ref }],
      result: { name: 'r', schema: ref },
    }));
    const file = writeDoc('wide.json', {
      openrpc: '1.2.6',
      info: { title: 'wide', version: '1' },
      methods,
      components: { schemas: { Big: big } },
    });
    const r = await measured(
      'load-wide',
      `const { loadDocument } = await import(${src('toolkit/src/contract/model.ts')});\nawait loadDocument(doc);\nout = { loaded: true };`,
      file,
    );
    console.log(`wide document (1,200 refs to a 2,000-property schema): ${JSON.stringify(r)}`);
    expect(r.out.error).toMatch(
      /maxDerefNodes = 500000 — raise it with the option limits\.maxDerefNodes or the CLI flag --max-deref-nodes <n>/,
    );
    // the CPU of the whole child, module load included: the OpenRPC meta-schemas are precompiled
    // (contract/generated/meta-validators.ts), so checking the document against them costs next to nothing
    expect(r.cpuMs).toBeLessThan(2000);
    expect(r.maxRssMB).toBeLessThan(200);
  }, 240_000);

  it('a large realistic document stays far inside maxDerefNodes; the same size chained 120 deep is a billion laughs', async () => {
    // What the dereferencing passes count for a document (the budget loadDocument uses, without its limits).
    const used = (doc: Json) => {
      const budget = new DerefBudget({ maxDerefNodes: 1e9, maxRefExpansions: 1e9 });
      dereference(inlineInnerRefs(doc, budget), budget);
      return budget.used();
    };
    const lotusFile = join(root, 'test/fixtures/openrpc-corpus/lotus/full.json');
    const lotus = JSON.parse(readFileSync(lotusFile, 'utf8'));
    const layered = syntheticLargeDocument();
    const sizes = {
      lotus: readFileSync(lotusFile).length,
      layered: JSON.stringify(layered, null, 2).length,
    };
    const counts = { lotus: used(lotus), layered: used(layered) };
    console.log(`dereferenced nodes: ${JSON.stringify({ sizes, counts })}`);
    // the published Lotus full.json (1.19 MB, 240 methods, schemas written inline) and bench/toolkit-large.ts's
    // synthetic document (1.25 MB, 240 methods, 120 components referring to one another in three layers)
    expect(lotus.methods).toHaveLength(240);
    expect(layered.methods).toHaveLength(240);
    expect(sizes.lotus).toBeGreaterThan(1_200_000);
    expect(sizes.layered).toBeGreaterThan(1_250_000);
    expect(counts.lotus.nodes).toBeLessThan(DEFAULT_DOCUMENT_LIMITS.maxDerefNodes / 10);
    expect(counts.layered.nodes).toBeLessThan(DEFAULT_DOCUMENT_LIMITS.maxDerefNodes / 4);
    await expect(loadDocument(lotusFile)).resolves.toBeDefined();
    const model = await loadDocument(writeDoc('large-layered.json', layered));
    expect(model.methods).toHaveLength(240);

    // the same components, each referring to three earlier ones at random: a chain up to 120 deep with a fan-out of
    // 3, whose dereferenced tree would hold tens of millions of nodes — refused under the defaults, as it should be
    const chained = writeDoc('large-chained.json', syntheticLargeDocument({ chained: true }));
    await expect(loadDocument(chained)).rejects.toThrow(/document too large once dereferenced/);
  }, 120_000);

  it('every document of the corpus loads under the defaults', async () => {
    for (const d of corpus()) {
      const m = await loadDocument(d.file, d.name);
      expect(m.methods.length, d.name).toBeGreaterThan(0);
    }
    expect(DEFAULT_DOCUMENT_LIMITS).toEqual({ maxRefExpansions: 100_000, maxRefDepth: 64, maxDerefNodes: 500_000 });
  }, 120_000);

  it('the limits are raised and lowered by the option and by the CLI flags of generate', async () => {
    const file = writeDoc('laughs-6x4.json', laughs(6, 4)); // 4^5 + … = 1,365 expansions per use
    await expect(loadDocument(file)).resolves.toBeDefined();
    await expect(loadDocument(file, undefined, { maxRefExpansions: 1000 })).rejects.toThrow(
      /laughs-6x4\.json: .*maxRefExpansions = 1000/,
    );
    await expect(loadDocument(file, undefined, { maxRefDepth: 3 })).rejects.toThrow(
      /maxRefDepth = 3 .*--max-ref-depth/,
    );

    const err: string[] = [];
    const refused = await generateAction(
      file,
      { out: join(work, 'gen-6x4'), maxRefExpansions: 1000 },
      () => {},
      (s) => err.push(s),
    );
    expect(refused).toBe(1);
    expect(err.join('\n')).toMatch(/^rpcgate generate: .*more than 1000 references inlined.*--max-ref-expansions/);

    // the CLI flag reaches loadDocument
    const cli = await exec(
      process.execPath,
      [
        '--import',
        'tsx',
        join(root, 'src/cli/main.ts'),
        'generate',
        file,
        '--out',
        join(work, 'gen-cli'),
        '--max-ref-expansions',
        '10',
      ],
      { cwd: root, timeout: 60_000 },
    ).catch((e) => e);
    expect(cli.code).toBe(1);
    expect(cli.stderr).toMatch(/more than 10 references inlined.*--max-ref-expansions/);

    // 9 × 4: about 290,000 expansions in all — refused by default, loaded once the limits are raised
    const big = writeDoc('laughs-9x4.json', laughs(9, 4));
    await expect(loadDocument(big)).rejects.toThrow(/maxRefExpansions = 100000/);
    await expect(
      loadDocument(big, undefined, { maxRefExpansions: 1_000_000, maxDerefNodes: 5_000_000 }),
    ).resolves.toBeDefined();
  }, 120_000);
});

describe('the mock against hostile schemas and patterns', () => {
  const doc = {
    openrpc: '1.2.6',
    info: { title: 'hostile', version: '1' },
    methods: [
      {
        name: 'big_items',
        params: [],
        result: { name: 'r', schema: { type: 'array', minItems: 100_000_000, items: { type: 'integer' } } },
      },
      { name: 'big_string', params: [], result: { name: 'r', schema: { $ref: '#/components/schemas/Huge' } } },
      // each demand within the bounds, their product (a million integers) far beyond the per-value budget
      {
        name: 'nested',
        params: [],
        result: {
          name: 'r',
          schema: {
            type: 'array',
            minItems: 1000,
            items: { type: 'array', minItems: 1000, items: { type: 'integer' } },
          },
        },
      },
      {
        name: 'match',
        params: [{ name: 's', required: true, schema: { type: 'string', pattern: '^(a+)+$' } }],
        result: { name: 'r', schema: { type: 'boolean' } },
      },
      { name: 'fine', params: [], result: { name: 'r', schema: { type: 'integer', minimum: 1, maximum: 1 } } },
    ],
    components: { schemas: { Huge: { type: 'string', minLength: 100_000_000 } } },
  };

  const post = async (url: string, body: unknown, ms = 10_000) => {
    const res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(ms),
    });
    return res.json() as Promise<Json>;
  };

  it('createMock starts, reports what it cannot generate within bounds (method and pointer), and answers -32603 naming them', async () => {
    const t0 = performance.now();
    const mock = await createMock({ document: doc, seed: 1 });
    const startMs = performance.now() - t0;
    try {
      const url = await mock.listen(0, '127.0.0.1');
      console.log(
        `mock start on hostile schemas: ${Math.round(startMs)} ms; warnings: ${JSON.stringify(mock.warnings)}`,
      );
      expect(mock.warnings).toEqual(
        expect.arrayContaining([
          expect.stringMatching(
            /^big_items: its result schema cannot be generated within bounds: minItems 100000000 at \/minItems is above the generator's bound of 1000/,
          ),
          expect.stringMatching(
            /^big_string: .*minLength 100000000 at #\/components\/schemas\/Huge\/minLength is above the generator's bound of 65536/,
          ),
          expect.stringMatching(
            /^nested: .*cannot be generated within bounds: generating a value took more than (200000 nodes|2000 ms)/,
          ),
        ]),
      );
      const items = await post(url, { jsonrpc: '2.0', id: 1, method: 'big_items', params: [] });
      expect(items.error.code).toBe(-32603);
      expect(items.error.message).toMatch(/big_items .*minItems 100000000 at \/minItems/);
      const str = await post(url, { jsonrpc: '2.0', id: 2, method: 'big_string', params: [] });
      expect(str.error.message).toMatch(/big_string .*#\/components\/schemas\/Huge\/minLength/);
      expect((await post(url, { jsonrpc: '2.0', id: 3, method: 'nested', params: [] })).error.code).toBe(-32603);
      expect((await post(url, { jsonrpc: '2.0', id: 4, method: 'fine', params: [] })).result).toBe(1);
      expect(startMs).toBeLessThan(30_000);
      expect(SAMPLE_BOUNDS.items).toBe(1000);
    } finally {
      await mock.close();
    }
  }, 60_000);

  it('rpcgate mock: starts, answers ^(a+)+$ on 41 characters at once, and SIGTERM stops it within 2 s with hostile requests in flight', async () => {
    const file = writeDoc('hostile.json', doc);
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', join(root, 'src/cli/main.ts'), 'mock', file, '--port', '0', '--host', '127.0.0.1'],
      { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    children.push(child);
    let stdout = '';
    let stderr = '';
    child.stderr!.on('data', (d) => (stderr += d));
    const line = await new Promise<string>((res, rej) => {
      const timer = setTimeout(() => rej(new Error(`no URL line in 60 s; stderr: ${stderr}`)), 60_000);
      child.stdout!.on('data', (d) => {
        stdout += d;
        if (stdout.includes('\n')) {
          clearTimeout(timer);
          res(stdout.split('\n')[0]);
        }
      });
      child.once('exit', (code) => rej(new Error(`exited ${code}; stderr: ${stderr}`)));
    });
    const url = line.slice(line.indexOf('http://'));
    expect(stderr).toMatch(
      /warning: big_items: its result schema cannot be generated within bounds: minItems 100000000 at \/minItems/,
    );

    const t0 = performance.now();
    const evil = await post(url, { jsonrpc: '2.0', id: 1, method: 'match', params: [`${'a'.repeat(41)}!`] }, 5000);
    const evilMs = performance.now() - t0;
    console.log(`^(a+)+$ on 41 characters: ${Math.round(evilMs)} ms`);
    expect(evil.error.code).toBe(-32602);
    expect(evilMs).toBeLessThan(2000);
    expect((await post(url, { jsonrpc: '2.0', id: 2, method: 'match', params: ['a'.repeat(41)] })).result).toEqual(
      expect.any(Boolean),
    );

    // hostile requests in flight, then SIGTERM: the process is gone within 2 s
    const inFlight = Array.from({ length: 5 }, (_, i) =>
      fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ jsonrpc: '2.0', id: i, method: 'match', params: [`${'a'.repeat(5000)}!`] }),
      }).catch(() => undefined),
    );
    const exited = new Promise<number | null>((res) => child.once('exit', (code) => res(code)));
    const t1 = performance.now();
    child.kill('SIGTERM');
    const code = await Promise.race([exited, new Promise<'timeout'>((res) => setTimeout(() => res('timeout'), 2000))]);
    console.log(`SIGTERM with hostile requests in flight: exit ${code} after ${Math.round(performance.now() - t1)} ms`);
    expect(code).toBe(0);
    await Promise.all(inFlight);
  }, 120_000);
});

describe('patterns on the linear-time engine', () => {
  it('each pattern tests with its own engine (ajv keys compiled patterns by toString: two RE2 testers must differ)', async () => {
    const doc = {
      openrpc: '1.2.6',
      info: { title: 'patterns', version: '1' },
      methods: [
        {
          name: 'two',
          params: [
            { name: 'x', required: true, schema: { type: 'string', pattern: '^(a|b)+$' } },
            { name: 'y', required: true, schema: { type: 'string', pattern: '^(c|d)+$' } },
            { name: 'z', required: true, schema: { type: 'string', pattern: '^(?!\\s*$)[^\\u0000-\\u001F]+$' } },
          ],
          result: { name: 'r', schema: { type: 'boolean' } },
        },
      ],
    };
    const { compileValidators } = await import('../packages/toolkit/src/contract/compile.js');
    const { modelDocument } = await import('../packages/toolkit/src/contract/model.js');
    const model = await modelDocument(doc, { name: 'p', file: 'p.json' });
    // ajv alone (fast: false) and behind the fast checks
    for (const fast of [false, true]) {
      const v = compileValidators(model, { fast }).two.params;
      expect(v(['abba', 'cddc', 'a name']), `fast ${fast}`).toBe(true);
      expect(v(['abc', 'cddc', 'x'])).toBe(false);
      expect(v(['ab', 'cdab', 'x'])).toBe(false);
      expect(v(['ab', 'cd', '   '])).toBe(false); // the leading negative lookahead: not only spaces
      expect(v(['ab', 'cd', 'a\u0001'])).toBe(false);
    }
  });
});

/** A document of n methods, each with its own params and result schema (distinct: no two compile alike). */
function manyMethods(n: number): Json {
  const methods = Array.from({ length: n }, (_, i) => ({
    name: `ns_method${i}`,
    summary: `Reads item ${i}.`,
    params: [
      { name: 'address', required: true, schema: { $ref: '#/components/schemas/Address' } },
      { name: 'index', schema: { type: 'integer', minimum: 0, maximum: 1000 + i } },
    ],
    result: { name: 'value', schema: { $ref: i % 2 ? '#/components/schemas/Quantity' : '#/components/schemas/Item' } },
    errors: [{ code: 4000 + (i % 50), message: `error ${i % 50}` }],
  }));
  return {
    openrpc: '1.2.6',
    info: { title: 'many', version: '1' },
    methods,
    components: {
      schemas: {
        Address: { type: 'string', pattern: '^0x[0-9a-fA-F]{40}$' },
        Quantity: { type: 'string', pattern: '^0x(0|[1-9a-f][0-9a-f]*)$' },
        Item: {
          type: 'object',
          properties: { id: { type: 'integer' }, owner: { $ref: '#/components/schemas/Address' } },
          required: ['id'],
        },
      },
    },
  };
}

describe('generate scales with the number of methods', () => {
  it('2,000 and 4,000 methods: CPU time grows linearly, memory stays bounded; figures printed (time and peak RSS in a child process)', async () => {
    const body = `const { generateFiles } = await import(${src('toolkit/src/cli/generate.ts')});\nconst files = await generateFiles(doc);\nout = { files: files.size, bytes: [...files.values()].reduce((n, t) => n + t.length, 0) };`;
    // Both sizes are past the formatting limit (FORMAT_LIMIT_BYTES): the same work per method, so the ratio is fair.
    const small = await measured('gen-2000', body, writeDoc('many-2000.json', manyMethods(2000)));
    const large = await measured('gen-4000', body, writeDoc('many-4000.json', manyMethods(4000)));
    console.log(`generate 2,000 methods: ${JSON.stringify(small)}\ngenerate 4,000 methods: ${JSON.stringify(large)}`);
    expect(small.out.files).toBe(5);
    expect(large.out.files).toBe(5);
    // linear: twice the methods, at most about twice the CPU (start-up is shared). Before issue 26: 1,000 → 4,000 took
    // 5.4 s → 28.5 s of CPU (× 5.3), peak 378 MB → 752 MB (ajv's standalone export was quadratic, its name
    // optimisation pass too, and prettier's JSX sniff).
    expect(large.cpuMs / small.cpuMs).toBeLessThan(2.6);
    // peak RSS of the whole child (tsx included): about 450–510 MB for 4,000 methods here.
    expect(large.maxRssMB).toBeLessThan(640);
  }, 600_000);
});

describe('method and schema names that are Object.prototype members', () => {
  const NAMES = ['__proto__', 'constructor', 'toString', 'hasOwnProperty', 'valueOf'];
  // JSON text: a JS object literal cannot hold a "__proto__" key (it sets the prototype); JSON.parse defines it, as
  // for a document read from a file.
  const json = `{
  "openrpc": "1.2.6",
  "info": { "title": "proto", "version": "1" },
  "methods": [
    { "name": "__proto__", "params": [{ "name": "__proto__", "required": true, "schema": { "$ref": "#/components/schemas/__proto__" } }],
      "result": { "name": "r", "schema": { "$ref": "#/components/schemas/constructor" } },
      "examples": [{ "name": "e", "params": [{ "name": "__proto__", "value": { "__proto__": "x" } }], "result": { "name": "r", "value": "ccc" } }] },
    { "name": "constructor", "params": [], "result": { "name": "r", "schema": { "type": "integer", "minimum": 7, "maximum": 7 } } },
    { "name": "toString", "params": [], "result": { "name": "r", "schema": { "type": "string", "enum": ["s"] } } },
    { "name": "hasOwnProperty", "paramStructure": "by-name", "params": [{ "name": "__proto__", "required": true, "schema": { "type": "string" } }], "result": { "name": "r", "schema": { "type": "boolean" } } },
    { "name": "valueOf", "params": [], "result": { "name": "r", "schema": { "type": "null" } } }
  ],
  "components": { "schemas": {
    "__proto__": { "type": "object", "properties": { "__proto__": { "type": "string" }, "toString": { "type": "integer" } }, "required": ["__proto__"] },
    "constructor": { "type": "string", "pattern": "^c+$" }
  } }
}`;

  it('generate → tsc → the tables list them → createServer and the mock serve them → the generated client calls them', async () => {
    const file = join(work, 'proto.json');
    writeFileSync(file, json);
    expect(Object.keys(JSON.parse(json).components.schemas)).toEqual(['__proto__', 'constructor']);

    const out = join(work, 'proto');
    const err: string[] = [];
    expect(
      await generateAction(
        file,
        { out, name: 'proto' },
        () => {},
        (s) => err.push(s),
      ),
      err.join('\n'),
    ).toBe(0);
    writeFileSync(
      join(work, 'tsconfig.json'),
      JSON.stringify({
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
        include: ['proto/*.ts', 'usage.ts'],
      }),
    );
    writeFileSync(
      join(work, 'run.ts'),
      `import { createServer } from ${JSON.stringify(join(root, 'packages/toolkit/src/server/index.ts'))};
import { createMock } from ${JSON.stringify(join(root, 'packages/toolkit/src/mock/index.ts'))};
import { createClient, methods } from './proto/index.js';
import { validators, fastChecks } from './proto/validators.js';

const served = await createServer({
  document: ${JSON.stringify(file)},
  handlers: {
    ['__proto__']: () => 'cc',
    constructor: () => 7,
    toString: () => 's',
    // by-name: the handler gets { __proto__ } as an own key of a plain object, never the prototype (issue 19)
    hasOwnProperty: (p: any) => Object.getPrototypeOf(p) === Object.prototype && Object.getOwnPropertyDescriptor(p, '__proto__')?.value === 'own',
    valueOf: () => null,
  },
});
const mock = await createMock({ document: ${JSON.stringify(file)} });
try {
  const c = createClient({ url: await served.listen(0, '127.0.0.1') });
  const m = createClient({ url: await mock.listen(0, '127.0.0.1') });
  const call = (k: any) => Promise.all([
    k.request('__proto__', [{ ['__proto__']: 'x' }]),
    k.request('constructor'),
    k.request('toString'),
    k.request('hasOwnProperty', { ['__proto__']: 'own' }),
    k.request('valueOf'),
  ]);
  console.log(JSON.stringify({
    methods: Object.keys(methods),
    methodsProto: Object.getPrototypeOf(methods) === Object.prototype,
    validators: Object.keys(validators),
    validatorsProto: Object.getPrototypeOf(validators) === Object.prototype,
    fastChecks: Object.keys(fastChecks),
    served: await call(c),
    mocked: await call(m),
    mockWarnings: mock.warnings,
  }));
} finally {
  await served.close();
  await mock.close();
}
`,
    );
    // the generated files and a program typed against them compile (run.ts, which imports the repository's source,
    // is run by tsx only)
    writeFileSync(
      join(work, 'usage.ts'),
      `import { createClient, methods, type Proto, type ProtoMethods } from './proto/index.js';
const c = createClient({ url: 'http://127.0.0.1:1/' });
// (an object literal has Object.prototype's toString, which TS compares with the optional toString: number)
export const a: Promise<string> = c.request('__proto__', [{ ['__proto__']: 'x' } as Proto]);
export const b: Promise<number> = c.request('constructor');
export const s: Promise<'s'> = c.request('toString');
export const h: Promise<boolean> = c.request('hasOwnProperty', { ['__proto__']: 'own' });
export const v: Promise<null> = c.request('valueOf');
export const d: string = methods['__proto__'].name;
export type R = ProtoMethods['constructor']['result'];
`,
    );
    await exec(process.execPath, [TSC, '-p', join(work, 'tsconfig.json')], { cwd: work, timeout: 120_000 }).catch(
      (e) => {
        throw new Error(`tsc: ${e.stdout}${e.stderr}`);
      },
    );
    const { stdout } = await exec(TSX, [join(work, 'run.ts')], { cwd: work, timeout: 60_000 });
    const r = JSON.parse(stdout.trim().split('\n').pop()!);
    expect(r.methods).toEqual(NAMES);
    expect(r.methodsProto).toBe(true);
    expect(r.validators).toEqual(NAMES);
    expect(r.validatorsProto).toBe(true);
    expect(r.fastChecks).toEqual(NAMES);
    expect(r.served).toEqual(['cc', 7, 's', true, null]);
    // the mock: the example pairing answers ccc; the others are generated from their schemas
    expect(r.mocked).toEqual(['ccc', 7, 's', expect.any(Boolean), null]);
    expect(r.mockWarnings).toEqual([]);
  }, 240_000);
});
