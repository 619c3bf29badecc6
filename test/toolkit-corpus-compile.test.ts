// Issue 19: `rpcgate generate` over every corpus document (test/helpers/openrpc-corpus.ts: 13 documents of issue 11 and
// 11 that blockchain node projects publish, up to 1.25 MB / 276 methods, one YAML, two split across files), and its
// output type-checks with `tsc --strict` under both module resolutions a user may have — NodeNext (Node ESM) and
// Bundler (Vite, esbuild, webpack) — together with a usage file per document that calls one of its methods through the
// generated client with typed params and result (test/helpers/corpus-call.ts chooses the call). A document fails here
// when generate refuses it or when its output or its usage does not compile; never skipped.
//
// Cost: all documents are generated once, then ONE program per resolution is checked through the TypeScript API with
// the parsed source files shared between the two programs (tsc twice over ~12 MB of generated code would parse it
// twice); diagnostics are then attributed to the document whose folder they are in. toolkit-corpus.test.ts (docs, mock,
// conformance, createServer) runs beside this file on the other core.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve, sep } from 'node:path';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateFiles } from '../packages/toolkit/src/cli/generate.js';
import { compileContract } from '../packages/toolkit/src/contract/compile.js';
import { loadDocument } from '../packages/toolkit/src/contract/model.js';
import { chooseCall } from './helpers/corpus-call.js';
import { corpus, inDocumentCwd } from './helpers/openrpc-corpus.js';

const root = resolve(import.meta.dirname, '..');
const docs = corpus();
let work: string;

/** Per document: why generate failed, or the diagnostics (one line each) of each resolution. */
const generated = new Map<string, { error?: string; usage?: string }>();
const diagnostics = new Map<string, { NodeNext: string[]; Bundler: string[] }>();
/** Diagnostics in no document's folder (the client runtime, lib files): every document fails with them. */
const global: string[] = [];

const RESOLUTIONS = {
  NodeNext: { module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext },
  Bundler: { module: ts.ModuleKind.ESNext, moduleResolution: ts.ModuleResolutionKind.Bundler },
} as const;

/** The usage file of a document: one typed call through the generated client, and two misuses tsc must refuse. */
function usageFile(name: string, call: ReturnType<typeof chooseCall>): string {
  const m = JSON.stringify(call.method);
  const lines = [
    `// one call of ${call.method} through the generated client of ${name}, typed`,
    `import type { ParamsOf, ResultOf } from '@rpcgate/client';`,
    `import { createClient, methods, type Methods } from './${name}/index.js';`,
    '',
    `const client = createClient({ url: 'http://127.0.0.1:1/' });`,
    `type D = Methods[${m}];`,
    `export const params: ParamsOf<D> = ${JSON.stringify(call.params)};`,
    `export const result: Promise<ResultOf<D>> = client.request(${m}, params);`,
    `export const descriptor: D = methods[${m}];`,
    '// @ts-expect-error -- not a method of this API',
    `client.request('rpcgate.corpus.no_such_method', []);`,
  ];
  if (call.params.length > 0 && call.typedFirstParam)
    lines.push(
      '// @ts-expect-error -- params are typed: a symbol is never a valid first param',
      `client.request(${m}, [Symbol('x')]);`,
    );
  return `${lines.join('\n')}\n`;
}

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'rpcgate-corpus-compile-'));
  // an ES module project, as a user's would be (NodeNext checks the output as ESM)
  writeFileSync(join(work, 'package.json'), JSON.stringify({ name: 'app', private: true, type: 'module' }));
  const roots: string[] = [];
  for (const doc of docs) {
    try {
      await inDocumentCwd(doc, async () => {
        const files = await generateFiles(doc.file, doc.name);
        mkdirSync(join(work, doc.name));
        for (const [rel, text] of files) {
          writeFileSync(join(work, doc.name, rel), text);
          roots.push(join(work, doc.name, rel));
        }
        const call = chooseCall(compileContract(await loadDocument(doc.file, doc.name)));
        const usage = join(work, `${doc.name}.usage.ts`);
        writeFileSync(usage, usageFile(doc.name, call));
        roots.push(usage);
        generated.set(doc.name, { usage: `${call.method} (${call.params.length} params)` });
      });
    } catch (e) {
      generated.set(doc.name, { error: (e as Error).message });
    }
  }

  // Parsed source files are shared by both programs (same target): only binding and checking are done twice.
  const parsed = new Map<string, ts.SourceFile | undefined>();
  for (const [label, resolution] of Object.entries(RESOLUTIONS) as [keyof typeof RESOLUTIONS, ts.CompilerOptions][]) {
    const options: ts.CompilerOptions = {
      ...resolution,
      strict: true,
      target: ts.ScriptTarget.ES2022,
      lib: ['lib.es2023.d.ts', 'lib.dom.d.ts'],
      types: [],
      noEmit: true,
      // lib.dom.d.ts is not what is tested: every .ts file (the generated code, the client runtime) is still checked
      skipLibCheck: true,
      paths: { '@rpcgate/client': [join(root, 'packages/client/src/index.ts')] },
    };
    const host = ts.createCompilerHost(options);
    const getSourceFile = host.getSourceFile.bind(host);
    host.getSourceFile = (file, lang, onError) => {
      if (!parsed.has(file)) parsed.set(file, getSourceFile(file, lang, onError));
      return parsed.get(file);
    };
    const program = ts.createProgram(roots, options, host);
    for (const d of ts.getPreEmitDiagnostics(program)) {
      const text = ts.flattenDiagnosticMessageText(d.messageText, '\n').split('\n')[0];
      const where = d.file
        ? `${d.file.fileName.slice(work.length + 1)}:${d.file.getLineAndCharacterOfPosition(d.start ?? 0).line + 1}`
        : '(no file)';
      const line = `${label} ${where}: TS${d.code} ${text}`;
      const doc = d.file?.fileName.startsWith(work + sep)
        ? docs.find((x) => d.file!.fileName.slice(work.length + 1).split(/[/.]/)[0] === x.name)
        : undefined;
      if (!doc) {
        global.push(line);
        continue;
      }
      if (!diagnostics.has(doc.name)) diagnostics.set(doc.name, { NodeNext: [], Bundler: [] });
      diagnostics.get(doc.name)![label].push(line);
    }
  }
}, 600_000);

afterAll(() => {
  if (work) rmSync(work, { recursive: true, force: true });
});

describe('every corpus document: generate → tsc --strict (NodeNext and Bundler) with a typed usage file', () => {
  it(`the corpus has ${docs.length} documents (at least 24)`, () => {
    expect(docs.length).toBeGreaterThanOrEqual(24);
    expect(global).toEqual([]);
  });

  describe.each(docs.map((d) => [d.name, d] as const))('%s', (name, doc) => {
    it(`generates (${doc.origin})`, () => {
      const g = generated.get(name);
      expect(g?.error, `generate ${doc.file}`).toBeUndefined();
      expect(g?.usage).toBeDefined();
    });

    it.each(['NodeNext', 'Bundler'] as const)('its output and usage file compile under %s resolution', (label) => {
      expect(generated.get(name)?.error).toBeUndefined();
      const lines = diagnostics.get(name)?.[label] ?? [];
      // the first 20 lines name the file, line and code; the count says how many there are
      expect({ count: lines.length, first: lines.slice(0, 20) }).toEqual({ count: 0, first: [] });
    });
  });
});
