// Keeping API keys, JWTs, session cookies and upstream credentials out of logs: pino options for the server's logger.
//
//   const logger = pino({ ...logRedaction({ networks: Object.keys(config.networks) }), level }, destination);
//
// - `serializers` for req / res / err / url / upstream / headers: URLs have the key segment of both access points
//   (`/{network}/v2/<key>`, `/{network}/<key>`, host-mapped `/v2/<key>` and `/<key>`) and any user info replaced,
//   credential headers (authorization, cookie, set-cookie, proxy-authorization, x-api-key) censored, error messages
//   and stacks scrubbed (undici errors quote upstream URLs — provider keys live in their paths).
// - `redact` paths: the same headers wherever a log call nests them one level down (second net).
// - `hooks.logMethod`: string arguments (messages, format args) scrubbed of URLs, Bearer/JWT tokens, cookies and
//   key-shaped words (≥ 24 chars of [A-Za-z0-9_-] with a letter and a digit; not `0x…` chain data nor public ids).
import type { LoggerOptions } from 'pino';
import { defaults } from '../config/config.js';

export const REDACTED = '[redacted]';

export interface RedactOptions {
  /** Network path segments of access point B (`/{network}/<key>`); default the embedded default networks. */
  networks?: readonly string[];
}

const DEFAULT_NETWORKS: readonly string[] = Object.keys(defaults.networks);
const SECRET_HEADERS = new Set([
  'authorization',
  'proxy-authorization',
  'cookie',
  'set-cookie',
  'x-api-key',
  'x-auth-token',
]);
const URL_HEADERS = new Set(['referer', 'referrer', 'location', 'origin']);
const SECRET_QUERY = /key|token|jwt|secret|pass|auth|sig|session|cred/i;

// Key-shaped: long, mixes letters and digits; excludes 0x-hex chain data (a 0x word that is not all hex is not chain
// data) and prefixed public ids (usr_…, app_…).
const TOKEN_WORD =
  /(?<![A-Za-z0-9_-])(?!0x[0-9a-fA-F]*(?![A-Za-z0-9_-]))(?!(?:usr|app|key|alw|kid)_)(?=[A-Za-z0-9_-]*\d)(?=[A-Za-z0-9_-]*[A-Za-z])[A-Za-z0-9_-]{24,}(?![A-Za-z0-9_-])/g;
const JWT = /\beyJ[A-Za-z0-9_-]*\.[A-Za-z0-9_-]*\.[A-Za-z0-9_-]*/g;
const BEARER = /\b(Bearer|Basic)\s+[^\s,;"']+/gi;
const ABSOLUTE_URL = /\b[a-z][a-z0-9+.-]*:\/\/[^\s"'<>`]+/gi;
// A path with an access point's key segment inside free text (e.g. "POST /mainnet/v2/<key> …").
const VERSIONED_PATH = /(\/v\d+\/)[^\s/?#"'<>]+/g;
const COOKIE_PAIR = /\b((?:rpcgate_)?(?:session|sid|token|jwt)[A-Za-z_-]*=)[^\s;,"'&]+/gi;

// "/{network}/<key>" (access point B) inside free text; compiled once per network list.
const networkPathCache = new WeakMap<readonly string[], RegExp>();
function networkPath(networks: readonly string[]): RegExp {
  let re = networkPathCache.get(networks);
  if (re === undefined) {
    const alt = networks.map((n) => n.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|') || '(?!)';
    re = new RegExp(`((?:^|[\\s"'(])\\/(?:${alt})\\/)(?!v\\d+\\/)[^\\s/?#"'<>]+`, 'g');
    networkPathCache.set(networks, re);
  }
  return re;
}

function isTokenLike(s: string): boolean {
  TOKEN_WORD.lastIndex = 0;
  const m = TOKEN_WORD.exec(s);
  return m !== null && m[0].length === s.length;
}

/**
 * A URL (absolute or a request path) without secrets: user info, the key segment of both access points, key-shaped
 * segments, and secret-looking query values.
 */
export function redactUrl(url: string, opts: RedactOptions = {}): string {
  const networks = opts.networks ?? DEFAULT_NETWORKS;
  let prefix = '';
  let rest = url;
  const abs = /^([a-z][a-z0-9+.-]*:\/\/)([^/?#]*)(.*)$/is.exec(url);
  if (abs) {
    const authority = abs[2].includes('@') ? `${REDACTED}@${abs[2].slice(abs[2].lastIndexOf('@') + 1)}` : abs[2];
    prefix = abs[1] + authority;
    rest = abs[3];
  }
  const q = rest.search(/[?#]/);
  const path = q === -1 ? rest : rest.slice(0, q);
  const tail = q === -1 ? '' : rest.slice(q);

  const segs = path.split('/');
  for (let i = 1; i < segs.length; i++) {
    const s = segs[i];
    if (s === '') continue;
    const prev = segs[i - 1];
    if (/^v\d+$/.test(prev) || (i === 2 && networks.includes(segs[1]) && !/^v\d+$/.test(s)) || isTokenLike(s))
      segs[i] = REDACTED;
  }
  // Host-mapped access point B: the whole path is `/<key>`; a lone segment that is not a known route is treated as one.
  if (!abs && segs.length === 2 && segs[1] !== '' && !KNOWN_ROOT.test(segs[1]) && !networks.includes(segs[1]))
    segs[1] = REDACTED;

  let redactedTail = tail;
  if (tail.startsWith('?')) {
    const hash = tail.indexOf('#');
    const query = hash === -1 ? tail.slice(1) : tail.slice(1, hash);
    redactedTail =
      '?' +
      query
        .split('&')
        .map((kv) => {
          const eq = kv.indexOf('=');
          if (eq === -1) return kv;
          const k = kv.slice(0, eq);
          const v = kv.slice(eq + 1);
          return SECRET_QUERY.test(k) || isTokenLike(decodeURIComponentSafe(v)) ? `${k}=${REDACTED}` : kv;
        })
        .join('&') +
      (hash === -1 ? '' : `#${REDACTED}`);
  } else if (tail.startsWith('#')) redactedTail = `#${REDACTED}`;
  return prefix + segs.join('/') + redactedTail;
}

// Root paths of rpcgate's own routes (never keys); anything else alone in the path may be a host-mapped key.
const KNOWN_ROOT =
  /^(?:docs|api|metrics|health|healthz|ready|readyz|favicon\.ico|robots\.txt|assets|static|app|dashboard|login|signup|v\d+)$/;

function decodeURIComponentSafe(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

/** Free text (messages, error messages, stacks) without URLs' secrets, tokens, JWTs or session cookies. */
export function redactString(s: string, opts: RedactOptions = {}): string {
  return s
    .replace(ABSOLUTE_URL, (u) => redactUrl(u, opts))
    .replace(networkPath(opts.networks ?? DEFAULT_NETWORKS), (_m, pre: string) => `${pre}${REDACTED}`)
    .replace(JWT, REDACTED)
    .replace(BEARER, (_m, scheme: string) => `${scheme} ${REDACTED}`)
    .replace(COOKIE_PAIR, (_m, name: string) => `${name}${REDACTED}`)
    .replace(VERSIONED_PATH, (_m, v: string) => `${v}${REDACTED}`)
    .replace(TOKEN_WORD, REDACTED);
}

/** A copy of HTTP headers with credentials censored and URL-valued headers redacted. */
export function redactHeaders(headers: unknown, opts: RedactOptions = {}): Record<string, unknown> | undefined {
  if (headers === null || typeof headers !== 'object') return undefined;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(headers as Record<string, unknown>)) {
    const name = k.toLowerCase();
    if (SECRET_HEADERS.has(name)) out[k] = REDACTED;
    else if (URL_HEADERS.has(name) && typeof v === 'string') out[k] = redactUrl(v, opts);
    else out[k] = v;
  }
  return out;
}

interface ReqLike {
  id?: unknown;
  method?: string;
  url?: string;
  originalUrl?: string;
  headers?: unknown;
  socket?: { remoteAddress?: string; remotePort?: number };
  raw?: ReqLike;
}
interface ResLike {
  statusCode?: number;
  getHeaders?: () => Record<string, unknown>;
  headers?: unknown;
  raw?: ResLike;
}

/** pino options that keep secrets out of log lines (spread into the server's `pino({...})`). */
export function logRedaction(opts: RedactOptions = {}): Pick<LoggerOptions, 'redact' | 'serializers' | 'hooks'> {
  const url = (v: unknown) => (typeof v === 'string' ? redactUrl(v, opts) : v);
  const text = (v: unknown) => (typeof v === 'string' ? redactString(v, opts) : v);
  const err = (e: unknown): unknown => {
    if (!(e instanceof Error)) return typeof e === 'string' ? text(e) : e;
    const out: Record<string, unknown> = { type: e.name, message: text(e.message), stack: text(e.stack) };
    for (const [k, v] of Object.entries(e)) {
      if (k === 'message' || k === 'stack') continue;
      // undici/pg errors carry fields such as `url`, `hostname`, `headers`; keep them scrubbed.
      out[k] =
        typeof v === 'string' ? text(v) : k === 'headers' ? redactHeaders(v, opts) : v instanceof Error ? err(v) : v;
    }
    if (e.cause !== undefined) out.cause = err(e.cause);
    return out;
  };
  const headerPaths = ['authorization', 'cookie', '["set-cookie"]', '["proxy-authorization"]', '["x-api-key"]'];
  const path = (prefix: string, h: string) => (h.startsWith('[') ? `${prefix}${h}` : `${prefix}.${h}`);
  return {
    serializers: {
      req: (r: ReqLike) => {
        const raw = r?.raw ?? r;
        return {
          id: r?.id ?? raw?.id,
          method: raw?.method,
          url: url(raw?.originalUrl ?? raw?.url),
          remoteAddress: raw?.socket?.remoteAddress,
          headers: redactHeaders(raw?.headers, opts),
        };
      },
      res: (r: ResLike) => {
        const raw = r?.raw ?? r;
        return {
          statusCode: raw?.statusCode,
          headers: redactHeaders(typeof raw?.getHeaders === 'function' ? raw.getHeaders() : raw?.headers, opts),
        };
      },
      err,
      error: err,
      url,
      path: url,
      upstream: url,
      referer: url,
      headers: (h: unknown) => redactHeaders(h, opts),
    },
    redact: {
      paths: [...headerPaths.map((h) => path('headers', h)), ...headerPaths.map((h) => path('*.headers', h))],
      censor: REDACTED,
    },
    hooks: {
      logMethod(args, method) {
        for (let i = 0; i < args.length; i++)
          if (typeof args[i] === 'string') (args as unknown[])[i] = redactString(args[i] as string, opts);
        return method.apply(this, args);
      },
    },
  };
}
