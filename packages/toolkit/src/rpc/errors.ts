// JSON-RPC errors as values: code, message, data and the HTTP status a single request answers with.
// Only the JSON-RPC 2.0 standard errors live here; an application's own codes (rpcgate's: src/gateway/errors.ts)
// are built on RpcError.

/** The JSON-RPC 2.0 standard error codes. */
export const ErrorCode = {
  ParseError: -32700,
  InvalidRequest: -32600,
  MethodNotFound: -32601,
  InvalidParams: -32602,
  InternalError: -32603,
} as const;
export type ErrorCode = (typeof ErrorCode)[keyof typeof ErrorCode];

/** An error answered to a caller: a value, not a fault, so it carries no stack trace — capturing one cost ~8 % of the
 *  CPU of a flood of refused calls (e.g. a key over its quota). A fault behind it keeps its own stack (logged where it
 *  is caught). */
export class RpcError extends Error {
  constructor(
    public code: number,
    message: string,
    public data?: unknown,
    /** HTTP status when this error answers a single request (a batch always answers 200). */
    public httpStatus = 200,
    /** Extra HTTP headers for a single request, e.g. Retry-After. */
    public headers?: Record<string, string>,
  ) {
    const limit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    super(message);
    Error.stackTraceLimit = limit;
    this.name = 'RpcError';
  }
}

export function isRpcError(e: unknown): e is RpcError {
  return e instanceof RpcError;
}

/** Body is not JSON. */
export function parseError(reason?: string): RpcError {
  return new RpcError(
    ErrorCode.ParseError,
    'parse error: body is not valid JSON',
    reason === undefined ? undefined : { reason },
    400,
  );
}

/** Not a valid request object (wrong jsonrpc, method, params or id), or an empty batch. */
export function invalidRequest(reason: string, data?: unknown): RpcError {
  return new RpcError(ErrorCode.InvalidRequest, `invalid request: ${reason}`, data, 400);
}

/** Body or batch over its configured limit. */
export function payloadTooLarge(what: 'body' | 'batch', limit: number, size?: number): RpcError {
  const reason =
    what === 'batch'
      ? `batch of ${size ?? 'too many'} requests exceeds the limit of ${limit}`
      : `body${size === undefined ? '' : ` of ${size} bytes`} exceeds the limit of ${limit} bytes`;
  return new RpcError(ErrorCode.InvalidRequest, `invalid request: ${reason}`, { limit }, 413);
}

/** No JSON-RPC endpoint at this path (HTTP 404): `message` may say which paths are served. */
export function routeNotFound(message = 'not found'): RpcError {
  return new RpcError(ErrorCode.InvalidRequest, message, undefined, 404);
}

/** Method not in the contract (`supported: false`: in the contract but not served here). */
export function methodNotFound(method: string, supported = true): RpcError {
  // Names come from the client: cap what is echoed back.
  const name = method.length > 128 ? `${method.slice(0, 128)}…` : method;
  return new RpcError(ErrorCode.MethodNotFound, `${supported ? 'method not found' : 'method not supported'}: ${name}`);
}

export interface InvalidParamsData {
  /** The param's name from the contract, when the failure is inside one param. */
  param?: string;
  /** JSON pointer into the positional params array, e.g. "/1" or "/0/fromBlock". */
  path?: string;
  reason: string;
  [k: string]: unknown;
}

/** Params fail the contract; `detail` goes into the message ("invalid params: <detail>"). */
export function invalidParams(detail: string, data?: InvalidParamsData): RpcError {
  return new RpcError(ErrorCode.InvalidParams, `invalid params: ${detail}`, data);
}

/** An unexpected failure. Never carries a stack trace or the original message to the client. */
export function internalError(data?: unknown, httpStatus = 500): RpcError {
  return new RpcError(ErrorCode.InternalError, 'Internal error', data, httpStatus);
}

/** A result that does not match the method's result schema (strict mode): a bug or a nonconformant node. `path` is
 *  where in the result (ajv's instance path, "" for the whole value), `schemaPath` which keyword of the result schema
 *  failed (ajv's schema path, when known): both in `data`, and the path in the message. */
export function resultViolation(path: string, reason: string, schemaPath?: string): RpcError {
  return new RpcError(
    ErrorCode.InternalError,
    `internal error: result violates the contract at ${path === '' ? '(the result)' : path}: ${reason}`,
    schemaPath === undefined ? { reason, path } : { reason, path, schemaPath },
    500,
  );
}
