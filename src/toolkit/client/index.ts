// `rpcgate/client`: the typed JSON-RPC client runtime and the descriptor types it is built from. The generated clients
// (generated/<api>/client.ts) and their method/validator tables import only this, so they run from the installed
// package as from the repository.
export { createTypedClient, RpcClientError, type BatchCall, type BatchResult, type Client, type ClientOptions, type ParamsArg } from './runtime.js';
export type { Extensions, MethodDescriptor, MethodTable, ParamsOf, ResultOf, ValidateFn, ValidatorTable } from '../rpc/descriptor.js';
