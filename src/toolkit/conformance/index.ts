export { runConformance, PROTOCOL_CHECKS, firstExampleParams } from './run.js';
export type { CheckResult, ConformanceOptions, ConformanceReport, Status } from './run.js';
export { formatReport, summaryLine } from './format.js';
export { discoverChain, type ChainFacts } from './discover.js';
export { adaptParams, INVALID_RAW_TX, TOTAL_SUPPLY } from './adapt.js';
export { RpcTransport } from './rpc.js';
