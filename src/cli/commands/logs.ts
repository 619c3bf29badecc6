// `rpcgate apps logs <appId>` / `rpcgate keys logs <keyId>`: the request log (account API apps_logs / keys_logs), newest
// first, with the API's filters as flags. `--json` prints one object: `{ "entries": [ { time, network, method,
// httpStatus, code, latencyMs, requestId, cacheHit } ], "next" }` — pass `next` back as `--cursor` for older entries.
import type { Command } from 'commander';
import type { LogEntry, LogQuery } from '../../../generated/account/client.js';
import { addApiOptions, runApi, usage, type ApiFlags } from '../account.js';
import { table } from '../output.js';

interface LogFlags extends ApiFlags {
  network?: string;
  method?: string;
  code?: string;
  status?: string;
  httpStatus?: string;
  minLatency?: string;
  since?: string;
  until?: string;
  requestId?: string;
  limit?: string;
  cursor?: string;
}

function int(v: string | undefined, flag: string): number | undefined {
  if (v === undefined) return undefined;
  if (!/^-?\d+$/.test(v.trim())) throw usage(`${flag} must be an integer, got ${JSON.stringify(v)}`, { flag });
  return Number(v);
}

/** The flags as the API's query (the server checks ranges and times and answers -32602 naming the field). */
export function logQuery(f: LogFlags): LogQuery {
  const q: LogQuery = {};
  if (f.network !== undefined) q.network = f.network;
  if (f.method !== undefined) q.method = f.method;
  if (f.code !== undefined) q.code = int(f.code, '--code');
  if (f.status !== undefined) {
    if (f.status !== 'ok' && f.status !== 'error')
      throw usage('--status must be ok or error', { flag: '--status', choices: ['ok', 'error'] });
    q.status = f.status;
  }
  if (f.httpStatus !== undefined) q.httpStatus = int(f.httpStatus, '--http-status');
  if (f.minLatency !== undefined) {
    const n = Number(f.minLatency);
    if (f.minLatency.trim() === '' || !Number.isFinite(n))
      throw usage(`--min-latency must be a number of ms, got ${JSON.stringify(f.minLatency)}`, {
        flag: '--min-latency',
      });
    q.minLatencyMs = n;
  }
  if (f.since !== undefined) q.since = f.since;
  if (f.until !== undefined) q.until = f.until;
  if (f.requestId !== undefined) q.requestId = f.requestId;
  if (f.limit !== undefined) q.limit = int(f.limit, '--limit');
  if (f.cursor !== undefined) q.cursor = f.cursor;
  return q;
}

export function addLogsCommand(parent: Command, kind: 'apps' | 'keys'): void {
  const what = kind === 'apps' ? 'app' : 'network key';
  addApiOptions(
    parent
      .command('logs')
      .description(`the ${what}'s request log, newest first (kept 10 days on PostgreSQL, 2 on SQLite by default)`)
      .argument(kind === 'apps' ? '<appId>' : '<keyId>')
      .option('--network <network>', 'only calls on this network')
      .option('--method <method>', 'only calls of this JSON-RPC method')
      .option('--code <code>', 'only calls that failed with this JSON-RPC error code')
      .option('--status <ok|error>', 'only successful or only failed calls')
      .option('--http-status <status>', 'only calls answered with this HTTP status')
      .option('--min-latency <ms>', 'only calls that took at least this long')
      .option('--since <time>', 'only calls at or after this ISO time (e.g. 2025-03-01T09:00:00Z)')
      .option('--until <time>', 'only calls before this ISO time')
      .option('--request-id <id>', 'only the calls of this request (its x-request-id)')
      .option('--limit <n>', 'entries per page, 1-500 (default 50)')
      .option('--cursor <next>', 'continue after a previous page (its "next")'),
  ).action((id: string, flags: LogFlags) =>
    runApi(flags, async (ctx) => {
      const query = logQuery(flags);
      const page =
        kind === 'apps'
          ? await ctx.api.request('apps_logs', [id, query])
          : await ctx.api.request('keys_logs', [id, query]);
      const entries = page.entries.map((e: LogEntry) => ({
        time: e.time,
        network: e.network,
        method: e.method,
        httpStatus: e.httpStatus,
        code: e.code,
        latencyMs: e.latencyMs,
        requestId: e.requestId,
        cacheHit: e.cacheHit,
      }));
      const text = table(
        page.entries,
        {
          TIME: 'time',
          NETWORK: 'network',
          METHOD: 'method',
          HTTP: 'httpStatus',
          CODE: (e: LogEntry) => (e.code === null ? '-' : e.code),
          MS: (e: LogEntry) => e.latencyMs.toFixed(1),
          CACHE: (e: LogEntry) => (e.cacheHit ? 'hit' : '-'),
          UPSTREAM: (e: LogEntry) => e.upstream ?? '-',
          REQUEST: (e: LogEntry) => e.requestId ?? '-',
        },
        '(no entries)',
      );
      return {
        json: { entries, next: page.next },
        text: page.next === null ? text : `${text}\n\nmore: --cursor ${page.next}`,
      };
    }),
  );
}
