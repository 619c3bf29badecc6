// The static HTML API reference of any OpenRPC document (`rpcgate docs`, and docs/api/<api>/ of this repository):
//   index.html      overview: servers, methods (summary, tags, deprecated), every error code
//   <method>.html   one page per method: summary, description, params and result with their schemas, errors, the
//                   document's examples, code tabs, servers, and a "Try it" panel that calls a server and validates the
//                   answer against the result schema in the browser
//   schemas.html    every components.schemas entry, anchored; servers.html every server with its variables
//   assets/         style.css, try-it.js (the panel), validators.js (result validators compiled at generate time),
//                   servers.js (only when the caller gives server suggestions)
// Plain HTML, relative links, classic scripts, nothing from the network: the folder works opened from disk (file://)
// and from any static server. Deterministic: the same document and options give the same bytes.
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Ajv } from 'ajv';
import { createAjv, methodSchemaId } from '../contract/ajv.js';
import { sampleParams } from '../contract/sample.js';
import type { ContractModel, Json, MethodModel, ServerModel } from '../contract/model.js';
import type { ValidateFn } from '../rpc/descriptor.js';
import { defaultExamples, type CallParams, type ExampleTab } from './examples.js';
import { CSS, esc, inline, page, pre, prose, schemaAnchor, schemaDetails, schemaSummary, scriptJson } from './html.js';
import { TRY_IT_JS } from './try-it.js';
import { browserValidators } from './validators.js';

export { defaultExamples, RPC_URL_PLACEHOLDER, type ExampleTab, type CallParams } from './examples.js';
export { browserValidators, VALIDATORS_GLOBAL } from './validators.js';

export interface DocsOptions {
  /** More code tabs for a method (e.g. SDK samples); a tab with the id of a default one (curl, fetch, rpcgate) replaces it. */
  examples?: (method: MethodModel, params: CallParams) => ExampleTab[] | undefined;
  /** A link above the navigation, relative to the docs folder (e.g. back to a site's index). */
  home?: { href: string; label: string };
  /**
   * Source of a classic script (written to assets/servers.js, loaded by method pages) that defines
   * `window.RPCGATE_DOCS_SERVERS = async () => [{ label, url }]` (and optionally `window.RPCGATE_DOCS_SERVERS_LABEL`):
   * more URLs for the Try it panel's server list. It runs in the page; any failure is ignored.
   */
  serversScript?: string;
}

const RESERVED = new Set(['index', 'schemas', 'servers']);

/**
 * File name of each method's page: the name with anything but [A-Za-z0-9_.-] replaced, unique even on a
 * case-insensitive file system and never one of the folder's own pages (a clash gets -2, -3, … in document order).
 */
export function methodFiles(c: Pick<ContractModel, 'methods'>): Map<string, string> {
  const out = new Map<string, string>();
  const taken = new Set([...RESERVED]);
  for (const m of c.methods) {
    const base = m.name.replace(/[^A-Za-z0-9_.-]/g, '_').replace(/^\.+/, '_') || 'method';
    let name = base;
    for (let i = 2; taken.has(name.toLowerCase()); i++) name = `${base}-${i}`;
    taken.add(name.toLowerCase());
    out.set(m.name, `${name}.html`);
  }
  return out;
}

interface Ctx {
  c: ContractModel;
  files: Map<string, string>;
  opts: DocsOptions;
  source: string;
}

function nav(x: Ctx, current?: string): string {
  const items = x.c.methods
    .map(
      (m) =>
        `<li${m.name === current ? ' class="current"' : ''}><a href="${esc(x.files.get(m.name))}">${esc(m.name)}</a>${m.deprecated ? ' <span class="muted">(deprecated)</span>' : ''}</li>`,
    )
    .join('\n');
  return `${x.opts.home ? `<p class="brand"><a href="${esc(x.opts.home.href)}">${esc(x.opts.home.label)}</a></p>\n` : ''}<p><a href="index.html"><strong>${esc(x.c.title)}</strong></a> <span class="muted">${esc(x.c.version)}</span></p>
<ul>
<li><a href="servers.html">Servers</a></li>
<li><a href="schemas.html">Schemas</a></li>
</ul>
<p class="muted">Methods</p>
<ul class="methods">
${items}
</ul>`;
}

const exampleUrl = (s: ServerModel): string =>
  s.url.replace(/\$?\{([^}]+)\}/g, (all, v: string) => s.variables.find((x) => x.name === v)?.default ?? all);

function serversPage(x: Ctx): string {
  const blocks = x.c.servers
    .map((s, i) => {
      const vars = s.variables.length
        ? `<table>
<thead><tr><th>Variable</th><th>Default</th><th>Values</th><th>Description</th></tr></thead>
<tbody>
${s.variables.map((v) => `<tr><td><code>${esc(v.name)}</code></td><td><code>${esc(v.default)}</code></td><td>${v.enum ? v.enum.map((e) => `<code>${esc(e)}</code>`).join(', ') : 'any'}</td><td>${inline(v.description)}</td></tr>`).join('\n')}
</tbody>
</table>`
        : '';
      return `<section id="server-${i}">
<h2>${esc(s.name)}</h2>
${s.summary ? `<p class="lead">${inline(s.summary)}</p>` : ''}
${prose(s.description)}
<p>URL: <code>${esc(s.url)}</code>${s.variables.length ? `<br>with the defaults: <code>${esc(exampleUrl(s))}</code>` : ''}</p>
${vars}
</section>`;
    })
    .join('\n');
  const body = `<h1>Servers <span class="muted">${esc(x.c.title)}</span></h1>
<p>Every method is called with <code>POST</code> on the server URL: a JSON-RPC 2.0 body, <code>Content-Type: application/json</code>.</p>
${blocks || '<p>The document lists no server.</p>'}`;
  return page({ title: `Servers — ${x.c.title}`, assets: 'assets/', nav: nav(x), body });
}

function serversList(x: Ctx): string {
  if (!x.c.servers.length) return '<p>The document lists no server: use your own endpoint.</p>';
  return `<ul>
${x.c.servers.map((s, i) => `<li><a href="servers.html#server-${i}">${esc(s.name)}</a>: <code>${esc(s.url)}</code></li>`).join('\n')}
</ul>`;
}

/** The values the Try it panel and the code tabs start from: the first example's params, else values generated from the
 *  params' schemas (deterministic), else nothing. */
function startParams(
  x: Ctx,
  m: MethodModel,
  paramsValidator: (method: string) => ValidateFn,
): { values: (Json | undefined)[]; from: 'example' | 'generated' | 'none' } {
  if (!m.params.length) return { values: [], from: 'none' };
  const ex = m.examples[0];
  if (ex) {
    const byName = new Map(ex.params.map((p) => [p.name, p.value]));
    return {
      values: m.params.map((p, i) => (byName.has(p.name) ? byName.get(p.name) : ex.params[i]?.value)),
      from: 'example',
    };
  }
  const sampled = sampleParams(x.c, m.name, paramsValidator(m.name));
  return sampled
    ? { values: m.params.map((_, i) => sampled.value[i]), from: 'generated' }
    : { values: m.params.map(() => undefined), from: 'none' };
}

function callParams(m: MethodModel, values: (Json | undefined)[]): CallParams {
  if (m.paramStructure === 'by-name')
    return Object.fromEntries(m.params.flatMap((p, i) => (values[i] === undefined ? [] : [[p.name, values[i]]])));
  const out: Json[] = [];
  for (const v of values) {
    if (v === undefined) break; // optional trailing params may be omitted
    out.push(v);
  }
  return out;
}

function tryItPanel(x: Ctx, m: MethodModel, start: ReturnType<typeof startParams>): string {
  const options = x.c.servers
    .map((s, i) => `<option value="s${i}">${esc(s.name === s.url ? s.url : `${s.name} — ${s.url}`)}</option>`)
    .join('\n');
  const params = m.params
    .map(
      (
        p,
        i,
      ) => `<label for="try-p-${i}">${esc(p.name)} <span class="muted">${p.required ? 'required' : 'optional'} · ${schemaSummary(p.schema).replace(/<[^>]+>/g, '')}</span></label>
<textarea id="try-p-${i}" rows="${Math.min(12, Math.max(2, JSON.stringify(start.values[i] ?? '', null, 2).split('\n').length))}" spellcheck="false">${start.values[i] === undefined ? '' : esc(JSON.stringify(start.values[i], null, 2))}</textarea>`,
    )
    .join('\n');
  const from =
    start.from === 'example'
      ? `Params from the example “${esc(m.examples[0].name)}”`
      : start.from === 'generated'
        ? 'Params generated from the schemas (the method has no example)'
        : m.params.length
          ? 'Params: none prefilled'
          : 'This method takes no params';
  const shape =
    m.paramStructure === 'by-name'
      ? 'sent by name (an object)'
      : 'sent by position (an array; empty optional params at the end are left out)';
  return `<section class="try-it" id="try-it">
<h2>Try it</h2>
<label for="try-server">Server</label>
<select id="try-server">
${options}
<option value="custom">Custom URL</option>
</select>
<div class="vars" id="try-vars"></div>
<label for="try-url">URL</label>
<input id="try-url" type="url" spellcheck="false" placeholder="http://127.0.0.1:8545/">
<p class="muted">${from}; ${m.params.length ? `JSON, ${shape}` : 'the call is sent without params'}.</p>
${params}
<button id="try-send" type="button">Send</button>
<p class="status" id="try-status" role="status"></p>
<p class="verdict" id="try-verdict" data-testid="verdict"></p>
<details>
<summary>Request</summary>
<pre class="code lang-json"><code id="try-request"></code></pre>
</details>
<p class="muted">Answer</p>
<pre class="code lang-json"><code id="try-answer"></code></pre>
</section>
<script type="application/json" id="try-it-data">${scriptJson({
    document: x.c.spec.name,
    method: m.name,
    byName: m.paramStructure === 'by-name',
    params: m.params.map((p) => ({ name: p.name, required: p.required })),
    errors: m.errors.map((e) => e.code),
    servers: x.c.servers.map((s) => ({
      name: s.name,
      url: s.url,
      variables: s.variables.map((v) => ({
        name: v.name,
        default: v.default,
        ...(v.enum ? { enum: v.enum.map(String) } : {}),
        ...(v.description ? { description: v.description } : {}),
      })),
    })),
  })}</script>`;
}

function methodPage(x: Ctx, m: MethodModel, paramsValidator: (method: string) => ValidateFn): string {
  const start = startParams(x, m, paramsValidator);
  const call = callParams(m, start.values);
  const params = m.params.length
    ? `<table>
<thead><tr><th>#</th><th>Name</th><th>Required</th><th>Schema</th><th>Description</th></tr></thead>
<tbody>
${m.params
  .map(
    (p, i) =>
      `<tr><td>${i}</td><td><code>${esc(p.name)}</code></td><td>${p.required ? 'yes' : 'no'}</td><td>${schemaSummary(p.schema)}${schemaDetails(p.schema)}</td><td>${inline(p.description ?? p.summary)}</td></tr>`,
  )
  .join('\n')}
</tbody>
</table>
<p class="muted">${m.paramStructure === 'by-name' ? 'Params are sent by name (a JSON object).' : m.paramStructure === 'by-position' ? 'Params are sent by position (a JSON array in this order)' : 'Params are sent by position (a JSON array in this order) or by name (an object)'}${m.paramStructure !== 'by-name' && m.params.some((p) => !p.required) ? '; optional trailing params may be omitted' : ''}${m.paramStructure === 'by-name' ? '' : '.'}</p>`
    : '<p>None: send <code>"params": []</code> (or omit <code>params</code>).</p>';
  const result = m.result
    ? `<p><strong>${esc(m.result.name)}</strong>: ${schemaSummary(m.result.schema)}</p>
${prose(m.result.description)}
${schemaDetails(m.result.schema)}`
    : '<p>None (a notification).</p>';
  const errors = m.errors.length
    ? `<table>
<thead><tr><th>Code</th><th>Message</th><th>HTTP status</th><th>Details</th></tr></thead>
<tbody>
${m.errors
  .map((e) => {
    const d =
      e.data && typeof e.data === 'object' && typeof e.data.description === 'string'
        ? inline(e.data.description)
        : e.data !== undefined
          ? `<code>${esc(JSON.stringify(e.data))}</code>`
          : '';
    return `<tr><td><code>${e.code}</code></td><td>${esc(e.message)}</td><td>${e.httpStatus.join(', ')}</td><td>${d}</td></tr>`;
  })
  .join('\n')}
</tbody>
</table>`
    : '<p>None declared besides JSON-RPC’s own (invalid request, invalid params, internal error).</p>';
  const exampleBlocks = m.examples
    .map((ex, i) => {
      const values = m.params.length
        ? m.params.map((p, j) => (ex.params.find((q) => q.name === p.name) ?? ex.params[j])?.value)
        : ex.params.map((q) => q.value);
      const request = { jsonrpc: '2.0', id: 1, method: m.name, params: m.params.length ? callParams(m, values) : [] };
      const response = ex.result ? { jsonrpc: '2.0', id: 1, result: ex.result.value } : undefined;
      return `<h3 id="example-${i}">${esc(ex.name ?? `Example ${i + 1}`)}</h3>
${prose(ex.summary ?? ex.description)}
<p class="muted">Request</p>
${pre(JSON.stringify(request, null, 2), 'json')}
${response ? `<p class="muted">Response</p>\n${pre(JSON.stringify(response, null, 2), 'json')}` : ''}`;
    })
    .join('\n');
  const tabs = new Map<string, ExampleTab>(defaultExamples(x.c, m, call).map((t) => [t.id, t]));
  for (const t of x.opts.examples?.(m, call) ?? []) tabs.set(t.id, t);
  const code = [...tabs.values()]
    .map(
      (e, i) =>
        `<details${i === 0 ? ' open' : ''}>\n<summary>${esc(e.label)}</summary>\n${pre(e.code, e.language, ' data-rpc-url')}\n</details>`,
    )
    .join('\n');
  const body = `<h1><code>${esc(m.name)}</code>${m.deprecated ? ' <span class="tag deprecated">deprecated</span>' : ''}</h1>
${m.summary ? `<p class="lead">${inline(m.summary)}</p>` : ''}
${m.description && m.description !== m.summary ? prose(m.description) : ''}
${m.tags.length ? `<p>Tags: ${m.tags.map((t) => `<span class="tag">${esc(t)}</span>`).join(' ')}</p>` : ''}
<h2 id="params">Params</h2>
${params}
<h2 id="result">Result</h2>
${result}
${tryItPanel(x, m, start)}
<h2 id="errors">Errors</h2>
${errors}
<p class="muted">All error codes of the API are listed on the <a href="index.html#errors">overview</a>.</p>
<h2 id="examples">Examples</h2>
${exampleBlocks || '<p>The document has no example for this method.</p>'}
<h2 id="code">Code</h2>
<p><code>{{RPC_URL}}</code> stands for your endpoint (the Try it panel’s URL, once set).</p>
${code}
<h2 id="servers">Access points <span class="muted">(servers)</span></h2>
${serversList(x)}`;
  const scripts = [
    '<script src="assets/validators.js"></script>',
    ...(x.opts.serversScript ? ['<script src="assets/servers.js"></script>'] : []),
    '<script src="assets/try-it.js"></script>',
  ];
  return page({ title: `${m.name} — ${x.c.title}`, assets: 'assets/', nav: nav(x, m.name), body, scripts });
}

function indexPage(x: Ctx): string {
  const c = x.c;
  const tagged = c.methods.some((m) => m.tags.length > 0);
  const rows = c.methods
    .map(
      (m) =>
        `<tr><td><a href="${esc(x.files.get(m.name))}"><code>${esc(m.name)}</code></a>${m.deprecated ? ' <span class="tag deprecated">deprecated</span>' : ''}</td><td>${inline(m.summary || m.description?.split('\n')[0])}</td>${tagged ? `<td>${m.tags.map((t) => esc(t)).join(', ')}</td>` : ''}</tr>`,
    )
    .join('\n');
  const errs = new Map<string, { code: number; message: string; httpStatus: number[]; methods: string[] }>();
  for (const m of c.methods)
    for (const e of m.errors) {
      const k = `${e.code} ${e.message}`;
      if (!errs.has(k)) errs.set(k, { ...e, methods: [] });
      errs.get(k)!.methods.push(m.name);
    }
  const errRows = [...errs.values()]
    .sort((a, b) => b.code - a.code || (a.message < b.message ? -1 : a.message > b.message ? 1 : 0))
    .map(
      (e) =>
        `<tr><td><code>${e.code}</code></td><td>${esc(e.message)}</td><td>${e.httpStatus.join(', ')}</td><td>${e.methods.length === c.methods.length ? 'all' : e.methods.map((n) => `<a href="${esc(x.files.get(n))}">${esc(n)}</a>`).join(', ')}</td></tr>`,
    )
    .join('\n');
  const info = c.document?.info ?? {};
  const meta = [
    info.license?.name
      ? `License: ${info.license.url && /^https?:/i.test(info.license.url) ? `${esc(info.license.name)} (<code>${esc(info.license.url)}</code>)` : esc(info.license.name)}`
      : '',
    info.contact?.name || info.contact?.email
      ? `Contact: ${esc([info.contact.name, info.contact.email].filter(Boolean).join(' '))}`
      : '',
  ].filter(Boolean);
  const body = `<h1>${esc(c.title)} <span class="muted">${esc(c.version)}</span></h1>
${prose(c.description)}
${meta.length ? `<p class="muted">${meta.join(' · ')}</p>` : ''}
<p>Document: <code>${esc(x.source)}</code> (OpenRPC ${esc(c.document?.openrpc ?? c.raw.openrpc)}), ${c.methods.length} method${c.methods.length === 1 ? '' : 's'}, ${c.schemas.length} schema${c.schemas.length === 1 ? '' : 's'}.</p>
<h2 id="servers">Access points <span class="muted">(servers)</span></h2>
${serversList(x)}
<h2 id="methods">Methods</h2>
<table>
<thead><tr><th>Method</th><th>Summary</th>${tagged ? '<th>Tags</th>' : ''}</tr></thead>
<tbody>
${rows}
</tbody>
</table>
<h2 id="errors">Errors</h2>
${
  errRows
    ? `<table>
<thead><tr><th>Code</th><th>Message</th><th>HTTP status</th><th>Methods</th></tr></thead>
<tbody>
${errRows}
</tbody>
</table>`
    : '<p>No method declares an error besides JSON-RPC’s own.</p>'
}`;
  return page({ title: c.title, assets: 'assets/', nav: nav(x), body });
}

function schemasPage(x: Ctx): string {
  const blocks = x.c.schemas
    .map(
      ([k, s]) => `<section id="${schemaAnchor(k)}">
<h2><code>${esc(k)}</code></h2>
${s && typeof s === 'object' ? prose(s.description) : ''}
<p>${schemaSummary(s)}</p>
${schemaDetails(s)}
</section>`,
    )
    .join('\n');
  const body = `<h1>Schemas <span class="muted">${esc(x.c.title)}</span></h1>
<p>The named schemas of the document (<code>components.schemas</code>).</p>
${blocks || '<p>The document has no named schema.</p>'}`;
  return page({ title: `Schemas — ${x.c.title}`, assets: 'assets/', nav: nav(x), body });
}

/** Where the document came from, as the overview shows it: a URL or a relative path as given, else the file name. */
const shownSource = (file: string): string =>
  /^https?:\/\//i.test(file) || !path.isAbsolute(file) ? file : path.basename(file);

/** The reference of one document: relative path → file content. */
export function writeDocs(c: ContractModel, opts: DocsOptions = {}): Map<string, string> {
  const x: Ctx = { c, files: methodFiles(c), opts, source: shownSource(c.spec.file) };
  // The params validator of a method without examples, which needs generated params: compiled for it alone (the whole
  // table, results and fast checks included, was ~1.5 s of a 240-method document's docs; issue 19 item 8).
  let ajv: Ajv | undefined;
  const paramsValidator = (method: string): ValidateFn => {
    ajv ??= createAjv(c);
    const validate = ajv.getSchema(methodSchemaId(c, method, 'params'));
    if (!validate) throw new Error(`${c.spec.file}: ${method}: params validator did not compile`);
    return validate;
  };
  const out = new Map<string, string>([
    ['index.html', indexPage(x)],
    ['servers.html', serversPage(x)],
    ['schemas.html', schemasPage(x)],
  ]);
  for (const m of c.methods) out.set(x.files.get(m.name)!, methodPage(x, m, paramsValidator));
  out.set('assets/style.css', CSS);
  out.set('assets/try-it.js', TRY_IT_JS);
  out.set('assets/validators.js', browserValidators(c));
  if (opts.serversScript) out.set('assets/servers.js', opts.serversScript);
  return out;
}

/** Writes the reference into `dir` (created); returns the relative paths written, sorted. */
export async function writeDocsTo(dir: string, c: ContractModel, opts: DocsOptions = {}): Promise<string[]> {
  const files = writeDocs(c, opts);
  const names = [...files.keys()].sort();
  for (const rel of names) {
    const file = path.join(dir, rel);
    await mkdir(path.dirname(file), { recursive: true });
    await writeFile(file, files.get(rel)!);
  }
  return names;
}

export { CSS as DOCS_CSS, page as docsPage, esc as escapeHtml } from './html.js';
