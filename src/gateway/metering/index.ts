// Usage metering, Prometheus metrics and log redaction (see README.md).
export {
  Meter,
  meterPrincipal,
  type MeterEvent,
  type MeterOptions,
  type MeterLogger,
  type FlushResult,
  type MeterStats,
} from './meter.js';
export { Metrics, RequestSeries, upstreamLabel, type MetricsOptions } from './prometheus.js';
export { logRedaction, redactUrl, redactString, redactHeaders, REDACTED, type RedactOptions } from './redact.js';
export { OUTCOMES, OTHER, type Outcome, type MeterPrincipal } from '../usage/types.js';
export * from '../usage/histogram.js';
