// GET /metrics: Prometheus text format from the process's Metrics registry, protected as config.metrics says
// (src/gateway/config/config.ts MetricsConfig): a Bearer token when one is configured, otherwise loopback clients only
// (and never a request relayed by a proxy on the same host).
import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import type { MetricsConfig } from '../config/config.js';
import type { Metrics } from '../metering/index.js';
import { plainText, skipBody, type RouteHandler } from '@rpcgate/toolkit/http';

const LOOPBACK = /^(?:127\.|::1$|::ffff:127\.)/;
const PROXY_HEADERS = ['x-forwarded-for', 'forwarded', 'x-real-ip'] as const;

const digest = (s: string) => createHash('sha256').update(s).digest();

function plain(res: ServerResponse, rid: string, status: number, body: string, extra: readonly string[] = []): void {
  plainText(res, rid, status, body, ['cache-control', 'no-store', ...extra]);
}

/** Whether this request may read /metrics (undefined) or the refusal's status. */
function refusal(req: IncomingMessage, token: Buffer | undefined): 401 | 403 | undefined {
  if (token !== undefined) {
    const h = req.headers.authorization;
    const m = typeof h === 'string' ? /^Bearer\s+(\S+)\s*$/i.exec(h) : null;
    // Digests have equal length, so the comparison is constant-time whatever was sent.
    return m !== null && timingSafeEqual(digest(m[1]), token) ? undefined : 401;
  }
  const peer = req.socket.remoteAddress ?? '';
  if (!LOOPBACK.test(peer)) return 403;
  for (const h of PROXY_HEADERS) if (req.headers[h] !== undefined) return 403;
  return undefined;
}

/** The handler of `/metrics` (and anything below it), for every method. */
export function metricsRoute(opts: { config: MetricsConfig; metrics: Metrics; logger: Logger }): RouteHandler {
  const { metrics, logger } = opts;
  const token = opts.config.token === undefined ? undefined : digest(opts.config.token);
  return (req, res, rid) => {
    skipBody(req, res);
    if (!opts.config.enabled) return plain(res, rid, 404, 'not found\n');
    if (req.method !== 'GET' && req.method !== 'HEAD') return plain(res, rid, 405, 'use GET\n', ['allow', 'GET, HEAD']);
    const refused = refusal(req, token);
    if (refused === 401)
      return plain(res, rid, 401, 'unauthorized: Authorization: Bearer <metrics token>\n', [
        'www-authenticate',
        'Bearer realm="metrics"',
      ]);
    if (refused === 403)
      return plain(
        res,
        rid,
        403,
        'forbidden: /metrics is served to loopback clients only (configure metrics.token for remote scrapes)\n',
      );
    metrics.metricsText().then(
      (text) => {
        res.writeHead(200, {
          'content-type': metrics.contentType,
          'content-length': Buffer.byteLength(text),
          'x-request-id': rid,
          'cache-control': 'no-store',
        });
        res.end(req.method === 'HEAD' ? undefined : text);
      },
      (err: unknown) => {
        logger.error({ err, rid }, 'collecting metrics failed');
        plain(res, rid, 500, 'error\n');
      },
    );
  };
}
