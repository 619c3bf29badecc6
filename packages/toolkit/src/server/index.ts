// A validating JSON-RPC 2.0 server for any OpenRPC document, for people building their own service on the toolkit:
// the document is loaded, validated and dereferenced once, its validators compiled once, and every POST goes through
// the engine (envelope, batch, notifications, params by position and by name, -32602 with the failing path) and the
// one JSON-RPC-over-HTTP transport (body limit, content type, CORS, error envelope). Handlers fill in behaviour;
// `rpc.discover` answers the document unless a handler is given for it. `rpcgate mock` is this server with handlers
// generated from the document's examples and schemas.
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { compileContract, type CompiledContract } from '../contract/compile.js';
import { loadDocument, modelDocument, type ContractModel, type Json } from '../contract/model.js';
import type { DocumentLimits } from '../contract/bounds.js';
import type { MethodDescriptor, MethodTable, ValidateFn } from '../rpc/descriptor.js';
import { createEngine, type CallContext, type Engine, type Handler, type NamedHandlers } from '../rpc/engine.js';
import { anyOrigin, createJsonRpcHttp } from '../http/jsonrpc.js';
import { Router } from '../http/router.js';
import { createHttpServer } from '../http/server.js';

/** What a document is given as: a path or http(s) URL, the parsed document, or a model already loaded. */
export type DocumentSource = string | Json | ContractModel;

export interface ServerOptions<M extends MethodTable = MethodTable> {
  document: DocumentSource;
  /** Handlers by method name (typed by `M`, e.g. the `Methods` of `rpcgate generate`'s output; untyped by default): a
   *  method without one answers -32601 (rpc.discover excepted: it answers the document). A method whose paramStructure
   *  is "by-name" gets its params as one object (`<Method>ParamsByName`), whichever form the client sent; the others get
   *  the positional tuple (see `namedParams`). */
  handlers: NamedHandlers<M>;
  /** Default true: by-name methods' handlers get an object of named params. false: every handler gets the positional
   *  array (as the engine gives it). */
  namedParams?: boolean;
  /** Validate every result against its schema (a violation answers -32603). Default true: a toolkit server is strict. */
  strictResults?: boolean;
  /** Default 100 calls. */
  maxBatchSize?: number;
  /** Default 1 MiB. */
  maxBodyBytes?: number;
  /** Path the API is served on. Default '/' (and any path: JSON-RPC servers commonly answer on every path). */
  path?: string;
  /** Unexpected handler failures (answered -32603; their details never reach the client), and results that break the
   *  contract (strict mode): an RpcError whose `data` has `path` (where in the result), `schemaPath` (which keyword of
   *  the result schema) and `reason` — the client gets the same -32603 with `data.path`. */
  onError?: (err: unknown, method: string) => void;
  /** Limits on dereferencing the document (contract/bounds.ts; defaults DEFAULT_DOCUMENT_LIMITS). */
  limits?: DocumentLimits;
}

export interface RpcServer {
  readonly contract: CompiledContract;
  readonly engine: Engine<CallContext>;
  readonly server: Server;
  /** Starts listening; resolves with the URL (`http://host:port/`). Port 0 picks a free one. */
  listen(port?: number, host?: string): Promise<string>;
  close(): Promise<void>;
}

/** The model of a document given in any of the accepted forms. */
export async function resolveDocument(
  source: DocumentSource,
  name?: string,
  limits?: DocumentLimits,
): Promise<ContractModel> {
  if (typeof source === 'string') return loadDocument(source, name, limits);
  if (source && typeof source === 'object' && 'spec' in source && 'methods' in source && 'raw' in source)
    return source as ContractModel;
  return modelDocument(source, { name: name ?? 'api', file: '<document>' }, limits);
}

/** Adds `rpc.discover` (no params, any result) to a contract that does not list it. */
function addDiscover(contract: CompiledContract): void {
  const noParams: ValidateFn = (data) => Array.isArray(data) && data.length === 0;
  const any: ValidateFn = () => true;
  (contract.methods as Record<string, MethodDescriptor>)['rpc.discover'] = {
    name: 'rpc.discover',
    summary: 'Returns the OpenRPC document of this service.',
    params: [],
    errors: [],
    paramStructure: 'either',
  };
  (contract.validators as Record<string, { params: ValidateFn; result: ValidateFn }>)['rpc.discover'] = {
    params: noParams,
    result: any,
  };
}

export async function createServer<M extends MethodTable = MethodTable>(opts: ServerOptions<M>): Promise<RpcServer> {
  const contract = compileContract(await resolveDocument(opts.document, undefined, opts.limits));
  // null prototype: a method named __proto__ or constructor is a key like any other (Object.assign copies own keys)
  const handlers: Record<string, Handler<MethodDescriptor> | undefined> = Object.assign(
    Object.create(null),
    opts.handlers,
  );
  // OpenRPC's service discovery: answered with the document whether or not the document lists the method.
  if (!contract.methods['rpc.discover']) addDiscover(contract);
  if (handlers['rpc.discover'] === undefined) handlers['rpc.discover'] = () => contract.model.document;
  for (const name of Object.keys(handlers))
    if (!Object.hasOwn(contract.methods, name))
      throw new Error(`handler for ${name}, which the document does not have`);

  const engine = createEngine<typeof contract.methods, CallContext>({
    methods: contract.methods,
    validators: contract.validators,
    handlers,
    options: {
      maxBatchSize: opts.maxBatchSize ?? 100,
      strictResults: opts.strictResults ?? true,
      namedParams: opts.namedParams ?? true,
    },
    onError: (err, info) => opts.onError?.(err, info.method),
  });
  const rpc = createJsonRpcHttp<CallContext, undefined>({
    engine,
    maxBodyBytes: opts.maxBodyBytes ?? 1 << 20,
    acceptContentType: (ct) => ct === undefined || /^application\/json\b/i.test(ct),
    cors: anyOrigin({ expose: 'x-request-id', methods: 'POST, OPTIONS', maxAgeSec: 600 }),
    admit: (req, rid, t0) => ({ requestId: rid, startedAt: t0, headers: req.headers, ip: req.socket.remoteAddress }),
    onError: (err) => opts.onError?.(err, '(transport)'),
  });
  const base = opts.path ?? '/';
  const router = new Router();
  const pattern = base === '/' ? '/*' : base.replace(/\/$/, ''); // '/*' also matches '/'
  router.add('POST', pattern, (req, res, rid, t0, capture) => rpc.serve(req, res, rid, t0, undefined, capture));
  router.add('OPTIONS', pattern, (req, res, rid) => rpc.preflight(req, res, rid));
  const server = createHttpServer(router, (err) => opts.onError?.(err, '(http)'));

  return {
    contract,
    engine,
    server,
    listen(port = 0, host = '127.0.0.1') {
      return new Promise((resolve, reject) => {
        server.once('error', reject);
        server.listen(port, host, () => {
          server.off('error', reject);
          const a = server.address() as AddressInfo;
          const h = a.family === 'IPv6' ? `[${a.address}]` : a.address;
          resolve(`http://${h}:${a.port}${base === '/' ? '/' : base}`);
        });
      });
    },
    close() {
      return new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}
