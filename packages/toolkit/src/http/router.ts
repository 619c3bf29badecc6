// A small HTTP route table: method(s), a path pattern, optionally a host; first match in table order wins.
//
// Patterns (a capture, at most one, is always the last segment — all a JSON-RPC gateway needs; the handler gets it as
// a string argument, so matching allocates no params object):
//   /healthz            the path exactly
//   /eth/:key           one more non-empty segment, captured
//   /eth/:key?          the same, or nothing (`/eth`, `/eth/` → capture undefined)
//   /docs/*             anything after `/docs/` (empty, or with slashes), captured
// `trailingSlash: true` ignores one trailing slash of the request path. Host names compare lower-case, without port.
// No route for the path with this method: 405 with the methods that have one (Allow); no route at all: 404.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { skipBody } from './body.js';

export { skipBody, closeAfterAnswer } from './body.js';

/** A route's handler: the request id and arrival time (performance.now()) come from the server. */
export type RouteHandler = (
  req: IncomingMessage,
  res: ServerResponse,
  rid: string,
  t0: number,
  capture: string | undefined,
) => void;

export interface RouteOptions {
  host?: string;
  trailingSlash?: boolean;
}

enum Capture {
  None,
  Segment,
  OptionalSegment,
  Rest,
}

interface Route {
  methods: readonly string[] | '*';
  host: string | undefined;
  /** The literal part before the capture (the whole pattern without one). */
  lit: string;
  /** `lit` + '/', matched too with trailingSlash (kept so a request allocates no string to compare). */
  litSlash: string | undefined;
  capture: Capture;
  slash: boolean;
  handler: RouteHandler;
}

/** The capture of `path` for `r`: a string, undefined (matched without a value), or null (no match). */
function match(r: Route, path: string): string | undefined | null {
  const lit = r.lit;
  if (r.capture === Capture.None) return path === lit || path === r.litSlash ? undefined : null;
  if (r.capture === Capture.OptionalSegment && path === lit) return undefined;
  if (path.length <= lit.length || path.charCodeAt(lit.length) !== 47 /* / */ || !path.startsWith(lit)) return null;
  let rest = path.slice(lit.length + 1);
  if (r.capture === Capture.Rest) return rest;
  if (r.slash && rest.endsWith('/')) rest = rest.slice(0, -1);
  if (rest.includes('/')) return null;
  if (rest === '') return r.capture === Capture.OptionalSegment ? undefined : null;
  return rest;
}

/** A path pattern's matcher (the same patterns as Router.add): the capture, undefined (matched without a value), or
 *  null (no match). For other tables over the same paths (e.g. WebSocket upgrades, packages/toolkit/src/ws/router.ts). */
export function pathMatcher(pattern: string, trailingSlash = false): (path: string) => string | undefined | null {
  const last = pattern.lastIndexOf('/');
  const tail = pattern.slice(last + 1);
  const capture =
    tail === '*'
      ? Capture.Rest
      : tail.startsWith(':')
        ? tail.endsWith('?')
          ? Capture.OptionalSegment
          : Capture.Segment
        : Capture.None;
  const lit = capture === Capture.None ? pattern : pattern.slice(0, last);
  const r: Route = {
    methods: '*',
    host: undefined,
    lit,
    litSlash: trailingSlash && capture === Capture.None ? `${lit}/` : undefined,
    capture,
    slash: trailingSlash,
    handler: () => undefined,
  };
  return (path) => match(r, path);
}

/** The Host header's name: lower-case, without the port (IPv6 literals keep their brackets). */
export function hostName(req: IncomingMessage): string | undefined {
  const h = req.headers.host;
  if (h === undefined) return undefined;
  if (h.charCodeAt(0) === 91 /* [ */) {
    const end = h.indexOf(']');
    return (end === -1 ? h : h.slice(0, end + 1)).toLowerCase();
  }
  const colon = h.indexOf(':');
  return (colon === -1 ? h : h.slice(0, colon)).toLowerCase();
}

export class Router {
  private readonly routes: Route[] = [];
  private readonly byMethod = new Map<string, Route[]>();
  private hosts = false;

  /** Adds a route after those already there. `methods` '*' = any method (the handler answers each). */
  add(methods: string | readonly string[], pattern: string, handler: RouteHandler, opts: RouteOptions = {}): this {
    const last = pattern.lastIndexOf('/');
    const tail = pattern.slice(last + 1);
    const capture =
      tail === '*'
        ? Capture.Rest
        : tail.startsWith(':')
          ? tail.endsWith('?')
            ? Capture.OptionalSegment
            : Capture.Segment
          : Capture.None;
    const lit = capture === Capture.None ? pattern : pattern.slice(0, last);
    this.routes.push({
      methods: methods === '*' ? '*' : typeof methods === 'string' ? [methods] : methods,
      host: opts.host?.toLowerCase(),
      lit,
      litSlash: opts.trailingSlash && capture === Capture.None ? `${lit}/` : undefined,
      capture,
      slash: opts.trailingSlash ?? false,
      handler,
    });
    if (opts.host !== undefined) this.hosts = true;
    this.byMethod.clear();
    return this;
  }

  /** Runs the matching route's handler; 405/404 (plain text) when there is none. */
  handle(req: IncomingMessage, res: ServerResponse, rid: string, t0: number): void {
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const path = q === -1 ? url : url.slice(0, q);
    const method = req.method ?? 'GET';
    const host = this.hosts ? (hostName(req) ?? '') : undefined;
    for (const r of this.forMethod(method)) {
      if (r.host !== undefined && r.host !== host) continue;
      const c = match(r, path);
      if (c !== null) return r.handler(req, res, rid, t0, c);
    }
    skipBody(req, res);
    const allow = new Set<string>();
    for (const r of this.routes) {
      if (r.methods === '*' || (r.host !== undefined && r.host !== host) || match(r, path) === null) continue;
      for (const m of r.methods) allow.add(m);
    }
    if (allow.size === 0) return plainText(res, rid, 404, 'not found\n');
    plainText(res, rid, 405, 'method not allowed\n', ['allow', [...allow].join(', ')]);
  }

  /** The routes that take a method, in table order (cached: request methods are the parser's known few). */
  private forMethod(method: string): Route[] {
    let list = this.byMethod.get(method);
    if (list === undefined) {
      list = this.routes.filter((r) => r.methods === '*' || r.methods.includes(method));
      this.byMethod.set(method, list);
    }
    return list;
  }
}

/** A small plain-text answer with the request id (a no-op once headers went out). */
export function plainText(
  res: ServerResponse,
  rid: string,
  status: number,
  body: string,
  extra: readonly string[] = [],
  type = 'text/plain; charset=utf-8',
): void {
  if (res.headersSent) return;
  res.writeHead(status, [
    'content-type',
    type,
    'content-length',
    String(Buffer.byteLength(body)),
    'x-request-id',
    rid,
    ...extra,
  ]);
  res.end(res.req?.method === 'HEAD' ? undefined : body);
}

/** A redirect with the request id. */
export function redirect(res: ServerResponse, rid: string, status: 301 | 302, location: string): void {
  res.writeHead(status, { location, 'x-request-id': rid });
  res.end();
}
