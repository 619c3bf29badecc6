import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createHash, randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  base58,
  decryptKey,
  encryptKey,
  hashKey,
  hashPassword,
  hashSessionToken,
  loadOrCreateServerSecret,
  newApiKey,
  newId,
  newSessionToken,
  verifyPassword,
  SECRET_FILE,
} from '../src/gateway/secrets/index.js';
import { redactString } from '../src/gateway/metering/index.js';

const dirs: string[] = [];
const tmp = () => {
  const d = mkdtempSync(join(tmpdir(), 'rpcgate-secrets-'));
  dirs.push(d);
  return d;
};
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe('server secret', () => {
  let savedEnv: string | undefined;
  beforeEach(() => {
    savedEnv = process.env.RPCGATE_SECRET;
    delete process.env.RPCGATE_SECRET;
  });
  afterEach(() => {
    if (savedEnv === undefined) delete process.env.RPCGATE_SECRET;
    else process.env.RPCGATE_SECRET = savedEnv;
  });

  it('is generated into the data dir on first start (mode 0600) and reused after', () => {
    const dir = join(tmp(), 'nested', 'data');
    const a = loadOrCreateServerSecret(dir);
    expect(a.length).toBe(32);
    const file = join(dir, SECRET_FILE);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(Buffer.from(readFileSync(file, 'utf8').trim(), 'base64').equals(a)).toBe(true);
    const b = loadOrCreateServerSecret(dir);
    expect(b.equals(a)).toBe(true);
    // another data dir → another secret
    expect(loadOrCreateServerSecret(tmp()).equals(a)).toBe(false);
  });

  it('given (hex, base64, base64url, bytes) wins over env, env wins over the file', () => {
    const raw = randomBytes(32);
    const dir = tmp();
    for (const given of [raw.toString('hex'), raw.toString('base64'), raw.toString('base64url'), raw]) {
      expect(loadOrCreateServerSecret(dir, given).equals(raw)).toBe(true);
    }
    const envRaw = randomBytes(32);
    process.env.RPCGATE_SECRET = envRaw.toString('hex');
    expect(loadOrCreateServerSecret(dir).equals(envRaw)).toBe(true);
    expect(loadOrCreateServerSecret(dir, raw.toString('hex')).equals(raw)).toBe(true);
    // nothing was written when the secret came from config/env
    expect(() => statSync(join(dir, SECRET_FILE))).toThrow();
  });

  it.each([
    ['too short', randomBytes(16).toString('hex')],
    ['too long', randomBytes(33).toString('base64')],
    ['not an encoding', 'this is not a secret!'],
  ])('refuses a bad secret (%s)', (_label, given) => {
    expect(() => loadOrCreateServerSecret(tmp(), given)).toThrow(/32 bytes/);
  });

  it('refuses a corrupt secret file rather than replacing it', () => {
    const dir = tmp();
    writeFileSync(join(dir, SECRET_FILE), 'garbage\n');
    expect(() => loadOrCreateServerSecret(dir)).toThrow(/32 bytes/);
    expect(readFileSync(join(dir, SECRET_FILE), 'utf8')).toBe('garbage\n');
  });
});

describe('API keys, ids, tokens', () => {
  it('API keys: base58, ≥128 bits, unique', () => {
    const keys = new Set(Array.from({ length: 2000 }, () => newApiKey()));
    expect(keys.size).toBe(2000);
    for (const k of keys) {
      expect(k).toMatch(/^[1-9A-HJ-NP-Za-km-z]{30,33}$/);
      // 24 bytes → at least 24*8 / log2(58) ≈ 32.8 digits unless leading zeros collapse; never fewer than 128 bits.
      expect(k.length * Math.log2(58)).toBeGreaterThanOrEqual(128);
    }
  });

  it('every API key and session token is shaped so log scrubbing knows it in free text', () => {
    // ~1 in 220 base58 keys has no digit, ~1 in 4,096 tokens starts with 0x: among 20,000 of each, ~90 and ~5 would.
    for (const make of [newApiKey, newSessionToken]) {
      const made = Array.from({ length: 20_000 }, () => make());
      expect(made.filter((k) => !/\d/.test(k) || !/[A-Za-z]/.test(k) || /^(?:0x|[a-z]{3}_)/.test(k))).toEqual([]);
      // What the request log's captured bodies and free-text log lines go through.
      const text = JSON.stringify({ params: made.slice(0, 2000) });
      const scrubbed = redactString(text);
      expect(made.slice(0, 2000).filter((k) => scrubbed.includes(k))).toEqual([]);
    }
  });

  it('base58 matches the reference encoding', () => {
    expect(base58(Buffer.from('Hello World!'))).toBe('2NEpo7TZRRrLZSi2U');
    expect(base58(Buffer.from([0, 0, 1]))).toBe('112');
    expect(base58(new Uint8Array())).toBe('');
  });

  it('ids carry a prefix and 128 random bits', () => {
    const id = newId('app');
    expect(id).toMatch(/^app_[1-9A-HJ-NP-Za-km-z]{20,22}$/);
    expect(newId('app')).not.toBe(id);
  });

  it('session tokens are 32 random bytes (base64url); stored as sha256 hex', () => {
    const t = newSessionToken();
    expect(Buffer.from(t, 'base64url').length).toBe(32);
    expect(t).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(hashSessionToken(t)).toBe(createHash('sha256').update(t).digest('hex'));
    expect(newSessionToken()).not.toBe(t);
  });

  it('hashKey: HMAC-SHA256 hex, deterministic per secret, different across secrets', () => {
    const s1 = randomBytes(32);
    const s2 = randomBytes(32);
    const k = newApiKey();
    expect(hashKey(s1, k)).toMatch(/^[0-9a-f]{64}$/);
    expect(hashKey(s1, k)).toBe(hashKey(Buffer.from(s1), k)); // same bytes, other buffer
    expect(hashKey(s1, k)).not.toBe(hashKey(s2, k));
    expect(hashKey(s1, k)).not.toBe(hashKey(s1, newApiKey()));
  });
});

describe('key encryption (AES-256-GCM)', () => {
  const secret = randomBytes(32);

  it('round trips, with a version prefix and a random IV', () => {
    const key = newApiKey();
    const a = encryptKey(secret, key);
    const b = encryptKey(secret, key);
    expect(a).toMatch(/^v1\.[A-Za-z0-9_-]+$/);
    expect(a).not.toBe(b);
    expect(a).not.toContain(key);
    expect(decryptKey(secret, a)).toBe(key);
    expect(decryptKey(secret, b)).toBe(key);
  });

  const flip = (enc: string, at: (len: number) => number) => {
    const raw = Buffer.from(enc.slice(3), 'base64url');
    raw[at(raw.length)] ^= 0x01;
    return `v1.${raw.toString('base64url')}`;
  };

  it.each([
    ['IV byte', (e: string) => flip(e, () => 0)],
    ['ciphertext byte', (e: string) => flip(e, () => 14)],
    ['tag byte', (e: string) => flip(e, (n) => n - 1)],
    ['truncated', (e: string) => e.slice(0, 20)],
    ['unknown version', (e: string) => `v2${e.slice(2)}`],
    ['no version', (e: string) => e.slice(3)],
  ])('detects tampering: %s', (_label, tamper) => {
    const enc = encryptKey(secret, newApiKey());
    expect(() => decryptKey(secret, tamper(enc))).toThrow();
  });

  it('fails with another secret', () => {
    const enc = encryptKey(secret, newApiKey());
    expect(() => decryptKey(randomBytes(32), enc)).toThrow();
  });
});

describe('passwords (argon2id)', () => {
  it('hashes with argon2id and verifies', async () => {
    const h = await hashPassword('correct horse battery staple');
    expect(h).toMatch(/^\$argon2id\$/);
    expect(await hashPassword('correct horse battery staple')).not.toBe(h); // salted
    expect(await verifyPassword(h, 'correct horse battery staple')).toBe(true);
    expect(await verifyPassword(h, 'Correct horse battery staple')).toBe(false);
    expect(await verifyPassword('not a hash', 'x')).toBe(false);
  });
});
