// `@rpcgate/toolkit/http`: the HTTP side of a JSON-RPC service built on the toolkit — the route table, the one
// JSON-RPC-over-HTTP transport (body limit, content type, CORS, refusals), static files, the server basics.
export { Router, hostName, pathMatcher, plainText, redirect, type RouteHandler, type RouteOptions } from './router.js';
export { skipBody, closeAfterAnswer } from './body.js';
export {
  Refusal,
  allowedOrigins,
  anyOrigin,
  createJsonRpcHttp,
  type CorsPolicy,
  type JsonRpcHttp,
  type JsonRpcHttpOptions,
} from './jsonrpc.js';
export { createHttpServer, requestId } from './server.js';
export { mimeType, preloadFolder, sendAsset, serveFolder, type Asset, type FolderOptions } from './static.js';
