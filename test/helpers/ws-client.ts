// A raw WebSocket JSON-RPC client for the socket tests (test/websocket.test.ts, test/follow-chain.test.ts): it records
// every message and the close, so a test can wait for an answer, a notification or a close code.
import WebSocket from 'ws';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls `fn` until it gives a value (not undefined/false), or throws naming `what` after `ms`. */
export async function until<T>(
  what: string,
  fn: () => T | undefined | false | Promise<T | undefined | false>,
  ms = 15_000,
): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v !== undefined && v !== false) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(25);
  }
}

/** A raw ws client that records every message and its close. */
export class Raw {
  readonly messages: Json[] = [];
  closed: { code: number; reason: string } | undefined;
  private nextId = 1;
  constructor(readonly socket: WebSocket) {
    socket.on('message', (d) => this.messages.push(JSON.parse(d.toString())));
    socket.on('close', (code, reason) => (this.closed = { code, reason: reason.toString() }));
    socket.on('error', () => undefined);
  }
  static open(url: string): Promise<Raw> {
    return new Promise((res, rej) => {
      const s = new WebSocket(url);
      s.once('open', () => res(new Raw(s)));
      s.once('error', rej);
      s.once('unexpected-response', (_req, r) => rej(new Error(`upgrade refused: ${r.statusCode}`)));
    });
  }
  async call(method: string, params: unknown[] = []): Promise<Json> {
    const id = this.nextId++;
    this.socket.send(JSON.stringify({ jsonrpc: '2.0', id, method, params }));
    return until(`answer to ${method}`, () => this.messages.find((m) => m.id === id));
  }
  notifications(sub: string): Json[] {
    return this.messages.filter((m) => m.method === 'eth_subscription' && m.params.subscription === sub);
  }
  waitClosed(ms = 15_000) {
    return until('close', () => this.closed, ms);
  }
}
