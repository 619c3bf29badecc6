// `rpcgate/toolkit`: the contract-first OpenRPC toolkit as a library, for any document — load, validate and
// dereference it, compile its validators once, serve it with a validating JSON-RPC server, check an endpoint against
// it. The typed client runtime is `rpcgate/client`.
export { loadDocument, modelDocument, readDocument, type ContractModel, type ContractSpec, type MethodModel, type ParamModel } from './contract/model.js';
export { DEFAULT_DOCUMENT_LIMITS, DocumentLimitError, type DocumentLimits } from './contract/bounds.js';
export { compileContract, compileValidators, methodTable, type CompiledContract } from './contract/compile.js';
export { generateClient } from './codegen/index.js';
export { writeDocs, writeDocsTo, methodFiles, type DocsOptions } from './docs/index.js';
export { createMock, type MockOptions, type MockServer } from './mock/index.js';
export { createServer, resolveDocument, type DocumentSource, type RpcServer, type ServerOptions } from './server/index.js';
export { createEngine, RawResult, type CallContext, type Engine, type EngineOptions, type Handler, type Handlers } from './rpc/engine.js';
export { RpcError, invalidParams, internalError, methodNotFound } from './rpc/errors.js';
export type { MethodDescriptor, MethodTable, ParamsOf, ResultOf, ValidateFn, ValidatorTable } from './rpc/descriptor.js';
export { specConformance, specProfile, runConformance, formatReport, type ConformanceReport, type CheckResult, type SpecConformanceOptions } from './conformance/index.js';
