// assets/validators.js of a docs folder: the result validator of every method, compiled HERE, at generate time, by
// the one ajv set-up (contract/ajv.ts) into standalone code — the same thing codegen writes to generated/<api>/.
// Why standalone rather than ajv bundled for the browser: it needs no bundler at run time (`rpcgate docs` from the
// installed package has ajv, not esbuild), the browser compiles nothing (no eval: works under a strict CSP and from
// file://), the output is deterministic for a given ajv version, and shared components are one function each, so one
// file per document serves every page (petstore: ~5 KB; the node API's 26 methods: ~160 KB, against ~120 KB for ajv
// alone plus each page's schemas).
// The few ajv runtime helpers standalone code require()s (ucs2length, equal → fast-deep-equal, …) are copied in from
// node_modules with a tiny CommonJS loader, so the file is one classic script.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import standaloneModule from 'ajv/dist/standalone/index.js';
import { createAjv, methodSchemaId } from '../contract/ajv.js';
import type { ContractModel } from '../contract/model.js';
import { HEADER } from '../codegen/schema.js';

// CJS module: under NodeNext the default import is module.exports, whose `default` is the function.
const standaloneCode = standaloneModule.default;

/** The global the script defines: `{ [method]: validate }` (ajv validate functions: `errors` after a false answer). */
export const VALIDATORS_GLOBAL = 'RPCGATE_DOCS_VALIDATORS';

const REQUIRE = /\brequire\(\s*["']([^"']+)["']\s*\)/g;

/** A module's id in the script: its path under node_modules (never an absolute path: the output is the same anywhere). */
function moduleId(file: string): string {
  const i = file.lastIndexOf('node_modules/');
  if (i < 0) throw new Error(`docs validators: ${file} is not a package file`);
  return file.slice(i + 'node_modules/'.length);
}

/** The modules `code` requires, transitively: id → [source, { specifier → id }]. */
function collectModules(
  code: string,
  from: string,
  out: Map<string, { source: string; deps: Record<string, string> }>,
): Record<string, string> {
  const req = createRequire(from);
  const deps: Record<string, string> = {};
  for (const [, spec] of code.matchAll(REQUIRE)) {
    if (spec in deps) continue;
    if (req.resolve.paths(spec) === null)
      throw new Error(`docs validators: cannot ship the Node built-in ${spec} to a browser`);
    const file = req.resolve(spec);
    const id = moduleId(file);
    deps[spec] = id;
    if (out.has(id)) continue;
    const source = readFileSync(file, 'utf8').replace(/^\/\/# sourceMappingURL=.*$/m, '');
    const entry = { source, deps: {} as Record<string, string> };
    out.set(id, entry);
    entry.deps = collectModules(source, file, out);
  }
  return deps;
}

/** The classic script that defines `window.RPCGATE_DOCS_VALIDATORS` for a document's methods. */
export function browserValidators(c: ContractModel): string {
  const ajv = createAjv(c, { source: true, nativeRegExp: true });
  // The set-up's code options target codegen's ES modules; here the output is a classic script (CommonJS shape wrapped
  // below) and has no use for line breaks. Set before anything compiles (addSchema compiles lazily).
  Object.assign(ajv.opts.code, { esm: false, lines: false });
  const refs: Record<string, string> = {};
  for (const [i, m] of c.methods.entries()) refs[`v${i}`] = methodSchemaId(c, m.name, 'result');
  const code = standaloneCode(ajv, refs);
  const modules = new Map<string, { source: string; deps: Record<string, string> }>();
  const deps = collectModules(code, createRequire(import.meta.url).resolve('ajv/dist/standalone/index.js'), modules);
  const table = c.methods.map((m, i) => `${JSON.stringify(m.name)}: exports.v${i}`).join(',\n  ');
  const defs = [...modules]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(
      ([id, m]) =>
        `${JSON.stringify(id)}: [function (module, exports, require) {\n${m.source}\n}, ${JSON.stringify(m.deps)}]`,
    )
    .join(',\n');
  return `/* ${HEADER} — result validators of ${c.title.replace(/\*\//g, '* /')} (ajv standalone, compiled at generate time) */
(function () {
var modules = {
${defs}
};
var cache = {};
function load(id) {
  if (cache[id]) return cache[id].exports;
  var module = (cache[id] = { exports: {} });
  modules[id][0].call(module.exports, module, module.exports, function (spec) { return load(modules[id][1][spec]); });
  return module.exports;
}
var top = ${JSON.stringify(deps)};
var require = function (spec) { return load(top[spec]); };
var exports = {};
var module = { exports: exports };
${code}
exports = module.exports;
window.${VALIDATORS_GLOBAL} = {
  ${table}
};
})();
`;
}
