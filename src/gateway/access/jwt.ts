// JWT for apps (access point A), in `Authorization: Bearer <jwt>`, verified with jose:
// - the protected header's `kid` selects one of the app's public keys; an unknown kid is refused;
// - the algorithm comes from the KEY (its stored alg), never from the token: `algorithms: [key.alg]` — so `none`,
//   HS256-with-the-public-key-as-secret and RS384-for-an-RS256-key all fail;
// - `exp` is required; `nbf`/`exp`/`iat` are checked with a 30 s clock tolerance (CLOCK_TOLERANCE_SEC): an `iat` in
//   the future beyond it is refused ('issued in the future');
// - timestamps are NumericDate seconds (RFC 7519 §2): a value of 1e11 or more (year 5138 in seconds, 1973 in ms) is a
//   millisecond timestamp and refused ('timestamp in milliseconds') — in ms a token would be valid for millennia;
// - the app's maximum lifetime (default 24 h, null = none): `iat` is then required too, and neither `exp - iat` nor
//   `exp - now` may exceed it — a token valid for years (exp in the year 3000, whatever its iat
//   says) is refused ('lifetime too long');
// - public keys are imported once (importSPKI) and cached per kid (shared across index rebuilds).
// When it applies (./pipeline.ts): if the app requires JWT, a missing or invalid token is 401. If it does not require
// JWT but has JWT keys and a Bearer token is sent, the token is verified and an invalid one is 401 too (a credential
// that was sent is never silently ignored — what Alchemy and Infura do). Without JWT keys and without the switch,
// the Authorization header is ignored.
import { decodeProtectedHeader, errors, importSPKI, jwtVerify, type CryptoKey, type JWTPayload } from 'jose';
import type { JwtAlg } from '../store/schema.js';
import type { RpcError } from '@rpcgate/toolkit/errors';
import { unauthorized } from '../errors.js';

export const CLOCK_TOLERANCE_SEC = 30;

export interface JwtKeySpec {
  kid: string;
  alg: JwtAlg;
  publicKeyPem: string;
}

interface LoadedKey {
  alg: JwtAlg;
  pem: string;
  /** The imported key, or the import error (a bad PEM refuses tokens for that kid; never an unhandled rejection). */
  key: Promise<CryptoKey | Error>;
}

// kid → imported key. Kids are random ids from the store, so one cache serves every app; an entry is replaced when
// the kid's alg or PEM differ (never in practice: keys are added and removed, not edited).
const cache = new Map<string, LoadedKey>();

function load(spec: JwtKeySpec): LoadedKey {
  const hit = cache.get(spec.kid);
  if (hit !== undefined && hit.alg === spec.alg && hit.pem === spec.publicKeyPem) return hit;
  const loaded: LoadedKey = {
    alg: spec.alg,
    pem: spec.publicKeyPem,
    key: importSPKI(spec.publicKeyPem, spec.alg).then(
      (k) => k,
      (e: unknown) => (e instanceof Error ? e : new Error(String(e))),
    ),
  };
  cache.set(spec.kid, loaded);
  return loaded;
}

/** Forgets cached keys whose kid is not in `live` (called after a full index rebuild). */
export function pruneJwtKeyCache(live: ReadonlySet<string>): void {
  for (const kid of cache.keys()) if (!live.has(kid)) cache.delete(kid);
}

/** Why a token was refused (data.detail of the 401). */
export type JwtProblem =
  | 'missing'
  | 'malformed'
  | 'missing kid'
  | 'unknown kid'
  | 'algorithm not allowed'
  | 'bad signature'
  | 'expired'
  | 'not yet valid'
  | 'missing exp'
  | 'missing iat'
  | 'lifetime too long'
  | 'issued in the future'
  | 'timestamp in milliseconds'
  | 'invalid claims'
  | 'key unusable'
  | 'no keys';

export function jwtError(problem: JwtProblem, kid?: string, extra?: Record<string, unknown>): RpcError {
  const what: Record<JwtProblem, string> = {
    missing: 'this app requires a JWT: send Authorization: Bearer <jwt>',
    malformed: 'JWT is malformed',
    'missing kid': "JWT header has no kid: it must name one of the app's JWT keys",
    'unknown kid': "JWT kid is not one of this app's JWT keys",
    'algorithm not allowed': 'JWT algorithm does not match the algorithm of the key its kid names',
    'bad signature': 'JWT signature verification failed',
    expired: 'JWT has expired',
    'not yet valid': 'JWT is not valid yet (nbf)',
    'missing exp': 'JWT must have an exp claim',
    'missing iat': 'JWT must have an iat claim (this app limits how long a token may live)',
    'lifetime too long': 'JWT lifetime (exp - iat, or exp - now) is longer than this app allows',
    'issued in the future': "JWT iat is in the future: check the issuer's clock",
    'timestamp in milliseconds': 'JWT iat/nbf/exp must be NumericDate seconds since the epoch, not milliseconds',
    'invalid claims': 'JWT claims are invalid',
    'key unusable': "the app's JWT key for this kid cannot be used",
    'no keys': 'this app requires a JWT but has no JWT public keys',
  };
  const data: { reason: 'jwt'; [k: string]: unknown } = { reason: 'jwt', detail: problem };
  if (kid !== undefined) data.kid = kid.length > 128 ? `${kid.slice(0, 128)}…` : kid;
  if (extra !== undefined) Object.assign(data, extra);
  return unauthorized(what[problem], data);
}

/** An app's JWT public keys, by kid. */
export class JwtKeySet {
  private readonly byKid = new Map<string, LoadedKey>();

  /** @param maxLifetimeSec longest `exp - iat` accepted (seconds); null = no maximum. */
  constructor(
    specs: readonly JwtKeySpec[],
    readonly maxLifetimeSec: number | null = null,
  ) {
    for (const s of specs) this.byKid.set(s.kid, load(s));
  }

  get size(): number {
    return this.byKid.size;
  }

  kids(): IterableIterator<string> {
    return this.byKid.keys();
  }

  /** Verifies a compact JWS; undefined when valid, else the 401 to answer. */
  async verify(token: string, now?: Date): Promise<RpcError | undefined> {
    let kid: unknown;
    try {
      kid = decodeProtectedHeader(token).kid;
    } catch {
      return jwtError('malformed');
    }
    if (typeof kid !== 'string' || kid === '') return jwtError('missing kid');
    const k = this.byKid.get(kid);
    if (k === undefined) return jwtError('unknown kid', kid);
    const key = await k.key;
    if (key instanceof Error) return jwtError('key unusable', kid);
    const max = this.maxLifetimeSec;
    try {
      const { payload } = await jwtVerify(token, key, {
        algorithms: [k.alg],
        requiredClaims: max === null ? ['exp'] : ['exp', 'iat'],
        clockTolerance: CLOCK_TOLERANCE_SEC,
        currentDate: now,
      });
      if (inMilliseconds(payload)) return jwtError('timestamp in milliseconds', kid);
      const nowSec = Math.floor((now?.getTime() ?? Date.now()) / 1000);
      if (payload.iat !== undefined && payload.iat > nowSec + CLOCK_TOLERANCE_SEC)
        return jwtError('issued in the future', kid);
      if (max !== null) {
        const lifetimeSec = Math.max(payload.exp! - payload.iat!, payload.exp! - nowSec - CLOCK_TOLERANCE_SEC);
        if (lifetimeSec > max) return jwtError('lifetime too long', kid, { maxLifetimeSec: max, lifetimeSec });
      }
      return undefined;
    } catch (e) {
      if (e instanceof errors.JOSEError && 'payload' in e && inMilliseconds(e.payload as JWTPayload))
        return jwtError('timestamp in milliseconds', kid);
      return jwtError(problemOf(e), kid);
    }
  }
}

/** NumericDate values this large are milliseconds (1e11 s is the year 5138; 1e11 ms is 1973). */
const MS_THRESHOLD = 1e11;

function inMilliseconds(p: JWTPayload): boolean {
  return [p.iat, p.nbf, p.exp].some((v) => typeof v === 'number' && v >= MS_THRESHOLD);
}

function problemOf(e: unknown): JwtProblem {
  if (e instanceof errors.JWTExpired) return 'expired';
  if (e instanceof errors.JWTClaimValidationFailed) {
    if (e.claim === 'exp') return e.reason === 'missing' ? 'missing exp' : 'invalid claims';
    if (e.claim === 'iat' && e.reason === 'missing') return 'missing iat';
    if (e.claim === 'nbf') return 'not yet valid';
    if (e.claim === 'iat' && e.reason === 'check_failed') return 'issued in the future';
    return 'invalid claims';
  }
  if (e instanceof errors.JOSEAlgNotAllowed) return 'algorithm not allowed';
  if (e instanceof errors.JWSSignatureVerificationFailed) return 'bad signature';
  if (e instanceof errors.JOSENotSupported) return 'algorithm not allowed';
  if (e instanceof errors.JWTInvalid || e instanceof errors.JWSInvalid) return 'malformed';
  // A key of the wrong type for the token's alg (jose refuses before verifying) and anything else.
  if (e instanceof TypeError) return 'algorithm not allowed';
  return 'malformed';
}

/** The token of `Authorization: Bearer <token>`; undefined when there is no Bearer credential. */
export function bearerToken(authorization: string | undefined): string | undefined {
  if (authorization === undefined || authorization.length < 8) return undefined;
  // Scheme names are case-insensitive (RFC 9110 §11.1).
  if (authorization.charCodeAt(6) !== 32 || authorization.slice(0, 6).toLowerCase() !== 'bearer') return undefined;
  const t = authorization.slice(7).trim();
  return t === '' ? undefined : t;
}
