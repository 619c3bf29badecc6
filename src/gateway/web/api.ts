// The account API through its generated client. Same origin: the browser sends the HttpOnly session cookie itself.
import { createClient, RpcClientError, type AccountClient } from '../../../generated/account/client.js';
import { GatewayErrorCode } from '../errors.js';

export type * from '../../../generated/account/client.js';
export { RpcClientError };

export const api: AccountClient = createClient({
  url: '/api',
  fetch: (input, init) => fetch(input, { ...init, credentials: 'same-origin' }),
});

/** A field-level reading of an error: `field` is the param path (e.g. `/0/name`) when the server named one. */
export interface ShownError {
  message: string;
  field?: string;
  code?: number;
}

/** Turns what the account API threw into text for the user (the server's messages are written for people). */
export function describeError(e: unknown): ShownError {
  if (e instanceof RpcClientError) {
    const data = (e.data ?? {}) as { reason?: unknown; path?: unknown; field?: unknown };
    const reason = typeof data.reason === 'string' ? data.reason : undefined;
    const path = typeof data.path === 'string' ? data.path : typeof data.field === 'string' ? data.field : undefined;
    if (e.code === -32602 && reason)
      return { message: sentence(fieldName(path), humane(reason)), field: path, code: e.code };
    return { message: e.message.charAt(0).toUpperCase() + e.message.slice(1), field: path, code: e.code };
  }
  if (e instanceof TypeError) return { message: 'Cannot reach rpcgate. Check your connection and try again.' };
  return { message: e instanceof Error ? e.message : String(e) };
}

function fieldName(path: string | undefined): string {
  if (!path) return '';
  const last = path.split('/').filter(Boolean).pop();
  return last && !/^\d+$/.test(last) ? last.replace(/([a-z])([A-Z])/g, '$1 $2').toLowerCase() : '';
}

/** The contract's validation reasons (ajv wording) in plain words; anything else as the server wrote it. */
function humane(reason: string): string {
  return reason
    .replace(/^must NOT have fewer than (\d+) characters?$/, 'must be at least $1 characters long')
    .replace(/^must NOT have more than (\d+) characters?$/, 'must be at most $1 characters long')
    .replace(/^must NOT have fewer than (\d+) items?$/, 'needs at least $1')
    .replace(/^must match format "email"$/, 'must be an email address')
    .replace(/^must match pattern .*$/, 'is not in a valid format');
}

function sentence(field: string, reason: string): string {
  const text = field ? `${field} ${reason}` : reason;
  return text.charAt(0).toUpperCase() + text.slice(1) + (/[.!?]$/.test(text) ? '' : '.');
}

export const isUnauthorized = (e: unknown): boolean =>
  e instanceof RpcClientError && e.code === GatewayErrorCode.Unauthorized;
