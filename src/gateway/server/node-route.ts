// The node API's routes: JSON-RPC 2.0 over POST through the shared transport (packages/toolkit/src/http/jsonrpc.ts), with the
// access pipeline (src/gateway/access/pipeline.ts) as its hooks.
//
//   POST /{network}/v2/{key}   access point A        POST /{network}/{key}   access point B
//   On a host name mapped to a network (config.hostMap): POST /v2/{key} (A) and POST /{key} (B).
//   One trailing slash is ignored. GET/HEAD on those paths: 405. OPTIONS on any path: CORS preflight. Any origin may
//   call the node API (browser dApps); every answer exposes x-request-id and the rate-limit headers to scripts.
//   POST elsewhere: 404 (-32600; an unknown network's answer names the known ones).
//
// Access, in this order: key → principal → network and URL shape (401/403, before the body) → Content-Type (415) →
// origin and IP allowlists (403) → JWT (401; verified while the body is read) → engine, whose admission hook
// (./admission.ts) applies the per-call allowlists (method, address) and the limits. Refusals of a known key carry
// its x-ratelimit-* headers (nothing is counted for them).
// Content-Type: like Alchemy and Infura, a missing Content-Type is accepted, and so are application/json (any
// parameters, e.g. charset=utf-8), application/json-rpc, application/jsonrequest, */*+json and text/plain (what a
// browser's "simple" cross-origin request sends without a preflight). Anything else is 415 with -32600.
//
// Metering (./call-observer.ts): requests refused before the engine are metered as one call each (method `other`;
// network `other` when the path names no configured network); everything that reaches the engine is metered per call
// by the engine's observer. `ctx.startedAt` (taken when the request arrives) is where every call's latency starts.
// Request logs (hot path: no access line per request at info — measured in bench/README.md): 5xx answers and
// requests slower than `slowRequestMs` at warn, every node API request at debug; each line carries the request id
// (`rid`, the x-request-id answered), the network, the principal's public id, the HTTP status and the time taken;
// the URL goes through the logger's redacting serializer (src/gateway/metering/redact.ts), so keys never reach a log line.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import type { AccessContext, KeyStore, Principal } from '../access/index.js';
import { Refusal, anyOrigin, createJsonRpcHttp } from '@rpcgate/toolkit/http';
import { plainText, skipBody, type Router } from '@rpcgate/toolkit/http';
import type { Engine } from '@rpcgate/toolkit/engine';
import { type RpcError, routeNotFound } from '@rpcgate/toolkit/errors';
import type { CallMeter } from './call-observer.js';
import type { Tracer } from '@opentelemetry/api';
import { endRequestSpan, principalAttributes, startRequestSpan, stepSpan, tracing } from '../telemetry/index.js';
import { admitKey, nodeRouteTable, requestChecks, type NodeRoute } from './route-table.js';

export interface NodeRouteOptions {
  engine: Engine<AccessContext>;
  keys: KeyStore;
  networks: readonly string[];
  hostMap: Readonly<Record<string, string>>;
  maxBodyBytes: number;
  logger: Logger;
  /** Reverse-proxy hops whose X-Forwarded-For is trusted for the client IP (0 = the socket peer). */
  trustProxy?: number;
  /** Rate-limit headers of a principal, for refusals before the engine (route, origin, IP, JWT). */
  limitHeaders?: (p: Principal) => Promise<Record<string, string> | undefined> | undefined;
  /** Metering of calls refused before the engine (the engine meters the rest through its observer). */
  meter?: CallMeter;
  /** Requests slower than this (ms, request taken → response written) are logged at warn. Default 2000. */
  slowRequestMs?: number;
}

/** Network label of requests to a network that is not configured (bounded label cardinality). */
const OTHER_NETWORK = 'other';
const EXPOSED = 'x-request-id, retry-after, x-ratelimit-limit, x-ratelimit-remaining, x-ratelimit-reset';
const NOT_FOUND = routeNotFound();
const NOT_A_ROUTE = routeNotFound('not found: POST to /{network}/v2/{key} or /{network}/{key}');

export function acceptableContentType(ct: string | undefined): boolean {
  if (ct === undefined || ct === '') return true;
  const semi = ct.indexOf(';');
  const base = (semi === -1 ? ct : ct.slice(0, semi)).trim().toLowerCase();
  return (
    base === 'application/json' ||
    base === 'application/json-rpc' ||
    base === 'application/jsonrequest' ||
    base === 'text/plain' ||
    (base.startsWith('application/') && base.endsWith('+json'))
  );
}

/** Adds the node API's routes (after the server's own: they end with catch-alls for POST, GET/HEAD and OPTIONS). */
export function addNodeRoutes(router: Router, opts: NodeRouteOptions): void {
  const { keys, logger, meter } = opts;
  const slowMs = opts.slowRequestMs ?? 2000;
  const trustProxy = opts.trustProxy ?? 0;
  const networks = new Set(opts.networks);
  const known = [...networks].join(', ');

  /**
   * The request log (the hot path, so no line per request at info): 5xx answers and slow requests at warn, every
   * request at debug (one line: rid, network, HTTP status, ms). The key never appears: the URL goes through the
   * logger's redacting `url` serializer, and the principal is logged by its public id.
   */
  function logRequest(
    res: ServerResponse,
    status: number,
    ctx: AccessContext | undefined,
    rid: string,
    t0: number,
  ): void {
    const ms = performance.now() - t0;
    const bad = status >= 500;
    if (!bad && ms < slowMs && logger.levelVal > 20 /* debug */) return;
    const line = {
      rid,
      network: ctx?.network ?? OTHER_NETWORK,
      principal: ctx?.principal?.id,
      status,
      ms: Math.round(ms * 1000) / 1000,
      url: res.req?.url,
    };
    if (bad) logger.warn(line, 'node API request failed');
    else if (ms >= slowMs) logger.warn(line, 'slow node API request');
    else logger.debug(line, 'node API request');
  }

  /** admit with tracing on: the request's span (continuing the client's traceparent) and the access step under it. */
  function tracedAdmit(
    tracer: Tracer,
    req: IncomingMessage,
    rid: string,
    t0: number,
    route: NodeRoute,
    key: string | undefined,
  ): AccessContext | Refusal<AccessContext> {
    const span = startRequestSpan(tracer, req.headers, t0, {
      'rpcgate.network': route.network,
      'rpcgate.request_id': rid,
      'rpcgate.access_point': route.ap,
    });
    const a0 = performance.now();
    // The untraced path's admission (route-table.ts), then what the trace records of it.
    const r = admitKey(keys, req, rid, t0, route, key, trustProxy);
    const denied = r instanceof Refusal;
    const ctx = denied ? r.ctx! : r;
    const who = principalAttributes(ctx.principal);
    span.setAttributes(who);
    stepSpan(tracer, 'rpcgate.access', span, a0, {
      ...who,
      'rpcgate.access.allowed': !denied,
      ...(denied ? { 'rpc.jsonrpc.error_code': r.error.code } : {}),
    });
    ctx.span = span;
    return r;
  }

  const rpc = createJsonRpcHttp<AccessContext, NodeRoute>({
    engine: opts.engine,
    maxBodyBytes: opts.maxBodyBytes,
    acceptContentType: acceptableContentType,
    cors: anyOrigin({ expose: EXPOSED, methods: 'POST, GET, OPTIONS', maxAgeSec: 86400 }),
    admit(req, rid, t0, route, key) {
      const tracer = tracing.tracer;
      return tracer === undefined
        ? admitKey(keys, req, rid, t0, route, key, trustProxy)
        : tracedAdmit(tracer, req, rid, t0, route, key);
    },
    check: (req, ctx) => requestChecks(ctx, req.headers),
    refused(ctx, err, t0) {
      ctx?.span?.setAttribute('rpc.jsonrpc.error_code', err.code);
      meter?.refused(ctx?.network ?? OTHER_NETWORK, ctx?.principal, err, t0, ctx?.requestId, ctx?.ip);
      const p = ctx?.principal;
      return p === undefined ? undefined : opts.limitHeaders?.(p);
    },
    answered(res, status, ctx, rid, t0) {
      const span = ctx?.span;
      if (span !== undefined) endRequestSpan(span, status);
      logRequest(res, status, ctx, rid, t0);
    },
    onError: (err, rid, what) => logger.error({ err, rid }, `${what} failed`),
  });

  /** A node API path that names no route: one refused call on network `other`; the bare root is not metered. */
  function notFound(
    req: IncomingMessage,
    res: ServerResponse,
    rid: string,
    t0: number,
    err: RpcError | undefined,
  ): void {
    if (err === undefined) return rpc.sendError(req, res, rid, NOT_A_ROUTE);
    meter?.refused(OTHER_NETWORK, undefined, err, t0);
    rpc.sendError(req, res, rid, err);
    logRequest(res, err.httpStatus, undefined, rid, t0);
  }

  const wrongMethod = (req: IncomingMessage, res: ServerResponse, rid: string) => {
    skipBody(req, res);
    plainText(res, rid, 405, 'use POST with a JSON-RPC 2.0 body\n', [
      'allow',
      'POST, OPTIONS',
      ...(rpc.corsHeaders(req) ?? []),
    ]);
  };
  const GET = ['GET', 'HEAD'];
  const slash = { trailingSlash: true };

  for (const { host, routes } of nodeRouteTable(networks, opts.hostMap)) {
    const on = { host, ...slash };
    for (const { path, route } of routes)
      router
        .add('POST', path, (req, res, rid, t0, key) => rpc.serve(req, res, rid, t0, route, key), on)
        .add(GET, path, wrongMethod, on);
    // A mapped host serves only its own paths (not the network-style ones).
    if (host !== undefined)
      router.add('POST', '/*', (req, res, rid, t0) => notFound(req, res, rid, t0, NOT_FOUND), { host });
  }
  router
    .add('POST', '/*', (req, res, rid, t0, rest = '') => {
      // The first segment (one trailing slash ignored): a configured network with a wrong shape, or no network at all.
      const p = rest.endsWith('/') ? rest.slice(0, -1) : rest;
      const slashAt = p.indexOf('/');
      const first = slashAt === -1 ? p : p.slice(0, slashAt);
      if (first === '') return notFound(req, res, rid, t0, undefined);
      notFound(
        req,
        res,
        rid,
        t0,
        networks.has(first) ? NOT_FOUND : routeNotFound(`unknown network "${first.slice(0, 64)}" (known: ${known})`),
      );
    })
    .add(GET, '/*', (req, res, rid) => {
      skipBody(req, res);
      plainText(res, rid, 404, 'not found\n');
    })
    .add('OPTIONS', '/*', (req, res, rid) => rpc.preflight(req, res, rid));
}
