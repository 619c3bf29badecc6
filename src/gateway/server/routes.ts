// The server's route table (packages/toolkit/src/http/router.ts), first match wins:
//   GET/HEAD /index.html, /assets/*     the dashboard (./web-route.ts)
//   GET/HEAD /                          the dashboard for browsers (Accept: text/html), else a plain-text landing
//   GET/HEAD /signup                    302 to the dashboard's sign-up page (`/signup?invite=<token>`: invite links)
//   any      /metrics, /metrics/*       Prometheus (./metrics-route.ts)
//   …                                   extension routes, then the account API at /api (src/gateway/accounts/http.ts)
//   GET/HEAD /healthz                   liveness: 200 while the process serves (a probe that restarts on failure must
//                                       not restart a healthy replica because a node is down)
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
  /** Upstream state for /readyz: ok when at least one network can be served. */
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

const LIVE = `${JSON.stringify({ status: 'ok' })}\n`;

export function buildRoutes(opts: RoutesOptions): Router {
  const router = new Router();
  const GET = ['GET', 'HEAD'];
  const landing = [
    'rpcgate — JSON-RPC access to EVM nodes',
    '',
    'Dashboard: open / in a browser (sign up, then create an app or an API key); account API: POST /api',
    '',
    'Node API (POST, JSON-RPC 2.0, Content-Type: application/json):',
    ...opts.networks.flatMap((n) => [
      `  /${n}/v2/<API_KEY>   (access point A)`,
      `  /${n}/<API_KEY>      (access point B)`,
    ]),
    ...Object.entries(opts.hostMap).map(([h, n]) => `  http://${h}/v2/<API_KEY> and http://${h}/<API_KEY> → ${n}`),
    '',
    'API reference: /docs/',
    'Liveness: /healthz, readiness (upstreams, store, Redis): /readyz',
    '',
  ].join('\n');
  const docs = serveFolder(opts.docsDir, { mount: '/docs', rootFallback: '/docs/api/' });

  router
    .add(GET, '/index.html', (req, res, rid) => opts.web.serve(req, res, rid, '/index.html'))
    .add(GET, '/assets/*', (req, res, rid, _t0, rest) => opts.web.serve(req, res, rid, `/assets/${rest}`))
    .add(GET, '/', (req, res, rid) => {
      if (wantsHtml(req)) return opts.web.serve(req, res, rid, '/');
      skipBody(req, res);
      plainText(res, rid, 200, landing);
    })
    // Invite links (admin_createInvite) read as a path; the dashboard routes by the hash: `/#/signup/<token>`.
    .add(GET, '/signup', (req, res, rid) => {
      skipBody(req, res);
      const invite = new URL(req.url ?? '/', 'http://x').searchParams.get('invite');
      redirect(res, rid, 302, invite ? `/#/signup/${encodeURIComponent(invite)}` : '/#/signup');
    })
    .add('*', '/metrics', opts.metrics)
    .add('*', '/metrics/*', opts.metrics);
  for (const mount of opts.mounts ?? []) mount(router);
  router
    .add(GET, '/healthz', (req, res, rid) => {
      skipBody(req, res);
      plainText(res, rid, 200, LIVE, [], 'application/json');
    })
    .add(GET, '/readyz', (req, res, rid) => {
      req.resume();
      // Ready: the store and Redis answer, and at least one network has a healthy upstream (a network whose nodes
      // are all down is reported, not fatal: the other networks, the account API and the dashboard still serve).
      const h = opts.health();
      const answer = (ok: boolean, detail: Record<string, unknown>) =>
        plainText(
          res,
          rid,
          ok ? 200 : 503,
          `${JSON.stringify({ status: ok ? 'ready' : 'not ready', ...detail, ...h.detail })}\n`,
          [],
          'application/json',
        );
      if (opts.ready === undefined) return answer(h.ok, {});
      opts.ready().then(
        (r) => answer(r.ok && h.ok, r.detail),
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
