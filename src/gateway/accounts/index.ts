// The account API (contracts/account.openrpc.json): handlers, sessions and the HTTP route at POST /api.
export { createAccountApi, type AccountApi, type AccountApiOptions } from './http.js';
export { createAccountHandlers, USE_CASES, type AccountDeps } from './handlers/index.js';
export { SELF_SERVICE_DEFAULTS, SIGNUP_DEFAULTS, type SelfService, type SignUpPolicy } from './handlers/kit.js';
export {
  SESSION_COOKIE,
  createRequestStateFactory,
  readCookie,
  sessionCookie,
  clearedSessionCookie,
  type AccountRequest,
  type RequestStateOptions,
} from './session.js';
export { AccountErrorCode, notFound, conflict, countLimit } from './errors.js';
