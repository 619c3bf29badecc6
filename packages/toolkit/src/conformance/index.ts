export { runConformance, firstExampleParams, brief, expectCode, batchCheck, ajvProblem } from './run.js';
export { specConformance, specProfile, type SpecConformanceOptions, type SpecFacts, type SpecSource } from './spec.js';
export type {
  CheckResult,
  ConformanceContract,
  ConformanceOptions,
  ConformanceProfile,
  ConformanceReport,
  OpenRpcDoc,
  ParamPlan,
  PlanOrDefect,
  PlannedCall,
  ProtocolCheck,
  Status,
} from './run.js';
export { formatReport, summaryLine } from './format.js';
export { RpcTransport, checkEnvelope, type CallOutcome, type RpcParams } from './rpc.js';
