// The HTTP front: routes, body limit, content type, CORS, request ids, docs, health — then the JSON-RPC engine.
//
// Routes (node API):
//   POST /{network}/v2/{key}   access point A        POST /{network}/{key}   access point B
//   On a host name mapped to a network (config.hostMap): POST /v2/{key} (A) and POST /{key} (B).
//   OPTIONS on those paths: CORS preflight. Any origin may call the node API (browser dApps).
// Other routes: GET / (landing text), GET /docs/… (static docs folder), GET /healthz, and any extra route given in
// `routes` (e.g. the account API at /api), matched by path prefix before everything else.
//
// Access on the node API, in this order (src/gateway/access):
//   route → key → principal (in-memory index; 401 unknown/missing) → network and URL shape (403) → Content-Type (415)
//   → origin and IP allowlists (403) → JWT (401; verified while the body is read) → engine, whose admission hook
//   (src/gateway/server/admission.ts) applies the per-call allowlists (method, address) and the limits.
//   Refusals of a known key carry its x-ratelimit-* headers (nothing is counted for them).
//
// Metering (./metering.ts): requests refused here are metered as one call each (method `other`); everything that
// reaches the engine is metered per call by the engine's observer. `ctx.startedAt` (taken when the request arrives)
// is where every call's latency starts.
// Request logs (hot path: no access line per request at info — measured in bench/README.md): 5xx answers and
// requests slower than `slowRequestMs` at warn, every node API request at debug; each line carries the request id
// (`rid`, the x-request-id answered), the network, the principal's public id, the HTTP status and the time taken;
// the URL goes through the logger's redacting serializer (src/gateway/metering/redact.ts), so keys never reach a log line.
// Content-Type: like Alchemy and Infura, a missing Content-Type is accepted, and so are application/json (any
// parameters, e.g. charset=utf-8), application/json-rpc, application/jsonrequest, */*+json and text/plain (what a
// browser's "simple" cross-origin request sends without a preflight). Anything else is 415 with -32600.
// Body: Content-Length over maxBodyBytes → 413 before reading; a streamed body crossing the limit → 413 at that
// moment (the rest is drained, up to a bound, so the client can read the answer; beyond the bound the socket closes).
import { createReadStream } from 'node:fs';
import { realpath, stat } from 'node:fs/promises';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { createServer } from 'node:http';
import { randomBytes } from 'node:crypto';
import { extname, resolve, sep } from 'node:path';
import type { Logger } from 'pino';
import { checkRequest, clientIp } from '../access/request.js';
import { routeRefusal, type AccessPoint, type KeyStore, type Principal } from '../access/keys.js';
import { errorResponse, type CallContext, type Engine, type EngineResponse } from '../../toolkit/rpc/engine.js';
import { RpcError, internalError, payloadTooLarge } from '../../toolkit/rpc/errors.js';
import { unauthorized } from '../errors.js';
import type { CallMeter } from './metering.js';

/** An extra route (e.g. the account API): gets every request whose path is `prefix` or starts with `prefix/`. */
export interface HttpRoute {
  prefix: string;
  handle(req: IncomingMessage, res: ServerResponse, requestId: string): void;
}

export interface HttpOptions {
  engine: Engine;
  keys: KeyStore;
  networks: readonly string[];
  hostMap: Readonly<Record<string, string>>;
  maxBodyBytes: number;
  docsDir: string;
  logger: Logger;
  /** Extra state for /healthz. */
  health: () => { ok: boolean; detail: unknown };
  /** Reverse-proxy hops whose X-Forwarded-For is trusted for the client IP (0 = the socket peer). */
  trustProxy?: number;
  /** Rate-limit headers of a principal, for refusals before the engine (route, origin, IP, JWT). */
  limitHeaders?: (p: Principal) => Promise<Record<string, string> | undefined> | undefined;
  /** Extra routes, matched by path prefix before the node API (e.g. `/api`). */
  routes?: readonly HttpRoute[];
  /** Metering of node API calls refused before the engine (the engine meters the rest through its observer). */
  meter?: CallMeter;
  /** Node API requests slower than this (ms, request taken → response written) are logged at warn. Default 2000. */
  slowRequestMs?: number;
}

const ACAO = 'access-control-allow-origin';
const ACEH = 'access-control-expose-headers';
const EXPOSED = 'x-request-id, retry-after, x-ratelimit-limit, x-ratelimit-remaining, x-ratelimit-reset';
const CORS_BASE = { [ACAO]: '*', [ACEH]: EXPOSED };

/** Network label of node API requests to a network that is not configured (bounded label cardinality). */
const OTHER_NETWORK = 'other';
const NO_KEY = unauthorized('missing API key: put it in the URL path', { reason: 'key' });
const BAD_KEY = unauthorized('invalid API key', { reason: 'key' });

const MIME: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.txt': 'text/plain; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.woff2': 'font/woff2',
};

/** Request ids: a per-process random prefix and a counter (cheaper than a UUID per request, still unique). */
const ridPrefix = randomBytes(4).toString('hex');
let ridCounter = 0;
const RID_OK = /^[\w.:@-]{1,128}$/;
function requestId(req: IncomingMessage): string {
  const given = req.headers['x-request-id'];
  if (typeof given === 'string' && RID_OK.test(given)) return given;
  return ridPrefix + '-' + (++ridCounter).toString(36);
}

function acceptableContentType(ct: string | undefined): boolean {
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

function hostName(req: IncomingMessage): string | undefined {
  const h = req.headers.host;
  if (h === undefined) return undefined;
  if (h.charCodeAt(0) === 91 /* [ */) {
    const end = h.indexOf(']');
    return (end === -1 ? h : h.slice(0, end + 1)).toLowerCase();
  }
  const colon = h.indexOf(':');
  return (colon === -1 ? h : h.slice(0, colon)).toLowerCase();
}

/** A node API request's body-reading state, kept on the request object under kBody. */
class BodyState {
  chunks: Buffer[] = [];
  size = 0;
  over = false;
  constructor(
    readonly res: ServerResponse,
    readonly rid: string,
    readonly network: string,
    readonly principal: Principal,
    readonly ip: string | undefined,
    readonly checked: Promise<RpcError | undefined> | undefined,
    readonly startedAt: number,
  ) {}
}
const kBody = Symbol('rpcgate.body');
type StatefulRequest = IncomingMessage & { [kBody]?: BodyState };

interface Route {
  network: string;
  key: string | undefined;
  ap: AccessPoint;
}

export function createHttpServer(opts: HttpOptions): Server {
  const { engine, keys, maxBodyBytes, logger } = opts;
  const meter = opts.meter;
  const slowMs = opts.slowRequestMs ?? 2000;
  const trustProxy = opts.trustProxy ?? 0;
  const routes = opts.routes ?? [];
  const networks = new Set(opts.networks);
  const hostMap = new Map(Object.entries(opts.hostMap));
  const docsRoot = resolve(opts.docsDir);

  /** Node API route of a path, `null` = not a node API path, RpcError = a node API path that is wrong. */
  function route(req: IncomingMessage, path: string): Route | RpcError | null {
    // Segments without the leading slash; one trailing slash tolerated.
    let p = path.length > 1 && path.charCodeAt(path.length - 1) === 47 ? path.slice(1, -1) : path.slice(1);
    const mapped = hostMap.size === 0 ? undefined : hostMap.get(hostName(req) ?? '');
    let network: string;
    if (mapped !== undefined) network = mapped;
    else {
      const slash = p.indexOf('/');
      network = slash === -1 ? p : p.slice(0, slash);
      if (!networks.has(network)) return network === '' ? null : new RpcError(-32600, `unknown network "${network.slice(0, 64)}" (known: ${[...networks].join(', ')})`, undefined, 404);
      p = slash === -1 ? '' : p.slice(slash + 1);
    }
    if (p === 'v2' || p.startsWith('v2/')) {
      const key = p.slice(3);
      if (key.includes('/')) return new RpcError(-32600, 'not found', undefined, 404);
      return { network, key: key || undefined, ap: 'A' };
    }
    if (p.includes('/')) return new RpcError(-32600, 'not found', undefined, 404);
    return { network, key: p || undefined, ap: 'B' };
  }

  /**
   * The node API's request log (the hot path, so no line per request at info): 5xx answers and slow requests at warn,
   * every request at debug (one line: rid, network, HTTP status, ms). The key never appears: the URL goes through
   * the logger's redacting `url` serializer, and the principal is logged by its public id.
   */
  function logRequest(res: ServerResponse, rid: string, status: number, network: string, principal: Principal | undefined, t0: number): void {
    const ms = performance.now() - t0;
    const bad = status >= 500;
    if (!bad && ms < slowMs && logger.levelVal > 20 /* debug */) return;
    const line = { rid, network, principal: principal?.id, status, ms: Math.round(ms * 1000) / 1000, url: res.req?.url };
    if (bad) logger.warn(line, 'node API request failed');
    else if (ms >= slowMs) logger.warn(line, 'slow node API request');
    else logger.debug(line, 'node API request');
  }

  function send(res: ServerResponse, rid: string, r: EngineResponse, cors: boolean): void {
    if (res.headersSent || res.destroyed) return;
    // Flat [name, value, …] header list: no per-response object building on the hot path.
    const h: string[] = cors ? [ACAO, '*', ACEH, EXPOSED, 'x-request-id', rid] : ['x-request-id', rid];
    if (r.headers !== undefined) for (const k in r.headers) h.push(k, r.headers[k]);
    if (r.body === undefined) {
      res.writeHead(r.status === 200 ? 204 : r.status, h);
      res.end();
      return;
    }
    h.push('content-type', 'application/json', 'content-length', String(Buffer.byteLength(r.body)));
    res.writeHead(r.status, h);
    res.end(r.body);
  }

  function sendError(res: ServerResponse, rid: string, err: RpcError, cors: boolean, extra?: Record<string, string>): void {
    const r = errorResponse(err);
    if (extra) r.headers = { ...r.headers, ...extra };
    send(res, rid, r, cors);
  }

  /** Refuses a node API request before the engine: drains the body, adds a known principal's rate-limit headers;
   *  metered as one call. */
  function refuse(req: IncomingMessage, res: ServerResponse, rid: string, network: string, p: Principal | undefined, err: RpcError, t0: number): void {
    req.resume();
    meter?.refused(network, p, err, t0);
    const h = p === undefined ? undefined : opts.limitHeaders?.(p);
    if (h === undefined) return sendRefusal(res, rid, network, p, err, t0);
    h.then(
      (extra) => sendRefusal(res, rid, network, p, err, t0, extra),
      () => sendRefusal(res, rid, network, p, err, t0),
    );
  }

  function sendRefusal(res: ServerResponse, rid: string, network: string, p: Principal | undefined, err: RpcError, t0: number, extra?: Record<string, string>): void {
    sendError(res, rid, err, true, extra);
    logRequest(res, rid, err.httpStatus, network, p, t0);
  }

  function rpc(req: IncomingMessage, res: ServerResponse, rid: string, rt: Route, t0: number): void {
    const network = rt.network;
    if (rt.key === undefined) return refuse(req, res, rid, network, undefined, NO_KEY, t0);
    const principal = keys.lookup(rt.key);
    if (principal === undefined) return refuse(req, res, rid, network, undefined, BAD_KEY, t0);
    const wrongRoute = routeRefusal(principal, network, rt.ap);
    if (wrongRoute !== undefined) return refuse(req, res, rid, network, principal, wrongRoute, t0);
    if (!acceptableContentType(req.headers['content-type'])) {
      return refuse(req, res, rid, network, principal, new RpcError(-32600, 'invalid request: Content-Type must be application/json', { contentType: req.headers['content-type'] }, 415), t0);
    }
    const ip = clientIp(req, trustProxy);
    // Origin, IP (sync) and JWT (a promise, checked while the body streams in).
    const checked = checkRequest(principal, { origin: req.headers.origin, ip, authorization: req.headers.authorization });
    if (checked instanceof RpcError) return refuse(req, res, rid, network, principal, checked, t0);
    // The body is read by listeners shared by all requests (state on the request object): no closures per request.
    const st = new BodyState(res, rid, network, principal, ip, checked, t0);
    (req as StatefulRequest)[kBody] = st;
    const cl = req.headers['content-length'];
    if (cl !== undefined && Number(cl) > maxBodyBytes) {
      // Refused before reading; the body is still drained (bounded, below) so the client can read the 413.
      st.over = true;
      refuse(req, res, rid, network, principal, payloadTooLarge('body', maxBodyBytes, Number(cl)), t0);
    }
    req.on('data', onBodyData);
    req.on('end', onBodyEnd);
    req.on('error', onBodyError);
  }

  function onBodyData(this: StatefulRequest, chunk: Buffer): void {
    const st = this[kBody]!;
    st.size += chunk.length;
    if (st.over) {
      // Drain so the client can read the 413; give up on clients that keep sending far past the limit.
      if (st.size > maxBodyBytes * 8) this.destroy();
      return;
    }
    if (st.size > maxBodyBytes) {
      st.over = true;
      st.chunks.length = 0;
      refuse(this, st.res, st.rid, st.network, st.principal, payloadTooLarge('body', maxBodyBytes), st.startedAt);
      return;
    }
    st.chunks.push(chunk);
  }

  function onBodyEnd(this: StatefulRequest): void {
    const st = this[kBody]!;
    if (st.over) return;
    const checked = st.checked;
    if (checked === undefined) {
      void runEngine(this, st);
      return;
    }
    checked.then(
      (err) => (err === undefined ? void runEngine(this, st) : refuse(this, st.res, st.rid, st.network, st.principal, err, st.startedAt)),
      (e: unknown) => {
        logger.error({ err: e, rid: st.rid }, 'JWT check failed');
        refuse(this, st.res, st.rid, st.network, st.principal, internalError(), st.startedAt);
      },
    );
  }

  function onBodyError(): void {
    /* client went away; nothing to answer */
  }

  async function runEngine(req: IncomingMessage, st: BodyState): Promise<void> {
    const chunks = st.chunks;
    const body = chunks.length === 1 ? chunks[0].toString('utf8') : Buffer.concat(chunks, st.size).toString('utf8');
    const ctx: CallContext = { network: st.network, principal: st.principal, requestId: st.rid, ip: st.ip, headers: req.headers, startedAt: st.startedAt };
    let r: EngineResponse;
    try {
      r = await engine.handle(body, ctx);
    } catch (e) {
      // The engine never rejects by contract; should it, the request still counts (one call).
      logger.error({ err: e, rid: st.rid }, 'engine failed');
      refuse(req, st.res, st.rid, st.network, st.principal, internalError(), st.startedAt);
      return;
    }
    send(st.res, st.rid, r, true);
    logRequest(st.res, st.rid, r.status, st.network, st.principal, st.startedAt);
  }

  async function docs(res: ServerResponse, rid: string, rel: string, head: boolean): Promise<void> {
    let decoded: string;
    try {
      decoded = decodeURIComponent(rel);
    } catch {
      return text(res, rid, 400, 'bad path\n');
    }
    if (decoded.includes('\0')) return text(res, rid, 400, 'bad path\n');
    let file = resolve(docsRoot, '.' + sep + decoded);
    if (file !== docsRoot && !file.startsWith(docsRoot + sep)) return text(res, rid, 404, 'not found\n');
    try {
      let st = await stat(file);
      if (st.isDirectory()) {
        if (rel !== '' && !rel.endsWith('/')) {
          res.writeHead(301, { location: `/docs/${rel}/`, 'x-request-id': rid });
          res.end();
          return;
        }
        file = resolve(file, 'index.html');
        try {
          st = await stat(file);
        } catch {
          // The docs root without its own index: the API reference is the landing page.
          if (rel === '') {
            res.writeHead(302, { location: '/docs/api/', 'x-request-id': rid });
            res.end();
            return;
          }
          throw new Error('no index');
        }
      }
      // Symlinks must not lead out of the docs folder either.
      const real = await realpath(file);
      const realRoot = await realpath(docsRoot);
      if (!real.startsWith(realRoot + sep) || !st.isFile()) return text(res, rid, 404, 'not found\n');
      res.writeHead(200, {
        'content-type': MIME[extname(file).toLowerCase()] ?? 'application/octet-stream',
        'content-length': st.size,
        'cache-control': 'no-cache',
        'x-content-type-options': 'nosniff',
        'x-request-id': rid,
      });
      if (head) {
        res.end();
        return;
      }
      createReadStream(real)
        .on('error', () => res.destroy())
        .pipe(res);
    } catch {
      text(res, rid, 404, 'not found\n');
    }
  }

  function text(res: ServerResponse, rid: string, status: number, body: string, type = 'text/plain; charset=utf-8'): void {
    if (res.headersSent) return;
    res.writeHead(status, { 'content-type': type, 'content-length': Buffer.byteLength(body), 'x-request-id': rid });
    res.end(body);
  }

  const landing = () =>
    [
      'rpcgate — JSON-RPC access to EVM nodes',
      '',
      'Node API (POST, JSON-RPC 2.0, Content-Type: application/json):',
      ...[...networks].flatMap((n) => [`  /${n}/v2/<API_KEY>   (access point A)`, `  /${n}/<API_KEY>      (access point B)`]),
      ...Object.entries(opts.hostMap).map(([h, n]) => `  http://${h}/v2/<API_KEY> and http://${h}/<API_KEY> → ${n}`),
      '',
      'API reference: /docs/',
      'Health: /healthz',
      '',
    ].join('\n');

  function onRequest(req: IncomingMessage, res: ServerResponse): void {
    const t0 = performance.now();
    const rid = requestId(req);
    try {
      const url = req.url ?? '/';
      const q = url.indexOf('?');
      const path = q === -1 ? url : url.slice(0, q);
      const method = req.method;
      for (const r of routes) {
        if (path === r.prefix || (path.startsWith(r.prefix) && path.charCodeAt(r.prefix.length) === 47)) return r.handle(req, res, rid);
      }
      if (method === 'POST') {
        const rt = route(req, path);
        if (rt === null) {
          req.resume();
          return sendError(res, rid, new RpcError(-32600, 'not found: POST to /{network}/v2/{key} or /{network}/{key}', undefined, 404), true);
        }
        if (rt instanceof RpcError) {
          // An unknown network or a malformed node API path: one refused call (network `other` when unknown).
          meter?.refused(OTHER_NETWORK, undefined, rt, t0);
          req.resume();
          sendError(res, rid, rt, true);
          return logRequest(res, rid, rt.httpStatus, OTHER_NETWORK, undefined, t0);
        }
        return rpc(req, res, rid, rt, t0);
      }
      if (method === 'GET' || method === 'HEAD') {
        req.resume();
        const head = method === 'HEAD';
        if (path === '/') return text(res, rid, 200, head ? '' : landing());
        if (path === '/healthz') {
          const h = opts.health();
          return text(res, rid, h.ok ? 200 : 503, JSON.stringify({ status: h.ok ? 'ok' : 'degraded', ...(h.detail as object) }) + '\n', 'application/json');
        }
        if (path === '/docs') {
          res.writeHead(301, { location: '/docs/', 'x-request-id': rid });
          res.end();
          return;
        }
        if (path.startsWith('/docs/')) {
          docs(res, rid, path.slice(6), head).catch(() => text(res, rid, 500, 'error\n'));
          return;
        }
        const rt = route(req, path);
        if (rt !== null && !(rt instanceof RpcError)) {
          res.writeHead(405, { allow: 'POST, OPTIONS', 'content-type': 'text/plain; charset=utf-8', 'x-request-id': rid, ...CORS_BASE });
          res.end('use POST with a JSON-RPC 2.0 body\n');
          return;
        }
        return text(res, rid, 404, 'not found\n');
      }
      if (method === 'OPTIONS') {
        req.resume();
        // Preflight for any path of the node API: POST with JSON from any origin.
        res.writeHead(204, {
          ...CORS_BASE,
          'access-control-allow-methods': 'POST, GET, OPTIONS',
          'access-control-allow-headers': (req.headers['access-control-request-headers'] as string | undefined) ?? 'content-type',
          'access-control-max-age': '86400',
          vary: 'Access-Control-Request-Headers',
          'x-request-id': rid,
        });
        res.end();
        return;
      }
      req.resume();
      res.writeHead(405, { allow: 'GET, POST, OPTIONS', 'x-request-id': rid });
      res.end();
    } catch (e) {
      logger.error({ err: e, rid }, 'request failed');
      try {
        if (!res.headersSent) sendError(res, rid, internalError(), false);
        else res.destroy();
      } catch {
        res.destroy();
      }
    }
  }

  const server = createServer({ keepAlive: true }, onRequest);
  // Above common load-balancer idle timeouts (60 s), so the proxy closes first; headersTimeout must exceed it.
  server.keepAliveTimeout = 65_000;
  server.headersTimeout = 66_000;
  server.requestTimeout = 120_000;
  server.on('clientError', (err: NodeJS.ErrnoException, socket) => {
    // Malformed HTTP: answer 400 if the socket still can, never throw.
    if (err.code === 'ECONNRESET' || !socket.writable) {
      socket.destroy();
      return;
    }
    socket.end('HTTP/1.1 400 Bad Request\r\nconnection: close\r\ncontent-length: 0\r\n\r\n');
  });
  return server;
}
