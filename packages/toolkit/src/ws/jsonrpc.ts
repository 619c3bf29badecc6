// JSON-RPC 2.0 over WebSocket in front of an Engine (packages/toolkit/src/rpc/engine.ts), beside the HTTP transport
// (packages/toolkit/src/http/jsonrpc.ts) and on the same hooks. It knows nothing of who calls: the server's hooks decide.
//
// The upgrade, in this order:
//   admit(req, …)   the connection's context, or a Refusal. May be a Promise (e.g. a JWT check).
//   handshake       the `ws` package (RFC 6455); a bad handshake is its 400.
// A refused upgrade is still accepted: no WebSocket client shows an HTTP answer to its upgrade (ethers' provider
// throws an unhandled 'error' that ends the process, viem says "Unexpected server response: 401", web3.js never
// settles). Each message on it is answered with the refusal as a JSON-RPC error naming the message's ids (a batch:
// one per item with an id), then the socket closes with 4000 + the refusal's HTTP status (4401, 4403, 4429, …;
// reason: the error's message) REFUSED_GRACE_MS after the first answer, or REFUSED_IDLE_MS after the handshake if
// no message comes. It never reaches the engine or the `opened` hook. At most `maxRefusedOpen` such sockets are open
// at once (a flood of bad keys holds no more): beyond it a refusal is a plain HTTP answer (its status, the JSON-RPC
// error envelope as the body, `connection: close`), as before.
// Each text message goes through `engine.handle(body, messageContext(conn, …))`: single calls, batches and
// notifications exactly as over HTTP (a notification or a batch of only notifications gets no answer). Binary
// messages are read as UTF-8 text too (some clients send JSON in binary frames).
//
// Bounds (close codes are part of the contract, see CLOSE):
//   maxPayload        a bigger message closes with 1009 (the `ws` package's own check, before the message is buffered).
//   maxInFlight       messages of one connection running at once; beyond it the socket is not read until one finishes
//                     (TCP backpressure, nothing refused or dropped).
//   maxBufferedBytes  bytes queued for a peer that does not read (socket.bufferedAmount); a send that finds more closes
//                     with 4008 and cuts the connection after a short grace, instead of buffering without bound.
//   pingIntervalMs    a ping every interval; a peer that did not pong since the previous one is terminated.
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type RawData, type WebSocket } from 'ws';
import { refusalResponse, type CallContext, type Engine } from '../rpc/engine.js';
import type { RpcError } from '../rpc/errors.js';
import { Refusal } from '../http/jsonrpc.js';

/** Close codes this transport uses (4000–4999 are the application's own range in RFC 6455). */
export const CLOSE = {
  /** Server stopping. */
  goingAway: 1001,
  /** Message over maxPayload (sent by the `ws` package). */
  tooBig: 1009,
  /** The peer does not read: its send buffer passed maxBufferedBytes. */
  slowConsumer: 4008,
} as const;

const STATUS_TEXT: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  429: 'Too Many Requests',
  500: 'Internal Server Error',
  503: 'Service Unavailable',
};
/** After a close frame to a peer that does not read, how long before the TCP connection is cut. */
const CLOSE_GRACE_MS = 1000;
/** A refused socket: how long it waits for a first message, and how long it stays after its first answer (further
 *  calls sent at once get the same answer). */
export const REFUSED_IDLE_MS = 3000;
export const REFUSED_GRACE_MS = 250;

/** The close code of a refusal: 4000 + its HTTP status (RFC 6455 leaves 4000–4999 to the application). */
export function refusalCloseCode(err: RpcError): number {
  return 4000 + (err.httpStatus >= 100 && err.httpStatus <= 999 ? err.httpStatus : 500);
}

/** A close reason is at most 123 bytes (RFC 6455 §5.5): the message, cut on a character boundary. */
export function closeReason(text: string): string {
  if (Buffer.byteLength(text) <= 123) return text;
  let out = '';
  for (const ch of text) {
    if (Buffer.byteLength(out + ch) > 120) break;
    out += ch;
  }
  return `${out}…`;
}

/** One open connection, as the server's hooks and handlers see it. */
export class WsConnection<C> {
  /** Per-connection state for the server (e.g. its subscriptions); the transport never reads it. */
  state: unknown;
  closed = false;
  inFlight = 0;
  alive = true;
  paused = false;
  private readonly closers: Array<(code: number) => void> = [];

  constructor(
    readonly id: number,
    readonly ctx: C,
    readonly socket: WebSocket,
    private readonly maxBufferedBytes: number,
  ) {}

  /** Sends a text frame; false (and the connection closing with 4008) when the peer has too much unread already. */
  send(text: string): boolean {
    if (this.closed) return false;
    // Checked before queueing: one message of any size goes out; a peer that leaves more than the cap unread is cut.
    if (this.socket.bufferedAmount > this.maxBufferedBytes) {
      this.close(CLOSE.slowConsumer, 'slow consumer: send buffer full');
      return false;
    }
    this.socket.send(text);
    return true;
  }

  /**
   * Sends text frames in one write to the kernel (the TCP socket corked around them); returns how many went out (fewer
   * than given when the peer's unread data passed the cap — the connection is then closing, as with `send`). A
   * loopback or LAN write costs ~10 µs of the sender's CPU whatever its size, so a subscriber owed a block's many logs
   * costs one write, not one per log.
   */
  sendAll(texts: readonly string[]): number {
    // ws writes each frame on its own (cork, header, payload, uncork): corked outside, the frames leave together.
    const tcp = (this.socket as unknown as { _socket?: { cork?(): void; uncork?(): void } })._socket;
    const batch = texts.length > 1 && typeof tcp?.cork === 'function' && typeof tcp.uncork === 'function';
    if (batch) tcp.cork!();
    let sent = 0;
    try {
      for (const t of texts) {
        if (!this.send(t)) break;
        sent++;
      }
    } finally {
      if (batch) tcp.uncork!();
    }
    return sent;
  }

  /** Closes with a code and reason; the TCP connection is cut after a short grace if the peer does not answer. */
  close(code: number, reason: string): void {
    if (this.closed) return;
    this.closed = true;
    this.socket.close(code, reason);
    setTimeout(() => this.socket.terminate(), CLOSE_GRACE_MS).unref();
    this.fireClosed(code);
  }

  /** Runs `fn` once when the connection closes (any reason). */
  onClose(fn: (code: number) => void): void {
    if (this.closed) fn(0);
    else this.closers.push(fn);
  }

  /** @internal */
  fireClosed(code: number): void {
    this.closed = true;
    const fns = this.closers.splice(0);
    for (const fn of fns) fn(code);
  }
}

export interface JsonRpcWsOptions<C extends CallContext, R> {
  engine: Engine<C>;
  maxPayload: number;
  maxInFlight: number;
  maxBufferedBytes: number;
  pingIntervalMs: number;
  /** Refused sockets open at once (answered per call, then closed); beyond it refused upgrades get HTTP. Default 1024. */
  maxRefusedOpen?: number;
  /** At the upgrade: the connection's context, or why it is refused (answered as HTTP with the error's status). */
  admit(
    req: IncomingMessage,
    rid: string,
    t0: number,
    route: R,
    capture: string | undefined,
  ): C | Refusal<C> | Promise<C | Refusal<C>>;
  /** Each refusal at the upgrade, once (e.g. metering). */
  refused?(ctx: C | undefined, err: RpcError, t0: number): void;
  /** The context of one message (a fresh request id and start time; the connection for handlers that need it). */
  messageContext(conn: WsConnection<C>, rid: string, t0: number): C;
  /** A connection opened / closed (e.g. per-key counts, subscriptions). */
  opened?(conn: WsConnection<C>): void;
  closed?(conn: WsConnection<C>, code: number): void;
  /** Unexpected failures (the engine or a hook rejected). */
  onError(err: unknown, what: string): void;
}

export interface JsonRpcWs<R> {
  /** Serves an upgrade request whose route matched. */
  upgrade(
    req: IncomingMessage,
    socket: Duplex,
    head: Buffer,
    rid: string,
    t0: number,
    route: R,
    capture: string | undefined,
  ): void;
  /** Open connections. */
  readonly size: number;
  /** Closes every connection (1001 by default) and stops the keep-alive timer; resolves once all are gone (bounded). */
  close(code?: number, reason?: string, timeoutMs?: number): Promise<void>;
}

/** Answers an upgrade request with a plain HTTP response and destroys the socket once it is written. */
export function refuseUpgrade(
  socket: Duplex,
  status: number,
  body: string,
  headers: Record<string, string> = {},
  rid?: string,
): void {
  if (socket.destroyed) return;
  let h = `HTTP/1.1 ${status} ${STATUS_TEXT[status] ?? 'Error'}\r\nconnection: close\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n`;
  if (rid !== undefined) h += `x-request-id: ${rid}\r\n`;
  for (const k in headers) h += `${k}: ${headers[k]}\r\n`;
  socket.end(`${h}\r\n${body}`, () => socket.destroy());
  // A peer that never reads must not keep the socket open.
  setTimeout(() => socket.destroy(), CLOSE_GRACE_MS).unref();
}

let connectionIds = 0;

export function createJsonRpcWs<C extends CallContext, R>(opts: JsonRpcWsOptions<C, R>): JsonRpcWs<R> {
  const { engine, admit, refused, messageContext, onError } = opts;
  const wss = new WebSocketServer({
    noServer: true,
    maxPayload: opts.maxPayload,
    clientTracking: false,
    perMessageDeflate: false,
  });
  const open = new Set<WsConnection<C>>();
  let msgCounter = 0;
  let closing = false;

  const ping = setInterval(() => {
    for (const c of open) {
      if (!c.alive) {
        c.socket.terminate();
        continue;
      }
      c.alive = false;
      c.socket.ping();
    }
  }, opts.pingIntervalMs);
  ping.unref();

  /** Refused sockets still open (closed with the server). */
  const refusedOpen = new Set<WebSocket>();

  const maxRefusedOpen = opts.maxRefusedOpen ?? 1024;

  function refuse(
    req: IncomingMessage,
    socket: Duplex,
    head: Buffer,
    rid: string,
    t0: number,
    ctx: C | undefined,
    err: RpcError,
  ): void {
    try {
      refused?.(ctx, err, t0);
    } catch (e) {
      onError(e, 'refused hook');
    }
    if (closing || socket.destroyed) {
      socket.destroy();
      return;
    }
    if (refusedOpen.size >= maxRefusedOpen) {
      const r = refusalResponse(err, undefined);
      return refuseUpgrade(socket, err.httpStatus, r.body ?? '', r.headers ?? {}, rid);
    }
    wss.handleUpgrade(req, socket, head, (ws) => serveRefused(ws, err));
  }

  /** Answers every message with the refusal, then closes 4000 + status (see the header). */
  function serveRefused(ws: WebSocket, err: RpcError): void {
    refusedOpen.add(ws);
    const code = refusalCloseCode(err);
    const reason = closeReason(err.message);
    let answered = false;
    const bye = () => {
      ws.close(code, reason);
      setTimeout(() => ws.terminate(), CLOSE_GRACE_MS).unref();
    };
    let timer = setTimeout(bye, REFUSED_IDLE_MS);
    ws.on('message', (data) => {
      if (ws.readyState !== ws.OPEN) return;
      const text = Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data as ArrayBuffer);
      ws.send(refusalResponse(err, text).body ?? '');
      if (answered) return;
      answered = true;
      clearTimeout(timer);
      timer = setTimeout(bye, REFUSED_GRACE_MS);
    });
    ws.on('error', () => ws.terminate());
    ws.on('close', () => {
      clearTimeout(timer);
      refusedOpen.delete(ws);
    });
  }

  function accept(req: IncomingMessage, socket: Duplex, head: Buffer, ctx: C): void {
    if (closing || socket.destroyed) {
      socket.destroy();
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws) => {
      const conn = new WsConnection<C>(++connectionIds, ctx, ws, opts.maxBufferedBytes);
      open.add(conn);
      ws.on('pong', () => (conn.alive = true));
      ws.on('message', (data, isBinary) => onMessage(conn, data, isBinary));
      ws.on('error', () => ws.terminate());
      ws.on('close', (code) => {
        open.delete(conn);
        conn.fireClosed(code);
        try {
          opts.closed?.(conn, code);
        } catch (e) {
          onError(e, 'closed hook');
        }
      });
      try {
        opts.opened?.(conn);
      } catch (e) {
        onError(e, 'opened hook');
        conn.close(1011, 'internal error');
      }
    });
  }

  function onMessage(conn: WsConnection<C>, data: RawData, _isBinary: boolean): void {
    if (conn.closed) return;
    const body = Array.isArray(data)
      ? Buffer.concat(data).toString('utf8')
      : Buffer.from(data as ArrayBuffer).toString('utf8');
    const t0 = performance.now();
    const ctx = messageContext(conn, `ws${conn.id}-${(++msgCounter).toString(36)}`, t0);
    conn.inFlight++;
    if (conn.inFlight >= opts.maxInFlight && !conn.paused) {
      // Backpressure: stop reading this socket until a call finishes.
      conn.paused = true;
      conn.socket.pause();
    }
    engine
      .handle(body, ctx)
      .then(
        (r) => {
          if (r.body !== undefined) conn.send(r.body);
        },
        (e: unknown) => {
          onError(e, 'engine');
          conn.send('{"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"Internal error"}}');
        },
      )
      .finally(() => {
        conn.inFlight--;
        if (conn.paused && conn.inFlight < opts.maxInFlight && !conn.closed) {
          conn.paused = false;
          conn.socket.resume();
        }
      });
  }

  return {
    upgrade(req, socket, head, rid, t0, route, capture) {
      // Not a closure: the listener stays for the socket's life, and one made here would keep this call's scope —
      // the upgrade request with its headers, the head buffer — alive as long (≈ 1 KB per idle socket).
      socket.on('error', destroyOnError);
      let a: C | Refusal<C> | Promise<C | Refusal<C>>;
      try {
        a = admit(req, rid, t0, route, capture);
      } catch (e) {
        onError(e, 'admit');
        return refuseUpgrade(
          socket,
          500,
          '{"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"Internal error"}}',
          {},
          rid,
        );
      }
      const done = (x: C | Refusal<C>) =>
        x instanceof Refusal ? refuse(req, socket, head, rid, t0, x.ctx, x.error) : accept(req, socket, head, x);
      if (!(a instanceof Promise)) return done(a);
      a.then(done, (e: unknown) => {
        onError(e, 'admit');
        refuseUpgrade(
          socket,
          500,
          '{"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"Internal error"}}',
          {},
          rid,
        );
      });
    },
    get size() {
      return open.size;
    },
    async close(code = CLOSE.goingAway, reason = 'server stopping', timeoutMs = 2000) {
      closing = true;
      clearInterval(ping);
      const gone = [...open].map((c) => new Promise<void>((r) => c.socket.once('close', () => r())));
      for (const c of open) c.close(code, reason);
      for (const ws of refusedOpen) ws.terminate();
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([Promise.all(gone), new Promise<void>((r) => (timer = setTimeout(r, timeoutMs)))]);
      clearTimeout(timer);
      for (const c of open) c.socket.terminate();
      wss.close();
    },
  };
}

/** A socket's 'error' listener during and after the upgrade (`this` is the socket). */
function destroyOnError(this: Duplex): void {
  this.destroy();
}
