// The upstream's errors: unavailable and timeout are rows of src/gateway/errors.ts; a node's own error passes through.
import { RpcError } from '@rpcgate/toolkit/errors';
import { upstreamUnavailable } from '../errors.js';

export { upstreamTimeout, upstreamUnavailable, responseTooLarge } from '../errors.js';

/** The node answered, but not with JSON-RPC we can map back to the call. */
export function upstreamBadResponse(network: string, detail: string): RpcError {
  return upstreamUnavailable(network, detail, 502);
}

/** The node's own JSON-RPC error, passed through unchanged with HTTP 200 (no data.source added). */
export function nodeError(code: number, message: string, data: unknown): RpcError {
  return new RpcError(code, message, data, 200);
}
