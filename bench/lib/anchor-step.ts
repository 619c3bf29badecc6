// One step of the anchor table (bench/toolkit-anchors.ts) in its own process, so that its time and peak memory are its
// own and an out-of-memory crash or a hang of one tool ends only this process: `node --max-old-space-size=<MB> --import
// tsx bench/lib/anchor-step.ts <step> <document> <work dir>`. Prints one JSON line {ok, ms, detail}: ms is the step's
// own work (process start-up and imports excluded, the same for every tool); the parent reads peak RSS from /proc.
import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import ts from 'typescript';

const [step, document, work] = process.argv.slice(2);
const root = resolve(import.meta.dirname, '../..');

type Outcome = { ok: boolean; detail: string };

/** tsc --strict over `files` through the TypeScript API; the diagnostics that `ignore` lets through, one line each.
 *  Both tools' outputs are checked with skipLibCheck (lib.dom.d.ts and @types are not what is measured). */
function typeCheck(
  files: string[],
  options: ts.CompilerOptions,
  ignore: (d: ts.Diagnostic) => boolean = () => false,
): string[] {
  const program = ts.createProgram(files, options);
  return ts
    .getPreEmitDiagnostics(program)
    .filter((d) => !ignore(d))
    .map((d) => `TS${d.code} ${ts.flattenDiagnosticMessageText(d.messageText, ' ').slice(0, 160)}`);
}

const summary = (lines: string[]) =>
  lines.length === 0 ? 'compiles' : `${lines.length} tsc errors, first: ${lines[0]}`;

const steps: Record<string, () => Promise<Outcome>> = {
  /** rpcgate generate: the five files of the typed client, written to <work>/rpcgate. */
  async 'rpcgate-generate'() {
    const { generateFiles } = await import('../../packages/toolkit/src/cli/generate.js');
    const files = await generateFiles(document, 'api');
    const out = join(work, 'rpcgate');
    mkdirSync(out, { recursive: true });
    let bytes = 0;
    for (const [rel, text] of files) {
      writeFileSync(join(out, rel), text);
      bytes += text.length;
    }
    return { ok: true, detail: `${files.size} files, ${Math.round(bytes / 1024)} KB` };
  },
  /** tsc --strict (NodeNext, as an ES module project) over what rpcgate-generate wrote. */
  async 'rpcgate-tsc'() {
    const dir = join(work, 'rpcgate');
    if (!existsSync(dir)) return { ok: false, detail: 'no generated client (rpcgate-generate failed)' };
    writeFileSync(join(work, 'package.json'), JSON.stringify({ type: 'module', private: true }));
    const lines = typeCheck(
      readdirSync(dir).map((f) => join(dir, f)),
      {
        strict: true,
        module: ts.ModuleKind.NodeNext,
        moduleResolution: ts.ModuleResolutionKind.NodeNext,
        target: ts.ScriptTarget.ES2022,
        lib: ['lib.es2023.d.ts', 'lib.dom.d.ts'],
        types: [],
        noEmit: true,
        skipLibCheck: true,
        paths: { '@rpcgate/client': [join(root, 'packages/client/src/index.ts')] },
      },
    );
    return { ok: lines.length === 0, detail: summary(lines) };
  },
  /** rpcgate docs: load, write the HTML reference to <work>/docs. */
  async 'rpcgate-docs'() {
    const { loadDocument } = await import('../../packages/toolkit/src/contract/model.js');
    const { writeDocsTo } = await import('../../packages/toolkit/src/docs/index.js');
    const written = await writeDocsTo(join(work, 'docs'), await loadDocument(document));
    return { ok: true, detail: `${written.length} files` };
  },
  /** rpcgate mock, then rpcgate conformance of that mock against the same document. */
  async 'rpcgate-mock-conformance'() {
    const { createMock } = await import('../../packages/toolkit/src/mock/index.js');
    const { specConformance } = await import('../../packages/toolkit/src/conformance/spec.js');
    const mock = await createMock({ document, seed: 1 });
    try {
      const url = await mock.listen(0, '127.0.0.1');
      const r = await specConformance(url, mock.model, { timeoutMs: 10_000 });
      const failed = [...r.methods, ...r.protocol].filter((x) => x.status === 'FAIL');
      return {
        ok: r.ok,
        detail: `${r.summary.passed} passed, ${failed.length} failed${failed.length ? `, first: ${failed[0].name}: ${failed[0].detail?.slice(0, 120)}` : ''}`,
      };
    } finally {
      await mock.close();
    }
  },
  /** @open-rpc/generator's TypeScript client (its docs component needs Gatsby and the network: not run). */
  async 'official-generate'() {
    // a CommonJS module whose export is `exports.default`: under ESM interop that is `.default.default`
    type Generate = (o: import('@open-rpc/generator').IGeneratorOptions) => Promise<void>;
    const mod = (await import('@open-rpc/generator')) as unknown as { default: Generate | { default: Generate } };
    const generate = typeof mod.default === 'function' ? mod.default : mod.default.default;
    await generate({
      openrpcDocument: document,
      outDir: join(work, 'official'),
      components: [{ type: 'client', name: 'api', language: 'typescript' }],
    });
    return { ok: true, detail: 'client/typescript written' };
  },
  /** tsc --strict over the official client with the tsconfig the generator writes. Its runtime package
   *  @open-rpc/client-js is not installed here: "cannot find module" for it is not counted (its types become any). */
  async 'official-tsc'() {
    const dir = join(work, 'official/client/typescript');
    const index = join(dir, 'src/index.ts');
    if (!existsSync(index)) return { ok: false, detail: 'no generated client (official-generate failed)' };
    const config = ts.readConfigFile(join(dir, 'tsconfig.json'), ts.sys.readFile).config;
    const { options } = ts.parseJsonConfigFileContent(config, ts.sys, dir);
    delete options.declaration; // type-check only: no outputs, so no declaration settings
    delete options.declarationDir;
    const lines = typeCheck(
      [index],
      { ...options, noEmit: true, sourceMap: false, skipLibCheck: true },
      (d) => d.code === 2307 && ts.flattenDiagnosticMessageText(d.messageText, ' ').includes('@open-rpc/client-js'),
    );
    return { ok: lines.length === 0, detail: summary(lines) };
  },
  /** @open-rpc/mock-server as its CLI starts it (parseOpenRPCDocument of the path, then its server in mock mode on
   *  loopback), checked by rpcgate's `conformance --spec` against the same document as rpcgate loads it. The step's
   *  time and memory are the mock's and the conformance run's together (one process), as for rpcgate-mock-conformance. */
  async 'official-mock-conformance'() {
    const { loadDocument } = await import('../../packages/toolkit/src/contract/model.js');
    const { specConformance } = await import('../../packages/toolkit/src/conformance/spec.js');
    const { parseOpenRPCDocument } = await import('@open-rpc/schema-utils-js');
    type MockServer = {
      start(): Promise<void>;
      stop(): Promise<void>;
      transports: { server: import('node:http').Server }[];
    };
    type Make = (port: number, doc: unknown) => MockServer;
    // its package.json names no entry point (`main`): the module its CLI (build/cli.js) requires
    const mod = (await import('@open-rpc/mock-server/build/index.js')) as unknown as {
      default: Make | { default: Make };
    };
    const make = typeof mod.default === 'function' ? mod.default : mod.default.default;
    const parsed = await parseOpenRPCDocument(document);
    const server = make(0, parsed); // port 0: the system picks a free one, read back below
    const http = server.transports[0]?.server;
    if (!http) return { ok: false, detail: 'no HTTP transport in @open-rpc/mock-server' };
    // its transport listens on every interface; bind loopback only, as rpcgate's mock does here
    await new Promise<void>((done, fail) => http.listen(0, '127.0.0.1', () => done()).once('error', fail));
    try {
      const address = http.address();
      if (!address || typeof address === 'string') return { ok: false, detail: 'no port' };
      const model = await loadDocument(document);
      const r = await specConformance(`http://127.0.0.1:${address.port}/`, model, { timeoutMs: 10_000 });
      const failed = [...r.methods, ...r.protocol].filter((x) => x.status === 'FAIL');
      return {
        ok: r.ok,
        detail: `${r.summary.passed} passed, ${failed.length} failed${failed.length ? `, first: ${failed[0].name}: ${failed[0].detail?.slice(0, 120)}` : ''}`,
      };
    } finally {
      await new Promise<void>((done) => http.close(() => done()));
    }
  },
  /** @open-rpc/schema-utils-js: parse and dereference the document (validation off: the dereferencer alone). */
  async 'official-deref'() {
    const { parseOpenRPCDocument } = await import('@open-rpc/schema-utils-js');
    const doc = await parseOpenRPCDocument(document, { dereference: true, validate: false });
    return { ok: true, detail: `${doc.methods.length} methods dereferenced` };
  },
};

const run = steps[step];
if (!run) {
  console.error(`unknown step ${step}; steps: ${Object.keys(steps).join(', ')}`);
  process.exit(2);
}
const t0 = performance.now();
const c0 = process.cpuUsage();
const cpuMs = () => {
  const c = process.cpuUsage(c0);
  return Math.round((c.user + c.system) / 1000);
};
try {
  const r = await run();
  console.log(JSON.stringify({ ...r, ms: Math.round(performance.now() - t0), cpuMs: cpuMs() }));
  process.exit(0);
} catch (e) {
  const msg = (e as Error)?.message ?? String(e);
  console.log(
    JSON.stringify({
      ok: false,
      ms: Math.round(performance.now() - t0),
      cpuMs: cpuMs(),
      detail: msg.split('\n')[0].slice(0, 200),
    }),
  );
  process.exit(0);
}
