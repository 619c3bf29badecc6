// The retry policy: which failures a call may be sent again after, and how often. A call is resent after a transport
// failure when its method is retryable (x-gateway.retryable) or when the request cannot have reached the node; after
// a node error only when the method is retryable and the error is listed (codes, or message substrings). Never past
// maxAttempts or the call's deadline — eth_sendRawTransaction, not retryable, is never resent once it may have left.
import type { RpcError } from '@rpcgate/toolkit/errors';
import type { UpstreamConfig } from '../../config/config.js';

export class RetryPolicy {
  private readonly codes: ReadonlySet<number>;
  private readonly messages: readonly string[];
  readonly maxAttempts: number;
  /** Wait before trying again when every upstream was tried already. */
  readonly delayMs: number;

  constructor(cfg: UpstreamConfig['retry']) {
    this.codes = new Set(cfg.nodeErrorCodes);
    this.messages = cfg.nodeErrorMessages.map((m) => m.toLowerCase());
    this.maxAttempts = cfg.maxAttempts;
    this.delayMs = cfg.delayMs;
  }

  /** A node's error that a retryable call may be resent after. */
  retryableNodeError(err: RpcError): boolean {
    if (this.codes.has(err.code)) return true;
    const m = err.message.toLowerCase();
    return this.messages.some((s) => m.includes(s));
  }

  /** May a call be sent again: its method allows it (or it cannot have been sent), attempts and time are left. */
  may(retryable: boolean, notSent: boolean, attempts: number, deadline: number, now: number): boolean {
    return (retryable || notSent) && attempts < this.maxAttempts && now < deadline;
  }
}
