// The WebSocket transport: ONE socket per upstream per replica carries calls (batches too) and subscriptions.
// Lessons from eRPC's WebSocket pull request and web3-proxy: ids are rewritten between the pool and the node (unique
// per socket, the caller's restored in the answer: many callers' ids collide); a half-open socket (stops answering
// without closing) stalls silently, so a ping must be answered within pongTimeoutMs or the socket is torn down; a
// dropped socket fails its calls in flight (the pool resends those that may be resent — as a transport failure
// that may have reached the node, so eth_sendRawTransaction never is) and reconnects with exponential backoff and
// jitter; subscriptions are made again after each reconnect by the transport itself — never gated by the pool's
// circuit breaker, which would keep them down — and their consumers are told of the gap to fill it.
// Answers are mapped back without parsing results (./split.ts), like the HTTP path: the node's bytes are spliced
// into an answer carrying the caller's ids.
import WebSocket from 'ws';
import type { UpstreamConfig } from '../../config/config.js';
import { toNodeError } from '../batching.js';
import { hostPort } from '../redact.js';
import { splitResponse } from '../split.js';
import {
  type PushSink,
  type PushTransport,
  type SendOptions,
  TransportError,
  type UpstreamTransport,
} from '../transport.js';

export interface WsTransportOptions {
  /** Backstop for a request without a signal of its own (ms past its deadline). */
  safetyTimeoutMs: number;
  /** Largest message read as one answer (0 = no cap); larger ones fail that request only. */
  maxResponseBytes: number;
}

/** One request on the socket: one call or one batch, under consecutive socket ids [base, base + n). */
interface Pending {
  readonly base: number;
  readonly n: number;
  readonly batch: boolean;
  /** The caller's ids, as JSON text, by position. */
  readonly ids: string[];
  /** Called synchronously from the message handler: the rewritten answer text, or the failure. */
  readonly done: (err: TransportError | undefined, text: string) => void;
}

interface Sub {
  readonly params: string;
  readonly sink: PushSink;
  /** The node's subscription id while subscribed on the current socket. */
  id: string | undefined;
  /** Notifications were missed (socket dropped, or subscribed while down): tell the sink once live again. */
  missed: string | undefined;
  retry: NodeJS.Timeout | undefined;
  gone: boolean;
}

const NOTIFICATION_PREFIX = '{"jsonrpc":"2.0","method":"eth_subscription"';

export class WsTransport implements UpstreamTransport {
  readonly kind = 'ws' as const;
  readonly label: string;
  readonly push: PushTransport;
  private socket: WebSocket | undefined;
  private isOpen = false;
  private closed = false;
  /** Socket ids: unique per transport, never reused while a request may be answered. */
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();
  private readonly subs = new Set<Sub>();
  private readonly bySubId = new Map<string, Sub>();
  private readonly listeners = new Set<(up: boolean) => void>();
  private failedConnects = 0;
  private reconnectTimer: NodeJS.Timeout | undefined;
  private pingTimer: NodeJS.Timeout | undefined;
  private pongTimer: NodeJS.Timeout | undefined;
  /** performance.now() of the last frame received (a pong or a message): any traffic proves the socket alive. */
  private lastRx = 0;
  private lastError = 'not connected yet';
  private readonly ws: UpstreamConfig['ws'];

  constructor(
    private readonly url: string,
    private readonly cfg: UpstreamConfig,
    private readonly opts: WsTransportOptions,
  ) {
    this.label = hostPort(new URL(url));
    this.ws = cfg.ws;
    const self = this;
    this.push = {
      subscribe: (params, sink) => this.subscribe(params, sink),
      onState: (listener) => {
        this.listeners.add(listener);
        return () => void this.listeners.delete(listener);
      },
      get up() {
        return self.isOpen;
      },
    };
    this.connect();
  }

  // ---- the socket ------------------------------------------------------------------------------------------------

  private connect(): void {
    if (this.closed) return;
    // Credentials in the URL become a Basic authorization header (ws does it); the URL never appears in messages.
    const socket = new WebSocket(this.url, {
      handshakeTimeout: this.cfg.connectTimeoutMs,
      perMessageDeflate: false,
      maxPayload: Math.max(256 * 1024 * 1024, this.opts.maxResponseBytes + 1024 * 1024),
    });
    this.socket = socket;
    socket.on('open', () => {
      if (this.socket !== socket) return;
      this.isOpen = true;
      this.failedConnects = 0;
      this.lastRx = performance.now();
      this.pingTimer = setInterval(() => this.ping(socket), this.ws.pingIntervalMs);
      this.pingTimer.unref();
      for (const sub of this.subs) this.resubscribe(sub);
      this.emit(true);
    });
    socket.on('message', (data: Buffer, isBinary: boolean) => {
      this.lastRx = performance.now();
      if (isBinary) return;
      this.onMessage(data);
    });
    socket.on('pong', () => {
      this.lastRx = performance.now();
    });
    socket.on('error', (e: Error & { code?: string }) => {
      // ws's messages name the host at most (ECONNREFUSED 127.0.0.1:8545, Unexpected server response: 401).
      this.lastError = e.code ? `${e.code}: ${e.message}` : e.message;
    });
    socket.on('close', () => this.onClose(socket));
  }

  /** A ping; unanswered (no pong, no message) within pongTimeoutMs = half-open: tear the socket down. */
  private ping(socket: WebSocket): void {
    if (this.socket !== socket || !this.isOpen || this.pongTimer !== undefined) return;
    const sentAt = performance.now();
    try {
      socket.ping();
    } catch {
      return; // closing: the close handler follows
    }
    this.pongTimer = setTimeout(() => {
      // Judged after the event loop's next poll: when this process itself was busy past the deadline, a pong already
      // in the socket's buffer is read first (timers run before I/O), so a stall here never tears a live socket down.
      setImmediate(() => {
        this.pongTimer = undefined;
        if (this.socket !== socket || this.lastRx >= sentAt) return;
        this.lastError = `no pong within ${this.ws.pongTimeoutMs} ms (half-open socket)`;
        socket.terminate();
      });
    }, this.ws.pongTimeoutMs);
    this.pongTimer.unref();
  }

  private onClose(socket: WebSocket): void {
    if (this.socket !== socket) return;
    const wasOpen = this.isOpen;
    this.isOpen = false;
    this.socket = undefined;
    clearInterval(this.pingTimer);
    clearTimeout(this.pongTimer);
    this.pingTimer = this.pongTimer = undefined;
    // Calls in flight may have reached the node: the pool decides whether each may be resent.
    const err = new TransportError(
      'connect',
      wasOpen ? `upstream socket closed (${this.lastError})` : `cannot connect to upstream socket (${this.lastError})`,
      !wasOpen,
    );
    this.failAll(err);
    this.bySubId.clear();
    for (const sub of this.subs) {
      sub.id = undefined;
      sub.missed ??= 'upstream socket dropped';
      clearTimeout(sub.retry);
    }
    if (wasOpen) this.emit(false);
    if (this.closed) return;
    if (!wasOpen) this.failedConnects++;
    // Exponential backoff with jitter: a random delay between half and all of the step, so replicas that lost the
    // same node do not all come back in the same millisecond.
    const step = Math.min(this.ws.reconnectMaxMs, this.ws.reconnectMinMs * 2 ** Math.min(this.failedConnects, 20));
    this.reconnectTimer = setTimeout(() => this.connect(), step / 2 + Math.random() * (step / 2));
    this.reconnectTimer.unref();
  }

  private emit(up: boolean): void {
    for (const l of [...this.listeners]) {
      try {
        l(up);
      } catch {
        // a listener's failure is its own
      }
    }
  }

  private failAll(err: TransportError): void {
    const seen = new Set<Pending>();
    for (const p of this.pending.values()) seen.add(p);
    this.pending.clear();
    for (const p of seen) p.done(err, '');
  }

  // ---- calls -----------------------------------------------------------------------------------------------------

  send(body: string, opts: SendOptions): Promise<string> {
    return new Promise<string>((resolve, reject) => {
      if (opts.signal?.aborted) {
        reject(new TransportError('aborted', 'request aborted', true));
        return;
      }
      let timer: NodeJS.Timeout | undefined;
      let p: Pending | undefined;
      const onAbort = () => {
        if (p !== undefined) this.forget(p);
        finish(new TransportError('aborted', 'request aborted', false), '');
      };
      const finish = (err: TransportError | undefined, text: string) => {
        clearTimeout(timer);
        opts.signal?.removeEventListener('abort', onAbort);
        if (err !== undefined) reject(err);
        else resolve(text);
      };
      p = this.request(body, finish);
      if (p === undefined) return;
      if (opts.signal !== undefined) opts.signal.addEventListener('abort', onAbort, { once: true });
      else {
        const pp = p;
        timer = setTimeout(
          () => {
            this.forget(pp);
            finish(new TransportError('timeout', 'upstream did not answer in time', false), '');
          },
          Math.max(0, opts.deadlineMs - performance.now()) + this.opts.safetyTimeoutMs,
        );
        timer.unref();
      }
    });
  }

  /** Rewrites the body's ids to socket ids and writes it; `done` gets the answer with the caller's ids. Undefined
   *  when it could not be sent (done already called). */
  private request(body: string, done: Pending['done']): Pending | undefined {
    const socket = this.socket;
    if (this.closed || socket === undefined || !this.isOpen) {
      done(
        new TransportError(
          'connect',
          this.closed ? 'upstream transport closed' : `upstream socket not connected (${this.lastError})`,
          true,
        ),
        '',
      );
      return undefined;
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(body);
    } catch {
      done(new TransportError('body', 'request body is not JSON', true), '');
      return undefined;
    }
    const items = Array.isArray(parsed) ? (parsed as Record<string, unknown>[]) : [parsed as Record<string, unknown>];
    const base = this.nextId;
    this.nextId += items.length;
    if (this.nextId > Number.MAX_SAFE_INTEGER - 1e6) this.nextId = 1; // never in practice; ids stay exact numbers
    const ids: string[] = new Array(items.length);
    for (let i = 0; i < items.length; i++) {
      const it = items[i];
      ids[i] = it.id === undefined ? 'null' : JSON.stringify(it.id);
      it.id = base + i;
    }
    const p: Pending = { base, n: items.length, batch: Array.isArray(parsed), ids, done };
    for (let i = 0; i < items.length; i++) this.pending.set(base + i, p);
    socket.send(JSON.stringify(parsed), (err) => {
      if (err === undefined || err === null) return;
      // Not written: the socket is closing; its close handler fails everything else.
      if (this.forget(p))
        done(new TransportError('connect', `upstream socket write failed (${err.message})`, false), '');
    });
    return p;
  }

  /** Drops a request's ids (its answer, if any comes, is ignored). true when it was still pending. */
  private forget(p: Pending): boolean {
    if (this.pending.get(p.base) !== p) return false;
    for (let i = 0; i < p.n; i++) this.pending.delete(p.base + i);
    return true;
  }

  private onMessage(data: Buffer): void {
    const cap = this.opts.maxResponseBytes;
    const text = data.toString('utf8');
    if (text.startsWith(NOTIFICATION_PREFIX)) {
      this.onNotification(text);
      return;
    }
    const items = splitResponse(text);
    if (items !== undefined && items.length > 0) {
      const p = this.pending.get(items[0].id);
      if (p !== undefined && items.every((it) => this.pending.get(it.id) === p)) {
        this.forget(p);
        if (cap > 0 && data.length > cap) {
          p.done(new TransportError('size', `upstream response of ${data.length} bytes is over the cap`, false), '');
          return;
        }
        let out = '';
        for (let i = 0; i < items.length; i++) {
          const it = items[i];
          const id = p.ids[it.id - p.base];
          const part =
            it.resultStart !== -1
              ? `{"jsonrpc":"2.0","id":${id},"result":${text.slice(it.resultStart, it.resultEnd)}}`
              : `{"jsonrpc":"2.0","id":${id},"error":${text.slice(it.errorStart, it.errorEnd)}}`;
          out += i === 0 ? part : `,${part}`;
        }
        p.done(undefined, p.batch ? `[${out}]` : out);
        return;
      }
    }
    this.onOther(text, data.length);
  }

  /** The slow path: whatever the splitter did not take (string ids, odd layouts, notifications in another key order,
   *  a batch refused with one error object). */
  private onOther(text: string, size: number): void {
    let msg: unknown;
    try {
      msg = JSON.parse(text);
    } catch {
      return; // not JSON: nothing to map it to; the request's deadline answers it
    }
    if (msg !== null && typeof msg === 'object' && !Array.isArray(msg)) {
      const o = msg as { id?: unknown; method?: unknown; params?: { subscription?: unknown; result?: unknown } };
      if (o.method === 'eth_subscription' && o.id === undefined) {
        this.deliver(o.params);
        return;
      }
    }
    const list = Array.isArray(msg) ? (msg as { id?: unknown }[]) : [msg as { id?: unknown }];
    let p: Pending | undefined;
    for (const it of list) {
      const id = it !== null && typeof it === 'object' ? it.id : undefined;
      if (typeof id === 'number') p ??= this.pending.get(id);
    }
    // A batch refused as a whole answers with one error object and no usable id: it is the only batch in flight's.
    if (p === undefined && !Array.isArray(msg)) {
      const all = new Set(this.pending.values());
      if (all.size === 1) p = [...all][0];
    }
    if (p === undefined) return;
    this.forget(p);
    if (this.opts.maxResponseBytes > 0 && size > this.opts.maxResponseBytes) {
      p.done(new TransportError('size', `upstream response of ${size} bytes is over the cap`, false), '');
      return;
    }
    for (const it of list) {
      if (it === null || typeof it !== 'object') continue;
      const id = it.id;
      if (typeof id === 'number' && id >= p.base && id < p.base + p.n) it.id = JSON.parse(p.ids[id - p.base]);
      else if (!p.batch) it.id = JSON.parse(p.ids[0]);
    }
    p.done(undefined, JSON.stringify(msg));
  }

  // ---- subscriptions ---------------------------------------------------------------------------------------------

  private onNotification(text: string): void {
    let msg: { params?: { subscription?: unknown; result?: unknown } };
    try {
      msg = JSON.parse(text);
    } catch {
      return;
    }
    this.deliver(msg.params);
  }

  private deliver(params: { subscription?: unknown; result?: unknown } | undefined): void {
    if (params === undefined || typeof params.subscription !== 'string') return;
    const sub = this.bySubId.get(params.subscription);
    if (sub === undefined || sub.gone) return;
    try {
      sub.sink.notify(params.result);
    } catch {
      // a sink's failure is its own
    }
  }

  private async subscribe(params: readonly unknown[], sink: PushSink): Promise<() => Promise<void>> {
    const sub: Sub = {
      params: JSON.stringify(params),
      sink,
      id: undefined,
      missed: undefined,
      retry: undefined,
      gone: false,
    };
    const unsubscribe = () => this.unsubscribe(sub);
    if (!this.isOpen) {
      // Made once the socket is up; what happened meanwhile is a gap.
      sub.missed = 'subscribed while the upstream socket was down';
      this.subs.add(sub);
      return unsubscribe;
    }
    this.subs.add(sub);
    await new Promise<void>((resolve, reject) => {
      this.subscribeOn(sub, (err) => {
        if (err === undefined || err instanceof TransportError) {
          // A transport failure: the socket dropped meanwhile; the reconnect subscribes it again (with a gap).
          sub.missed ??= 'upstream socket dropped while subscribing';
          resolve();
        } else {
          // The node refused the subscription itself (unknown kind, bad filter): the caller's error.
          this.subs.delete(sub);
          sub.gone = true;
          reject(err);
        }
      });
    });
    return unsubscribe;
  }

  /** eth_subscribe on the current socket; the subscription id is mapped synchronously with the answer, so a
   *  notification right behind it on the socket is never dropped. */
  private subscribeOn(sub: Sub, cb: (err: Error | undefined) => void): void {
    const body = `{"jsonrpc":"2.0","id":0,"method":"eth_subscribe","params":${sub.params}}`;
    const timer = setTimeout(() => {
      if (p !== undefined && this.forget(p)) cb(new TransportError('timeout', 'eth_subscribe not answered', false));
    }, this.cfg.requestTimeoutMs);
    timer.unref();
    const p = this.request(body, (err, text) => {
      clearTimeout(timer);
      if (err !== undefined) {
        cb(err);
        return;
      }
      let o: { result?: unknown; error?: unknown };
      try {
        o = JSON.parse(text);
      } catch {
        cb(new TransportError('body', 'eth_subscribe answered with invalid JSON', false));
        return;
      }
      if (o.error !== undefined || typeof o.result !== 'string') {
        cb(toNodeError(o.error ?? 'eth_subscribe answered without a subscription id'));
        return;
      }
      if (sub.gone) {
        this.fireAndForget('eth_unsubscribe', JSON.stringify([o.result]));
        cb(undefined);
        return;
      }
      sub.id = o.result;
      this.bySubId.set(o.result, sub);
      cb(undefined);
    });
  }

  /** After a reconnect (or a refused attempt): subscribe again, retrying with backoff until it takes; then the gap. */
  private resubscribe(sub: Sub, attempt = 0): void {
    if (sub.gone || !this.isOpen || sub.id !== undefined) return;
    this.subscribeOn(sub, (err) => {
      if (sub.gone) return;
      if (err === undefined) {
        const missed = sub.missed;
        sub.missed = undefined;
        if (missed !== undefined) {
          try {
            sub.sink.gap(missed);
          } catch {
            // a sink's failure is its own
          }
        }
        return;
      }
      if (err instanceof TransportError && !this.isOpen) return; // the next reconnect tries again
      const step = Math.min(this.ws.reconnectMaxMs, this.ws.reconnectMinMs * 2 ** Math.min(attempt + 1, 20));
      clearTimeout(sub.retry);
      sub.retry = setTimeout(() => this.resubscribe(sub, attempt + 1), step / 2 + Math.random() * (step / 2));
      sub.retry.unref();
    });
  }

  private async unsubscribe(sub: Sub): Promise<void> {
    if (sub.gone) return;
    sub.gone = true;
    clearTimeout(sub.retry);
    this.subs.delete(sub);
    const id = sub.id;
    if (id === undefined) return;
    this.bySubId.delete(id);
    sub.id = undefined;
    if (this.isOpen) await this.fireAndForget('eth_unsubscribe', JSON.stringify([id]));
  }

  /** A call whose answer does not matter beyond its arrival (eth_unsubscribe): resolves on answer, failure or timeout. */
  private fireAndForget(method: string, params: string): Promise<void> {
    return new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        if (p !== undefined) this.forget(p);
        resolve();
      }, this.cfg.requestTimeoutMs);
      timer.unref();
      const p = this.request(`{"jsonrpc":"2.0","id":0,"method":${JSON.stringify(method)},"params":${params}}`, () => {
        clearTimeout(timer);
        resolve();
      });
    });
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearTimeout(this.reconnectTimer);
    for (const sub of this.subs) {
      sub.gone = true;
      clearTimeout(sub.retry);
    }
    this.subs.clear();
    this.bySubId.clear();
    const socket = this.socket;
    this.failAll(new TransportError('aborted', 'upstream transport closed', false));
    this.listeners.clear();
    if (socket === undefined) return;
    await new Promise<void>((resolve) => {
      if (socket.readyState === WebSocket.CLOSED) {
        resolve();
        return;
      }
      socket.once('close', () => resolve());
      socket.terminate();
    });
  }
}
