// `rpcgate`: what an application embeds — start the service in-process from a config (what `rpcgate start` does).
// Clients of the APIs are `rpcgate/node` and `rpcgate/account`; the generic client runtime is `@rpcgate/client`, the
// toolkit `@rpcgate/toolkit`.
export { startService, type NetworkInfo, type RunningService } from './gateway/server/service.js';
export {
  ConfigError,
  loadConfig,
  type Config,
  type ConfigInput,
  type KeyConfig,
  type LoadOptions,
  type MetricsConfig,
  type NetworkConfig,
  type UpstreamConfig,
} from './gateway/config/config.js';
