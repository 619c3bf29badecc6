// Static files, two ways, with one MIME table:
// - serveFolder: a folder read per request (the generated docs): the path is decoded, resolved inside the folder and
//   checked again after symlinks (realpath), so nothing outside it is served; a directory redirects to its slash
//   form and serves its index.html.
// - preloadFolder + sendAsset: a small built folder read once at start into a table keyed by URL path (the dashboard):
//   a request path is only ever looked up, never joined onto a directory. Each file carries an ETag (304 on
//   If-None-Match) and its build-time .br/.gz copies, chosen by Accept-Encoding (br, then gzip, then identity) with
//   `Vary: Accept-Encoding`.
import { createHash } from 'node:crypto';
import { createReadStream, existsSync, readdirSync, readFileSync } from 'node:fs';
import { realpath, stat } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { extname, join, relative, resolve, sep } from 'node:path';
import { plainText, redirect } from './router.js';

const MIME: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.txt': 'text/plain; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
};

/** Content-Type of a file by its extension. */
export function mimeType(file: string): string {
  return MIME[extname(file).toLowerCase()] ?? 'application/octet-stream';
}

export interface FolderOptions {
  /** URL path the folder is served under, without a trailing slash (e.g. `/docs`). */
  mount: string;
  /** Where the mount's root redirects (302) when the folder has no index.html of its own. */
  rootFallback?: string;
}

/** Serves `root`: the returned function answers a GET/HEAD for `rel`, the URL path below `mount + '/'`. */
export function serveFolder(
  root: string,
  opts: FolderOptions,
): (res: ServerResponse, rid: string, rel: string) => void {
  const base = resolve(root);
  const notFound = (res: ServerResponse, rid: string) => plainText(res, rid, 404, 'not found\n');

  async function serve(res: ServerResponse, rid: string, rel: string): Promise<void> {
    let decoded: string;
    try {
      decoded = decodeURIComponent(rel);
    } catch {
      return plainText(res, rid, 400, 'bad path\n');
    }
    if (decoded.includes('\0')) return plainText(res, rid, 400, 'bad path\n');
    let file = resolve(base, `.${sep}${decoded}`);
    if (file !== base && !file.startsWith(base + sep)) return notFound(res, rid);
    try {
      let st = await stat(file);
      if (st.isDirectory()) {
        if (rel !== '' && !rel.endsWith('/')) return redirect(res, rid, 301, `${opts.mount}/${rel}/`);
        file = resolve(file, 'index.html');
        try {
          st = await stat(file);
        } catch {
          if (rel === '' && opts.rootFallback !== undefined) return redirect(res, rid, 302, opts.rootFallback);
          throw new Error('no index');
        }
      }
      // Symlinks must not lead out of the folder either.
      const real = await realpath(file);
      const realRoot = await realpath(base);
      if (!real.startsWith(realRoot + sep) || !st.isFile()) return notFound(res, rid);
      res.writeHead(200, {
        'content-type': mimeType(file),
        'content-length': st.size,
        'cache-control': 'no-cache',
        'x-content-type-options': 'nosniff',
        'x-request-id': rid,
      });
      if (res.req?.method === 'HEAD') {
        res.end();
        return;
      }
      createReadStream(real)
        .on('error', () => res.destroy())
        .pipe(res);
    } catch {
      notFound(res, rid);
    }
  }

  return (res, rid, rel) => {
    serve(res, rid, rel).catch(() => plainText(res, rid, 500, 'error\n'));
  };
}

/** A file read into memory, with its compressed copies. */
export interface Asset {
  type: string;
  cache: string;
  etag: string;
  identity: Buffer;
  br?: Buffer;
  gzip?: Buffer;
}

/** Every file under `dir` (dot files and .br/.gz copies aside) by URL path (`/index.html`, `/assets/x.js`). */
export function preloadFolder(dir: string, cacheControl: (urlPath: string) => string): Map<string, Asset> {
  const out = new Map<string, Asset>();
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.isFile() && !e.name.startsWith('.') && !e.name.endsWith('.br') && !e.name.endsWith('.gz')) {
        const url = `/${relative(dir, p).split(sep).join('/')}`;
        const identity = readFileSync(p);
        out.set(url, {
          type: mimeType(e.name),
          cache: cacheControl(url),
          etag: `"${createHash('sha256').update(identity).digest('base64url').slice(0, 27)}"`,
          identity,
          br: existsSync(`${p}.br`) ? readFileSync(`${p}.br`) : undefined,
          gzip: existsSync(`${p}.gz`) ? readFileSync(`${p}.gz`) : undefined,
        });
      }
    }
  };
  walk(dir);
  return out;
}

/** Whether an Accept-Encoding header takes a coding (listed, or `*`, with a q-value above 0). */
function accepts(header: string, coding: string): boolean {
  for (const part of header.split(',')) {
    const [name, ...params] = part.trim().toLowerCase().split(';');
    if (name !== coding && name !== '*') continue;
    const q = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    return q === undefined || Number(q.slice(2)) > 0;
  }
  return false;
}

/** Answers a GET/HEAD with a preloaded asset: 304 when the client's ETag matches, else the best encoding. */
export function sendAsset(
  req: IncomingMessage,
  res: ServerResponse,
  a: Asset,
  extra: Readonly<Record<string, string>>,
): void {
  const headers: Record<string, string> = {
    'content-type': a.type,
    'cache-control': a.cache,
    etag: a.etag,
    vary: 'Accept-Encoding',
    ...extra,
  };
  const inm = req.headers['if-none-match'];
  if (inm?.split(',').some((t) => t.trim().replace(/^W\//, '') === a.etag)) {
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
