// JSON-RPC over one WebSocket as a client Transport: calls and batches are sent as they come and their answers matched
// by id, so any number may be in flight. The socket is the platform's WebSocket (browsers, Node ≥ 22) or any
// constructor of the same interface passed in (e.g. the `ws` package's on Node 20); the client depends on neither.
import { RpcClientError, type Transport } from './runtime.js';

/** The part of the WHATWG WebSocket interface the transport uses. */
export interface WebSocketLike {
  readonly readyState: number;
  send(data: string): void;
  close(code?: number, reason?: string): void;
  addEventListener(type: 'open' | 'message' | 'close' | 'error', listener: (event: { data?: unknown }) => void): void;
}

export interface WebSocketTransportOptions {
  /** WebSocket constructor; defaults to the global `WebSocket`. */
  WebSocket?: new (
    url: string,
  ) => WebSocketLike;
}

/** A {@link Transport} that also closes its socket. */
export interface WebSocketTransport extends Transport {
  close(): void;
}

/** JSON-RPC over a WebSocket to `url` (`ws://` or `wss://`), opened on first use. */
export function webSocketTransport(url: string, options: WebSocketTransportOptions = {}): WebSocketTransport {
  const Ctor = options.WebSocket ?? (globalThis as { WebSocket?: new (url: string) => WebSocketLike }).WebSocket;
  if (typeof Ctor !== 'function')
    throw new TypeError('no WebSocket implementation: pass options.WebSocket (e.g. the ws package)');
  let socket: Promise<WebSocketLike> | undefined;
  // Waiting callers by the request id (a batch: by its first id).
  const waiting = new Map<unknown, { ok: (payload: unknown) => void; fail: (e: Error) => void }>();
  const failAll = (e: Error) => {
    for (const w of waiting.values()) w.fail(e);
    waiting.clear();
    socket = undefined;
  };
  const open = (): Promise<WebSocketLike> =>
    (socket ??= new Promise((resolve, reject) => {
      const ws = new Ctor(url);
      ws.addEventListener('open', () => resolve(ws));
      ws.addEventListener('error', () => reject(new RpcClientError(-32603, `WebSocket ${url}: connection failed`)));
      ws.addEventListener('close', () => failAll(new RpcClientError(-32603, `WebSocket ${url}: closed`)));
      ws.addEventListener('message', ({ data }) => {
        let payload: unknown;
        try {
          payload = JSON.parse(String(data));
        } catch {
          return; // not JSON-RPC: nothing to match it with
        }
        const key = Array.isArray(payload)
          ? (payload.find((e) => e && typeof e === 'object' && 'id' in e) as { id?: unknown } | undefined)?.id
          : (payload as { id?: unknown } | null)?.id;
        const w = waiting.get(key);
        if (w) waiting.delete(key), w.ok(payload);
      });
    }));
  return {
    async send(message) {
      const ws = await open();
      const ids = (Array.isArray(message) ? message : [message]).map((m) => (m as { id?: unknown }).id);
      return new Promise((resolve, reject) => {
        // A batch answer is matched by any of its ids: register each, resolve once.
        const entry = {
          ok: (payload: unknown) => {
            for (const id of ids) waiting.delete(id);
            resolve({ payload });
          },
          fail: reject,
        };
        for (const id of ids) waiting.set(id, entry);
        ws.send(JSON.stringify(message));
      });
    },
    close() {
      void socket?.then(
        (ws) => ws.close(1000),
        () => undefined,
      );
      failAll(new RpcClientError(-32603, `WebSocket ${url}: closed`));
    },
  };
}
