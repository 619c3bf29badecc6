// Which transport an upstream gets, from how it is configured: an http(s):// URL → HTTP; a ws(s):// URL → one
// WebSocket carrying calls and subscriptions; a pair { http, ws } → calls over HTTP (its per-cost-class connection
// pools keep heavy calls from delaying light ones) and subscriptions over the socket. A new kind of upstream is a new
// file here and one line below.
import type { UpstreamConfig } from '../../config/config.js';
import { hostPort } from '../redact.js';
import type { UpstreamTransport } from '../transport.js';
import { HttpTransport } from './http.js';
import { WsTransport } from './ws.js';

export type UpstreamSpec = string | { readonly http: string; readonly ws: string };

export interface TransportOptions {
  /** Backstop for a request without a deadline of its own (ms). */
  safetyTimeoutMs: number;
  /** Largest response read (0 = no cap). */
  maxResponseBytes: number;
}

export function createTransport(spec: UpstreamSpec, cfg: UpstreamConfig, opts: TransportOptions): UpstreamTransport {
  if (typeof spec !== 'string') {
    const http = new HttpTransport(spec.http, cfg, opts);
    const ws = new WsTransport(spec.ws, cfg, opts);
    return {
      kind: 'http',
      label: http.label,
      send: (body, o) => http.send(body, o),
      push: ws.push,
      close: async () => {
        await Promise.all([http.close(), ws.close()]);
      },
    };
  }
  const protocol = new URL(spec).protocol;
  if (protocol === 'ws:' || protocol === 'wss:') return new WsTransport(spec, cfg, opts);
  if (protocol === 'http:' || protocol === 'https:') return new HttpTransport(spec, cfg, opts);
  throw new Error(`upstream scheme ${protocol} is not supported (http, https, ws, wss)`);
}

/** Every URL an upstream is configured with (secrets to keep out of messages). */
export function specUrls(spec: UpstreamSpec): string[] {
  return typeof spec === 'string' ? [spec] : [spec.http, spec.ws];
}

/** host:port for metrics (a pair: its HTTP side, which carries the calls). */
export function specLabel(spec: UpstreamSpec): string {
  return hostPort(new URL(typeof spec === 'string' ? spec : spec.http));
}
