// The upstream transport seam: how one node is reached. The pool (batching, breaker, hedge/retry) speaks only to this
// interface, so a new kind of upstream (HTTP, WebSocket, …) is one new file under transports/ and the failsafe logic
// never learns how bytes travel. A transport that can push (a WebSocket) also offers `push`, which the subscription
// feeds use. Kept small on purpose: send a serialised JSON-RPC body and get the raw answer; subscribe and get
// notifications.
import type { CostClass } from '../method-meaning.js';

/** Why a request to one upstream failed; decides breaker accounting and whether calls may be resent. `limited`: the
 *  upstream answered HTTP 429 (over its own rate limit; the request was not processed). */
export type TransportErrorKind = 'connect' | 'timeout' | 'http' | 'body' | 'size' | 'refused' | 'aborted' | 'limited';

export class TransportError extends Error {
  constructor(
    readonly kind: TransportErrorKind,
    message: string,
    /** true when the request cannot have reached the node (safe to resend anything). */
    readonly notSent: boolean,
    /** `limited`: the answer's Retry-After in ms, when it had one. */
    readonly retryAfterMs?: number,
  ) {
    super(message);
  }
}

export interface SendOptions {
  readonly cls: CostClass;
  /** Aborts the request (the call's deadline passed, a hedge won). */
  readonly signal?: AbortSignal;
  /** The latest deadline of the calls carried (performance.now() based), a backstop for transports without one. */
  readonly deadlineMs: number;
  /** W3C trace context of the request's span (tracing on): sent as the `traceparent` header where there are headers. */
  readonly traceparent?: string;
}

export interface UpstreamTransport {
  readonly kind: 'http' | 'ws';
  /** For logs and metrics: host:port, never credentials or path. */
  readonly label: string;
  /** One JSON-RPC request body (single or batch, already serialised) → the raw response text. Rejects with a
   *  TransportError (connect | timeout | http | body | size | refused | aborted, and whether it cannot have been
   *  sent). Ids in the body are the pool's; a transport that multiplexes (a socket) rewrites and restores them. */
  send(body: string, opts: SendOptions): Promise<string>;
  /** Present when the upstream can push (a WebSocket). */
  readonly push?: PushTransport;
  close(): Promise<void>;
}

export interface PushSink {
  /** One notification's `params.result` for this subscription. */
  notify(result: unknown): void;
  /** The subscription was interrupted (socket dropped) and is live again: notifications in between are missing. */
  gap(reason: string): void;
}

export interface PushTransport {
  /** eth_subscribe(params) on the upstream. Survives reconnects: after one, it resubscribes by itself (retrying past
   *  an open breaker) and calls sink.gap so the consumer can fill what it missed. Returns the unsubscribe. */
  subscribe(params: readonly unknown[], sink: PushSink): Promise<() => Promise<void>>;
  /** Socket up/down, for health and for consumers falling back to polling. Returns the unlisten. */
  onState(listener: (up: boolean) => void): () => void;
  /** Whether the socket is up now. */
  readonly up: boolean;
}
