// Upstream URLs carry secrets: user:pass@, and provider keys in the path or query (Infura `/v3/<key>`, Alchemy
// `/v2/<key>`, `?apikey=`). Everything the gateway shows of an upstream — logs, metrics labels, /readyz, error
// messages — goes through here and keeps only scheme://host:port.

const DEFAULT_PORT: Record<string, string> = { 'http:': '80', 'https:': '443', 'ws:': '80', 'wss:': '443' };

/** host:port of a URL (the default port of its scheme when none is given). */
export function hostPort(u: URL): string {
  return `${u.hostname}:${u.port || DEFAULT_PORT[u.protocol] || ''}`;
}

/** scheme://host:port: no credentials, no path, no query, no fragment. */
export function redactUrl(url: string | URL): string {
  try {
    const u = typeof url === 'string' ? new URL(url) : url;
    return `${u.protocol}//${hostPort(u)}`;
  } catch {
    return '(invalid url)';
  }
}

/** `text` with every occurrence of the given URLs (and of their secret parts) replaced by their redacted form: for
 *  messages from libraries that may quote the URL they were given. */
export function redactIn(text: string, urls: readonly string[]): string {
  let out = text;
  for (const raw of urls) {
    let u: URL;
    try {
      u = new URL(raw);
    } catch {
      continue;
    }
    const safe = redactUrl(u);
    out = out.split(raw).join(safe);
    const secrets = [u.username, u.password, u.pathname.length > 1 ? u.pathname : '', u.search.slice(1)];
    for (const s of secrets) if (s.length >= 4) out = out.split(s).join('…');
  }
  return out;
}
