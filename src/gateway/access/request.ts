// Request-level and call-level access checks on a principal (after the key and route check in ./keys.ts).
//   request level (before the body is parsed): origin and IP allowlists, then JWT — see ./allowlist.ts, ./jwt.ts;
//   call level (per JSON-RPC call, after params validation; per batch item): method and address allowlists.
// Synchronous unless a JWT must be verified, so the common path makes no promise.
import type { IncomingMessage } from 'node:http';
import type { RpcError } from '../../toolkit/rpc/errors.js';
import { checkCallAllowlists, checkRequestAllowlists } from './allowlist.js';
import { bearerToken, jwtError } from './jwt.js';
import type { Principal } from './keys.js';

export interface RequestInfo {
  /** The Origin header. */
  origin: string | undefined;
  /** The client IP (see clientIp). */
  ip: string | undefined;
  /** The Authorization header. */
  authorization: string | undefined;
}

/** Origin/IP allowlists, then JWT. undefined = allowed; an RpcError (403/401) = refused; a Promise when a JWT is checked. */
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

/** Method and address allowlists for one call; undefined = allowed. */
export function checkCall(p: Principal, method: string, params: readonly unknown[]): RpcError | undefined {
  if (p.kind !== 'app' || p.allowlists === undefined || !p.allowlists.perCall) return undefined;
  return checkCallAllowlists(p.allowlists, method, params);
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
