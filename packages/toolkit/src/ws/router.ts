// The route table of WebSocket upgrades (`server.on('upgrade')`): the same path patterns and host rules as the HTTP
// Router (packages/toolkit/src/http/router.ts, pathMatcher), first match wins. An upgrade no route takes is answered with a
// plain HTTP 404 and its socket destroyed; a handler that throws gets a 500 the same way (never a half-open socket).
import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { hostName, pathMatcher } from '../http/router.js';
import { requestId } from '../http/server.js';
import { refuseUpgrade } from './jsonrpc.js';

export type UpgradeHandler = (
  req: IncomingMessage,
  socket: Duplex,
  head: Buffer,
  rid: string,
  t0: number,
  capture: string | undefined,
) => void;

interface UpgradeRoute {
  host: string | undefined;
  match: (path: string) => string | undefined | null;
  handler: UpgradeHandler;
}

export class UpgradeRouter {
  private readonly routes: UpgradeRoute[] = [];
  /** The body of the 404 for paths no route takes. */
  notFoundBody = '{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"not found"}}';

  add(pattern: string, handler: UpgradeHandler, opts: { host?: string; trailingSlash?: boolean } = {}): this {
    this.routes.push({
      host: opts.host?.toLowerCase(),
      match: pathMatcher(pattern, opts.trailingSlash ?? false),
      handler,
    });
    return this;
  }

  handle(req: IncomingMessage, socket: Duplex, head: Buffer, onError: (err: unknown, rid: string) => void): void {
    const t0 = performance.now();
    const rid = requestId(req);
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const path = q === -1 ? url : url.slice(0, q);
    const host = hostName(req) ?? '';
    try {
      if (req.method !== 'GET' || (req.headers.upgrade ?? '').toLowerCase() !== 'websocket') {
        return refuseUpgrade(
          socket,
          400,
          '{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"only WebSocket upgrades (GET, Upgrade: websocket)"}}',
          {},
          rid,
        );
      }
      for (const r of this.routes) {
        if (r.host !== undefined && r.host !== host) continue;
        const c = r.match(path);
        if (c !== null) return r.handler(req, socket, head, rid, t0, c);
      }
      refuseUpgrade(socket, 404, this.notFoundBody, {}, rid);
    } catch (e) {
      onError(e, rid);
      refuseUpgrade(
        socket,
        500,
        '{"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"Internal error"}}',
        {},
        rid,
      );
    }
  }

  /** Serves `server`'s upgrade requests through this table. */
  attach(server: Server, onError: (err: unknown, rid: string) => void): void {
    server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) =>
      this.handle(req, socket, head, onError),
    );
  }
}
