// The HTTP transport: one node URL over undici keep-alive pools, one pool per cost class so heavy calls can never
// take the connections light calls need. Credentials in the URL (user:pass@) become a Basic authorization header;
// the path and query (where providers put API keys) are sent but never shown (the label is host:port). Failures are
// classified into TransportError so the pool's breaker and retry policy need not know undici's error codes.
import { Pool } from 'undici';
import type { UpstreamConfig } from '../../config/config.js';
import type { CostClass } from '../../method-meaning.js';
import { splitResponse } from '../split.js';
import { TransportError, type SendOptions, type UpstreamTransport } from '../transport.js';
import { hostPort } from '../redact.js';

export interface HttpTransportOptions {
  /** Backstop for undici's header and body timeouts (each call's own deadline aborts first). */
  safetyTimeoutMs: number;
  /** Largest response body read (0 = no cap). */
  maxResponseBytes: number;
}

export class HttpTransport implements UpstreamTransport {
  readonly kind = 'http' as const;
  readonly label: string;
  private readonly pools: Record<CostClass, Pool>;
  private readonly path: string;
  private readonly headers: Record<string, string>;
  private readonly cap: number;

  constructor(url: string, cfg: UpstreamConfig, opts: HttpTransportOptions) {
    const u = new URL(url);
    this.label = hostPort(u);
    this.path = (u.pathname || '/') + u.search;
    this.cap = opts.maxResponseBytes;
    this.headers = { 'content-type': 'application/json', accept: 'application/json' };
    if (u.username || u.password) {
      this.headers.authorization = `Basic ${Buffer.from(
        `${decodeURIComponent(u.username)}:${decodeURIComponent(u.password)}`,
      ).toString('base64')}`;
    }
    const pool = () =>
      new Pool(u.origin, {
        connections: cfg.connections,
        pipelining: cfg.pipelining,
        keepAliveTimeout: 30_000,
        keepAliveMaxTimeout: 600_000,
        // Each call's own deadline (an AbortSignal) ends requests; these are only a backstop.
        headersTimeout: opts.safetyTimeoutMs,
        bodyTimeout: opts.safetyTimeoutMs,
        connect: { timeout: cfg.connectTimeoutMs },
      });
    this.pools = { light: pool(), heavy: pool() };
  }

  /** One POST; resolves with the body text of a usable (2xx or JSON-RPC error) answer. */
  async send(body: string, opts: SendOptions): Promise<string> {
    let res: Awaited<ReturnType<Pool['request']>>;
    try {
      res = await this.pools[opts.cls].request({
        path: this.path,
        method: 'POST',
        headers: opts.traceparent === undefined ? this.headers : { ...this.headers, traceparent: opts.traceparent },
        body,
        signal: opts.signal,
      });
    } catch (e) {
      throw classifyHttpError(e);
    }
    const cap = this.cap;
    const declared = Number(res.headers['content-length']);
    if (cap > 0 && declared > cap) {
      // undici's body, destroyed unread, emits an AbortError: without a listener that is an uncaught exception.
      res.body.on('error', noop);
      res.body.destroy();
      throw new TransportError('size', `upstream response of ${declared} bytes is over the cap`, false);
    }
    const chunks: Buffer[] = [];
    let size = 0;
    try {
      for await (const chunk of res.body as AsyncIterable<Buffer>) {
        size += chunk.length;
        if (cap > 0 && size > cap) {
          res.body.destroy();
          throw new TransportError('size', `upstream response over ${cap} bytes`, false);
        }
        chunks.push(chunk);
      }
    } catch (e) {
      throw e instanceof TransportError ? e : classifyHttpError(e);
    }
    const text = chunks.length === 1 ? chunks[0].toString('utf8') : Buffer.concat(chunks, size).toString('utf8');
    const status = res.statusCode;
    if (status === 429) {
      // Over the upstream's own rate limit: not processed (safe to send elsewhere); the pool backs it off alone.
      throw new TransportError('limited', 'upstream answered HTTP 429', true, retryAfterMs(res.headers['retry-after']));
    }
    if (status >= 500 || status === 408) {
      // A node behind a proxy may still answer a JSON-RPC error with 5xx; the upstream is failing anyway.
      throw new TransportError('http', `upstream answered HTTP ${status}`, false);
    }
    // Other 4xx (413, 400…): a JSON-RPC error body is the node's answer; anything else refuses the request as such.
    if (status >= 400 && splitResponse(text) === undefined && !looksLikeRpcError(text)) {
      throw new TransportError('refused', `upstream answered HTTP ${status}`, false);
    }
    return text;
  }

  async close(): Promise<void> {
    await Promise.all(Object.values(this.pools).map((p) => p.destroy().catch(() => undefined)));
  }
}

/** A 4xx body that is one JSON-RPC error object (e.g. a batch refused with HTTP 400 and an error). */
function looksLikeRpcError(text: string): boolean {
  try {
    const o = JSON.parse(text) as unknown;
    return o !== null && typeof o === 'object' && !Array.isArray(o) && 'error' in o;
  } catch {
    return false;
  }
}

/** undici's errors → TransportError: a refused or unresolvable connection cannot have reached the node. */
export function classifyHttpError(e: unknown): TransportError {
  if (e instanceof TransportError) return e;
  const code = (e as { code?: string })?.code;
  const msg = (e as Error)?.message ?? String(e);
  switch (code) {
    case 'UND_ERR_CONNECT_TIMEOUT':
      return new TransportError('timeout', `connect timeout: ${msg}`, true);
    case 'UND_ERR_HEADERS_TIMEOUT':
    case 'UND_ERR_BODY_TIMEOUT':
      return new TransportError('timeout', 'upstream did not answer in time', false);
    case 'UND_ERR_ABORTED':
    case 'ABORT_ERR':
      return new TransportError('aborted', 'request aborted', false);
    case 'ECONNREFUSED':
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
      return new TransportError('connect', `cannot connect to upstream (${code})`, true);
    default:
      return new TransportError('connect', `upstream connection failed (${code ?? msg})`, false);
  }
}

function noop(): void {}

/** Retry-After as ms from `now`: delay-seconds or an HTTP date (RFC 9110 §10.2.3); undefined when absent or bad. */
export function retryAfterMs(value: string | string[] | undefined, now = Date.now()): number | undefined {
  const v = Array.isArray(value) ? value[0] : value;
  if (v === undefined || v.trim() === '') return undefined;
  const t = v.trim();
  if (/^\d+$/.test(t)) return Number(t) * 1000;
  const at = Date.parse(t);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}
