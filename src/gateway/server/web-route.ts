// Serves the built dashboard (src/gateway/web → dist/web, `npm run build:web`): `GET /` for browsers and `/assets/*`.
// - index.html: `Cache-Control: no-cache` with an ETag (revalidated, so a new build shows at once);
//   hashed assets: `public, max-age=31536000, immutable`.
// - Compression is done at build time (.br and .gz beside each file); the copy is chosen by Accept-Encoding
//   (br, then gzip, then identity) with `Vary: Accept-Encoding`.
// - Files are read once at start into a table keyed by URL path: a request path is only ever looked up, never joined
//   onto a directory, so there is no path to traverse.
// - Only GET/HEAD of `/`, `/index.html` and `/assets/…` are taken; `/` goes to the dashboard only when the client
//   accepts HTML (a browser), so `curl /` still gets the server's plain-text landing. Every other request — the node
//   API, /api, /docs/, /healthz — goes on to the HTTP front untouched (the dashboard routes are hash routes: `/#/apps`).
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { extname, join, relative, resolve, sep } from 'node:path';
import type { Logger } from 'pino';
import { PATHS } from '../paths.js';

/** Where `npm run build:web` writes the dashboard. */
export const DEFAULT_WEB_DIR = PATHS.webDist;

const MIME: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.json': 'application/json; charset=utf-8',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
  '.txt': 'text/plain; charset=utf-8',
};

const IMMUTABLE = 'public, max-age=31536000, immutable';
// The dashboard's page may not be framed (clickjacking) and loads nothing from elsewhere.
const PAGE_HEADERS = {
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'same-origin',
  'content-security-policy': "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
};

interface Asset {
  type: string;
  cache: string;
  etag: string;
  identity: Buffer;
  br?: Buffer;
  gzip?: Buffer;
}

export interface WebRoute {
  /** True when the dashboard is built and served. */
  readonly available: boolean;
  /** Answers the request when it is the dashboard's; false = not ours, let the HTTP front handle it. */
  handle(req: IncomingMessage, res: ServerResponse): boolean;
  /** Puts `handle` in front of a server's request listener(s). */
  mount(server: Server): void;
}

function loadAssets(dir: string): Map<string, Asset> {
  const out = new Map<string, Asset>();
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.isFile() && !e.name.startsWith('.') && !e.name.endsWith('.br') && !e.name.endsWith('.gz')) {
        const url = '/' + relative(dir, p).split(sep).join('/');
        const identity = readFileSync(p);
        out.set(url, {
          type: MIME[extname(e.name)] ?? 'application/octet-stream',
          cache: url.startsWith('/assets/') ? IMMUTABLE : 'no-cache',
          etag: '"' + createHash('sha256').update(identity).digest('base64url').slice(0, 27) + '"',
          identity,
          br: existsSync(p + '.br') ? readFileSync(p + '.br') : undefined,
          gzip: existsSync(p + '.gz') ? readFileSync(p + '.gz') : undefined,
        });
      }
    }
  };
  walk(dir);
  return out;
}

/** q-value of a coding in an Accept-Encoding header (0 when absent or refused). */
function accepts(header: string, coding: string): boolean {
  for (const part of header.split(',')) {
    const [name, ...params] = part.trim().toLowerCase().split(';');
    if (name !== coding && name !== '*') continue;
    const q = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    return q === undefined || Number(q.slice(2)) > 0;
  }
  return false;
}

const wantsHtml = (req: IncomingMessage): boolean => (req.headers.accept ?? '').toLowerCase().includes('text/html');

export function createWebRoute(opts: { dir?: string; logger?: Logger } = {}): WebRoute {
  const dir = resolve(opts.dir ?? DEFAULT_WEB_DIR);
  const built = existsSync(join(dir, 'index.html'));
  const assets = built ? loadAssets(dir) : new Map<string, Asset>();
  if (!built) opts.logger?.warn({ dir }, 'the dashboard is not built: run `npm run build:web` (npm start and npm test build it)');

  function send(req: IncomingMessage, res: ServerResponse, a: Asset, extra: Record<string, string> = {}): void {
    const headers: Record<string, string> = { 'content-type': a.type, 'cache-control': a.cache, etag: a.etag, vary: 'Accept-Encoding', ...extra };
    const inm = req.headers['if-none-match'];
    if (inm !== undefined && inm.split(',').some((t) => t.trim().replace(/^W\//, '') === a.etag)) {
      res.writeHead(304, headers);
      res.end();
      return;
    }
    const ae = String(req.headers['accept-encoding'] ?? '');
    let body = a.identity;
    if (a.br && accepts(ae, 'br')) {
      body = a.br;
      headers['content-encoding'] = 'br';
    } else if (a.gzip && accepts(ae, 'gzip')) {
      body = a.gzip;
      headers['content-encoding'] = 'gzip';
    }
    headers['content-length'] = String(body.length);
    res.writeHead(200, headers);
    res.end(req.method === 'HEAD' ? undefined : body);
  }

  function notBuilt(res: ServerResponse): void {
    const body = 'The rpcgate dashboard is not built.\nRun `npm run build:web` (npm start and npm test build it), then restart.\nAPI reference: /docs/\n';
    res.writeHead(503, { 'content-type': 'text/plain; charset=utf-8', 'content-length': Buffer.byteLength(body), 'cache-control': 'no-store' });
    res.end(body);
  }

  function handle(req: IncomingMessage, res: ServerResponse): boolean {
    if (req.method !== 'GET' && req.method !== 'HEAD') return false;
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const path = q === -1 ? url : url.slice(0, q);
    const isIndex = (path === '/' && wantsHtml(req)) || path === '/index.html';
    if (!isIndex && !path.startsWith('/assets/')) return false;
    req.resume();
    if (!built) {
      notBuilt(res);
      return true;
    }
    const a = assets.get(isIndex ? '/index.html' : path);
    if (!a) {
      const body = 'not found\n';
      res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8', 'content-length': Buffer.byteLength(body), 'cache-control': 'no-cache' });
      res.end(req.method === 'HEAD' ? undefined : body);
      return true;
    }
    send(req, res, a, isIndex ? PAGE_HEADERS : { 'x-content-type-options': 'nosniff' });
    return true;
  }

  return {
    available: built,
    handle,
    mount(server) {
      const front = server.listeners('request') as ((req: IncomingMessage, res: ServerResponse) => void)[];
      server.removeAllListeners('request');
      server.on('request', (req: IncomingMessage, res: ServerResponse) => {
        if (handle(req, res)) return;
        for (const l of front) l.call(server, req, res);
      });
    },
  };
}
