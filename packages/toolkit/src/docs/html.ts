// HTML building blocks of the API reference: escaping, the little CommonMark the documents use (paragraphs and `code`
// spans), one-line schema summaries with component links, the page frame and the stylesheet.
import { refName, type Json } from '../contract/model.js';
import { HEADER } from '../codegen/schema.js';

export const esc = (s: unknown): string =>
  String(s).replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

/** Escaped text with `code` spans. */
export const inline = (s: string | undefined): string => (s ? esc(s).replace(/`([^`]+)`/g, '<code>$1</code>') : '');

/** Descriptions are CommonMark in OpenRPC; render paragraphs and `code` spans, escape the rest. */
export const prose = (s: string | undefined): string =>
  typeof s === 'string' && s.trim()
    ? s
        .trim()
        .split(/\n\s*\n/)
        .map((p) => `<p>${inline(p)}</p>`)
        .join('\n')
    : '';

/** JSON for a `<script type="application/json">` block: nothing in it can close the element or open a comment. */
export const scriptJson = (v: unknown): string =>
  JSON.stringify(v)
    .replace(/</g, '\\u003c')
    .replace(/\u2028/g, '\\u2028')
    .replace(/\u2029/g, '\\u2029');

export const pre = (code: string, lang: string, attrs = ''): string =>
  `<pre class="code lang-${esc(lang)}"${attrs}><code>${esc(code.replace(/\n$/, ''))}</code></pre>`;

/** Anchor of a schema component on schemas.html. */
export const schemaAnchor = (name: string): string =>
  `schema-${name.replace(/[^A-Za-z0-9_.-]/g, (c) => `_${c.charCodeAt(0).toString(16)}`)}`;

/** One-line HTML summary of a schema, with component refs linked to schemas.html. */
export function schemaSummary(s: Json, depth = 0): string {
  if (s === true || s === undefined || (s && typeof s === 'object' && Object.keys(s).length === 0)) return 'any';
  if (s === false) return 'never';
  if (!s || typeof s !== 'object') return 'any';
  const r = refName(s);
  if (r !== undefined) return `<a href="schemas.html#${schemaAnchor(r)}">${esc(r)}</a>`;
  if (typeof s.$ref === 'string') return `<code>${esc(s.$ref)}</code>`;
  if (depth > 3) return '…';
  const alts = s.oneOf ?? s.anyOf;
  if (Array.isArray(alts)) return alts.map((x: Json) => schemaSummary(x, depth + 1)).join(' | ');
  if (Array.isArray(s.allOf)) return s.allOf.map((x: Json) => schemaSummary(x, depth + 1)).join(' &amp; ');
  if (Array.isArray(s.enum)) return s.enum.map((v: Json) => `<code>${esc(JSON.stringify(v))}</code>`).join(' | ');
  if (s.const !== undefined) return `<code>${esc(JSON.stringify(s.const))}</code>`;
  const type = Array.isArray(s.type) ? s.type.join(' | ') : s.type;
  if (type === 'array') {
    const items = Array.isArray(s.items)
      ? `[${s.items.map((x: Json) => schemaSummary(x, depth + 1)).join(', ')}]`
      : schemaSummary(s.items, depth + 1);
    return `array of ${items}`;
  }
  if (type === 'object' && s.properties && typeof s.properties === 'object') {
    const req = new Set(Array.isArray(s.required) ? s.required : []);
    return `object { ${Object.keys(s.properties)
      .map((k) => `${esc(k)}${req.has(k) ? '' : '?'}`)
      .join(', ')} }`;
  }
  if (type === 'string' && typeof s.pattern === 'string') return `string <code>${esc(s.pattern)}</code>`;
  if (type === 'string' && typeof s.format === 'string') return `string (${esc(s.format)})`;
  return esc(type ?? s.title ?? 'any');
}

/** A schema as collapsible JSON. */
export const schemaDetails = (s: Json, label = 'JSON Schema'): string =>
  `<details class="schema">\n<summary>${esc(label)}</summary>\n${pre(JSON.stringify(s ?? {}, null, 2), 'json')}\n</details>`;

export function page(o: {
  title: string;
  assets: string;
  nav: string;
  body: string;
  scripts?: string[];
  header?: string;
}): string {
  const scripts = (o.scripts ?? []).map((s) => `\n${s}`).join('');
  return `<!DOCTYPE html>
<!-- ${o.header ?? HEADER} -->
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${esc(o.title)}</title>
<link rel="stylesheet" href="${o.assets}style.css">
</head>
<body>
<nav class="side">
${o.nav}
</nav>
<main>
${o.body}
</main>${scripts}
</body>
</html>
`;
}

export const CSS = `/* ${HEADER} */
:root { color-scheme: light dark; --fg: #1d2430; --muted: #667085; --bg: #fff; --panel: #f5f7fa; --line: #d8dee8; --link: #1a56db; --ok: #067647; --bad: #b42318; }
@media (prefers-color-scheme: dark) { :root { --fg: #e4e8ef; --muted: #98a2b3; --bg: #12161c; --panel: #1b2129; --line: #2c3542; --link: #7aa7ff; --ok: #47cd89; --bad: #f97066; } }
* { box-sizing: border-box; }
body { margin: 0; display: flex; min-height: 100vh; font: 15px/1.55 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--fg); background: var(--bg); }
a { color: var(--link); text-decoration: none; }
a:hover { text-decoration: underline; }
nav.side { flex: 0 0 260px; padding: 1rem; border-right: 1px solid var(--line); background: var(--panel); position: sticky; top: 0; height: 100vh; overflow-y: auto; font-size: 14px; }
nav.side ul { list-style: none; padding: 0; margin: 0 0 1rem; }
nav.side li { padding: 2px 0; overflow-wrap: anywhere; }
nav.side li.current a { font-weight: 600; }
nav.side .brand { font-weight: 700; font-size: 16px; }
main { flex: 1; min-width: 0; max-width: 1000px; padding: 1.5rem 2.5rem 4rem; }
h1 { font-size: 1.8rem; margin-top: 0; overflow-wrap: anywhere; }
h2 { margin-top: 2rem; border-bottom: 1px solid var(--line); padding-bottom: .25rem; }
.lead { font-size: 1.1rem; }
.muted { color: var(--muted); }
.tag { font-size: .8rem; padding: 1px 6px; border: 1px solid var(--line); border-radius: 4px; font-weight: normal; }
.tag.deprecated { color: var(--bad); border-color: var(--bad); }
code { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: .9em; }
pre.code { background: var(--panel); border: 1px solid var(--line); border-radius: 6px; padding: .75rem 1rem; overflow-x: auto; }
pre.code code { white-space: pre; }
table { border-collapse: collapse; width: 100%; margin: .5rem 0; }
th, td { border: 1px solid var(--line); padding: .35rem .6rem; text-align: left; vertical-align: top; }
th { background: var(--panel); }
td code { overflow-wrap: anywhere; }
details { margin: .5rem 0; }
summary { cursor: pointer; font-weight: 600; }
section { margin-bottom: 1.5rem; }
.try-it { border: 1px solid var(--line); border-radius: 8px; padding: .5rem 1.25rem 1.25rem; background: var(--panel); }
.try-it h2 { margin-top: .75rem; }
.try-it label { display: block; font-weight: 600; margin: .75rem 0 .25rem; }
.try-it label .muted { font-weight: normal; }
.try-it input, .try-it select, .try-it textarea { width: 100%; font: 14px ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; padding: .4rem .5rem; border: 1px solid var(--line); border-radius: 4px; background: var(--bg); color: var(--fg); }
.try-it textarea { min-height: 3.2rem; resize: vertical; }
.try-it .vars small { display: block; margin-top: .2rem; font-size: 12px; line-height: 1.35; }
.try-it .vars { display: grid; grid-template-columns: repeat(auto-fill, minmax(200px, 1fr)); gap: 0 1rem; }
.try-it button { margin-top: 1rem; font: 600 15px system-ui, sans-serif; padding: .45rem 1.4rem; border-radius: 6px; border: 1px solid var(--link); background: var(--link); color: #fff; cursor: pointer; }
.try-it .status { margin: .75rem 0 0; }
.try-it .verdict { font-weight: 600; margin: .5rem 0; }
.try-it .verdict.valid { color: var(--ok); }
.try-it .verdict.invalid, .try-it .status.bad { color: var(--bad); }
.try-it .verdict.error { color: var(--muted); }
@media (max-width: 800px) { body { display: block; } nav.side { position: static; height: auto; border-right: 0; border-bottom: 1px solid var(--line); } main { padding: 1rem; } }
`;
