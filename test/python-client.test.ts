// Issue 20 item 4: typed Python clients from any OpenRPC document (packages/toolkit/src/codegen/python.ts), over the corpus of
// test/toolkit-corpus.test.ts (test/helpers/openrpc-corpus.ts) plus three hand-written documents in test/fixtures/openrpc
// (edge-cases, notifications, and python-names: hostile Python names and text). For each document: the package is
// generated (deterministic, headers, py.typed); a usage script calls every method with its document example when
// complete and valid (else params generated from the schemas) as Python literals, a batch, and a
// call the server refuses; `mypy --strict` accepts the package and the script (so the types admit the document's own
// examples) and rejects a misuse file that passes `object()` where a typed param goes (so the types are real); then the
// script runs with the plain interpreter (standard library only) against the toolkit's mock of the document, and what it
// prints — results, the batch's results and RpcError slots, the exception's code/message/data, the params as sent — is
// what the mock answers to the same JSON-RPC sent directly. Under CI a missing mypy fails; elsewhere it skips, saying so.
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMock, generatePythonClient, loadDocument, type ContractModel, type MockServer } from '@rpcgate/toolkit';
import {
  callArguments,
  exampleArguments,
  isGeneratedPython,
  namePython,
  pyValue,
  type PythonMethod,
} from '../packages/toolkit/src/codegen/python.js';
import { sampleParams } from '../packages/toolkit/src/contract/sample.js';
import { refName } from '../packages/toolkit/src/contract/model.js';
import { generateAction } from '../packages/toolkit/src/cli/generate.js';
import { corpus11 as corpus } from './helpers/openrpc-corpus.js';
import { requireMypy } from './helpers/python.js';

const exec = promisify(execFile);
const root = resolve(import.meta.dirname, '..');
const DOCS = [
  ...corpus().map((d) => ({ name: d.name, file: d.file })),
  { name: 'edge-cases', file: join(root, 'test/fixtures/openrpc/edge-cases.openrpc.json') },
  { name: 'notifications', file: join(root, 'test/fixtures/openrpc/notifications.openrpc.json') },
  { name: 'python-names', file: join(root, 'test/fixtures/openrpc/python-names.openrpc.json') },
];
const py = requireMypy('python-client');
const NO_SUCH_METHOD = 'rpcgate.test.no_such_method';

type Json = unknown;
interface Planned {
  pm: PythonMethod;
  /** The Python call's arguments. */
  args: string;
  /** The params the client must send. */
  wire: Json;
}
interface Doc {
  name: string;
  pkg: string;
  model: ContractModel;
  mock: MockServer;
  url: string;
  planned: Planned[];
  /** Raw call refused by the server: method and params. */
  refused: { method: string; params: Json };
  /** The misuse file's expected mypy complaint, when the document has a typed param. */
  misuse?: string;
}

let work: string;
const docs: Doc[] = [];
let mypyOut = '';
let mypyMs = 0;

/** What the client sends: by name an object without the optional params left None; by position the list without the
 *  trailing optional ones left None. */
function wireOf(pm: PythonMethod, values: Json[]): Json {
  if (pm.byName)
    return Object.fromEntries(
      pm.params.flatMap((p, i) =>
        i < values.length && (p.required || values[i] !== null) ? [[p.name, values[i]]] : [],
      ),
    );
  const out = [...values];
  const required = pm.params.filter((p) => p.required).length;
  while (out.length > required && out[out.length - 1] === null) out.pop();
  return out;
}

/** Whether a value has keys its object schema does not declare while not saying whether others are allowed: JSON Schema
 *  admits them, the generated TypedDict (declared members only, as the TypeScript client) does not. */
function undeclaredKeys(model: ContractModel, schema: Json, value: Json, depth = 0): boolean {
  const s = schema as Record<string, Json> | undefined;
  if (depth > 32 || !s || typeof s !== 'object' || value === null || typeof value !== 'object') return false;
  const r = refName(s);
  if (r !== undefined) return undeclaredKeys(model, model.raw.components.schemas[r], value, depth + 1);
  for (const k of ['oneOf', 'anyOf'] as const)
    if (Array.isArray(s[k]) && (s[k] as Json[]).some((m) => undeclaredKeys(model, m, value, depth + 1))) return true;
  if (Array.isArray(s.allOf)) {
    const merged = {
      type: 'object',
      properties: Object.assign(
        {},
        ...(s.allOf as Json[]).map(
          (m) => (refName(m) ? model.raw.components.schemas[refName(m)!] : m)?.properties ?? {},
        ),
        s.properties ?? {},
      ),
    };
    return undeclaredKeys(model, merged, value, depth + 1);
  }
  if (Array.isArray(value)) return value.some((v) => undeclaredKeys(model, s.items, v, depth + 1));
  const props = (s.properties ?? {}) as Record<string, Json>;
  const v = value as Record<string, Json>;
  if (
    s.properties &&
    s.additionalProperties === undefined &&
    s.patternProperties === undefined &&
    Object.keys(v).some((k) => !(k in props))
  )
    return true;
  return Object.entries(props).some(([k, ps]) => k in v && undeclaredKeys(model, ps, v[k], depth + 1));
}

let casts = 0;
function argsOf(model: ContractModel, pm: PythonMethod, values: Json[]): string {
  const literals = values.map((v, i) => {
    const undeclared = undeclaredKeys(model, pm.model.params[i].schema, v);
    if (undeclared) casts++;
    return undeclared ? `cast(Any, ${pyValue(v)})` : pyValue(v);
  });
  return callArguments(pm, literals);
}

function plan(d: Omit<Doc, 'planned' | 'refused' | 'misuse'>): Planned[] {
  const out: Planned[] = [];
  for (const pm of namePython(d.model).methods) {
    // The document's first example when it is complete and valid, else params generated from the schemas.
    let values = exampleArguments(pm)?.map((a) => a.value);
    if (values === undefined || d.mock.engine.validateParams(pm.name, wireOf(pm, values))) {
      const validate = d.mock.contract.validators[pm.name]?.params;
      values = validate ? sampleParams(d.model, pm.name, validate, { seed: 1 })?.value : undefined;
    }
    if (values === undefined) continue;
    const wire = wireOf(pm, values);
    // Only calls the document's own schemas admit (the mock's engine validates as the server would).
    if (d.mock.engine.validateParams(pm.name, wire)) continue;
    out.push({ pm, args: argsOf(d.model, pm, values), wire });
  }
  return out;
}

const errorOf = 'lambda e: {"code": e.code, "message": e.message, "data": e.data}';

function usageScript(d: Doc): string {
  const calls = d.planned.map((p) => `Calls.${p.pm.py}(${p.args})`);
  const batch = [...calls.slice(0, 3), `Request[Any](${JSON.stringify(NO_SUCH_METHOD)}, [])`];
  return [
    'from __future__ import annotations',
    '',
    'import json',
    'import sys',
    'from typing import Any, Callable, cast',
    '',
    `from ${d.pkg} import Calls, Client, Request, RpcError`,
    '',
    'client = Client(sys.argv[1], timeout=30)',
    `err: Callable[[RpcError], dict[str, Any]] = ${errorOf}`,
    '',
    '',
    'def single(f: Callable[[], object]) -> dict[str, Any]:',
    '    try:',
    '        return {"result": f()}',
    '    except RpcError as e:',
    '        return {"error": err(e)}',
    '',
    '',
    'calls: list[dict[str, Any]] = []',
    ...d.planned.map((p) => `calls.append(single(lambda: client.${p.pm.py}(${p.args})))`),
    `requests: list[Request[object]] = [${calls.join(', ')}]`,
    `outcomes = client.batch([${batch.join(', ')}])`,
    'try:',
    `    client.request(${JSON.stringify(d.refused.method)}, ${pyValue(d.refused.params)})`,
    '    refused: dict[str, Any] | None = None',
    'except RpcError as e:',
    '    refused = err(e)',
    'out = {',
    '    "calls": calls,',
    '    "wire": [[r.method, r.params] for r in requests],',
    '    "batch": [{"error": err(o)} if isinstance(o, RpcError) else {"result": o} for o in outcomes],',
    '    "refused": refused,',
    '}',
    'print(json.dumps(out))',
    '',
  ].join('\n');
}

/** A call passing `object()` where a typed param goes (every other argument `cast(Any, None)`); its expected error. */
function misuse(d: Doc): { code: string; expect: string } | undefined {
  for (const pm of namePython(d.model).methods) {
    const target = pm.params.findIndex((p) => p.type !== 'Any');
    if (target < 0) continue;
    const args = pm.params
      .map((p, i) => [p, i === target ? 'object()' : p.required ? 'cast(Any, None)' : undefined] as const)
      .filter(([, v]) => v !== undefined)
      .map(([p, v]) => (pm.byName || !p.required ? `${p.py}=${v}` : v));
    const code = `from typing import Any, cast\n\nfrom ${d.pkg} import Calls\n\nCalls.${pm.py}(${args.join(', ')})\n`;
    return { code, expect: 'incompatible type "object"' };
  }
  return undefined;
}

async function direct(url: string, method: string, params: Json): Promise<{ result?: Json; error?: Json }> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
  const body = (await res.json()) as { result?: Json; error?: { code: number; message: string; data?: Json } };
  return body.error
    ? { error: { code: body.error.code, message: body.error.message, data: body.error.data ?? null } }
    : { result: body.result ?? null };
}

const misuses = new Map<string, string>();

beforeAll(async () => {
  if (!py) return;
  const t0 = Date.now();
  work = mkdtempSync(join(tmpdir(), 'rpcgate-python-'));
  for (const [i, { name, file }] of DOCS.entries()) {
    const loaded = await loadDocument(file, name);
    // Headers name the document by its base name, as `rpcgate generate` does.
    const model = { ...loaded, spec: { name, file: file.split('/').pop()! } };
    const pkg = `pkg_${i}_${name.replace(/\W/g, '_')}`;
    mkdirSync(join(work, pkg));
    for (const [rel, text] of generatePythonClient(model, {
      command: 'rpcgate generate --lang python',
      packageName: pkg,
    }))
      writeFileSync(join(work, pkg, rel), text);
    const mock = await createMock({ document: model, seed: 1 });
    const url = await mock.listen(0, '127.0.0.1');
    const base = { name, pkg, model, mock, url };
    const planned = plan(base);
    const withRequired = namePython(model).methods.find((pm) => pm.params.some((p) => p.required));
    const refused = withRequired
      ? { method: withRequired.name, params: withRequired.byName ? {} : [] }
      : { method: NO_SUCH_METHOD, params: [] };
    const d: Doc = { ...base, planned, refused };
    docs.push(d);
    writeFileSync(join(work, `use_${pkg}.py`), usageScript(d));
    const bad = misuse(d);
    if (bad) {
      writeFileSync(join(work, `misuse_${pkg}.py`), bad.code);
      misuses.set(`misuse_${pkg}.py`, bad.expect);
      d.misuse = bad.expect;
    }
  }
  // One mypy run over every package, usage script and misuse file (one start-up, one cache).
  const t1 = Date.now();
  const files = docs.flatMap((d) => [d.pkg, `use_${d.pkg}.py`, ...(d.misuse ? [`misuse_${d.pkg}.py`] : [])]);
  try {
    const r = await exec(
      py.python,
      ['-m', 'mypy', '--strict', '--no-error-summary', '--cache-dir', join(work, '.mypy_cache'), ...files],
      { cwd: work, timeout: 300_000, maxBuffer: 64 << 20 },
    );
    mypyOut = r.stdout + r.stderr;
  } catch (e) {
    const err = e as { stdout?: string; stderr?: string };
    mypyOut = `${err.stdout ?? ''}${err.stderr ?? String(e)}`;
  }
  mypyMs = Date.now() - t1;
  console.log(
    `[python-client] ${py.mypy} on ${py.version}: ${docs.length} documents generated and type-checked, ${docs.reduce((n, d) => n + d.planned.length, 0)} typed calls (${casts} args with undeclared keys cast), mypy ${mypyMs} ms, set-up ${Date.now() - t0} ms`,
  );
}, 600_000);

afterAll(async () => {
  for (const d of docs) await d.mock.close();
  if (work) rmSync(work, { recursive: true, force: true });
});

/** mypy's error lines about files whose name starts with `prefix` (a package folder or a script). */
const mypyErrors = (prefix: string): string[] =>
  mypyOut.split('\n').filter((l) => l.startsWith(prefix) && / error: /.test(l));

describe.skipIf(!py)('typed Python clients over the corpus', () => {
  it('every document of the corpus and the three hand-written ones are generated', () => {
    expect(docs.map((d) => d.name)).toEqual(DOCS.map((d) => d.name));
    expect(docs.length).toBe(16);
    // Typed params everywhere but in the two documents whose params are untyped or absent (api-with-examples,
    // open-rpc-mock-server): each of the others gets a misuse file mypy must reject.
    expect(docs.filter((d) => d.misuse).length).toBe(docs.length - 2);
    // mypy says nothing but the misuse files' complaints.
    const other = mypyOut.split('\n').filter((l) => l.trim() && !l.startsWith('misuse_'));
    expect(other).toEqual([]);
  });

  it.each(DOCS.map((d) => [d.name]))('%s: deterministic package, headers, py.typed, mypy --strict clean', (name) => {
    const d = docs.find((x) => x.name === name)!;
    const again = generatePythonClient(d.model, { command: 'rpcgate generate --lang python', packageName: d.pkg });
    expect([...again.keys()].sort()).toEqual(['__init__.py', '_runtime.py', 'client.py', 'py.typed', 'types.py']);
    for (const [rel, text] of again) {
      expect(readFileSync(join(work, d.pkg, rel), 'utf8'), rel).toBe(text);
      if (rel.endsWith('.py')) expect(isGeneratedPython(text), rel).toBe(true);
    }
    expect(mypyErrors(`${d.pkg}/`)).toEqual([]);
    expect(mypyErrors(`use_${d.pkg}.py`)).toEqual([]);
  });

  it.each(DOCS.map((d) => [d.name]))('%s: mypy rejects a wrong param type', (name) => {
    const d = docs.find((x) => x.name === name)!;
    // Documents whose params are all untyped (schema `{}` or none at all) have nothing to misuse.
    const typed = namePython(d.model).methods.some((m) => m.params.some((p) => p.type !== 'Any'));
    expect(d.misuse !== undefined, 'a misuse file exactly when a param is typed').toBe(typed);
    if (!typed) return;
    const errors = mypyErrors(`misuse_${d.pkg}.py`);
    expect(errors.length, errors.join('\n')).toBe(1);
    expect(errors[0]).toContain(d.misuse);
  });

  it.each(DOCS.map((d) => [d.name]))('%s: the script runs against the mock: calls, batch, RpcError', async (name) => {
    const d = docs.find((x) => x.name === name)!;
    expect(d.planned.length, 'methods with a complete, valid example or no required params').toBeGreaterThan(0);
    const { stdout } = await exec(py!.python, ['-B', '-s', `use_${d.pkg}.py`, d.url], {
      cwd: work,
      timeout: 120_000,
      maxBuffer: 64 << 20,
      env: { PATH: process.env.PATH ?? '', PYTHONPATH: work, PYTHONDONTWRITEBYTECODE: '1' },
    });
    const out = JSON.parse(stdout) as { calls: Json[]; wire: Json[]; batch: Json[]; refused: Json };
    const expected = await Promise.all(d.planned.map((p) => direct(d.url, p.pm.name, p.wire)));
    expect(out.calls).toEqual(expected);
    expect(out.wire).toEqual(d.planned.map((p) => [p.pm.name, p.wire]));
    const unknown = await direct(d.url, NO_SUCH_METHOD, []);
    expect(unknown.error).toMatchObject({ code: -32601 });
    expect(out.batch).toEqual([...expected.slice(0, 3), unknown]);
    const refused = await direct(d.url, d.refused.method, d.refused.params);
    expect(refused.error, 'the refused call is an error').toBeDefined();
    expect(out.refused).toEqual(refused.error);
    // A call lacking its required param: -32602 whose data names the param (the exception's data, decoded).
    if (d.refused.method !== NO_SUCH_METHOD)
      expect(out.refused).toMatchObject({ code: -32602, data: { reason: expect.any(String) } });
  });
});

describe('rpcgate generate --lang python', () => {
  const EDGE = join(root, 'test/fixtures/openrpc/edge-cases.openrpc.json');
  const run = async (cli: { out: string; lang?: string; check?: boolean }) => {
    const out: string[] = [];
    const err: string[] = [];
    const code = await generateAction(
      EDGE,
      cli,
      (s) => out.push(s),
      (s) => err.push(s),
    );
    return { code, out, err };
  };

  it('writes the package into --out (its name the import name), --check tells fresh from stale, a bad --lang is exit 1', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'rpcgate-python-cli-'));
    try {
      const out = join(dir, 'edge_client');
      expect(await run({ out, lang: 'python' })).toMatchObject({ code: 0 });
      expect(readdirSync(out).sort()).toEqual(['__init__.py', '_runtime.py', 'client.py', 'py.typed', 'types.py']);
      const client = readFileSync(join(out, 'client.py'), 'utf8');
      expect(client.split('\n')[0]).toBe(
        '# generated by codegen — do not edit (source: edge-cases.openrpc.json, run `rpcgate generate --lang python`)',
      );
      expect(client).toContain('    from edge_client import Client');
      // A TypeScript client in the same folder is left alone, and the other way round.
      expect(await run({ out })).toMatchObject({ code: 0 });
      expect(readdirSync(out)).toContain('types.py');
      expect(readdirSync(out)).toContain('types.ts');
      expect(await run({ out, lang: 'python', check: true })).toMatchObject({ code: 0 });
      writeFileSync(join(out, 'client.py'), `${client}# edited\n`);
      const stale = await run({ out, lang: 'python', check: true });
      expect(stale.code).toBe(1);
      expect(stale.err.join('\n')).toContain('changed: client.py');
      expect(stale.err.join('\n')).toContain('--lang python');
      const bad = await run({ out, lang: 'rust' });
      expect(bad.code).toBe(1);
      expect(bad.err.join('\n')).toContain('--lang must be one of typescript, python');
      // The folder is the package: a name Python cannot import is refused before anything is written.
      const dashed = await run({ out: join(dir, 'edge-client'), lang: 'python' });
      expect(dashed.code).toBe(1);
      expect(dashed.err.join('\n')).toContain('must be a Python identifier (got "edge-client"; e.g. edge_client)');
      expect(readdirSync(dir)).toEqual(['edge_client']);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
