// Bodies the server will not read (issue 14.6). A refused request must not make the server read whatever the client
// keeps sending (300 MB to an invalid key used to be read to the end): the answer goes out with `Connection: close`,
// the server reads at most DRAIN_BYTES more (discarded) so the client is not reset before it sees the answer, stops
// reading there (TCP backpressure holds the client), and destroys the socket LINGER_MS after the answer. A small
// declared body (Content-Length ≤ DRAIN_BYTES) is simply drained and the connection kept alive, as before.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

/** The most a refused request's body is read (discarded) past the refusal. */
export const DRAIN_BYTES = 64 * 1024;
/** How long a closing connection stays open after its answer, so the client can read it before the socket goes. */
export const LINGER_MS = 1_000;
/** How long a refusal waits for a small body to arrive (to name its ids) before answering without them. */
export const PEEK_MS = 500;

/** Declared body length: a number, undefined for a chunked body, 0 for none. */
function declaredLength(req: IncomingMessage): number | undefined {
  const cl = req.headers['content-length'];
  if (cl !== undefined) return Number(cl);
  return req.headers['transfer-encoding'] === undefined ? 0 : undefined;
}

/**
 * For a request answered without reading its body (refusals, 404/405, GET routes): call before writing the answer.
 * No body or a small declared one: drained, the connection stays alive. Otherwise: {@link closeAfterAnswer}.
 */
export function skipBody(req: IncomingMessage, res: ServerResponse): void {
  const n = declaredLength(req);
  if (req.complete || (n !== undefined && n <= DRAIN_BYTES)) {
    req.resume();
    return;
  }
  closeAfterAnswer(req, res);
}

/**
 * For a request refused before its body was read, whose answer should name the request's ids: the body when it is
 * at most DRAIN_BYTES and arrives within PEEK_MS, else undefined — then `done` is called (once, before the answer is
 * written). The bounds of {@link skipBody} hold: a declared body over DRAIN_BYTES is not waited for (answered at once,
 * connection closed after it, at most DRAIN_BYTES more read); a chunked body is read only up to DRAIN_BYTES and its
 * connection closed after the answer; a small one that does not arrive in time closes its connection too.
 */
export function peekBody(req: IncomingMessage, res: ServerResponse, done: (body: Buffer | undefined) => void): void {
  const n = declaredLength(req);
  if (req.complete || n === 0) {
    req.resume();
    return done(undefined);
  }
  if (n !== undefined && n > DRAIN_BYTES) {
    closeAfterAnswer(req, res);
    return done(undefined);
  }
  if (n === undefined) closeAfterAnswer(req, res);
  const chunks: Buffer[] = [];
  let size = 0;
  let finished = false;
  const finish = (body: Buffer | undefined) => {
    if (finished) return;
    finished = true;
    clearTimeout(timer);
    req.off('data', onData).off('end', onEnd).off('error', onFail).off('close', onFail);
    done(body);
  };
  const onData = (c: Buffer) => {
    size += c.length;
    if (size > DRAIN_BYTES) return finish(undefined); // chunked: closeAfterAnswer's own listener stops reading
    chunks.push(c);
  };
  const onEnd = () => finish(Buffer.concat(chunks, size));
  const onFail = () => finish(undefined);
  const timer = setTimeout(() => {
    closeAfterAnswer(req, res); // a trickling client does not keep the connection
    finish(undefined);
  }, PEEK_MS);
  timer.unref();
  req.on('data', onData).on('end', onEnd).on('error', onFail).on('close', onFail);
  req.resume();
}

type LingeringSocket = Socket & { [kLinger]?: true };
const kLinger = Symbol('body.linger');

/**
 * The answer carries `Connection: close`; at most DRAIN_BYTES more of the body are read (discarded), then reading
 * stops; the socket is destroyed LINGER_MS after the answer (Node would destroy it as soon as the answer is flushed,
 * and a client still sending would then get a reset, possibly before reading the answer). Call before writing.
 */
export function closeAfterAnswer(req: IncomingMessage, res: ServerResponse): void {
  res.shouldKeepAlive = false; // Node writes `Connection: close` and ends the socket after the answer
  const socket = req.socket as LingeringSocket;
  if (socket[kLinger]) return;
  socket[kLinger] = true;
  let seen = 0;
  req.on('data', (chunk: Buffer) => {
    seen += chunk.length;
    if (seen > DRAIN_BYTES) req.pause();
  });
  req.on('error', noop);
  req.resume();
  // Node's http server calls destroySoon() once a `Connection: close` answer is finished: end (FIN) now, destroy later.
  socket.destroySoon = function (this: Socket) {
    if (this.writable) this.end();
    const t = setTimeout(() => this.destroy(), LINGER_MS);
    t.unref();
    this.once('close', () => clearTimeout(t));
  };
}

function noop(): void {}
