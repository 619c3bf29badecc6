// Per-HTTP-request state of the account API (cookie, Origin, base URL) and the session cookie itself.
//
// Session cookie `rpcgate_session`: a random 256-bit token (only its SHA-256 is stored, with an expiry);
// HttpOnly (no script access), SameSite=Lax (not sent on cross-site POSTs), Path=/, Secure when served over https.
//
// Origin check (CSRF): every call that changes something is refused (403, -32041) when the request carries an
// `Origin` header other than this server's own origin — the configured public base URL's origin, else the origin the
// request was addressed to (scheme + Host) — or one of the configured allowed origins. Browsers send Origin on every
// POST, so a cross-site page cannot get a changing call through. Requests without Origin come from non-browser clients
// (CLI, scripts): they hold the cookie themselves and send it on purpose, so they cannot be a CSRF vector; they pass.
// A DNS-rebinding page would match the Host-derived origin, but the browser sends it no cookie for that host name,
// so it can only act on a session it made itself.
import type { IncomingMessage } from 'node:http';
import type { CallContext } from '@rpcgate/toolkit/engine';
import { DEVICE_COOKIE } from './device.js';

export const SESSION_COOKIE = 'rpcgate_session';
/** base64url of 32 bytes: anything else in the cookie is ignored without a store query. */
const TOKEN_RE = /^[A-Za-z0-9_-]{43}$/;

/** What the account handlers know about the HTTP request (carried in `CallContext.principal`). */
export interface AccountRequest {
  /** Session token from the cookie (syntactically valid), if any. */
  token: string | undefined;
  /** The Origin header, if any. */
  origin: string | undefined;
  /** The Origin header is absent or one of ours: changing calls may run. */
  originOk: boolean;
  /** Base URL of this server as the caller sees it (public base URL, or scheme + Host), no trailing slash. */
  baseUrl: string;
  /** https as seen by the client: the cookie gets `Secure`. */
  secure: boolean;
  /** The device cookie as sent (./device.ts checks it against the email of a log-in), if any. */
  device: string | undefined;
  /** `Set-Cookie` values to send with the answer (the last session change of the request wins). */
  setCookie: string[];
  /** The session's user, looked up once per HTTP request (a batch shares it). */
  userId?: Promise<string | undefined>;
}

export interface RequestStateOptions {
  /** Public base URL of the deployment (e.g. https://rpc.example.com): URLs shown and the origin accepted. */
  publicBaseUrl?: string;
  /** Further origins allowed to make changing calls (e.g. a dashboard served from another host). */
  allowedOrigins?: readonly string[];
  /** Reverse-proxy hops trusted for X-Forwarded-Proto / X-Forwarded-Host. */
  trustProxy?: number;
}

export function readCookie(header: string | undefined, name: string): string | undefined {
  if (header === undefined) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq === -1) continue;
    if (part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

export function sessionCookie(token: string, expiresAt: number, secure: boolean, now = Date.now()): string {
  const maxAge = Math.max(0, Math.floor((expiresAt - now) / 1000));
  return `${SESSION_COOKIE}=${token}; Path=/; HttpOnly; SameSite=Lax; Max-Age=${maxAge}${secure ? '; Secure' : ''}`;
}

export function clearedSessionCookie(secure: boolean): string {
  return `${SESSION_COOKIE}=; Path=/; HttpOnly; SameSite=Lax; Max-Age=0${secure ? '; Secure' : ''}`;
}

/** First value of a possibly repeated, comma-joined forwarding header. */
function firstForwarded(v: string | string[] | undefined): string | undefined {
  const s = Array.isArray(v) ? v[0] : v;
  if (s === undefined) return undefined;
  const t = s.split(',')[0].trim();
  return t === '' ? undefined : t;
}

function normalizeOrigin(o: string): string | undefined {
  try {
    const u = new URL(o);
    return u.origin === 'null' ? undefined : u.origin;
  } catch {
    return undefined;
  }
}

export function createRequestStateFactory(opts: RequestStateOptions = {}): (req: IncomingMessage) => AccountRequest {
  const publicBase = opts.publicBaseUrl?.replace(/\/+$/, '');
  const publicOrigin = publicBase === undefined ? undefined : normalizeOrigin(publicBase);
  if (publicBase !== undefined && publicOrigin === undefined)
    throw new Error(`publicBaseUrl is not a URL: ${publicBase}`);
  const allowed = new Set((opts.allowedOrigins ?? []).map((o) => normalizeOrigin(o) ?? o));
  const trust = (opts.trustProxy ?? 0) > 0;

  return (req) => {
    let secure: boolean;
    let baseUrl: string;
    if (publicBase !== undefined) {
      baseUrl = publicBase;
      secure = publicBase.startsWith('https:');
    } else {
      const proto =
        (trust ? firstForwarded(req.headers['x-forwarded-proto'])?.toLowerCase() : undefined) ??
        ((req.socket as { encrypted?: boolean }).encrypted ? 'https' : 'http');
      secure = proto === 'https';
      const host =
        (trust ? firstForwarded(req.headers['x-forwarded-host']) : undefined) ??
        req.headers.host ??
        `${req.socket.localAddress ?? '127.0.0.1'}:${req.socket.localPort ?? 80}`;
      baseUrl = `${secure ? 'https' : 'http'}://${host}`;
    }
    const origin = typeof req.headers.origin === 'string' ? req.headers.origin : undefined;
    let originOk = true;
    if (origin !== undefined) {
      const o = normalizeOrigin(origin);
      const own = publicOrigin ?? normalizeOrigin(baseUrl);
      originOk = o !== undefined && (o === own || allowed.has(o));
    }
    const raw = readCookie(req.headers.cookie, SESSION_COOKIE);
    const device = readCookie(req.headers.cookie, DEVICE_COOKIE);
    return {
      token: raw !== undefined && TOKEN_RE.test(raw) ? raw : undefined,
      device,
      origin,
      originOk,
      baseUrl,
      secure,
      setCookie: [],
    };
  };
}

/** An account API call's context: the HTTP request's state travels as its principal. */
export type AccountContext = CallContext<AccountRequest>;

/** The account request state of a call (set by the account route). */
export function accountRequest(ctx: AccountContext): AccountRequest {
  const r = ctx.principal;
  if (r === undefined) throw new Error('account API call without its request state');
  return r;
}
