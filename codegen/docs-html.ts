// docs/ of this repository: the toolkit's reference writer (packages/toolkit/src/docs/, the same one `rpcgate docs` runs) for
// each contract into docs/api/<api>/, given what only this repository knows: the node API's SDK code tabs
// (./examples.ts: ethers, web3.js, viem, web3.py and the published typed clients) and the Try it panel's server
// suggestions when rpcgate itself serves docs/ under /docs/ — the signed-in user's key URLs for the node API (read
// from the account API on the same origin; nothing without a session), this deployment's /api for the account API.
// docs/index.html links every reference and the client docs (typedoc, ./docs-client.ts).
import type { ContractModel, MethodModel } from '../packages/toolkit/src/contract/model.js';
import {
  DOCS_CSS,
  docsPage,
  escapeHtml as esc,
  writeDocs,
  type DocsOptions,
  type ExampleTab,
} from '../packages/toolkit/src/docs/index.js';
import { buildExamples } from './examples.js';

/** Node API pages served by rpcgate at /docs/: the user's app and network key URLs from the account API (/api).
 *  Read-only calls with the session cookie; without a session (or off rpcgate, or from disk) the first call fails and
 *  the panel shows the document's servers only. */
const NODE_KEY_URLS = `// Try it: the signed-in user's key URLs, when this rpcgate serves the page (/docs/ on its own origin).
window.RPCGATE_DOCS_SERVERS_LABEL = 'Your keys (signed in)';
window.RPCGATE_DOCS_SERVERS = async function () {
  if (!/^https?:$/.test(location.protocol) || location.pathname.indexOf('/docs/') !== 0) return [];
  async function call(method, params) {
    const res = await fetch('/api', { method: 'POST', credentials: 'same-origin', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: method, params: params }) });
    const body = await res.json();
    if (!body || body.error || body.result === undefined) throw new Error('no session');
    return body.result;
  }
  const out = [];
  for (const summary of await call('apps_list', [])) {
    const app = await call('apps_get', [summary.id]);
    for (const network of Object.keys(app.urls).sort()) out.push({ label: 'App ' + app.name + ' — ' + network, url: app.urls[network] });
  }
  for (const summary of (await call('keys_list', [])).keys) {
    const key = await call('keys_get', [summary.id]);
    out.push({ label: 'Key ' + key.name + ' — ' + key.network, url: key.url });
  }
  return out;
};
`;

/** Account API pages served by rpcgate: the deployment's own /api (the session cookie goes with same-origin calls). */
const ACCOUNT_API_URL = `// Try it: this deployment's account API, when this rpcgate serves the page (/docs/ on its own origin).
window.RPCGATE_DOCS_SERVERS_LABEL = 'This deployment';
window.RPCGATE_DOCS_SERVERS = async function () {
  if (!/^https?:$/.test(location.protocol) || location.pathname.indexOf('/docs/') !== 0) return [];
  return [{ label: location.origin + '/api', url: location.origin + '/api' }];
};
`;

/** What the writer gets for one of this repository's contracts. */
function repoOptions(c: ContractModel): DocsOptions {
  const home = { href: '../../index.html', label: 'rpcgate docs' };
  const sets = buildExamples(c);
  if (c.spec.name === 'node') {
    // Every tab of generated/node/examples.ts (the dashboard shows the same code).
    return { home, examples: (m: MethodModel): ExampleTab[] => sets.get(m.name) ?? [], serversScript: NODE_KEY_URLS };
  }
  // Other APIs: the toolkit's curl and fetch tabs, and the published typed client (rpcgate/<api>) instead of a local one.
  return {
    home,
    examples: (m: MethodModel): ExampleTab[] => (sets.get(m.name) ?? []).filter((t) => t.id === 'rpcgate'),
    serversScript: c.spec.name === 'account' ? ACCOUNT_API_URL : undefined,
  };
}

/** docs/api/<api>/… for one contract, plus the stylesheet docs/index.html uses. */
export async function writeApiDocs(c: ContractModel, _all: ContractModel[]): Promise<Map<string, string>> {
  const files = new Map<string, string>();
  for (const [rel, text] of writeDocs(c, repoOptions(c))) files.set(`docs/api/${c.spec.name}/${rel}`, text);
  files.set('docs/assets/style.css', DOCS_CSS);
  return files;
}

export function writeDocsIndex(models: ContractModel[]): string {
  const apis = models
    .map(
      (c) =>
        `<li><a href="api/${esc(c.spec.name)}/index.html">${esc(c.title)}</a> <span class="muted">${esc(c.version)} — ${c.methods.length} methods</span></li>`,
    )
    .join('\n');
  const body = `<h1>rpcgate documentation</h1>
<h2>API references</h2>
<ul>
${apis}
</ul>
<p>Every method page has a <strong>Try it</strong> panel: pick a server (or, signed in to this rpcgate, one of your keys), edit the params, send, and see the answer checked against the method's result schema.</p>
<h2>Client</h2>
<ul>
<li><a href="client/index.html">Generated TypeScript client</a> <span class="muted">(typedoc)</span></li>
<li>Generated Python client of the node API: <code>rpcgate generate openrpc.json --lang python --out rpcgate_node</code> <span class="muted">(Python 3.11+, standard library only; each node method page has its example under “Python (rpcgate client)”)</span></li>
</ul>
<h2>Packages</h2>
<ul>
<li><a href="packages/client/index.html">@rpcgate/client</a> <span class="muted">the runtime generated clients import (typedoc)</span></li>
<li><a href="packages/toolkit/index.html">@rpcgate/toolkit</a> <span class="muted">the OpenRPC toolkit: codegen, docs, server, mock, conformance (typedoc)</span></li>
<li><a href="packages/rpcgate/index.html">rpcgate</a> <span class="muted">the gateway embedded in an application (typedoc)</span></li>
</ul>`;
  const nav = `<p class="brand"><a href="index.html">rpcgate docs</a></p>
<ul>
${models.map((c) => `<li><a href="api/${esc(c.spec.name)}/index.html">${esc(c.title)}</a></li>`).join('\n')}
<li><a href="client/index.html">Client</a></li>
<li><a href="packages/client/index.html">Packages</a></li>
</ul>`;
  return docsPage({ title: 'rpcgate documentation', assets: 'assets/', nav, body });
}
