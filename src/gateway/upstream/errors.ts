// The upstream's errors, in the shapes of src/toolkit/rpc/errors.ts (DESIGN.md's table): which network, and why.
import { RpcError, upstreamUnavailable as unavailable, upstreamTimeout as timeout } from '../../toolkit/rpc/errors.js';

/** No healthy upstream (503), or every upstream tried failed to connect / answered 5xx (502). */
export function upstreamUnavailable(network: string, reason: string, httpStatus: 502 | 503 = 503): RpcError {
  return unavailable({ network, reason }, httpStatus);
}

/** The node did not answer within `upstream.requestTimeoutMs` (or the connect timeout). */
export function upstreamTimeout(network: string, reason: string, timeoutMs?: number): RpcError {
  return timeout({ network, reason, ...(timeoutMs === undefined ? {} : { timeoutMs }) });
}

/** The node answered, but not with JSON-RPC we can map back to the call. */
export function upstreamBadResponse(network: string, reason: string): RpcError {
  return unavailable({ network, reason }, 502);
}

/** The node's own JSON-RPC error, passed through unchanged with HTTP 200. */
export function nodeError(code: number, message: string, data: unknown): RpcError {
  return new RpcError(code, message, data, 200);
}
