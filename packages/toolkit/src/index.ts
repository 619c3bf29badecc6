// `@rpcgate/toolkit`: the contract-first OpenRPC toolkit as a library, for any document — load, validate and
// dereference it, compile its validators once, generate its typed client and HTML docs, serve it with a validating
// JSON-RPC server or a mock, check an endpoint against it. The typed client runtime is `@rpcgate/client`; the HTTP and
// WebSocket transports for building a service are `@rpcgate/toolkit/http` and `@rpcgate/toolkit/ws`; the commands are
// `@rpcgate/toolkit/cli`.
export { loadDocument, modelDocument, readDocument, type ContractModel, type ContractSpec, type MethodModel, type ParamModel } from './contract/model.js';
export { compileContract, compileValidators, methodTable, type CompiledContract } from './contract/compile.js';
export { generateClient, isGenerated, type GenerateClientOptions } from './codegen/index.js';
export { writeDocs, writeDocsTo, methodFiles, type DocsOptions } from './docs/index.js';
export { createMock, type MockOptions, type MockServer } from './mock/index.js';
export { createServer, resolveDocument, type DocumentSource, type RpcServer, type ServerOptions } from './server/index.js';
export { LogThrottle } from './server/log-throttle.js';
export {
  createEngine,
  RawResult,
  type AdmitCall,
  type AdmitFn,
  type AdmitResult,
  type CallContext,
  type CallObserver,
  type CallStage,
  type Engine,
  type EngineOptions,
  type Handler,
  type Handlers,
} from './rpc/engine.js';
export { ErrorCode, RpcError, invalidParams, invalidRequest, internalError, methodNotFound, type InvalidParamsData } from './rpc/errors.js';
export type { Extensions, MethodDescriptor, MethodTable, ParamsOf, ResultOf, ValidateFn, ValidatorTable } from './rpc/descriptor.js';
export {
  specConformance,
  specProfile,
  runConformance,
  formatReport,
  batchCheck,
  brief,
  expectCode,
  RpcTransport,
  type CheckResult,
  type ConformanceContract,
  type ConformanceProfile,
  type ConformanceReport,
  type OpenRpcDoc,
  type ParamPlan,
  type PlannedCall,
  type SpecConformanceOptions,
} from './conformance/index.js';
