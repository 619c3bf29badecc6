// docs/: the static API reference. docs/index.html links every API reference and the client docs;
// docs/api/<api>/index.html (overview, access points, method list), one page per method
// (summary, description, params, result, errors with HTTP status, examples, per-language code),
// schemas.html (every components.schemas entry, anchored). Plain HTML + one CSS file, relative links only,
// no scripts, fonts or CDNs: pages open from disk and are served by the server under /docs/.
import { expandServerUrl, refName, type ContractModel, type Json, type MethodModel } from '../src/toolkit/contract/model.js';
import { buildExamples } from './examples.js';
import { HEADER } from '../src/toolkit/codegen/schema.js';

const esc = (s: unknown): string =>
  String(s).replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

/** Escaped text with `code` spans. */
const inline = (s: string | undefined): string => (s ? esc(s).replace(/`([^`]+)`/g, '<code>$1</code>') : '');

/** Descriptions are CommonMark in OpenRPC; render paragraphs and `code` spans, escape the rest. */
const prose = (s: string | undefined): string =>
  s
    ? s
        .trim()
        .split(/\n\s*\n/)
        .map((p) => `<p>${esc(p).replace(/`([^`]+)`/g, '<code>$1</code>')}</p>`)
        .join('\n')
    : '';

/** File name of a method page (method names are file-name safe after this). */
export const methodFile = (name: string): string => `${name.replace(/[^A-Za-z0-9_.-]/g, '_')}.html`;

const page = (o: { title: string; css: string; nav: string; body: string }): string =>
  `<!DOCTYPE html>
<!-- ${HEADER} -->
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${esc(o.title)}</title>
<link rel="stylesheet" href="${o.css}">
</head>
<body>
<nav class="side">
${o.nav}
</nav>
<main>
${o.body}
</main>
</body>
</html>
`;

const pre = (code: string, lang: string): string => `<pre class="code lang-${esc(lang)}"><code>${esc(code.replace(/\n$/, ''))}</code></pre>`;

/** One-line HTML summary of a schema, with component refs linked to schemas.html. */
function schemaSummary(s: Json, depth = 0): string {
  if (s === true || s === undefined) return 'any';
  if (s === false) return 'never';
  const r = refName(s);
  if (r !== undefined) return `<a href="schemas.html#${esc(r)}">${esc(r)}</a>`;
  if (depth > 3) return '…';
  const alts = s.oneOf ?? s.anyOf;
  if (alts) return alts.map((x: Json) => schemaSummary(x, depth + 1)).join(' | ');
  if (s.allOf) return s.allOf.map((x: Json) => schemaSummary(x, depth + 1)).join(' &amp; ');
  if (s.enum) return s.enum.map((v: Json) => `<code>${esc(JSON.stringify(v))}</code>`).join(' | ');
  if (s.const !== undefined) return `<code>${esc(JSON.stringify(s.const))}</code>`;
  const type = Array.isArray(s.type) ? s.type.join(' | ') : s.type;
  if (type === 'array') return `array of ${Array.isArray(s.items) ? `[${s.items.map((x: Json) => schemaSummary(x, depth + 1)).join(', ')}]` : schemaSummary(s.items, depth + 1)}`;
  if (type === 'object' && s.properties) {
    const req = new Set(s.required ?? []);
    return `object { ${Object.keys(s.properties)
      .map((k) => `${esc(k)}${req.has(k) ? '' : '?'}`)
      .join(', ')} }`;
  }
  if (type === 'string' && s.pattern) return `string <code>${esc(s.pattern)}</code>`;
  return esc(type ?? (s.title ? s.title : 'any'));
}

function nav(c: ContractModel, current?: string): string {
  const items = c.methods
    .map((m) => `<li${m.name === current ? ' class="current"' : ''}><a href="${methodFile(m.name)}">${esc(m.name)}</a></li>`)
    .join('\n');
  return `<p class="brand"><a href="../../index.html">rpcgate docs</a></p>
<p><a href="index.html">${esc(c.title)}</a> <span class="muted">${esc(c.version)}</span></p>
<ul>
<li><a href="schemas.html">Schemas</a></li>
</ul>
<p class="muted">Methods</p>
<ul class="methods">
${items}
</ul>`;
}

function accessPoints(c: ContractModel): string {
  if (!c.servers.length) return '';
  const rows = c.servers
    .map((s) => {
      const vars = s.variables
        .map((v) => `<code>${esc(v.name)}</code> = <code>${esc(v.default)}</code>${v.enum ? ` (${v.enum.map((e) => `<code>${esc(e)}</code>`).join(', ')})` : ''}`)
        .join('<br>');
      return `<tr><td>${esc(s.name)}${s.summary ? `<br><span class="muted">${inline(s.summary)}</span>` : ''}</td><td><code>${esc(s.url)}</code><br><span class="muted">e.g.</span> <code>${esc(expandServerUrl(s))}</code></td><td>${vars}</td></tr>`;
    })
    .join('\n');
  return `<h2 id="access-points">Access points</h2>
<p>Every method is called with <code>POST</code> on the same URL, JSON-RPC 2.0 body, <code>Content-Type: application/json</code>; the API key is part of the path.</p>
<table>
<thead><tr><th>Server</th><th>URL</th><th>Variables</th></tr></thead>
<tbody>
${rows}
</tbody>
</table>`;
}

function methodPage(c: ContractModel, m: MethodModel, examples: ReturnType<typeof buildExamples>): string {
  const params = m.params.length
    ? `<table>
<thead><tr><th>#</th><th>Name</th><th>Required</th><th>Schema</th><th>Description</th></tr></thead>
<tbody>
${m.params
  .map(
    (p, i) =>
      `<tr><td>${i}</td><td><code>${esc(p.name)}</code></td><td>${p.required ? 'yes' : 'no'}</td><td>${schemaSummary(p.schema)}</td><td>${inline(p.description ?? p.summary)}</td></tr>`,
  )
  .join('\n')}
</tbody>
</table>
<p class="muted">Params are positional (a JSON array in this order)${m.params.some((p) => !p.required) ? '; optional trailing params may be omitted' : ''}.</p>`
    : '<p>None: send <code>"params": []</code> (or omit <code>params</code>).</p>';
  const result = m.result
    ? `<p><strong>${esc(m.result.name)}</strong>: ${schemaSummary(m.result.schema)}</p>${prose(m.result.description)}`
    : '<p>None.</p>';
  const errors = m.errors.length
    ? `<table>
<thead><tr><th>Code</th><th>Message</th><th>HTTP status</th><th>Details</th></tr></thead>
<tbody>
${m.errors.map((e) => `<tr><td><code>${e.code}</code></td><td>${esc(e.message)}</td><td>${e.httpStatus.join(', ')}</td><td>${inline(typeof e.data?.description === 'string' ? e.data.description : undefined)}</td></tr>`).join('\n')}
</tbody>
</table>`
    : '<p>None listed.</p>';
  const exampleBlocks = m.examples
    .map((x, i) => {
      const request = { jsonrpc: '2.0', id: 1, method: m.name, params: x.params.map((p) => p.value) };
      const response = x.result ? { jsonrpc: '2.0', id: 1, result: x.result.value } : undefined;
      return `<h3 id="example-${i}">${esc(x.name)}</h3>
${prose(x.summary ?? x.description)}
<p class="muted">Request</p>
${pre(JSON.stringify(request, null, 2), 'json')}
${response ? `<p class="muted">Response</p>\n${pre(JSON.stringify(response, null, 2), 'json')}` : ''}`;
    })
    .join('\n');
  const code = (examples.get(m.name) ?? [])
    .map((e, i) => `<details${i === 0 ? ' open' : ''}>\n<summary>${esc(e.label)}</summary>\n${pre(e.code, e.language)}\n</details>`)
    .join('\n');
  const urls = c.servers.map((s) => `<li><code>${esc(s.url)}</code></li>`).join('\n');
  const body = `<h1><code>${esc(m.name)}</code>${m.deprecated ? ' <span class="tag">deprecated</span>' : ''}</h1>
<p class="lead">${esc(m.summary)}</p>
${m.description && m.description !== m.summary ? prose(m.description) : ''}
${m.tags.length ? `<p class="muted">Tags: ${m.tags.map((t) => esc(t)).join(', ')}</p>` : ''}
<h2 id="params">Params</h2>
${params}
<h2 id="result">Result</h2>
${result}
<h2 id="errors">Errors</h2>
${errors}
<p class="muted">Envelope and access errors (invalid JSON, unknown key, rate limits, …) are listed on the <a href="index.html#errors">overview</a>.</p>
<h2 id="examples">Examples</h2>
${exampleBlocks || '<p>None.</p>'}
<h2 id="code">Code</h2>
<p>Replace <code>{{RPC_URL}}</code> with your endpoint, key included.</p>
${code}
<h2 id="access-points">Access points</h2>
<ul>
${urls}
</ul>
<p class="muted">See the <a href="index.html#access-points">overview</a> for the variables.</p>`;
  return page({ title: `${m.name} — ${c.title}`, css: '../../assets/style.css', nav: nav(c, m.name), body });
}

function indexPage(c: ContractModel): string {
  const rows = c.methods
    .map((m) => `<tr><td><a href="${methodFile(m.name)}"><code>${esc(m.name)}</code></a></td><td>${esc(m.summary)}</td></tr>`)
    .join('\n');
  const errs = new Map<string, { code: number; message: string; httpStatus: number[]; methods: string[] }>();
  for (const m of c.methods)
    for (const e of m.errors) {
      const k = `${e.code} ${e.message}`;
      if (!errs.has(k)) errs.set(k, { ...e, methods: [] });
      errs.get(k)!.methods.push(m.name);
    }
  const errRows = [...errs.values()]
    .sort((a, b) => b.code - a.code || (a.message < b.message ? -1 : 1))
    .map((e) => `<tr><td><code>${e.code}</code></td><td>${esc(e.message)}</td><td>${e.httpStatus.join(', ')}</td><td>${e.methods.length === c.methods.length ? 'all' : e.methods.length}</td></tr>`)
    .join('\n');
  const body = `<h1>${esc(c.title)} <span class="muted">${esc(c.version)}</span></h1>
${prose(c.description)}
<p>Contract: <code>${esc(c.spec.file)}</code> (OpenRPC ${esc(c.raw.openrpc)}); the service also answers <code>rpc.discover</code> with it.</p>
${accessPoints(c)}
<h2 id="methods">Methods</h2>
<table>
<thead><tr><th>Method</th><th>Summary</th></tr></thead>
<tbody>
${rows}
</tbody>
</table>
<h2 id="errors">Errors</h2>
<table>
<thead><tr><th>Code</th><th>Message</th><th>HTTP status</th><th>Methods</th></tr></thead>
<tbody>
${errRows}
</tbody>
</table>`;
  return page({ title: c.title, css: '../../assets/style.css', nav: nav(c), body });
}

function schemasPage(c: ContractModel): string {
  const blocks = c.schemas
    .map(
      ([k, s]) => `<section id="${esc(k)}">
<h2><code>${esc(k)}</code></h2>
${s && typeof s === 'object' ? prose(s.description) : ''}
<p>${schemaSummary(s)}</p>
<details>
<summary>JSON Schema</summary>
${pre(JSON.stringify(s, null, 2), 'json')}
</details>
</section>`,
    )
    .join('\n');
  const body = `<h1>Schemas <span class="muted">${esc(c.title)}</span></h1>
<p>The wire types of <code>${esc(c.spec.file)}</code> (<code>components.schemas</code>). Quantities are <code>0x</code>-prefixed hex without leading zeros; hashes and data are lower-case hex.</p>
${blocks}`;
  return page({ title: `Schemas — ${c.title}`, css: '../../assets/style.css', nav: nav(c), body });
}

export async function writeApiDocs(c: ContractModel, _all: ContractModel[]): Promise<Map<string, string>> {
  const dir = `docs/api/${c.spec.name}`;
  const examples = buildExamples(c);
  const files = new Map<string, string>([
    [`${dir}/index.html`, indexPage(c)],
    [`${dir}/schemas.html`, schemasPage(c)],
  ]);
  for (const m of c.methods) files.set(`${dir}/${methodFile(m.name)}`, methodPage(c, m, examples));
  files.set('docs/assets/style.css', CSS);
  return files;
}

export function writeDocsIndex(models: ContractModel[]): string {
  const apis = models
    .map((c) => `<li><a href="api/${esc(c.spec.name)}/index.html">${esc(c.title)}</a> <span class="muted">${esc(c.version)} — ${c.methods.length} methods</span></li>`)
    .join('\n');
  const body = `<h1>rpcgate documentation</h1>
<h2>API references</h2>
<ul>
${apis}
</ul>
<h2>Client</h2>
<ul>
<li><a href="client/index.html">Generated TypeScript client</a> <span class="muted">(typedoc)</span></li>
</ul>`;
  const navHtml = `<p class="brand"><a href="index.html">rpcgate docs</a></p>
<ul>
${models.map((c) => `<li><a href="api/${esc(c.spec.name)}/index.html">${esc(c.title)}</a></li>`).join('\n')}
<li><a href="client/index.html">Client</a></li>
</ul>`;
  return page({ title: 'rpcgate documentation', css: 'assets/style.css', nav: navHtml, body });
}

const CSS = `/* ${HEADER} */
:root { color-scheme: light dark; --fg: #1d2430; --muted: #667085; --bg: #fff; --panel: #f5f7fa; --line: #d8dee8; --link: #1a56db; }
@media (prefers-color-scheme: dark) { :root { --fg: #e4e8ef; --muted: #98a2b3; --bg: #12161c; --panel: #1b2129; --line: #2c3542; --link: #7aa7ff; } }
* { box-sizing: border-box; }
body { margin: 0; display: flex; min-height: 100vh; font: 15px/1.55 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--fg); background: var(--bg); }
a { color: var(--link); text-decoration: none; }
a:hover { text-decoration: underline; }
nav.side { flex: 0 0 260px; padding: 1rem; border-right: 1px solid var(--line); background: var(--panel); position: sticky; top: 0; height: 100vh; overflow-y: auto; font-size: 14px; }
nav.side ul { list-style: none; padding: 0; margin: 0 0 1rem; }
nav.side li { padding: 2px 0; }
nav.side li.current a { font-weight: 600; }
nav.side .brand { font-weight: 700; font-size: 16px; }
main { flex: 1; min-width: 0; max-width: 1000px; padding: 1.5rem 2.5rem 4rem; }
h1 { font-size: 1.8rem; margin-top: 0; }
h2 { margin-top: 2rem; border-bottom: 1px solid var(--line); padding-bottom: .25rem; }
.lead { font-size: 1.1rem; }
.muted { color: var(--muted); }
.tag { font-size: .8rem; padding: 1px 6px; border: 1px solid var(--line); border-radius: 4px; }
code { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: .9em; }
pre.code { background: var(--panel); border: 1px solid var(--line); border-radius: 6px; padding: .75rem 1rem; overflow-x: auto; }
pre.code code { white-space: pre; }
table { border-collapse: collapse; width: 100%; margin: .5rem 0; }
th, td { border: 1px solid var(--line); padding: .35rem .6rem; text-align: left; vertical-align: top; }
th { background: var(--panel); }
td code { word-break: break-all; }
details { margin: .5rem 0; }
summary { cursor: pointer; font-weight: 600; }
section { margin-bottom: 1.5rem; }
@media (max-width: 800px) { body { display: block; } nav.side { position: static; height: auto; border-right: 0; border-bottom: 1px solid var(--line); } main { padding: 1rem; } }
`;
