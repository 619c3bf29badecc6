// The HTTP server around a Router: a request id and an arrival time for every request, timeouts suited to running
// behind a load balancer, and malformed HTTP answered 400 instead of thrown.
import { randomBytes } from 'node:crypto';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { createServer } from 'node:http';
import { errorResponse } from '../rpc/engine.js';
import { internalError } from '../rpc/errors.js';
import type { Router } from './router.js';

/** Request ids: a per-process random prefix and a counter (cheaper than a UUID per request, still unique). */
const ridPrefix = randomBytes(4).toString('hex');
let ridCounter = 0;
const RID_OK = /^[\w.:@-]{1,128}$/;

/** The client's x-request-id when it is a sane token, else a new one. */
export function requestId(req: IncomingMessage): string {
  const given = req.headers['x-request-id'];
  if (typeof given === 'string' && RID_OK.test(given)) return given;
  return `${ridPrefix}-${(++ridCounter).toString(36)}`;
}

/** A server answering every request through `router`; `onError` hears of handlers that threw (answered 500). */
export function createHttpServer(router: Router, onError: (err: unknown, rid: string) => void): Server {
  function onRequest(req: IncomingMessage, res: ServerResponse): void {
    const t0 = performance.now();
    const rid = requestId(req);
    try {
      router.handle(req, res, rid, t0);
    } catch (e) {
      onError(e, rid);
      try {
        if (res.headersSent) res.destroy();
        else {
          const r = errorResponse(internalError());
          res.writeHead(r.status, {
            'content-type': 'application/json',
            'content-length': Buffer.byteLength(r.body!),
            'x-request-id': rid,
          });
          res.end(r.body);
        }
      } catch {
        res.destroy();
      }
    }
  }

  const server = createServer({ keepAlive: true }, onRequest);
  // Above common load-balancer idle timeouts (60 s), so the proxy closes first; headersTimeout must exceed it.
  server.keepAliveTimeout = 65_000;
  server.headersTimeout = 66_000;
  server.requestTimeout = 120_000;
  server.on('clientError', (err: NodeJS.ErrnoException, socket) => {
    // Malformed HTTP: answer 400 if the socket still can, never throw.
    if (err.code === 'ECONNRESET' || !socket.writable) {
      socket.destroy();
      return;
    }
    socket.end('HTTP/1.1 400 Bad Request\r\nconnection: close\r\ncontent-length: 0\r\n\r\n');
  });
  return server;
}
