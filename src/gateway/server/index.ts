export { startService, type RunningService, type NetworkInfo } from './service.js';
export { buildRoutes, type Mount, type RoutesOptions } from './routes.js';
