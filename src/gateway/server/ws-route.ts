// The node API over WebSocket, on the same URLs as over HTTP (./node-route.ts):
//   ws://…/{network}/v2/{key}   access point A        ws://…/{network}/{key}   access point B
//   On a host name mapped to a network (config.hostMap): /v2/{key} (A) and /{key} (B). One trailing slash ignored.
//   wss:// behind a TLS-terminating proxy (X-Forwarded-For trusted as over HTTP with `trustProxy`).
//
// At the upgrade, the same access pipeline as an HTTP request (src/gateway/access/pipeline.ts): key → principal,
// network and URL shape (401/403), origin and IP allowlists (403), JWT from the upgrade's Authorization header (401),
// then the per-key cap of open sockets on this replica (`websocket.maxConnectionsPerKey`: 429, -32005 reason
// `connections`). A refusal is a plain HTTP response with the JSON-RPC error envelope as its body, then the socket is
// destroyed; it is metered like an HTTP refusal (one call, method `other`).
// Every message then runs through the same engine as HTTP (packages/toolkit/src/ws/jsonrpc.ts), with its admission hook:
// per-call allowlists and limits count each call exactly as over HTTP, and the call observer meters each one.
// eth_subscribe / eth_unsubscribe find the connection in the call context (`socket`, src/gateway/subscriptions).
import type { Server } from 'node:http';
import type { Logger } from 'pino';
import { Denied, checkRequest, clientIp, identify, type AccessContext, type AccessPoint, type KeyStore } from '../access/index.js';
import { Refusal } from '@rpcgate/toolkit/http';
import type { Engine } from '@rpcgate/toolkit/engine';
import { RpcError } from '@rpcgate/toolkit/errors';
import { UpgradeRouter, createJsonRpcWs, type JsonRpcWs } from '@rpcgate/toolkit/ws';
import type { SocketCallContext } from '../subscriptions/index.js';
import type { CallMeter } from './call-observer.js';

export interface WsRouteOptions {
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
}

interface WsRoute {
  network: string;
  ap: AccessPoint;
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
export function attachNodeWebSockets(server: Server, opts: WsRouteOptions): NodeWebSockets {
  const { keys, logger, meter } = opts;
  const trustProxy = opts.trustProxy ?? 0;
  const perKey = new Map<string, number>();
  const perNetwork = new Map<string, number>();
  const tooMany = new RpcError(-32005, `too many open WebSocket connections for this key (at most ${opts.maxConnectionsPerKey} per replica)`, { source: 'rpcgate', reason: 'connections', limit: opts.maxConnectionsPerKey }, 429);

  const transport: JsonRpcWs<WsRoute> = createJsonRpcWs<AccessContext, WsRoute>({
    engine: opts.engine,
    maxPayload: opts.maxPayloadBytes,
    maxInFlight: opts.maxInFlight,
    maxBufferedBytes: opts.maxBufferedBytes,
    pingIntervalMs: opts.pingIntervalMs,
    admit(req, rid, t0, route, key) {
      const p = identify(keys, key, route.network, route.ap);
      const base = { network: route.network, requestId: rid, startedAt: t0 };
      if (p instanceof Denied) return new Refusal(p.error, { ...base, principal: p.principal });
      const ctx: AccessContext = { ...base, principal: p, ip: clientIp(req, trustProxy), headers: req.headers };
      if ((perKey.get(p.id) ?? 0) >= opts.maxConnectionsPerKey) return new Refusal(tooMany, ctx);
      const checked = checkRequest(p, { origin: req.headers.origin, ip: ctx.ip, authorization: req.headers.authorization });
      if (checked === undefined) return ctx;
      if (checked instanceof RpcError) return new Refusal(checked, ctx);
      return checked.then((err) => (err === undefined ? ctx : new Refusal(err, ctx)));
    },
    refused(ctx, err, t0) {
      meter?.refused(ctx?.network ?? 'other', ctx?.principal, err, t0);
    },
    messageContext(conn, rid, t0): SocketCallContext {
      const c = conn.ctx;
      return { network: c.network, principal: c.principal, ip: c.ip, headers: c.headers, requestId: rid, startedAt: t0, socket: conn };
    },
    opened(conn) {
      const id = conn.ctx.principal?.id;
      if (id !== undefined) perKey.set(id, (perKey.get(id) ?? 0) + 1);
      perNetwork.set(conn.ctx.network, (perNetwork.get(conn.ctx.network) ?? 0) + 1);
    },
    closed(conn) {
      const id = conn.ctx.principal?.id;
      if (id !== undefined) {
        const n = (perKey.get(id) ?? 1) - 1;
        if (n <= 0) perKey.delete(id);
        else perKey.set(id, n);
      }
      perNetwork.set(conn.ctx.network, (perNetwork.get(conn.ctx.network) ?? 1) - 1);
    },
    onError: (err, what) => logger.error({ err }, `websocket ${what} failed`),
  });

  const router = new UpgradeRouter();
  const slash = { trailingSlash: true };
  const serve = (route: WsRoute) => (req: Parameters<JsonRpcWs<WsRoute>['upgrade']>[0], socket: Parameters<JsonRpcWs<WsRoute>['upgrade']>[1], head: Buffer, rid: string, t0: number, key: string | undefined) =>
    transport.upgrade(req, socket, head, rid, t0, route, key);
  for (const [host, network] of Object.entries(opts.hostMap)) {
    router.add('/v2/:key?', serve({ network, ap: 'A' }), { host, ...slash }).add('/:key?', serve({ network, ap: 'B' }), { host, ...slash });
  }
  for (const network of opts.networks) {
    router.add(`/${network}/v2/:key?`, serve({ network, ap: 'A' }), slash).add(`/${network}/:key?`, serve({ network, ap: 'B' }), slash);
  }
  router.notFoundBody = JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32600, message: `not found: open a WebSocket on /{network}/v2/{key} or /{network}/{key} (networks: ${opts.networks.join(', ')})` } });
  router.attach(server, (err, rid) => logger.error({ err, rid }, 'websocket upgrade failed'));

  return {
    get size() {
      return transport.size;
    },
    perNetwork: () => Object.fromEntries(perNetwork),
    close: () => transport.close(),
  };
}
