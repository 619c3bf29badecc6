// Try it: this deployment's account API, when this rpcgate serves the page (/docs/ on its own origin).
window.RPCGATE_DOCS_SERVERS_LABEL = 'This deployment';
window.RPCGATE_DOCS_SERVERS = async function () {
  if (!/^https?:$/.test(location.protocol) || location.pathname.indexOf('/docs/') !== 0) return [];
  return [{ label: location.origin + '/api', url: location.origin + '/api' }];
};
