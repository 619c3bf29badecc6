// rpcgate's own errors: the refusals and failures the gateway answers with itself (key, JWT, allowlists, limits,
// upstream), beside the JSON-RPC 2.0 standard ones of packages/toolkit/src/rpc/errors.ts.
//
// Nodes answer with EIP-1474 codes (-32000..-32006: -32001 "resource not found", -32002 "resource unavailable", …)
// and rpcgate passes those through untouched. So its own codes stay out of that range (except -32005 and -32601,
// whose EIP-1474/JSON-RPC meaning is exactly the refusal's), and every error rpcgate produces carries
// `data.source = "rpcgate"` plus a machine word in `data.reason`: a client tells rpcgate's answer from the node's by
// `data.source`, never by the code alone. GATEWAY_ERRORS is the one table of codes, HTTP statuses and reasons; the
// contracts' components.errors and README's table are checked against it (test/contract.test.ts).
// Some rows share a code with what nodes answer, on purpose: -32000 "too many filters" and "filter not found" (geth
// answers its filter errors with -32000, and clients match them by message), -32601 for subscriptions over HTTP (as
// geth), and -32603 for the filter store being down (an internal error of rpcgate's, but temporary: 503). Their
// data.source still tells them from a node's; data.reason picks the row (`gatewayError` builds every error by it).
// -32016 follows field practice (eRPC, Goldsky answer an invalid key with it); execution-apis also lists -32016
// "Timeout" for eth_simulateV1, which openrpc.json does not serve — were it added, data.source still tells the two apart.
import { RpcError } from '@rpcgate/toolkit/errors';

/** `data.source` of every error rpcgate itself produces (a node's error never has it added). */
export const SOURCE = 'rpcgate';

export interface GatewayErrorRow {
  name: string;
  code: number;
  message: string;
  httpStatus: readonly number[];
  /** The words `data.reason` takes for this code. */
  reasons: readonly string[];
  meaning: string;
  /** How a node API call that ends with it is metered (usage rows' and rpcgate_requests_total's outcome): a refusal
   *  (`auth`, `allowlist`, `limit`), a call naming what is not there (`validation`), rpcgate's own backend down, or the
   *  upstream failing — never `node_error`. */
  outcome: 'auth' | 'allowlist' | 'limit' | 'validation' | 'backend_unavailable' | 'upstream_error';
  /** Only the account API answers it (documented in contracts/account.openrpc.json, not in openrpc.json). */
  accountOnly?: true;
}

/** The table: one row per code rpcgate answers with on its own. */
export const GATEWAY_ERRORS = [
  {
    name: 'Unauthorized',
    outcome: 'auth',
    code: -32016,
    message: 'Unauthorized',
    httpStatus: [401],
    reasons: ['key', 'jwt', 'session', 'credentials'],
    meaning:
      'API key missing, unknown or revoked; JWT required but missing, invalid or expired (account API: no session, wrong credentials)',
  },
  {
    name: 'Forbidden',
    outcome: 'allowlist',
    code: -32041,
    message: 'Forbidden',
    httpStatus: [403],
    reasons: [
      'network',
      'url',
      'origin',
      'ip',
      'address',
      'email-not-verified',
      'admin-only',
      'suspended',
      'invite-required',
      'signup-closed',
    ],
    meaning:
      "key valid but not here: other network, wrong URL shape, origin / IP / contract address not on the allowlist; the key's account suspended by an operator (`suspended`; also its log-in) (account API: Origin check; an app or key before the email was verified; an `admin_` method called by a non-admin; sign-up without a valid invite (`invite-required`) or while closed (`signup-closed`))",
  },
  {
    name: 'MethodNotAllowed',
    outcome: 'allowlist',
    code: -32601,
    message: 'Method not allowed',
    httpStatus: [403],
    reasons: ['method'],
    meaning:
      "method not on the key's method allowlist (a method that does not exist is -32601 with HTTP 200, without data.source)",
  },
  {
    name: 'LimitExceeded',
    outcome: 'limit',
    code: -32005,
    message: 'Limit exceeded',
    httpStatus: [429, 402, 200],
    reasons: ['rate', 'quota', 'connections', 'subscriptions', 'notification-queue', 'block-range', 'response-size'],
    meaning:
      "HTTP 429 with `Retry-After` of at most 1 s: the per-second request rate (`rate`; clients retry, rightly); HTTP 402 without `Retry-After`: the daily/monthly quota is used up (`quota`; `data.period`, `data.resetAt` say which and until when; no client library retries a 402, as with Infura); too many open WebSocket connections for the key (429; WebSocket close 4429) or subscriptions on one connection (`data.limit`); a connection's notifications waiting to be sent passed `websocket.maxQueuedNotifications` or `websocket.maxQueuedBytes` (`data.setting` names it, `data.limit` its value; the last notification of each subscription, then close 4008); HTTP 200: an eth_getLogs over `upstream.getLogsMaxBlockRange` blocks, or a node answer over `upstream.maxResponseBytes` (`data.limit`)",
  },
  {
    name: 'UpstreamUnavailable',
    outcome: 'upstream_error',
    code: -32042,
    message: 'Upstream unavailable',
    httpStatus: [502, 503],
    reasons: ['upstream'],
    meaning: 'node unreachable or answered something that is not JSON-RPC (502), or no healthy node (503)',
  },
  {
    name: 'UpstreamTimeout',
    outcome: 'upstream_error',
    code: -32043,
    message: 'Upstream timeout',
    httpStatus: [504],
    reasons: ['timeout'],
    meaning: 'the node did not answer in time',
  },
  {
    name: 'LimitsBackendUnavailable',
    outcome: 'backend_unavailable',
    code: -32044,
    message: 'Limits backend unavailable',
    httpStatus: [503],
    reasons: ['limits-backend'],
    meaning: 'the shared limiter (Redis) is down: refused rather than served unmetered (`Retry-After: 1`)',
  },
  {
    name: 'StoreUnavailable',
    outcome: 'backend_unavailable',
    code: -32045,
    message: 'Store unavailable',
    httpStatus: [503],
    reasons: ['store'],
    meaning:
      'the account database is down or too slow (account API only; the node API keeps serving known keys): retry shortly',
    accountOnly: true,
  },
  {
    name: 'TooManyFilters',
    outcome: 'limit',
    code: -32000,
    message: 'too many filters',
    httpStatus: [200],
    reasons: ['filters'],
    meaning: "the key's filters are at their cap (`data.limit`): uninstall one or let an idle one expire",
  },
  {
    name: 'FilterNotFound',
    outcome: 'validation',
    code: -32000,
    message: 'filter not found',
    httpStatus: [200],
    reasons: ['filter-not-found'],
    meaning:
      "the filter id is unknown, expired, or another key's or network's: geth's code and message, which ethers and web3 recognise (install a new filter)",
  },
  {
    name: 'FilterStoreUnavailable',
    outcome: 'backend_unavailable',
    code: -32603,
    message: 'Internal error',
    httpStatus: [503],
    reasons: ['filter-store'],
    meaning: 'the shared filter store (Redis) is down: filter calls fail until it is back',
  },
  {
    name: 'NotificationsNotSupported',
    outcome: 'validation',
    code: -32601,
    message: 'notifications not supported',
    httpStatus: [200],
    reasons: ['transport'],
    meaning: 'eth_subscribe / eth_unsubscribe over HTTP: they need a WebSocket connection (-32601, as geth answers)',
  },
] as const satisfies readonly GatewayErrorRow[];

type GatewayErrorTableRow = (typeof GATEWAY_ERRORS)[number];
/** Each row's code by its name, derived from GATEWAY_ERRORS (not restated): `GatewayErrorCode.Unauthorized` is -32016.
 *  -32601 (MethodNotAllowed) is JSON-RPC's "method not found", -32603 (FilterStoreUnavailable) its internal error. */
export const GatewayErrorCode = Object.freeze(Object.fromEntries(GATEWAY_ERRORS.map((r) => [r.name, r.code]))) as {
  readonly [R in GatewayErrorTableRow as R['name']]: R['code'];
};
export type GatewayErrorCode = GatewayErrorTableRow['code'];

export type Reason = (typeof GATEWAY_ERRORS)[number]['reasons'][number];

/** The table as Markdown (README.md carries exactly this; test/contract.test.ts compares). */
export function errorTableMarkdown(): string {
  const rows = GATEWAY_ERRORS.map(
    (r) => `| ${r.code} | ${r.httpStatus.join(', ')} | ${r.reasons.map((w) => `\`${w}\``).join(', ')} | ${r.meaning} |`,
  );
  return ['| code | HTTP | `data.reason` | meaning |', '|---|---|---|---|', ...rows].join('\n');
}

type Data<R extends Reason> = { reason: R; [k: string]: unknown };

const ROW_BY_REASON: ReadonlyMap<string, GatewayErrorRow> = new Map(
  GATEWAY_ERRORS.flatMap((r) => r.reasons.map((w) => [w, r] as const)),
);

/**
 * The one constructor of rpcgate's own errors: the code comes from the table's row of `data.reason` (each reason word
 * is in one row), `data.source` is added, and the HTTP status must be one of the row's (default: its first). Every
 * named constructor below, and any place in src/ that answers with an error of rpcgate's own, goes through it
 * (test/errors-by-table.test.ts finds hand-built ones).
 */
export function gatewayError(
  message: string,
  data: Data<Reason>,
  httpStatus?: number,
  headers?: Record<string, string>,
): RpcError {
  const row = ROW_BY_REASON.get(data.reason);
  if (row === undefined) throw new Error(`gateway error: reason ${data.reason} is in no row of GATEWAY_ERRORS`);
  const status = httpStatus ?? row.httpStatus[0];
  if (!row.httpStatus.includes(status))
    throw new Error(`gateway error: HTTP ${status} is not documented for ${row.name} (${row.httpStatus.join(', ')})`);
  return new RpcError(row.code, message, { source: SOURCE, ...data }, status, headers);
}

/** True when rpcgate produced this error itself (not a node's error passed through). */
export function isGatewayError(e: RpcError): boolean {
  return (e.data as { source?: unknown } | undefined)?.source === SOURCE;
}

/** Rows by code; of two rows sharing a code (-32000, -32601, …) the first, for an error whose reason is no word. */
const ROW_BY_CODE: ReadonlyMap<number, GatewayErrorRow> = new Map(
  [...GATEWAY_ERRORS].reverse().map((r) => [r.code, r]),
);

/** For an error rpcgate built itself (data.source `rpcgate`, a code of the table): its row's metering outcome and its
 *  `data.reason` (a word of the table, else `other`: a bounded label). Undefined for a node's error. */
export function gatewayErrorMeaning(e: RpcError): { outcome: GatewayErrorRow['outcome']; reason: string } | undefined {
  if (!isGatewayError(e)) return undefined;
  const reason = (e.data as { reason?: unknown }).reason;
  const row = typeof reason === 'string' ? ROW_BY_REASON.get(reason) : undefined;
  if (row !== undefined && row.code === e.code) return { outcome: row.outcome, reason: reason as string };
  const byCode = ROW_BY_CODE.get(e.code);
  return byCode === undefined ? undefined : { outcome: byCode.outcome, reason: 'other' };
}

/** Missing, unknown or revoked key; JWT required but missing or invalid; account API: no session, bad credentials. */
export function unauthorized(message: string, data: Data<'key' | 'jwt' | 'session' | 'credentials'>): RpcError {
  return gatewayError(message, data, 401);
}

/** Key not valid for this network or URL shape; origin, IP or contract address not on the allowlist. */
export function forbidden(
  message: string,
  data: Data<
    | 'network'
    | 'url'
    | 'origin'
    | 'ip'
    | 'address'
    | 'email-not-verified'
    | 'admin-only'
    | 'suspended'
    | 'invite-required'
    | 'signup-closed'
  >,
): RpcError {
  return gatewayError(message, data, 403);
}

/** The key's method allowlist does not list this method (it exists: an unknown one is the toolkit's methodNotFound). */
export function methodNotAllowed(method: string): RpcError {
  return gatewayError(`method not allowed for this key: ${method}`, { reason: 'method', method }, 403);
}

export interface LimitInfo {
  limit: number;
  /** e.g. 'second', 'day', 'month'. */
  period: string;
  /** When the window resets: a Date or epoch milliseconds. */
  resetAt: Date | number;
}

/**
 * Rate or quota exceeded. `reason` is `rate` for a per-second limit, `quota` for a longer period, unless given.
 * A rate is HTTP 429 with Retry-After (whole seconds until reset, at least 1): clients retry it, and should. A used-up
 * quota is HTTP 402 without Retry-After, as Infura answers it: every client library retries 429 (ethers until its
 * timeout, viem waiting out Retry-After — hours until UTC midnight), none retries 402; `data.resetAt` says when.
 */
export function limitExceeded(
  info: LimitInfo,
  message?: string,
  now = Date.now(),
  reason?: 'rate' | 'quota',
): RpcError {
  const resetMs = typeof info.resetAt === 'number' ? info.resetAt : info.resetAt.getTime();
  const why = reason ?? (info.period === 'second' ? 'rate' : 'quota');
  const data = { reason: why, limit: info.limit, period: info.period, resetAt: new Date(resetMs).toISOString() };
  const text = message ?? `limit exceeded: ${info.limit} requests per ${info.period}`;
  if (why === 'quota') return gatewayError(text, data, 402);
  const retryAfter = Math.max(1, Math.ceil((resetMs - now) / 1000));
  return gatewayError(text, data, 429, { 'Retry-After': String(retryAfter) });
}

/** No healthy upstream (503), or the upstream failed / answered with something that is not JSON-RPC (502). */
export function upstreamUnavailable(network: string, detail: string, httpStatus: 502 | 503 = 503): RpcError {
  return gatewayError('upstream unavailable', { reason: 'upstream', network, detail }, httpStatus);
}

/** The node did not answer within `upstream.requestTimeoutMs` (or the connect timeout). */
export function upstreamTimeout(network: string, detail: string, timeoutMs?: number): RpcError {
  return gatewayError(
    'upstream timeout',
    { reason: 'timeout', network, detail, ...(timeoutMs === undefined ? {} : { timeoutMs }) },
    504,
  );
}

/** The shared limiter cannot be reached: fail closed (nothing is served unmetered). */
export function limitsBackendUnavailable(): RpcError {
  // A short Retry-After: viem retries a 503 after it (three times), ethers does not retry; neither waits long.
  return gatewayError('limits backend unavailable', { reason: 'limits-backend' }, 503, { 'Retry-After': '1' });
}

/** The account store cannot be reached or is too slow: a fast 503 the client may retry (never a hanging request). */
export function storeUnavailable(): RpcError {
  return gatewayError(
    'store unavailable: the account database is down or not answering; retry shortly',
    { reason: 'store' },
    503,
    { 'retry-after': '5' },
  );
}

/** An eth_getLogs spanning more blocks than the cap: refused before it reaches the node (HTTP 200: per call). */
export function blockRangeTooLarge(limit: number, range: number): RpcError {
  return gatewayError(
    `eth_getLogs block range too large: ${range} blocks, at most ${limit} (narrow fromBlock..toBlock or query by blockHash)`,
    { reason: 'block-range', limit, range },
    200,
  );
}

/** The node's answer to this call is larger than the response size cap (reading stopped there). */
export function responseTooLarge(network: string, limit: number): RpcError {
  return gatewayError(
    `upstream response too large: over ${limit} bytes`,
    { reason: 'response-size', limit, network },
    200,
  );
}

/** The key already holds its cap of open WebSockets (on this replica, or across replicas when they share Redis). */
export function tooManyConnections(limit: number, scope: 'replica' | 'all replicas'): RpcError {
  return gatewayError(
    `too many open WebSocket connections for this key (at most ${limit}, ${scope === 'replica' ? 'on this replica' : 'across replicas'})`,
    { reason: 'connections', limit },
    429,
  );
}

/** The connection already holds its cap of subscriptions. */
export function tooManySubscriptions(limit: number): RpcError {
  return gatewayError(
    `too many subscriptions on this connection (at most ${limit})`,
    { reason: 'subscriptions', limit },
    429,
  );
}

/** A connection's notifications waiting to be sent (for its rate limit, or a slow reader) passed a bound: the last
 *  notification of each subscription carries this, then the socket closes with 4008. */
export function notificationQueueFull(
  limit: 'websocket.maxQueuedNotifications' | 'websocket.maxQueuedBytes',
  max: number,
): RpcError {
  const what = limit === 'websocket.maxQueuedNotifications' ? `${max} notifications` : `${max} bytes`;
  return gatewayError(
    `notification queue full: more than ${what} waiting to be sent on this connection (${limit}); subscribe to less, read faster or stay under the key's rate limit — or the operator raises ${limit}`,
    { reason: 'notification-queue', limit: max, setting: limit },
    200,
  );
}
