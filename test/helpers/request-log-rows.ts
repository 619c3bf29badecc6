// Request log rows for the store suites: a row of the writer's shape, and the same row written as migrations 0007 and
// 0014 stored it (three principal columns), for tests that migrate from before 0015_request_log_principals.
import type { Kysely } from 'kysely';
import type { RequestLogRow } from '../../src/gateway/store/index.js';

export function logRow(
  kind: 'app' | 'key',
  principalId: string,
  userId: string,
  ts: number,
  method: string,
): RequestLogRow {
  return {
    ts,
    principalKind: kind,
    principalId,
    userId,
    network: 'mainnet',
    method,
    httpStatus: 200,
    latencyMs: 1.5,
    cacheHit: false,
    transport: 'http',
  };
}

export async function insertPre0015(db: Kysely<any>, rows: RequestLogRow[]): Promise<void> {
  await db
    .insertInto('request_log')
    .values(
      rows.map((r) => ({
        ts: r.ts,
        principal_kind: r.principalKind,
        principal_id: r.principalId,
        user_id: r.userId,
        network: r.network,
        method: r.method,
        http_status: r.httpStatus,
        latency_ms: r.latencyMs,
        cache_hit: r.cacheHit ? 1 : 0,
        transport: r.transport,
      })),
    )
    .execute();
}
