// `@rpcgate/client`: the typed JSON-RPC client runtime and the descriptor types it is built from. The generated clients
// (`rpcgate generate` / `@rpcgate/toolkit generate` output, generated/<api>/client.ts) and their method/validator tables
// import only this, so they run with this package alone.
export {
  createClient,
  createTypedClient,
  httpTransport,
  RpcClientError,
  type BatchCall,
  type BatchResult,
  type ByName,
  type Client,
  type ClientOptions,
  type ParamsArg,
  type ParamsByNameOf,
  type Transport,
} from './runtime.js';
export {
  webSocketTransport,
  type WebSocketLike,
  type WebSocketTransport,
  type WebSocketTransportOptions,
} from './websocket.js';
export type {
  Extensions,
  MethodDescriptor,
  MethodTable,
  ParamsOf,
  ResultOf,
  ValidateFn,
  ValidatorTable,
} from './descriptor.js';
// The ajv runtime helpers generated (standalone) validators call.
export { ajvEqual, ajvUcs2length, ajvUri, AjvValidationError, AJV_RUNTIME_EXPORTS } from './ajv-runtime.js';
// The pattern engine generated validators test strings with (linear time on any input: issue 26).
export { safeRegExp, type RegExpLike } from './safe-regexp.js';
