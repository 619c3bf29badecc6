// Generic typed JSON-RPC 2.0 client over a method descriptor table (generated/<api>/methods.ts).
// Generated clients only bind `methods` to this runtime; all behaviour lives here (connect-es style).
import type { MethodTable, ParamsOf, ResultOf } from './descriptor.js';

/** Options of {@link createTypedClient} and of the generated `createClient`. */
export interface ClientOptions {
  /** Full JSON-RPC endpoint, API key included, e.g. `http://127.0.0.1:8545/mainnet/v2/<key>`. */
  url: string;
  /** `fetch` implementation; defaults to the global `fetch` (Node ≥ 18, browsers). */
  fetch?: typeof fetch;
  /** Extra HTTP headers sent with every request (e.g. `Authorization: Bearer <jwt>`). */
  headers?: Record<string, string>;
}

/**
 * A JSON-RPC error: the server's `error` object (`code`, `message`, `data`), or a transport failure
 * (`code` -32603 and `status` set when the HTTP answer was not a JSON-RPC response).
 */
export class RpcClientError extends Error {
  override readonly name = 'RpcClientError';
  constructor(
    /** JSON-RPC error code (e.g. -32602 invalid params, -32005 limit exceeded). */
    readonly code: number,
    message: string,
    /** The error's `data` member, if any (e.g. which param failed and why). */
    readonly data?: unknown,
    /** HTTP status of the answer, when known. */
    readonly status?: number,
  ) {
    super(message);
  }
}

/**
 * Phantom brand of the descriptor of a method whose `paramStructure` is "by-name" (generated methods.ts):
 * `N` is its params object type (`<Method>ParamsByName`). Never present at run time.
 */
export interface ByName<N> {
  readonly __paramsByName?: N;
}

/** The by-name params object type of a descriptor branded with {@link ByName}; `never` for other methods. */
export type ParamsByNameOf<D> = D extends { readonly __paramsByName?: infer N }
  ? '__paramsByName' extends keyof D
    ? Exclude<N, undefined>
    : never
  : never;

/**
 * Params argument of a call: required when the method's params tuple has a required element, optional
 * (defaulting to `[]`) when every param is optional. `N`: the by-name object a "by-name" method also accepts.
 */
export type ParamsArg<P, N = never> = [] extends P ? [params?: P | N] : [params: P | N];

/** One call of a {@link Client.batch}: `{ method, params }`, with params typed by method name. */
export type BatchCall<M extends MethodTable> = {
  [K in keyof M & string]: { method: K } & ([] extends ParamsOf<M[K]>
    ? { params?: ParamsOf<M[K]> | ParamsByNameOf<M[K]> }
    : { params: ParamsOf<M[K]> | ParamsByNameOf<M[K]> });
}[keyof M & string];

/** Result of one batch item: the method's result, or the {@link RpcClientError} the server answered for it. */
export type BatchResult<M extends MethodTable, C> = C extends { method: infer K extends keyof M }
  ? ResultOf<M[K]> | RpcClientError
  : never;

/** A typed client for the methods of `M` (a generated `methods` table). */
export interface Client<M extends MethodTable> {
  /**
   * Calls `method` with positional `params` and resolves with its result. A method whose `paramStructure` is
   * "by-name" also takes its params as one object (`<Method>ParamsByName`), and positional params are sent to it
   * by name, as the contract asks.
   * Rejects with {@link RpcClientError} when the server answers an error (or the transport fails).
   *
   * @example
   * ```ts
   * const balance = await client.request('eth_getBalance', ['0x7dcd17433742f4c0ca53122ab541d0ba67fc27df', 'latest']);
   * ```
   */
  request<K extends keyof M & string>(
    method: K,
    ...params: ParamsArg<ParamsOf<M[K]>, ParamsByNameOf<M[K]>>
  ): Promise<ResultOf<M[K]>>;

  /**
   * Sends several calls as one JSON-RPC batch and resolves with their results in call order.
   * A call the server answered with an error does not reject the batch: its slot holds an
   * {@link RpcClientError} instance (check with `instanceof`). The promise rejects only when the batch as a
   * whole fails (transport error, HTTP error status, a non-batch answer).
   *
   * @example
   * ```ts
   * const [head, block] = await client.batch([
   *   { method: 'eth_blockNumber' },
   *   { method: 'eth_getBlockByNumber', params: ['latest', false] },
   * ] as const);
   * ```
   */
  batch<const C extends readonly BatchCall<M>[]>(calls: C): Promise<{ -readonly [I in keyof C]: BatchResult<M, C[I]> }>;

  /** The descriptor table the client was built from. */
  readonly methods: M;
}

interface Envelope {
  jsonrpc?: string;
  id?: unknown;
  result?: unknown;
  error?: { code?: unknown; message?: unknown; data?: unknown };
}

const toError = (e: Envelope['error'], status?: number): RpcClientError =>
  new RpcClientError(
    typeof e?.code === 'number' ? e.code : -32603,
    typeof e?.message === 'string' ? e.message : 'JSON-RPC error without a message',
    e?.data,
    status,
  );

/** How a client's messages travel: one JSON-RPC message (a call or a batch) out, the decoded answer back, with the
 *  HTTP status when there is one. HTTP is {@link httpTransport}; a WebSocket or an in-process engine fits the same. */
export interface Transport {
  send(message: unknown): Promise<{ status?: number; payload: unknown }>;
}

/** JSON-RPC over HTTP POST to `options.url` (keep-alive through the platform's fetch). */
export function httpTransport(options: ClientOptions): Transport {
  const doFetch = options.fetch ?? globalThis.fetch;
  if (typeof doFetch !== 'function') throw new TypeError('no fetch implementation: pass options.fetch');
  const headers = { 'content-type': 'application/json', accept: 'application/json', ...options.headers };
  return {
    async send(message) {
      const res = await doFetch(options.url, { method: 'POST', headers, body: JSON.stringify(message) });
      const text = await res.text();
      try {
        return { status: res.status, payload: text ? JSON.parse(text) : undefined };
      } catch {
        throw new RpcClientError(
          -32603,
          `HTTP ${res.status}: answer is not JSON: ${text.slice(0, 200)}`,
          undefined,
          res.status,
        );
      }
    },
  };
}

/**
 * Builds a {@link Client} for a descriptor table over HTTP. Generated code calls this with its `methods`;
 * applications use the generated `createClient` instead.
 */
export function createTypedClient<M extends MethodTable>(methods: M, options: ClientOptions): Client<M> {
  return createClient(httpTransport(options), methods);
}

/** A typed client of `methods` (a generated or run-time descriptor table) over any {@link Transport}. */
export function createClient<M extends MethodTable>(transport: Transport, methods: M): Client<M> {
  let nextId = 1;
  const post = (body: unknown) => transport.send(body);
  const failed = (status: number | undefined) => status !== undefined && (status < 200 || status >= 300);
  const httpLabel = (status: number | undefined) => (status === undefined ? 'answer' : `HTTP ${status}`);

  const check = (method: string) => {
    if (!Object.hasOwn(methods, method)) throw new RpcClientError(-32601, `method not in the contract: ${method}`);
  };

  /** The params as sent: positional params of a "by-name" method become the object its contract expects. */
  const wire = (method: string, params: unknown): unknown => {
    const d = methods[method];
    if (d.paramStructure !== 'by-name' || !Array.isArray(params)) return params ?? [];
    // defined, not assigned: a param named __proto__ stays a property (JSON.stringify sends it)
    const out: Record<string, unknown> = {};
    d.params.forEach((p, i) => {
      if (i < params.length && params[i] !== undefined)
        Object.defineProperty(out, p.name, { value: params[i], enumerable: true, writable: true, configurable: true });
    });
    return out;
  };

  return {
    methods,
    async request(method, ...rest) {
      check(method);
      const id = nextId++;
      const { status, payload } = await post({ jsonrpc: '2.0', id, method, params: wire(method, rest[0]) });
      const env = payload as Envelope | undefined;
      if (!env || typeof env !== 'object' || Array.isArray(env))
        throw new RpcClientError(-32603, `${httpLabel(status)}: not a JSON-RPC response`, payload, status);
      if (env.error !== undefined) throw toError(env.error, status);
      if (failed(status)) throw new RpcClientError(-32603, httpLabel(status), payload, status);
      if (env.id !== id)
        throw new RpcClientError(
          -32603,
          `response id ${JSON.stringify(env.id)} does not match request id ${id}`,
          payload,
          status,
        );
      return env.result as never;
    },
    async batch(calls) {
      if (calls.length === 0) return [] as never;
      const ids = calls.map((c) => {
        check(c.method);
        return nextId++;
      });
      const body = calls.map((c, i) => ({
        jsonrpc: '2.0',
        id: ids[i],
        method: c.method,
        params: wire(c.method, (c as { params?: unknown }).params),
      }));
      const { status, payload } = await post(body);
      if (!Array.isArray(payload)) {
        const env = payload as Envelope | undefined;
        if (env && typeof env === 'object' && env.error !== undefined) throw toError(env.error, status);
        throw new RpcClientError(-32603, `${httpLabel(status)}: batch answer is not an array`, payload, status);
      }
      // Batch answers may come in any order: match by id.
      const byId = new Map<unknown, Envelope>();
      for (const env of payload as Envelope[]) if (env && typeof env === 'object') byId.set(env.id, env);
      return ids.map((id) => {
        const env = byId.get(id);
        if (!env) return new RpcClientError(-32603, `no answer for batch item id ${id}`, undefined, status);
        return env.error !== undefined ? toError(env.error, status) : env.result;
      }) as never;
    },
  };
}
