// The access pipeline of the node API: a request becomes a typed Principal once, then that principal is checked stage
// by stage, each stage its own module (order and answers in ./README.md):
//   1 key → principal       ./keys.ts (KeyStores: static and development keys, then the AccessIndex of ./index.ts)
//   2 network + URL shape   ./route.ts
//     (Content-Type is the transport's: packages/toolkit/src/http/jsonrpc.ts, between stages 2 and 3)
//   3 origin and IP         ./allowlist.ts                 request level, before the body is parsed
//   4 JWT                   ./jwt.ts                       verified while the body is read
//   5 method and address    ./allowlist.ts                 per JSON-RPC call (per batch item), after params validation
//   6 limits                src/gateway/limits             per request, by the principal's LimitSubject
// Stages 5 and 6 run in the engine's admission hook (src/gateway/server/admission.ts); metering attributes calls by
// the same principal (src/gateway/metering/meter.ts meterPrincipal). Synchronous unless a JWT must be verified, so the
// common path makes no promise.
import type { Span } from '@opentelemetry/api';
import type { IncomingMessage } from 'node:http';
import type { CallContext } from '@rpcgate/toolkit/engine';
import type { RpcError } from '@rpcgate/toolkit/errors';
import { forbidden, unauthorized } from '../errors.js';
import { addressListed, checkCallAllowlists, checkRequestAllowlists } from './allowlist.js';
import type { AddressParam } from '../method-meaning.js';
import { bearerToken, jwtError } from './jwt.js';
import type { AccessPoint, KeyStore, Principal } from './keys.js';
import { routeRefusal } from './route.js';

/** A node API call's context: the network and the principal (undefined only on refusals before the key is known). */
export interface AccessContext extends CallContext<Principal> {
  network: string;
  /** The request's trace span (src/gateway/telemetry), only while tracing is on. */
  span?: Span;
}

/** A request refused by stage 1 or 2, with the principal when the key was known (its rate-limit headers, metering). */
export class Denied {
  constructor(
    readonly error: RpcError,
    readonly principal: Principal | undefined,
  ) {}
}

const NO_KEY = new Denied(unauthorized('missing API key: put it in the URL path', { reason: 'key' }), undefined);
const BAD_KEY = new Denied(unauthorized('invalid API key', { reason: 'key' }), undefined);
const SUSPENDED = forbidden('the account of this API key is suspended by an operator of this deployment', {
  reason: 'suspended',
});

/** Stages 1 and 2: the principal behind a key, if it may use this network through this access point. */
export function identify(
  keys: KeyStore,
  key: string | undefined,
  network: string,
  accessPoint: AccessPoint,
): Principal | Denied {
  if (!key) return NO_KEY;
  const p = keys.lookup(key);
  if (p === undefined) return BAD_KEY;
  // An operator suspended the key's account (issue 27): known, refused — on every transport, open WebSockets included
  // (ws-route re-runs identify on every index change). A property read: no query.
  if (p.kind !== 'static' && p.suspended === true) return new Denied(SUSPENDED, p);
  const wrong = routeRefusal(p, network, accessPoint);
  return wrong === undefined ? p : new Denied(wrong, p);
}

/** Stages 1 and 2 as one answer: the principal, or the RpcError to answer (401 unknown/missing, 403 not valid here). */
export function checkKey(
  keys: KeyStore,
  key: string | undefined,
  network: string,
  accessPoint: AccessPoint,
): Principal | RpcError {
  const r = identify(keys, key, network, accessPoint);
  return r instanceof Denied ? r.error : r;
}

export interface RequestInfo {
  /** The Origin header. */
  origin: string | undefined;
  /** The client IP (see clientIp). */
  ip: string | undefined;
  /** The Authorization header. */
  authorization: string | undefined;
}

/** Stages 3 and 4: origin/IP allowlists, then JWT. undefined = allowed; an RpcError (403/401) = refused; a Promise when a JWT is checked. */
export function checkRequest(p: Principal, r: RequestInfo): RpcError | undefined | Promise<RpcError | undefined> {
  if (p.kind !== 'app') return undefined;
  if (p.allowlists !== undefined) {
    const refused = checkRequestAllowlists(p.allowlists, r.origin, r.ip);
    if (refused !== undefined) return refused;
  }
  const token = bearerToken(r.authorization);
  if (token === undefined) {
    if (!p.requireJwt) return undefined;
    return jwtError(p.jwt === undefined ? 'no keys' : 'missing');
  }
  if (p.jwt === undefined) return p.requireJwt ? jwtError('no keys') : undefined;
  return p.jwt.verify(token);
}

/** Whether a principal has per-call checks at all (the engine hook can skip the loop otherwise). */
export function hasCallChecks(p: Principal): boolean {
  return p.kind === 'app' && p.allowlists !== undefined && p.allowlists.perCall;
}

/** Stage 5: method and address allowlists for one call (`addressParams`: the method's, from the contract); undefined = allowed. */
export function checkCall(
  p: Principal,
  method: string,
  params: readonly unknown[],
  addressParams: readonly AddressParam[] | undefined,
): RpcError | undefined {
  if (p.kind !== 'app' || p.allowlists === undefined || !p.allowlists.perCall) return undefined;
  return checkCallAllowlists(p.allowlists, method, params, addressParams);
}

/** Whether a contract address's logs may be handed to this principal (filter polls, log subscriptions): only an app
 *  with an address allowlist is restricted. */
export function addressVisible(p: Principal | undefined, address: unknown): boolean {
  return p?.kind !== 'app' || addressListed(p.allowlists, address);
}

/**
 * The client's IP: the socket's peer, or with `trustProxy` hops (behind that many reverse proxies that append to
 * X-Forwarded-For) the address the outermost trusted proxy saw — the hops-th entry from the right. Entries further
 * left are client-supplied and never trusted. With too few entries, the leftmost one is used.
 */
export function clientIp(req: IncomingMessage, trustProxy: number): string | undefined {
  const peer = req.socket.remoteAddress;
  if (trustProxy <= 0) return peer;
  const xff = req.headers['x-forwarded-for'];
  if (xff === undefined) return peer;
  const list = (Array.isArray(xff) ? xff.join(',') : xff).split(',');
  const i = Math.max(0, list.length - trustProxy);
  const ip = list[i].trim();
  return ip === '' ? peer : ip;
}
