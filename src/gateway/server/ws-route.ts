// The node API over WebSocket, on the same URLs as over HTTP (./node-route.ts):
//   ws://…/{network}/v2/{key}   access point A        ws://…/{network}/{key}   access point B
//   On a host name mapped to a network (config.hostMap): /v2/{key} (A) and /{key} (B). One trailing slash ignored.
//   wss:// behind a TLS-terminating proxy (X-Forwarded-For trusted as over HTTP with `trustProxy`).
//
// At the upgrade, the same access pipeline as an HTTP request (src/gateway/access/pipeline.ts): key → principal,
// network and URL shape (401/403), origin and IP allowlists (403), JWT from the upgrade's Authorization header (401),
// then the per-key cap of open sockets (`websocket.maxConnectionsPerKey`: 429, -32005 reason `connections`; counted
// across replicas through Redis when the service has it, src/gateway/limits/connections.ts). A refused upgrade is
// accepted all the same (packages/toolkit/src/ws/jsonrpc.ts): each call on it gets the refusal as its JSON-RPC error (its id
// echoed), then the socket closes with 4000 + the HTTP status HTTP would have answered — 4401 (key, JWT), 4403
// (network, URL shape, origin, IP), 4429 (too many sockets for the key) — so WebSocket clients show the cause (an
// HTTP answer to the upgrade is shown by none). It is metered like an HTTP refusal (one call, method `other`).
// The cap is taken when the checks pass (after an asynchronous JWT check, not before it: parallel upgrades cannot
// all pass a count that none has raised yet) and given back when the TCP socket closes, whatever happened between.
//
// A socket lives longer than the credential that opened it. After every change of the key index (a key revoked,
// rotated or deleted, an app deleted, its allowlists or JWT keys changed — on every replica within the index's poll,
// src/gateway/access/index.ts) each open socket's key is checked again through the same pipeline, with the upgrade's
// Origin, IP and Authorization; and a socket opened with a JWT ends when the token expires (exp + the clock
// tolerance, as HTTP refuses it). A socket that no longer passes gets, per subscription, a last eth_subscription
// notification with the error, then one JSON-RPC error response (id null) with the error, and closes with
// 4000 + the error's HTTP status: 4401 (key or JWT no longer valid) or 4403 (not allowed any more).
// Every message then runs through the same engine as HTTP (packages/toolkit/src/ws/jsonrpc.ts), with its admission hook:
// per-call allowlists and limits count each call exactly as over HTTP, and the call observer meters each one.
// eth_subscribe / eth_unsubscribe find the connection in the call context (`socket`, src/gateway/subscriptions).
import type { Server } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Logger } from 'pino';
import { decodeJwt } from 'jose';
import { Denied, bearerToken, identify, type AccessContext, type KeyStore, type Principal } from '../access/index.js';
import { CLOCK_TOLERANCE_SEC, jwtError } from '../access/jwt.js';
import { Refusal } from '@rpcgate/toolkit/http';
import { errorResponse, type Engine } from '@rpcgate/toolkit/engine';
import { type RpcError, routeNotFound } from '@rpcgate/toolkit/errors';
import {
  UpgradeRouter,
  createJsonRpcWs,
  refusalCloseCode,
  type JsonRpcWs,
  type WsConnection,
} from '@rpcgate/toolkit/ws';
import { MemoryConnectionSlots, type ConnectionSlot, type ConnectionSlots } from '../limits/connections.js';
import type { SocketCallContext } from '../subscriptions/index.js';
import type { CallMeter } from './call-observer.js';
import { tooManyConnections } from '../errors.js';
import { admitKey, nodeRouteTable, requestChecks, type NodeRoute } from './route-table.js';

export interface NodeRouteOptions {
  engine: Engine<AccessContext>;
  keys: KeyStore;
  networks: readonly string[];
  hostMap: Readonly<Record<string, string>>;
  logger: Logger;
  trustProxy?: number;
  meter?: CallMeter;
  maxPayloadBytes: number;
  maxInFlight: number;
  maxBufferedBytes: number;
  pingIntervalMs: number;
  maxConnectionsPerKey: number;
  /** Where connection slots are counted (default: this replica; with Redis, shared by every replica). */
  slots?: ConnectionSlots;
  /** Ends a connection's subscriptions with a last error notification each (its credential no longer holds). */
  endSubscriptions?: (conn: WsConnection<AccessContext>, err: RpcError) => void;
}

/** What a connection was opened with: checked again when the key index changes. */
interface Credential {
  key: string;
  route: NodeRoute;
  /** When the upgrade's JWT expires (epoch ms, with the clock tolerance), if one was verified. */
  jwtExpiresAt?: number;
  timer?: NodeJS.Timeout;
}

export interface NodeWebSockets {
  /** Open connections on this replica. */
  readonly size: number;
  /** Open connections per network (metrics). */
  perNetwork(): Record<string, number>;
  /** Closes every connection with 1001 (service stop). */
  close(): Promise<void>;
}

/** Serves WebSocket upgrades of the node API URLs on `server`. */
export function attachNodeWebSockets(server: Server, opts: NodeRouteOptions): NodeWebSockets {
  const { keys, logger, meter } = opts;
  const trustProxy = opts.trustProxy ?? 0;
  const perNetwork = new Map<string, number>();
  const slots = opts.slots ?? new MemoryConnectionSlots();
  const tooMany = tooManyConnections(opts.maxConnectionsPerKey, slots.scope);

  const credentials = new Map<WsConnection<AccessContext>, Credential>();
  /** Credentials of admitted upgrades not yet open (the connection object does not exist until the handshake). */
  const admitted = new WeakMap<AccessContext, Credential>();

  /** Takes one of the principal's connection slots until the TCP socket closes; a Refusal when none is left. */
  function reserve(
    ctx: AccessContext,
    socket: Duplex,
  ): AccessContext | Refusal<AccessContext> | Promise<AccessContext | Refusal<AccessContext>> {
    let gone = false;
    let slot: ConnectionSlot | undefined;
    socket.once('close', () => {
      gone = true;
      slot?.release();
    });
    const got = (s: ConnectionSlot | undefined) => {
      if (s === undefined) return new Refusal(tooMany, ctx);
      slot = s;
      // Closed while Redis decided: nothing will release it later.
      if (gone) s.release();
      return ctx;
    };
    const taken = slots.take(ctx.principal!.id, opts.maxConnectionsPerKey);
    return taken instanceof Promise ? taken.then(got) : got(taken);
  }

  /** The socket's credential no longer holds: last error notifications, one error response, then 4401 / 4403. */
  function end(conn: WsConnection<AccessContext>, err: RpcError): void {
    if (conn.closed) return;
    opts.endSubscriptions?.(conn, err);
    conn.send(errorResponse(err).body!);
    conn.close(refusalCloseCode(err), (err.data as { reason?: string } | undefined)?.reason ?? 'refused');
  }

  /** The same checks as at the upgrade, for an open socket; the new principal when it changed and still passes. */
  function recheck(conn: WsConnection<AccessContext>, cred: Credential): void {
    const p = identify(keys, cred.key, cred.route.network, cred.route.ap);
    if (p instanceof Denied) return end(conn, p.error);
    if (p === conn.ctx.principal) return;
    const checked = requestChecks({ ...conn.ctx, principal: p }, conn.ctx.headers);
    const apply = (err: RpcError | undefined) => (err === undefined ? swap(conn, p) : end(conn, err));
    if (checked instanceof Promise)
      checked.then(apply, (e: unknown) => logger.error({ err: e }, 'websocket credential re-check failed'));
    else apply(checked);
  }

  function swap(conn: WsConnection<AccessContext>, p: Principal): void {
    // Later calls on this socket see the new allowlists and limits (messageContext reads conn.ctx.principal).
    if (!conn.closed) conn.ctx.principal = p;
  }

  /** Ends the socket when its JWT expires (setTimeout's longest delay is 2^31-1 ms: a later expiry re-arms). */
  function armExpiry(conn: WsConnection<AccessContext>, cred: Credential): void {
    if (cred.jwtExpiresAt === undefined || conn.closed) return;
    const ms = cred.jwtExpiresAt - Date.now();
    cred.timer = setTimeout(
      () => (ms > MAX_TIMER_MS ? armExpiry(conn, cred) : end(conn, jwtError('expired'))),
      Math.min(Math.max(0, ms), MAX_TIMER_MS),
    );
    cred.timer.unref();
  }

  const offChange = keys.onChange?.(() => {
    for (const [conn, cred] of credentials) recheck(conn, cred);
  });

  const transport: JsonRpcWs<NodeRoute> = createJsonRpcWs<AccessContext, NodeRoute>({
    engine: opts.engine,
    maxPayload: opts.maxPayloadBytes,
    maxInFlight: opts.maxInFlight,
    maxBufferedBytes: opts.maxBufferedBytes,
    pingIntervalMs: opts.pingIntervalMs,
    admit(req, rid, t0, route, key) {
      const ctx = admitKey(keys, req, rid, t0, route, key, trustProxy);
      if (ctx instanceof Refusal) return ctx;
      // The socket keeps of its headers only what re-checking its credential reads (requestChecks), not all of them
      // for its whole life.
      const headers = req.headers;
      ctx.headers = { origin: headers.origin, authorization: headers.authorization };
      const p = ctx.principal!;
      // Cheap refusal before any JWT work; the slot itself is taken once every check has passed.
      if (slots.held(p.id) >= opts.maxConnectionsPerKey) return new Refusal(tooMany, ctx);
      const token = p.kind === 'app' && p.jwt !== undefined ? bearerToken(headers.authorization) : undefined;
      const pass = (err: RpcError | undefined) => {
        if (err !== undefined) return new Refusal(err, ctx);
        admitted.set(ctx, { key: key!, route, jwtExpiresAt: token === undefined ? undefined : expiresAt(token) });
        return reserve(ctx, req.socket);
      };
      const checked = requestChecks(ctx, headers);
      return checked instanceof Promise ? checked.then(pass) : pass(checked);
    },
    refused(ctx, err, t0) {
      meter?.refused(ctx?.network ?? 'other', ctx?.principal, err, t0);
    },
    messageContext(conn, rid, t0): SocketCallContext {
      const c = conn.ctx;
      return {
        network: c.network,
        principal: c.principal,
        ip: c.ip,
        headers: c.headers,
        requestId: rid,
        startedAt: t0,
        socket: conn,
      };
    },
    opened(conn) {
      perNetwork.set(conn.ctx.network, (perNetwork.get(conn.ctx.network) ?? 0) + 1);
      const cred = admitted.get(conn.ctx);
      if (cred === undefined) return;
      credentials.set(conn, cred);
      armExpiry(conn, cred);
      // A change of the index between the check and the handshake: check once more now.
      recheck(conn, cred);
    },
    closed(conn) {
      const cred = credentials.get(conn);
      if (cred !== undefined) {
        clearTimeout(cred.timer);
        credentials.delete(conn);
      }
      perNetwork.set(conn.ctx.network, (perNetwork.get(conn.ctx.network) ?? 1) - 1);
    },
    onError: (err, what) => logger.error({ err }, `websocket ${what} failed`),
  });

  const router = new UpgradeRouter();
  const slash = { trailingSlash: true };
  const serve =
    (route: NodeRoute) =>
    (
      req: Parameters<JsonRpcWs<NodeRoute>['upgrade']>[0],
      socket: Parameters<JsonRpcWs<NodeRoute>['upgrade']>[1],
      head: Buffer,
      rid: string,
      t0: number,
      key: string | undefined,
    ) =>
      transport.upgrade(req, socket, head, rid, t0, route, key);
  for (const { host, routes } of nodeRouteTable(opts.networks, opts.hostMap))
    for (const { path, route } of routes) router.add(path, serve(route), { host, ...slash });
  router.notFoundBody = errorResponse(
    routeNotFound(
      `not found: open a WebSocket on /{network}/v2/{key} or /{network}/{key} (networks: ${opts.networks.join(', ')})`,
    ),
  ).body as string;
  router.attach(server, (err, rid) => logger.error({ err, rid }, 'websocket upgrade failed'));

  return {
    get size() {
      return transport.size;
    },
    perNetwork: () => Object.fromEntries(perNetwork),
    close: async () => {
      offChange?.();
      await transport.close();
      await slots.close();
    },
  };
}

const MAX_TIMER_MS = 2 ** 31 - 1;

/** When a verified JWT stops being accepted: exp plus the clock tolerance (epoch ms); undefined without exp. */
function expiresAt(token: string): number | undefined {
  try {
    const exp = decodeJwt(token).exp;
    return typeof exp === 'number' ? (exp + CLOCK_TOLERANCE_SEC) * 1000 : undefined;
  } catch {
    return undefined;
  }
}
