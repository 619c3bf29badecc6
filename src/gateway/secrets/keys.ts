// API keys, their lookup hash and their at-rest encryption (and that of webhook signing secrets); random ids and session tokens.
import {
  createCipheriv,
  createDecipheriv,
  createHash,
  createHmac,
  hkdfSync,
  randomBytes,
  type KeyObject,
  createSecretKey,
} from 'node:crypto';
import { base58 } from './base58.js';

/**
 * Whether `s` is shaped as log scrubbing (src/gateway/metering/redact.ts) knows a bare secret in free text: a digit
 * and a letter (long words of letters alone are method names and prose), and not starting as chain data (`0x`) or a
 * public id (`app_`, `usr_`, …) does. About 1 in 220 base58 keys has no digit, and 1 in 4,096 base64url tokens starts
 * with `0x`: those used to pass through the scrubbing untouched.
 */
const scrubbableShape = (s: string): boolean => /\d/.test(s) && /[A-Za-z]/.test(s) && !/^(?:0x|[a-z]{3}_)/.test(s);

/** `make()` until its value has that shape (costs ≈ 0.007 bits of the secret's entropy). */
function scrubbable(make: () => string): string {
  for (;;) {
    const s = make();
    if (scrubbableShape(s)) return s;
  }
}

/** A new API key: 24 random bytes (192 bits) in base58 — 32 or 33 characters, URL-path safe, a digit and a letter. */
export function newApiKey(): string {
  return scrubbable(() => base58(randomBytes(24)));
}

/** A random public id with a type prefix, e.g. `app_4Xf…` (128 bits; never sequential, never guessable). */
export function newId(prefix: string): string {
  return `${prefix}_${base58(randomBytes(16))}`;
}

/** A new session token: 32 random bytes, base64url, a digit and a letter (goes in the cookie; only its hash is stored). */
export function newSessionToken(): string {
  return scrubbable(() => randomBytes(32).toString('base64url'));
}

/** Sessions are stored by this hash: a DB leak does not yield usable cookies. */
export function hashSessionToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

// Sub-keys derived from the server secret (HKDF-SHA256, one label per use), cached per secret buffer:
// hashKey runs on the request path, so no derivation per call.
interface SubKeys {
  hmac: KeyObject;
  aes: Buffer;
  /** Encrypts the quota-alert webhooks' signing secrets (its own label: a key per use). */
  webhook: Buffer;
}
const subKeyCache = new WeakMap<Uint8Array, SubKeys>();

function subKeys(secret: Uint8Array): SubKeys {
  let k = subKeyCache.get(secret);
  if (k === undefined) {
    if (secret.length < 32) throw new Error('server secret must be at least 32 bytes');
    const derive = (info: string) => Buffer.from(hkdfSync('sha256', secret, Buffer.alloc(0), info, 32));
    k = {
      hmac: createSecretKey(derive('rpcgate/api-key-hash/v1')),
      aes: derive('rpcgate/api-key-encryption/v1'),
      webhook: derive('rpcgate/webhook-secret-encryption/v1'),
    };
    subKeyCache.set(secret, k);
  }
  return k;
}

/** The lookup hash of an API key: HMAC-SHA256 (keyed by the server secret), lower-case hex. */
export function hashKey(secret: Uint8Array, key: string): string {
  return createHmac('sha256', subKeys(secret).hmac).update(key).digest('hex');
}

const ENC_VERSION = 'v1';
const IV_BYTES = 12;
const TAG_BYTES = 16;

/** Encrypts an API key for storage: `v1.` + base64url(iv ‖ ciphertext ‖ GCM tag), AES-256-GCM, random 12-byte IV. */
export function encryptKey(secret: Uint8Array, plaintext: string): string {
  return seal(subKeys(secret).aes, plaintext);
}

/** Decrypts `encryptKey`'s output; throws on an unknown version, a wrong secret or any tampering. */
export function decryptKey(secret: Uint8Array, stored: string): string {
  return open(subKeys(secret).aes, stored, 'encrypted key');
}

/** Encrypts a webhook signing secret for storage: as `encryptKey`, under its own derived key. */
export function encryptWebhookSecret(secret: Uint8Array, plaintext: string): string {
  return seal(subKeys(secret).webhook, plaintext);
}

/** Decrypts `encryptWebhookSecret`'s output; throws on an unknown version, a wrong secret or any tampering. */
export function decryptWebhookSecret(secret: Uint8Array, stored: string): string {
  return open(subKeys(secret).webhook, stored, 'encrypted webhook secret');
}

/** Whether a stored value is in the `v1.` encrypted format (else: plain text from before encryption). */
export function isEncrypted(stored: string): boolean {
  return stored.startsWith(`${ENC_VERSION}.`);
}

function seal(key: Buffer, plaintext: string): string {
  const iv = randomBytes(IV_BYTES);
  const c = createCipheriv('aes-256-gcm', key, iv);
  const body = Buffer.concat([c.update(plaintext, 'utf8'), c.final()]);
  return `${ENC_VERSION}.${Buffer.concat([iv, body, c.getAuthTag()]).toString('base64url')}`;
}

function open(key: Buffer, stored: string, what: string): string {
  const dot = stored.indexOf('.');
  const version = dot < 0 ? '' : stored.slice(0, dot);
  if (version !== ENC_VERSION) throw new Error(`${what}: unknown format ${JSON.stringify(version)}`);
  const raw = Buffer.from(stored.slice(dot + 1), 'base64url');
  if (raw.length < IV_BYTES + TAG_BYTES) throw new Error(`${what}: too short`);
  const d = createDecipheriv('aes-256-gcm', key, raw.subarray(0, IV_BYTES));
  d.setAuthTag(raw.subarray(raw.length - TAG_BYTES));
  // final() throws "Unsupported state or unable to authenticate data" when the tag does not match.
  return Buffer.concat([d.update(raw.subarray(IV_BYTES, raw.length - TAG_BYTES)), d.final()]).toString('utf8');
}
