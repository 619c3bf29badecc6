// The store: one schema over SQLite (default) or PostgreSQL, repositories per table group.
export { openStore, migrateToLatest, SQLITE_FILE, type Store, type StoreOptions, type Dialect } from './db.js';
export type * from './schema.js';
export { LimitError, ConflictError, NotFoundError, isUniqueViolation, isStoreUnavailable } from './errors.js';
export * from './users.js';
export * from './sessions.js';
export * from './apps.js';
export * from './networkKeys.js';
export * from './keyEvents.js';
export * from './access.js';
export * from './usage.js';
export * from './requestLog.js';
export * from './accountTokens.js';
export * from './audit.js';
export * from './quotaAlerts.js';
export * from './admin.js';
export * from './invites.js';
