// In-code migration provider (no file-system scanning: works the same from tsx, a bundle or dist/).
// Names sort in apply order; append new migrations here.
import type { Migration, MigrationProvider } from 'kysely';
import type { Dialect } from '../dialect.js';
import { initial } from './0001_initial.js';
import { usage } from './0002_usage.js';
import { anyNetwork } from './0003_any_network.js';
import { usageFlushMarks } from './0004_usage_flush_marks.js';
import { jwtLifetime } from './0005_jwt_lifetime.js';
import { usageCacheHits } from './0006_usage_cache_hits.js';
import { requestLog } from './0007_request_log.js';
import { accountTokens } from './0008_account_tokens.js';
import { auditEvents } from './0009_audit_events.js';
import { usageUnits } from './0010_usage_units.js';
import { quotaAlerts } from './0011_quota_alerts.js';
import { admin } from './0012_admin.js';
import { invites } from './0013_invites.js';
import { requestLogLean } from './0014_request_log_lean.js';
import { requestLogPrincipals } from './0015_request_log_principals.js';

export function migrations(dialect: Dialect): Record<string, Migration> {
  return {
    '0001_initial': initial(dialect),
    '0002_usage': usage(dialect),
    '0003_any_network': anyNetwork(dialect),
    '0004_usage_flush_marks': usageFlushMarks(dialect),
    '0005_jwt_lifetime': jwtLifetime(),
    '0006_usage_cache_hits': usageCacheHits(dialect),
    '0007_request_log': requestLog(dialect),
    '0008_account_tokens': accountTokens(dialect),
    '0009_audit_events': auditEvents(dialect),
    '0010_usage_units': usageUnits(dialect),
    '0011_quota_alerts': quotaAlerts(dialect),
    '0012_admin': admin(dialect),
    '0013_invites': invites(dialect),
    '0014_request_log_lean': requestLogLean(dialect),
    '0015_request_log_principals': requestLogPrincipals(dialect),
  };
}

export function migrationProvider(dialect: Dialect): MigrationProvider {
  return { getMigrations: async () => migrations(dialect) };
}
