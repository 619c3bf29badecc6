// The account API's own errors (contracts/account.openrpc.json components.errors), beside the JSON-RPC standard
// ones (packages/toolkit/src/rpc/errors.ts) and rpcgate's shared refusals (src/gateway/errors.ts: unauthorized, forbidden).
// -32010 and -32011 lie outside EIP-1474's -32000..-32006; -32005 keeps its EIP-1474 meaning (limit exceeded).
import { RpcError, invalidParams } from '@rpcgate/toolkit/errors';
import { GatewayErrorCode, forbidden, unauthorized } from '../errors.js';

export const AccountErrorCode = {
  NotFound: -32010,
  Conflict: -32011,
  LimitReached: GatewayErrorCode.LimitExceeded,
} as const;

/** Not found among the caller's objects. Another user's object gets exactly this answer (no existence leak). */
export function notFound(what: string, id: string): RpcError {
  return new RpcError(AccountErrorCode.NotFound, `${what} not found`, { what, id }, 404);
}

/** Conflicts with the current state (email taken; require JWT without a key). */
export function conflict(message: string, data: { field?: string; reason: string }): RpcError {
  return new RpcError(AccountErrorCode.Conflict, message, data, 409);
}

/** A per-user count limit (the 5th network key): nothing was created. */
export function countLimit(what: string, limit: number): RpcError {
  return new RpcError(
    AccountErrorCode.LimitReached,
    `limit reached: at most ${limit} ${what} per user; delete one first`,
    { limit, what },
    409,
  );
}

/** A value the schema accepts but this deployment or this check does not (unknown chain, bad CIDR, wrong PEM). */
export function badValue(param: string, path: string, reason: string): RpcError {
  return invalidParams(`${param}: ${reason}`, { param, path, reason });
}

export const NO_SESSION = unauthorized('not logged in: log in first (no valid session cookie)', { reason: 'session' });
export const BAD_CREDENTIALS = unauthorized('invalid email or password', { reason: 'credentials' });
export const ADMIN_ONLY = forbidden(
  'only an admin of this deployment may call this (config accounts.admins, rpcgate admin grant)',
  {
    reason: 'admin-only',
  },
);
export const SIGNUP_CLOSED = forbidden(
  'sign-up is closed on this deployment: an operator creates accounts (config accounts.signup: closed)',
  { reason: 'signup-closed' },
);

/** Sign-up in `invite` mode without a usable invite: none given, unknown / used / expired / revoked, or bound to
 *  another email. */
export function inviteRequired(why: 'missing' | 'invalid' | 'email'): RpcError {
  const message =
    why === 'missing'
      ? 'sign-up here is by invite only: open the invite link an admin sent you (config accounts.signup: invite)'
      : why === 'email'
        ? 'this invite is for another email address: sign up with the email it was sent to'
        : 'this invite is not valid: it is unknown, already used, expired or revoked — ask an admin for a new one';
  return forbidden(message, { reason: 'invite-required', invite: why });
}

export const SUSPENDED = forbidden('this account is suspended by an operator of this deployment', {
  reason: 'suspended',
});

export function originRefused(origin: string): RpcError {
  const shown = origin.length > 200 ? `${origin.slice(0, 200)}…` : origin;
  return forbidden(`origin ${shown} may not change anything here (Origin check: only this server's own origin)`, {
    reason: 'origin',
    origin: shown,
  });
}
