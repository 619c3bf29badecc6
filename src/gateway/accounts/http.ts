// The account API over HTTP: `POST /api` (JSON-RPC 2.0, the generated account validators, the account handlers), one
// engine of its own (src/toolkit/rpc/engine.ts). The route adds what HTTP carries: the session cookie in, `Set-Cookie` out
// (handlers queue it in the request state, ctx.principal), the Origin check's input, a small body limit, and no
// caching of answers (they contain API keys).
//
// Only `application/json` bodies are taken (415 otherwise): a cross-site page cannot send that without a CORS
// preflight, which this route does not grant (except to configured allowed origins) — defence in depth beside the
// SameSite cookie and the Origin check.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import { methods } from '../../../generated/account/methods.js';
import { validators } from '../../../generated/account/validators.js';
import { clientIp } from '../access/request.js';
import { createEngine, errorResponse, type CallContext, type EngineResponse } from '../../toolkit/rpc/engine.js';
import { RpcError, internalError, payloadTooLarge } from '../../toolkit/rpc/errors.js';
import type { HttpRoute } from '../server/http.js';
import { createAccountHandlers, type AccountDeps } from './handlers.js';
import { createRequestStateFactory, type RequestStateOptions } from './session.js';

export interface AccountApiOptions extends AccountDeps, RequestStateOptions {
  /** Path of the API (default `/api`). */
  prefix?: string;
  /** Largest request body (default 64 KiB: account calls are small). */
  maxBodyBytes?: number;
  maxBatchSize?: number;
  /** Validate results against the contract (tests). */
  strictResults?: boolean;
  logger?: Logger;
}

export interface AccountApi extends HttpRoute {
  /** Handles one request whose body was already read (tests, other servers). */
  handleBody(req: IncomingMessage, body: string, requestId: string): Promise<{ response: EngineResponse; setCookie: string[] }>;
}

const JSON_CT = /^application\/json\s*(;|$)/i;

export function createAccountApi(opts: AccountApiOptions): AccountApi {
  const prefix = opts.prefix ?? '/api';
  const maxBody = opts.maxBodyBytes ?? 64 * 1024;
  const logger = opts.logger;
  const stateOf = createRequestStateFactory(opts);
  const allowed = new Set(opts.allowedOrigins ?? []);
  const engine = createEngine({
    methods,
    validators,
    handlers: createAccountHandlers(opts),
    options: { maxBatchSize: opts.maxBatchSize ?? 20, strictResults: opts.strictResults ?? false },
    onError: (err, info) => logger?.error({ err, method: info.method, rid: info.ctx.requestId }, 'account API: unexpected error'),
  });

  async function handleBody(req: IncomingMessage, body: string, requestId: string) {
    const state = stateOf(req);
    const ctx: CallContext = { principal: state, requestId, ip: clientIp(req, opts.trustProxy ?? 0), headers: req.headers };
    const response = await engine.handle(body, ctx);
    return { response, setCookie: state.setCookie };
  }

  function cors(req: IncomingMessage): Record<string, string> {
    // Only configured allowed origins get CORS (with credentials); the dashboard on this origin needs none.
    const o = req.headers.origin;
    return o !== undefined && allowed.has(o)
      ? { 'access-control-allow-origin': o, 'access-control-allow-credentials': 'true', vary: 'Origin' }
      : {};
  }

  function send(req: IncomingMessage, res: ServerResponse, rid: string, r: EngineResponse, setCookie: string[] = []): void {
    if (res.headersSent || res.destroyed) return;
    const headers: Record<string, string | string[]> = { 'x-request-id': rid, 'cache-control': 'no-store', ...cors(req), ...r.headers };
    if (setCookie.length > 0) headers['set-cookie'] = setCookie;
    if (r.body === undefined) {
      res.writeHead(r.status === 200 ? 204 : r.status, headers);
      res.end();
      return;
    }
    headers['content-type'] = 'application/json';
    headers['content-length'] = String(Buffer.byteLength(r.body));
    res.writeHead(r.status, headers);
    res.end(r.body);
  }

  function handle(req: IncomingMessage, res: ServerResponse, rid: string): void {
    const path = (req.url ?? '/').split('?')[0];
    if (path !== prefix && path !== prefix + '/') {
      req.resume();
      return send(req, res, rid, errorResponse(new RpcError(-32600, `not found: the account API is POST ${prefix}`, undefined, 404)));
    }
    if (req.method === 'OPTIONS') {
      req.resume();
      const h = cors(req);
      if (h['access-control-allow-origin'] !== undefined) {
        h['access-control-allow-methods'] = 'POST, OPTIONS';
        h['access-control-allow-headers'] = 'content-type';
        h['access-control-max-age'] = '600';
      }
      res.writeHead(204, { ...h, 'x-request-id': rid });
      res.end();
      return;
    }
    if (req.method !== 'POST') {
      req.resume();
      res.writeHead(405, { allow: 'POST, OPTIONS', 'content-type': 'text/plain; charset=utf-8', 'x-request-id': rid });
      res.end(`the account API takes JSON-RPC 2.0 over POST ${prefix}\n`);
      return;
    }
    const ct = req.headers['content-type'];
    if (ct === undefined || !JSON_CT.test(ct)) {
      req.resume();
      return send(req, res, rid, errorResponse(new RpcError(-32600, 'invalid request: Content-Type must be application/json', { contentType: ct ?? null }, 415)));
    }
    const cl = Number(req.headers['content-length']);
    if (Number.isFinite(cl) && cl > maxBody) {
      req.resume();
      return send(req, res, rid, errorResponse(payloadTooLarge('body', maxBody, cl)));
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let over = false;
    req.on('data', (c: Buffer) => {
      if (over) return;
      size += c.length;
      if (size > maxBody) {
        over = true;
        chunks.length = 0;
        send(req, res, rid, errorResponse(payloadTooLarge('body', maxBody)));
        return;
      }
      chunks.push(c);
    });
    req.on('end', () => {
      if (over) return;
      handleBody(req, Buffer.concat(chunks, size).toString('utf8'), rid).then(
        ({ response, setCookie }) => send(req, res, rid, response, setCookie),
        (e: unknown) => {
          logger?.error({ err: e, rid }, 'account API failed');
          send(req, res, rid, errorResponse(internalError()));
        },
      );
    });
    req.on('error', () => {
      /* client went away */
    });
  }

  return { prefix, handle, handleBody };
}
