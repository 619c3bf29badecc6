// Account API: the request log of an app (apps_logs) or a network key (keys_logs). Ownership first — the app or key
// must be the session user's (else -32010, the same answer as for one that does not exist) — and the store query
// filters by the user id as well, so no account ever reads another's entries. The cursor is opaque to clients:
// base64url of "<ts>.<id>" of the last entry of the previous page (newest first: ts desc, id desc).
import type * as T from '../../../../generated/account/types.js';
import * as store from '../../store/index.js';
import { badValue, notFound } from '../errors.js';

export interface LogHandlerDeps {
  db: store.Store['db'];
  secret: Uint8Array;
  /** The deployment's network names. */
  networks: readonly string[];
  /** ISO time (contract MetricsTime) → epoch ms, or -32602 at `path`. */
  parseTime: (s: string, path: string) => number;
}

const iso = (ms: number) => new Date(ms).toISOString();

export function encodeLogCursor(c: { ts: number; id: number }): string {
  return Buffer.from(`${c.ts}.${c.id}`).toString('base64url');
}

export function decodeLogCursor(s: string): { ts: number; id: number } | undefined {
  const m = /^(\d{1,15})\.(\d{1,18})$/.exec(Buffer.from(s, 'base64url').toString('latin1'));
  if (m === null) return undefined;
  const ts = Number(m[1]);
  const id = Number(m[2]);
  return Number.isSafeInteger(ts) && Number.isSafeInteger(id) ? { ts, id } : undefined;
}

export function createLogHandlers(deps: LogHandlerDeps) {
  const { db, secret } = deps;
  const networks = new Map(deps.networks.map((n) => [n.toLowerCase(), n]));

  async function page(
    userId: string,
    principalKind: 'app' | 'key',
    principalId: string,
    q: T.LogQuery = {},
  ): Promise<T.LogPage> {
    let network: string | undefined;
    if (q.network !== undefined) {
      network = networks.get(q.network.toLowerCase());
      if (network === undefined)
        throw badValue('query', '/1/network', `unknown network ${JSON.stringify(q.network.slice(0, 64))}`);
    }
    let after: { ts: number; id: number } | undefined;
    if (q.cursor !== undefined) {
      after = decodeLogCursor(q.cursor);
      if (after === undefined)
        throw badValue('query', '/1/cursor', 'not a cursor of this log (pass the `next` of the previous page)');
    }
    const since = q.since === undefined ? undefined : deps.parseTime(q.since, '/1/since');
    const until = q.until === undefined ? undefined : deps.parseTime(q.until, '/1/until');
    if (since !== undefined && until !== undefined && !(until > since))
      throw badValue('query', '/1/until', '`until` must be after `since`');
    const r = await store.queryRequestLog(db, {
      userId,
      principalKind,
      principalId,
      network,
      method: q.method,
      code: q.code,
      failed: q.status === undefined ? undefined : q.status === 'error',
      httpStatus: q.httpStatus,
      minLatencyMs: q.minLatencyMs,
      since,
      until,
      requestId: q.requestId,
      after,
      limit: q.limit ?? 50,
    });
    return {
      entries: r.entries.map((e) => {
        const out: T.LogEntry = {
          id: String(e.id),
          time: iso(e.ts),
          network: e.network,
          method: e.method,
          httpStatus: e.httpStatus,
          code: e.code ?? null,
          latencyMs: e.latencyMs,
          cacheHit: e.cacheHit,
          upstream: e.upstream ?? null,
          requestId: e.requestId ?? null,
          transport: e.transport,
          ipHash: e.ipHash ?? null,
        };
        if (e.params !== undefined) out.params = e.params;
        if (e.result !== undefined) out.result = e.result;
        return out;
      }),
      next: r.next === undefined ? null : encodeLogCursor(r.next),
    };
  }

  return {
    async apps_logs([appId, query]: T.AppsLogsParams, c: { userId: string }): Promise<T.LogPage> {
      if ((await store.getApp(db, secret, c.userId, appId)) === undefined) throw notFound('app', appId);
      return page(c.userId, 'app', appId, query);
    },
    async keys_logs([keyId, query]: T.KeysLogsParams, c: { userId: string }): Promise<T.LogPage> {
      if ((await store.getNetworkKey(db, secret, c.userId, keyId)) === undefined) throw notFound('network key', keyId);
      return page(c.userId, 'key', keyId, query);
    },
  };
}
