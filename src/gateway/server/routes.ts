// The server's route table (packages/toolkit/src/http/router.ts), first match wins:
//   GET/HEAD /index.html, /assets/*     the dashboard (./web-route.ts)
//   GET/HEAD /                          the dashboard for browsers (Accept: text/html), else a plain-text landing
//   any      /metrics, /metrics/*       Prometheus (./metrics-route.ts)
//   …                                   extension routes, then the account API at /api (src/gateway/accounts/http.ts)
//   GET/HEAD /healthz                   upstream health (503 when a network has no healthy upstream)
//   GET/HEAD /readyz                    readiness: the store and the limits backend answer (503 when one does not)
//   GET/HEAD /docs, /docs/*             the generated docs folder (packages/toolkit/src/http/static.ts)
//   …                                   the node API (./node-route.ts), ending with catch-alls for POST, GET and OPTIONS
// Anything else: the router's 405 (with Allow) or 404.
import { plainText, redirect, Router, skipBody, type RouteHandler } from '@rpcgate/toolkit/http';
import { serveFolder } from '@rpcgate/toolkit/http';
import { addNodeRoutes, type NodeRouteOptions } from './node-route.js';
import { wantsHtml, type WebRoute } from './web-route.js';

/** Adds routes to the table (the account API, extensions). */
export type Mount = (router: Router) => void;

export interface RoutesOptions extends NodeRouteOptions {
  docsDir: string;
  /** State for /healthz. */
  health: () => { ok: boolean; detail: Record<string, unknown> };
  /** State for /readyz (asks the store and Redis, bounded by their timeouts). */
  ready?: () => Promise<{ ok: boolean; detail: Record<string, unknown> }>;
  /** GET /metrics (any method reaches it: it answers 405 itself). */
  metrics: RouteHandler;
  /** The dashboard. */
  web: WebRoute;
  /** Routes between /metrics and the node API, in order (e.g. the account API at /api). */
  mounts?: readonly Mount[];
}

export function buildRoutes(opts: RoutesOptions): Router {
  const router = new Router();
  const GET = ['GET', 'HEAD'];
  const landing = [
    'rpcgate — JSON-RPC access to EVM nodes',
    '',
    'Node API (POST, JSON-RPC 2.0, Content-Type: application/json):',
    ...opts.networks.flatMap((n) => [`  /${n}/v2/<API_KEY>   (access point A)`, `  /${n}/<API_KEY>      (access point B)`]),
    ...Object.entries(opts.hostMap).map(([h, n]) => `  http://${h}/v2/<API_KEY> and http://${h}/<API_KEY> → ${n}`),
    '',
    'API reference: /docs/',
    'Health: /healthz, readiness: /readyz',
    '',
  ].join('\n');
  const docs = serveFolder(opts.docsDir, { mount: '/docs', rootFallback: '/docs/api/' });

  router
    .add(GET, '/index.html', (req, res, rid) => opts.web.serve(req, res, rid, '/index.html'))
    .add(GET, '/assets/*', (req, res, rid, _t0, rest) => opts.web.serve(req, res, rid, '/assets/' + rest))
    .add(GET, '/', (req, res, rid) => {
      if (wantsHtml(req)) return opts.web.serve(req, res, rid, '/');
      skipBody(req, res);
      plainText(res, rid, 200, landing);
    })
    .add('*', '/metrics', opts.metrics)
    .add('*', '/metrics/*', opts.metrics);
  for (const mount of opts.mounts ?? []) mount(router);
  router
    .add(GET, '/healthz', (req, res, rid) => {
      skipBody(req, res);
      const h = opts.health();
      plainText(res, rid, h.ok ? 200 : 503, JSON.stringify({ status: h.ok ? 'ok' : 'degraded', ...h.detail }) + '\n', [], 'application/json');
    })
    .add(GET, '/readyz', (req, res, rid) => {
      req.resume();
      const answer = (ok: boolean, detail: Record<string, unknown>) =>
        plainText(res, rid, ok ? 200 : 503, JSON.stringify({ status: ok ? 'ready' : 'not ready', ...detail }) + '\n', [], 'application/json');
      if (opts.ready === undefined) return answer(true, {});
      opts.ready().then(
        (r) => answer(r.ok, r.detail),
        (e: unknown) => answer(false, { error: (e as Error).message }),
      );
    })
    .add(GET, '/docs', (req, res, rid) => {
      skipBody(req, res);
      redirect(res, rid, 301, '/docs/');
    })
    .add(GET, '/docs/*', (req, res, rid, _t0, rel = '') => {
      skipBody(req, res);
      docs(res, rid, rel);
    });
  addNodeRoutes(router, opts);
  return router;
}
