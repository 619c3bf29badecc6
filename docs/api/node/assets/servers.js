// Try it: the signed-in user's key URLs, when this rpcgate serves the page (/docs/ on its own origin).
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
