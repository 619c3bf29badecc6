export { startService, type RunningService, type NetworkInfo } from './service.js';
export { createHttpServer, type HttpOptions } from './http.js';
