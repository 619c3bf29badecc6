// The built dashboard (src/gateway/web → dist/web, `npm run build:web`) as ordinary routes: `GET /` for browsers,
// `/index.html` and `/assets/*` (./routes.ts puts them first).
// - index.html: `Cache-Control: no-cache` with an ETag (revalidated, so a new build shows at once);
//   hashed assets: `public, max-age=31536000, immutable`.
// - Compression is done at build time (.br and .gz beside each file); files are read once at start and served from
//   memory (packages/toolkit/src/http/static.ts: preloadFolder, sendAsset).
// - `/` goes to the dashboard only when the client accepts HTML (a browser), so `curl /` still gets the server's
//   plain-text landing (the dashboard routes are hash routes: `/#/apps`).
import { existsSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { join, resolve } from 'node:path';
import type { Logger } from 'pino';
import { plainText, skipBody } from '@rpcgate/toolkit/http';
import { preloadFolder, sendAsset, type Asset } from '@rpcgate/toolkit/http';
import { PATHS } from '../paths.js';

/** Where `npm run build:web` writes the dashboard. */
export const DEFAULT_WEB_DIR = PATHS.webDist;

const IMMUTABLE = 'public, max-age=31536000, immutable';
// The dashboard's page may not be framed (clickjacking) and loads nothing from elsewhere.
const PAGE_HEADERS = {
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'same-origin',
  'content-security-policy':
    "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
};

export interface WebRoute {
  /** True when the dashboard is built and served. */
  readonly available: boolean;
  /** Answers a GET/HEAD of `/index.html` (`/` for browsers) or `/assets/…`. */
  serve(req: IncomingMessage, res: ServerResponse, rid: string, path: string): void;
}

export function createWebRoute(opts: { dir?: string; logger?: Logger } = {}): WebRoute {
  const dir = resolve(opts.dir ?? DEFAULT_WEB_DIR);
  const built = existsSync(join(dir, 'index.html'));
  const assets = built
    ? preloadFolder(dir, (url) => (url.startsWith('/assets/') ? IMMUTABLE : 'no-cache'))
    : new Map<string, Asset>();
  if (!built)
    opts.logger?.warn({ dir }, 'the dashboard is not built: run `npm run build:web` (npm start and npm test build it)');

  return {
    available: built,
    serve(req, res, rid, path) {
      skipBody(req, res);
      if (!built) {
        return plainText(
          res,
          rid,
          503,
          'The rpcgate dashboard is not built.\nRun `npm run build:web` (npm start and npm test build it), then restart.\nAPI reference: /docs/\n',
          ['cache-control', 'no-store'],
        );
      }
      const isIndex = path === '/' || path === '/index.html';
      const a = assets.get(isIndex ? '/index.html' : path);
      if (a === undefined) return plainText(res, rid, 404, 'not found\n', ['cache-control', 'no-cache']);
      sendAsset(
        req,
        res,
        a,
        isIndex
          ? { ...PAGE_HEADERS, 'x-request-id': rid }
          : { 'x-content-type-options': 'nosniff', 'x-request-id': rid },
      );
    },
  };
}

/** Whether a request for `/` should get the dashboard (a browser) rather than the plain-text landing. */
export const wantsHtml = (req: IncomingMessage): boolean =>
  (req.headers.accept ?? '').toLowerCase().includes('text/html');
