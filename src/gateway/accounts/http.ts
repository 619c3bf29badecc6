// The account API over HTTP: `POST /api` (JSON-RPC 2.0, the generated account validators, the account handlers), one
// engine of its own (packages/toolkit/src/rpc/engine.ts) behind the same JSON-RPC transport as the node API
// (packages/toolkit/src/http/jsonrpc.ts). The route adds what HTTP carries: the session cookie in, `Set-Cookie` out (handlers
// queue it in the request state, ctx.principal), the Origin check's input, a small body limit, and no caching of
// answers (they contain API keys).
//
// Only `application/json` bodies are taken (415 otherwise): a cross-site page cannot send that without a CORS
// preflight, which this route does not grant (except to configured allowed origins) — defence in depth beside the
// SameSite cookie and the Origin check.
import type { Logger } from 'pino';
import { methods } from '../../../generated/account/methods.js';
import { validators } from '../../../generated/account/validators.js';
import { clientIp } from '../access/pipeline.js';
import { allowedOrigins, createJsonRpcHttp } from '@rpcgate/toolkit/http';
import { plainText, skipBody, type Router } from '@rpcgate/toolkit/http';
import { createEngine } from '@rpcgate/toolkit/engine';
import { routeNotFound } from '@rpcgate/toolkit/errors';
import { storeUnavailable } from '../errors.js';
import { isStoreUnavailable } from '../store/errors.js';
import { createAccountHandlers, type AccountDeps } from './handlers/index.js';
import { AccountThrottle, oneCredentialCallPerRequest, type ThrottleOptions } from './throttle.js';
import { createRequestStateFactory, type AccountContext, type RequestStateOptions } from './session.js';

export interface AccountApiOptions extends AccountDeps, RequestStateOptions {
  /** Path of the API (default `/api`). */
  prefix?: string;
  /** Largest request body (default 64 KiB: account calls are small). */
  maxBodyBytes?: number;
  maxBatchSize?: number;
  /** Validate results against the contract (tests). */
  strictResults?: boolean;
  logger?: Logger;
  /** Log-in / sign-up limits and password-hashing bound (./throttle.ts); ignored when `throttle` is given. */
  security?: ThrottleOptions;
}

export interface AccountApi {
  readonly prefix: string;
  /** Adds the API's routes: POST and OPTIONS at the prefix (one trailing slash ignored), 405 for other methods
   *  there, a JSON-RPC 404 below it. */
  mount(router: Router): void;
  /** The throttles and the password-hashing gate (its counters: passwords checked, calls refused). */
  readonly throttle: AccountThrottle;
}

const JSON_CT = /^application\/json\s*(;|$)/i;

export function createAccountApi(opts: AccountApiOptions): AccountApi {
  const prefix = opts.prefix ?? '/api';
  const logger = opts.logger;
  const trustProxy = opts.trustProxy ?? 0;
  const stateOf = createRequestStateFactory(opts);
  const throttle = opts.throttle ?? new AccountThrottle(opts.security);
  const engine = createEngine({
    methods,
    validators,
    handlers: createAccountHandlers({ ...opts, throttle }),
    admit: oneCredentialCallPerRequest,
    options: { maxBatchSize: opts.maxBatchSize ?? 20, strictResults: opts.strictResults ?? false },
    onError: (err, info) =>
      logger?.error({ err, method: info.method, rid: info.ctx.requestId }, 'account API: unexpected error'),
    // The database down or too slow: a fast, documented 503 (-32045) instead of -32603; logged once per call.
    mapError(err) {
      if (!isStoreUnavailable(err)) return undefined;
      logger?.warn({ err }, 'account API: store unavailable (-32045)');
      return storeUnavailable();
    },
  });
  const rpc = createJsonRpcHttp<AccountContext, undefined>({
    engine,
    maxBodyBytes: opts.maxBodyBytes ?? 64 * 1024,
    acceptContentType: (ct) => ct !== undefined && JSON_CT.test(ct),
    // Only configured allowed origins get CORS (with credentials); the dashboard on this origin needs none.
    cors: allowedOrigins(opts.allowedOrigins ?? [], {
      methods: 'POST, OPTIONS',
      allowHeaders: 'content-type',
      maxAgeSec: 600,
    }),
    headers: ['cache-control', 'no-store'],
    admit: (req, rid) => ({
      principal: stateOf(req),
      requestId: rid,
      ip: clientIp(req, trustProxy),
      headers: req.headers,
    }),
    after(ctx) {
      const cookies = ctx.principal?.setCookie;
      if (cookies === undefined || cookies.length === 0) return undefined;
      return cookies.flatMap((c) => ['set-cookie', c]);
    },
    onError: (err, rid) => logger?.error({ err, rid }, 'account API failed'),
  });
  const notFound = routeNotFound(`not found: the account API is POST ${prefix}`);
  const slash = { trailingSlash: true };

  return {
    prefix,
    throttle,
    mount(router) {
      router
        .add('POST', prefix, (req, res, rid, t0) => rpc.serve(req, res, rid, t0, undefined, undefined), slash)
        .add('OPTIONS', prefix, (req, res, rid) => rpc.preflight(req, res, rid), slash)
        .add(
          '*',
          prefix,
          (req, res, rid) => {
            skipBody(req, res);
            plainText(res, rid, 405, `the account API takes JSON-RPC 2.0 over POST ${prefix}\n`, [
              'allow',
              'POST, OPTIONS',
            ]);
          },
          slash,
        )
        .add('*', `${prefix}/*`, (req, res, rid) => rpc.sendError(req, res, rid, notFound));
    },
  };
}
