// `@rpcgate/toolkit`: the contract-first OpenRPC toolkit as a library, for any document — load, validate and
// dereference it, compile its validators once, generate its typed client and HTML docs, serve it with a validating
// JSON-RPC server or a mock, check an endpoint against it. The typed client runtime is `@rpcgate/client`.
// Narrower entry points load less (a service built on the toolkit imports only what it runs): `/engine` (the
// validating engine), `/errors` (JSON-RPC errors; browser-safe), `/conformance`, `/log-throttle`, `/http` and `/ws` (the
// transports a service is built from), `/cli` (the commands).
export {
  loadDocument,
  modelDocument,
  readDocument,
  DocumentError,
  type DocumentProblem,
  type LoadOptions,
  type ContractModel,
  type ContractSpec,
  type MethodModel,
  type ParamModel,
} from './contract/model.js';
export { DEFAULT_DOCUMENT_LIMITS, DocumentLimitError, type DocumentLimits } from './contract/bounds.js';
export { compileContract, compileValidators, methodTable, type CompiledContract } from './contract/compile.js';
export { generateClient, isGenerated, type GenerateClientOptions } from './codegen/index.js';
export { generatePythonClient, type GeneratePythonOptions } from './codegen/python.js';
export { writeDocs, writeDocsTo, methodFiles, type DocsOptions } from './docs/index.js';
export { createMock, type MockOptions, type MockServer } from './mock/index.js';
export {
  createServer,
  resolveDocument,
  type DocumentSource,
  type RpcServer,
  type ServerOptions,
} from './server/index.js';
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
export {
  ErrorCode,
  RpcError,
  invalidParams,
  invalidRequest,
  internalError,
  methodNotFound,
  type InvalidParamsData,
} from './rpc/errors.js';
export type {
  Extensions,
  MethodDescriptor,
  MethodTable,
  ParamsOf,
  ResultOf,
  ValidateFn,
  ValidatorTable,
} from './rpc/descriptor.js';
export {
  specConformance,
  specProfile,
  runConformance,
  formatReport,
  batchCheck,
  brief,
  expectCode,
  RpcTransport,
  type CallOutcome,
  type CheckResult,
  type ConformanceContract,
  type ConformanceOptions,
  type ConformanceProfile,
  type ConformanceReport,
  type OpenRpcDoc,
  type ParamPlan,
  type PlannedCall,
  type ProtocolCheck,
  type RpcParams,
  type SpecConformanceOptions,
  type Status,
} from './conformance/index.js';
