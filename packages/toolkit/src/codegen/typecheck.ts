// `generate` type-checks its own output before it reports success: types.ts (every type that depends on the document)
// is compiled in memory with the TypeScript compiler API (`--strict`, NodeNext), the other files are parsed and their
// imports from types.ts checked against its exports. A document whose output does not compile is an error that names
// the file and the JSON pointer of the schema or method behind the failing declaration — never a success that does
// not compile.
// `typescript` is an optional peer dependency: it is a dev tool every TypeScript user has, and @rpcgate/toolkit does
// not pull 25 MB into servers that only run the engine. Without it the check is skipped and `generate` says so.
// Cost (bench/README.md): loading typescript and its lib files once per process (cached), then about 0.5 s of CPU for a
// 240-method, 1.25 MB document.
import { createRequire } from 'node:module';
import path from 'node:path';
import type * as TS from 'typescript';
import { GenerateError } from './types.js';

type Ts = typeof TS;

let loaded: Promise<Ts | undefined> | undefined;

/** The `typescript` module when it is installed (resolved from this package or the working directory), else undefined. */
export function loadTypeScript(): Promise<Ts | undefined> {
  loaded ??= (async () => {
    for (const from of [import.meta.url, path.join(process.cwd(), 'noop.js')]) {
      try {
        // require, not import(): importing a CommonJS module from ESM runs Node's export scanner over all of it
        // (typescript.js is 9 MB: ~0.5 s of CPU per process, issue 19 item 8)
        const mod = createRequire(from)('typescript') as Ts & { default?: Ts };
        return mod.default ?? mod;
      } catch {
        // not resolvable from here
      }
    }
    return undefined;
  })();
  return loaded;
}

/** Source files parsed once per process (lib.*.d.ts, @rpcgate/client): only the generated files are parsed per call. */
const sourceCache = new Map<string, TS.SourceFile>();

export interface TypeCheckOptions {
  /** The document's display name (for errors). */
  file: string;
  /** A declared type name → the JSON pointer of the schema or method it comes from. */
  pointerOf: (typeName: string) => string | undefined;
}

/** Diagnostics of the generated files, formatted (`types.ts:12:3 TS2304 Cannot find name 'X'`), with the pointer of
 *  the first. Returns 'skipped' when `typescript` is not installed. */
export async function typeCheck(files: Map<string, string>, opts: TypeCheckOptions): Promise<'ok' | 'skipped'> {
  const ts = await loadTypeScript();
  if (!ts) return 'skipped';
  const dir = path.join(path.parse(process.cwd()).root, '__rpcgate_generate_check__');
  const virtual = new Map<string, string>();
  for (const [rel, text] of files) if (rel.endsWith('.ts')) virtual.set(path.join(dir, rel), text);
  virtual.set(path.join(dir, 'package.json'), '{"type":"module"}');
  const options: TS.CompilerOptions = {
    strict: true,
    noEmit: true,
    skipLibCheck: true,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    target: ts.ScriptTarget.ES2022,
    // types.ts uses the language and es5's utility types only: no other lib file is worth parsing.
    lib: ['lib.es5.d.ts'],
    types: [],
  };
  const host = ts.createCompilerHost(options, true);
  const { getSourceFile, fileExists, readFile } = host;
  host.fileExists = (f) => virtual.has(f) || (!f.startsWith(dir) && fileExists.call(host, f));
  const { directoryExists } = host;
  host.directoryExists = (d) => d === dir || (!d.startsWith(dir) && (directoryExists?.call(host, d) ?? true));
  host.realpath = undefined;
  host.readFile = (f) => virtual.get(f) ?? (f.startsWith(dir) ? undefined : readFile.call(host, f));
  host.getSourceFile = (f, lang, onError, create) => {
    const text = virtual.get(f);
    if (text !== undefined) return ts.createSourceFile(f, text, lang, true);
    const cached = sourceCache.get(f);
    if (cached) return cached;
    const sf = getSourceFile.call(host, f, lang, onError, create);
    if (sf) sourceCache.set(f, sf);
    return sf;
  };
  // The program is types.ts alone: every type expression that depends on the document is declared there. The other
  // files are templates over its names: they are parsed (syntax: quoting of method names, summaries, x- values), and
  // every name they import from types.ts must be one it exports. (Checking them as well would cost seconds on a
  // 240-method document for no new failure: test/codegen-edge.test.ts and the corpus test compile all of them with
  // tsc under NodeNext and Bundler.)
  const typesFile = path.join(dir, 'types.ts');
  const program = ts.createProgram({ rootNames: [typesFile], options, host });
  const diagnostics: TS.Diagnostic[] = [...program.getOptionsDiagnostics(), ...program.getGlobalDiagnostics()];
  const typesSf = program.getSourceFile(typesFile);
  if (typesSf)
    diagnostics.push(...program.getSyntacticDiagnostics(typesSf), ...program.getSemanticDiagnostics(typesSf));
  const exported = new Set<string>();
  const moduleSymbol = typesSf && program.getTypeChecker().getSymbolAtLocation(typesSf);
  if (moduleSymbol) for (const e of program.getTypeChecker().getExportsOfModule(moduleSymbol)) exported.add(e.name);
  for (const [f, text] of virtual) {
    if (f === typesFile || !f.endsWith('.ts') || path.basename(f) === 'validators.ts') continue;
    const sf = ts.createSourceFile(f, text, ts.ScriptTarget.ES2022, true);
    diagnostics.push(...(sf as unknown as { parseDiagnostics: TS.DiagnosticWithLocation[] }).parseDiagnostics);
    for (const st of sf.statements) {
      if (!ts.isImportDeclaration(st) || !ts.isStringLiteral(st.moduleSpecifier)) continue;
      if (st.moduleSpecifier.text !== './types.js') continue;
      const bindings = st.importClause?.namedBindings;
      if (bindings && ts.isNamedImports(bindings))
        for (const el of bindings.elements)
          if (!exported.has((el.propertyName ?? el.name).text))
            diagnostics.push({
              category: ts.DiagnosticCategory.Error,
              code: 2305,
              file: sf,
              start: el.getStart(sf),
              length: el.getWidth(sf),
              messageText: `Module './types.js' has no exported member '${(el.propertyName ?? el.name).text}'.`,
            });
    }
  }
  if (!diagnostics.length) return 'ok';

  let pointer: string | undefined;
  const lines = diagnostics.slice(0, 5).map((d) => {
    const text = ts.flattenDiagnosticMessageText(d.messageText, ' ');
    if (!d.file || d.start === undefined) return `TS${d.code} ${text}`;
    const { line, character } = d.file.getLineAndCharacterOfPosition(d.start);
    const names = declarationsAt(ts, d.file, d.start);
    const decl = names.find((n) => opts.pointerOf(n) !== undefined);
    pointer ??= decl === undefined ? undefined : opts.pointerOf(decl);
    return `${path.basename(d.file.fileName)}:${line + 1}:${character + 1}${decl ? ` (${decl})` : ''} TS${d.code} ${text}`;
  });
  const more = diagnostics.length > 5 ? ` (and ${diagnostics.length - 5} more)` : '';
  throw new GenerateError(
    opts.file,
    pointer ?? '#',
    `the generated TypeScript does not compile under tsc --strict — ${lines.join('; ')}${more}`,
  );
}

/** Names of what contains `pos`, innermost first: a member (a method's key in `methods` / `<Api>Methods`) and the
 *  top-level declaration (type, interface, const, imported name). */
function declarationsAt(ts: Ts, sf: TS.SourceFile, pos: number): string[] {
  const names: string[] = [];
  const visit = (node: TS.Node): void => {
    if (pos < node.getFullStart() || pos >= node.getEnd()) return;
    const named = node as TS.Node & { name?: TS.Node };
    if (
      named.name &&
      (ts.isTypeAliasDeclaration(node) ||
        ts.isInterfaceDeclaration(node) ||
        ts.isVariableDeclaration(node) ||
        ts.isPropertyAssignment(node) ||
        ts.isPropertySignature(node) ||
        ts.isImportSpecifier(node)) &&
      (ts.isIdentifier(named.name) || ts.isStringLiteral(named.name))
    )
      names.unshift(named.name.text);
    ts.forEachChild(node, visit);
  };
  for (const st of sf.statements) visit(st);
  return names;
}
