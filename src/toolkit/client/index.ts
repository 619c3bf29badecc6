// `rpcgate/client`: the typed JSON-RPC client runtime and the descriptor types it is built from. The generated clients
// (generated/<api>/client.ts, `rpcgate generate` output) and their method/validator tables import only this, so they run
// from the installed package as from the repository.
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
export type { Extensions, MethodDescriptor, MethodTable, ParamsOf, ResultOf, ValidateFn, ValidatorTable } from '../rpc/descriptor.js';
// The ajv runtime helpers generated (standalone) validators call.
export { ajvEqual, ajvUcs2length, ajvUri, AjvValidationError } from './ajv-runtime.js';
// The pattern engine they test strings with (linear time on any input).
export { safeRegExp, type RegExpLike } from './safe-regexp.js';
