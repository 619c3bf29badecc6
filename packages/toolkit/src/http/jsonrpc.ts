// JSON-RPC 2.0 over HTTP POST in front of an Engine (packages/toolkit/src/rpc/engine.ts): the one transport every JSON-RPC API
// of a server uses. It knows nothing of who calls: the server's hooks decide.
//
// A POST, in this order:
//   admit(req, …)   before the body: the call context, or a Refusal (e.g. an unknown key)
//   Content-Type    the API's policy (acceptContentType), else 415 with -32600
//   check(req, ctx) a refusal now, or a Promise settled while the body is read (e.g. a signature check)
//   body            Content-Length over maxBodyBytes → 413 before reading; a streamed body crossing the limit → 413 at
//                   that moment. Either answer carries `Connection: close`: at most 64 KiB more are read, and the
//                   socket is closed shortly after the answer (./body.ts). A refusal before the body (admit,
//                   Content-Type, check) does the same unless the declared body is small (then it is drained and
//                   the connection kept).
//   engine          once the body is read and check settled; batches, notifications (204) and the error envelope with
//                   its HTTP status are the engine's.
// Every answer carries x-request-id, the CORS policy's headers and the API's own headers. Every refusal before the
// engine (and an engine that rejects, which it never should) goes through `refused` (e.g. metering, rate-limit headers)
// and is answered with the error envelope naming the request's id (a batch: one error per item with an id), read from
// the body when it is small and arrives at once (./body.ts peekBody: at most 64 KiB, within 500 ms), else id null.
// `answered` sees every final status (request logs).
// The body is read by listeners shared by all requests (state on the request object): no closures per request.
// Another transport (e.g. WebSocket) sits beside this one on the same Engine and hooks.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { refusalResponse, type CallContext, type Engine, type EngineResponse } from '../rpc/engine.js';
import { RpcError, internalError, payloadTooLarge } from '../rpc/errors.js';
import { closeAfterAnswer, peekBody, skipBody } from './body.js';

/** A request refused before the engine, with the context known so far (for the refusal's hooks). */
export class Refusal<C> {
  constructor(
    readonly error: RpcError,
    readonly ctx: C | undefined,
  ) {}
}

/** Cross-origin rules of one API. */
export interface CorsPolicy {
  /** Headers (flat: name, value, …) every answer to this request carries; undefined = none. */
  headers(req: IncomingMessage): readonly string[] | undefined;
  /** Answers an OPTIONS preflight. */
  preflight(req: IncomingMessage, res: ServerResponse, rid: string): void;
}

/** Any origin may call (public APIs called from browsers); `expose` lists the headers scripts may read. */
export function anyOrigin(opts: { expose: string; methods: string; maxAgeSec: number }): CorsPolicy {
  const headers = ['access-control-allow-origin', '*', 'access-control-expose-headers', opts.expose];
  const age = String(opts.maxAgeSec);
  return {
    headers: () => headers,
    preflight(req, res, rid) {
      const h = req.headers['access-control-request-headers'];
      res.writeHead(204, [
        ...headers,
        'access-control-allow-methods',
        opts.methods,
        'access-control-allow-headers',
        typeof h === 'string' ? h : 'content-type',
        'access-control-max-age',
        age,
        'vary',
        'Access-Control-Request-Headers',
        'x-request-id',
        rid,
      ]);
      res.end();
    },
  };
}

/** Only the listed origins get CORS, with credentials (cookies); every other origin gets no CORS header at all. */
export function allowedOrigins(
  origins: Iterable<string>,
  opts: { methods: string; allowHeaders: string; maxAgeSec: number },
): CorsPolicy {
  const allowed = new Set(origins);
  const age = String(opts.maxAgeSec);
  const headers = (req: IncomingMessage): string[] | undefined => {
    const o = req.headers.origin;
    return o !== undefined && allowed.has(o)
      ? ['access-control-allow-origin', o, 'access-control-allow-credentials', 'true', 'vary', 'Origin']
      : undefined;
  };
  return {
    headers,
    preflight(req, res, rid) {
      const h = headers(req);
      if (h !== undefined)
        h.push(
          'access-control-allow-methods',
          opts.methods,
          'access-control-allow-headers',
          opts.allowHeaders,
          'access-control-max-age',
          age,
        );
      res.writeHead(204, [...(h ?? []), 'x-request-id', rid]);
      res.end();
    },
  };
}

export interface JsonRpcHttpOptions<C extends CallContext, R> {
  engine: Engine<C>;
  maxBodyBytes: number;
  /** The Content-Types taken (415 otherwise). */
  acceptContentType(ct: string | undefined): boolean;
  cors: CorsPolicy;
  /** Headers (flat) on every answer beside CORS and x-request-id, e.g. `cache-control: no-store`. */
  headers?: readonly string[];
  /** Before the body: the call context, or why the request is refused. `route` and `capture` come from the route. */
  admit(req: IncomingMessage, rid: string, t0: number, route: R, capture: string | undefined): C | Refusal<C>;
  /** After Content-Type, before the body: a refusal, or a Promise the engine waits for (settled while the body is read). */
  check?(req: IncomingMessage, ctx: C): RpcError | undefined | Promise<RpcError | undefined>;
  /** Each refusal before the engine, once: extra headers for its answer (a Promise is waited for; its failure ignored). */
  refused?(
    ctx: C | undefined,
    err: RpcError,
    t0: number,
  ): Record<string, string> | undefined | Promise<Record<string, string> | undefined>;
  /** Headers (flat) from the context once the engine answered (e.g. Set-Cookie). */
  after?(ctx: C): readonly string[] | undefined;
  /** Every final answer's status (request logs). */
  answered?(res: ServerResponse, status: number, ctx: C | undefined, rid: string, t0: number): void;
  /** Unexpected failures (a check or the engine rejected): logged here, answered 500. */
  onError(err: unknown, rid: string, what: string): void;
}

export interface JsonRpcHttp<R> {
  /** Serves a POST (the route has matched): admission, body, engine, answer. */
  serve(
    req: IncomingMessage,
    res: ServerResponse,
    rid: string,
    t0: number,
    route: R,
    capture: string | undefined,
  ): void;
  /** Answers an error envelope with this API's headers (e.g. a route-level 404), draining the body. */
  sendError(req: IncomingMessage, res: ServerResponse, rid: string, err: RpcError): void;
  /** Answers a preflight with this API's CORS policy. */
  preflight(req: IncomingMessage, res: ServerResponse, rid: string): void;
  /** The CORS headers of a request (for answers the route writes itself). */
  corsHeaders(req: IncomingMessage): readonly string[] | undefined;
}

/** A request's body-reading state, kept on the request object under kBody. */
class BodyState<C> {
  chunks: Buffer[] = [];
  size = 0;
  over = false;
  constructor(
    readonly res: ServerResponse,
    readonly rid: string,
    readonly t0: number,
    readonly ctx: C,
    readonly checked: Promise<RpcError | undefined> | undefined,
  ) {}
}
const kBody = Symbol('jsonrpc.body');
type StatefulRequest<C> = IncomingMessage & { [kBody]?: BodyState<C> };

const NO_HEADERS: readonly string[] = [];

function bodyOf(st: BodyState<unknown>): Buffer {
  return st.chunks.length === 1 ? st.chunks[0] : Buffer.concat(st.chunks, st.size);
}

export function createJsonRpcHttp<C extends CallContext, R>(opts: JsonRpcHttpOptions<C, R>): JsonRpcHttp<R> {
  const { engine, maxBodyBytes, cors, admit, check, refused, after, answered, onError } = opts;
  const own = opts.headers ?? NO_HEADERS;

  function send(
    req: IncomingMessage,
    res: ServerResponse,
    rid: string,
    r: EngineResponse,
    extra: Record<string, string> | undefined,
    tail: readonly string[] | undefined,
  ): void {
    if (res.headersSent || res.destroyed) return;
    // Flat [name, value, …] header list: no per-response object building on the hot path.
    const h: string[] = ['x-request-id', rid];
    const c = cors.headers(req);
    if (c !== undefined) for (let i = 0; i < c.length; i++) h.push(c[i]);
    for (let i = 0; i < own.length; i++) h.push(own[i]);
    if (r.headers !== undefined) for (const k in r.headers) h.push(k, r.headers[k]);
    if (extra !== undefined) for (const k in extra) h.push(k, extra[k]);
    if (tail !== undefined) for (let i = 0; i < tail.length; i++) h.push(tail[i]);
    if (r.body === undefined) {
      res.writeHead(r.status === 200 ? 204 : r.status, h);
      res.end();
      return;
    }
    h.push('content-type', 'application/json', 'content-length', String(Buffer.byteLength(r.body)));
    res.writeHead(r.status, h);
    res.end(r.body);
  }

  /** Body of a refusal: not read yet (a bounded prefix is peeked for its ids), declared over the limit (peeked the
   *  same, then the connection closes after the answer), over the limit while streaming (closed after the answer,
   *  no ids), or the body read completely. */
  type BodyAt = 'unread' | 'declared-over' | 'over' | Buffer;

  /** Refuses before the engine: peeks at or bounds the body (./body.ts), lets the `refused` hook add headers, and
   *  answers once both are done, with the request's ids when the body parsed. */
  function refuse(
    req: IncomingMessage,
    res: ServerResponse,
    rid: string,
    t0: number,
    ctx: C | undefined,
    err: RpcError,
    body: BodyAt,
  ): void {
    let pending = 2;
    let extra: Record<string, string> | undefined;
    let read: Buffer | undefined;
    const step = () => {
      if (--pending > 0) return;
      send(req, res, rid, refusalResponse(err, read), extra, undefined);
      answered?.(res, err.httpStatus, ctx, rid, t0);
    };
    if (body === 'unread' || body === 'declared-over') {
      peekBody(req, res, (b) => {
        if (body === 'declared-over') closeAfterAnswer(req, res);
        read = b;
        step();
      });
    } else {
      if (body === 'over') closeAfterAnswer(req, res);
      else read = body;
      step();
    }
    const h = refused?.(ctx, err, t0);
    if (!(h instanceof Promise)) {
      extra = h;
      return step();
    }
    h.then((x) => {
      extra = x;
      step();
    }, step);
  }

  function serve(
    req: IncomingMessage,
    res: ServerResponse,
    rid: string,
    t0: number,
    route: R,
    capture: string | undefined,
  ): void {
    const ctx = admit(req, rid, t0, route, capture);
    if (ctx instanceof Refusal) return refuse(req, res, rid, t0, ctx.ctx, ctx.error, 'unread');
    const ct = req.headers['content-type'];
    if (!opts.acceptContentType(ct)) {
      return refuse(
        req,
        res,
        rid,
        t0,
        ctx,
        new RpcError(
          -32600,
          'invalid request: Content-Type must be application/json',
          { contentType: ct ?? null },
          415,
        ),
        'unread',
      );
    }
    const checked = check?.(req, ctx);
    if (checked instanceof RpcError) return refuse(req, res, rid, t0, ctx, checked, 'unread');
    const cl = req.headers['content-length'];
    if (cl !== undefined && Number(cl) > maxBodyBytes) {
      // Refused before reading: answered, then the connection closes (a bounded part of the body is read meanwhile).
      return refuse(req, res, rid, t0, ctx, payloadTooLarge('body', maxBodyBytes, Number(cl)), 'declared-over');
    }
    const st = new BodyState(res, rid, t0, ctx, checked);
    (req as StatefulRequest<C>)[kBody] = st;
    req.on('data', onBodyData);
    req.on('end', onBodyEnd);
    req.on('error', onBodyError);
  }

  function onBodyData(this: StatefulRequest<C>, chunk: Buffer): void {
    const st = this[kBody]!;
    st.size += chunk.length;
    if (st.over) return; // discarded; closeAfterAnswer bounds how much more is read
    if (st.size > maxBodyBytes) {
      st.over = true;
      st.chunks.length = 0;
      refuse(this, st.res, st.rid, st.t0, st.ctx, payloadTooLarge('body', maxBodyBytes), 'over');
      return;
    }
    st.chunks.push(chunk);
  }

  function onBodyEnd(this: StatefulRequest<C>): void {
    const st = this[kBody]!;
    if (st.over) return;
    const checked = st.checked;
    if (checked === undefined) {
      void runEngine(this, st);
      return;
    }
    checked.then(
      (err) =>
        err === undefined ? void runEngine(this, st) : refuse(this, st.res, st.rid, st.t0, st.ctx, err, bodyOf(st)),
      (e: unknown) => {
        onError(e, st.rid, 'request check');
        refuse(this, st.res, st.rid, st.t0, st.ctx, internalError(), bodyOf(st));
      },
    );
  }

  function onBodyError(): void {
    /* client went away; nothing to answer */
  }

  async function runEngine(req: IncomingMessage, st: BodyState<C>): Promise<void> {
    const chunks = st.chunks;
    const body = chunks.length === 1 ? chunks[0].toString('utf8') : Buffer.concat(chunks, st.size).toString('utf8');
    let r: EngineResponse;
    try {
      r = await engine.handle(body, st.ctx);
    } catch (e) {
      // The engine never rejects by contract; should it, the request is still answered (and counted) as a refusal.
      onError(e, st.rid, 'engine');
      refuse(req, st.res, st.rid, st.t0, st.ctx, internalError(), bodyOf(st));
      return;
    }
    send(req, st.res, st.rid, r, undefined, after?.(st.ctx));
    answered?.(st.res, r.status, st.ctx, st.rid, st.t0);
  }

  return {
    serve,
    sendError(req, res, rid, err) {
      peekBody(req, res, (b) => send(req, res, rid, refusalResponse(err, b), undefined, undefined));
    },
    preflight(req, res, rid) {
      skipBody(req, res);
      cors.preflight(req, res, rid);
    },
    corsHeaders: (req) => cors.headers(req),
  };
}
