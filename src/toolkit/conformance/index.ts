export { runConformance, firstExampleParams, brief, expectCode, batchCheck } from './run.js';
export type {
  CheckResult,
  ConformanceContract,
  ConformanceOptions,
  ConformanceProfile,
  ConformanceReport,
  OpenRpcDoc,
  ParamPlan,
  PlannedCall,
  ProtocolCheck,
  Status,
} from './run.js';
export { formatReport, summaryLine } from './format.js';
export { RpcTransport, type CallOutcome } from './rpc.js';
