// The node API's one route table, served over HTTP (./node-route.ts) and WebSocket (./ws-route.ts): both register
// exactly these routes, in this order, so the two transports cannot drift apart. First match wins, so on each host
// `/v2/{key}` (access point A) comes before `/{key}` (B), whose optional key would otherwise take `/v2`.
//   On a host name mapped to a network (config.hostMap): /v2/{key} (A), /{key} (B).
//   On any host, per configured network: /{network}/v2/{key} (A), /{network}/{key} (B).
// The admit sequence both transports start with (key → principal for the route's network and access point, then the
// request's origin, IP and JWT) is here too: `admitKey` and `requestChecks`.
import type { IncomingMessage } from 'node:http';
import {
  Denied,
  checkRequest,
  clientIp,
  identify,
  type AccessContext,
  type AccessPoint,
  type KeyStore,
} from '../access/index.js';
import { Refusal } from '@rpcgate/toolkit/http';
import type { RpcError } from '@rpcgate/toolkit/errors';

/** What a node API route serves: fixed per route, so a request allocates nothing to carry it. */
export interface NodeRoute {
  network: string;
  ap: AccessPoint;
}

/** One route: its path pattern (the key an optional last segment) and what it serves. */
export interface NodeRouteEntry {
  path: string;
  route: NodeRoute;
}

/** The routes of one host (`host` undefined: any host, the network-style paths). */
export interface NodeRouteGroup {
  host?: string;
  routes: NodeRouteEntry[];
}

/** The table: one group per mapped host, then the network-style group; both transports register it in this order. */
export function nodeRouteTable(
  networks: Iterable<string>,
  hostMap: Readonly<Record<string, string>>,
): NodeRouteGroup[] {
  const groups: NodeRouteGroup[] = Object.entries(hostMap).map(([host, network]) => ({
    host,
    routes: [
      { path: '/v2/:key?', route: { network, ap: 'A' } },
      { path: '/:key?', route: { network, ap: 'B' } },
    ],
  }));
  const routes: NodeRouteEntry[] = [];
  for (const network of networks) {
    routes.push({ path: `/${network}/v2/:key?`, route: { network, ap: 'A' } });
    routes.push({ path: `/${network}/:key?`, route: { network, ap: 'B' } });
  }
  groups.push({ routes });
  return groups;
}

/**
 * The first step of every node API request or upgrade: the key names a principal allowed on the route's network and
 * access point (else a Refusal carrying what is known), and the call context starts.
 */
export function admitKey(
  keys: KeyStore,
  req: IncomingMessage,
  rid: string,
  t0: number,
  route: NodeRoute,
  key: string | undefined,
  trustProxy: number,
): AccessContext | Refusal<AccessContext> {
  const p = identify(keys, key, route.network, route.ap);
  const base = { network: route.network, requestId: rid, startedAt: t0 };
  if (p instanceof Denied) return new Refusal(p.error, { ...base, principal: p.principal });
  return { ...base, principal: p, ip: clientIp(req, trustProxy), headers: req.headers };
}

/** The request's origin, IP and JWT against the principal's allowlists (the same checks on both transports). */
export function requestChecks(
  ctx: AccessContext,
  headers: IncomingMessage['headers'] | undefined,
): RpcError | undefined | Promise<RpcError | undefined> {
  const p = ctx.principal;
  if (p === undefined) return undefined;
  return checkRequest(p, { origin: headers?.origin, ip: ctx.ip, authorization: headers?.authorization });
}
