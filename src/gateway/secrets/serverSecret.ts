// The server secret: 32 bytes that key the API-key hashes (HMAC) and the API-key encryption (AES-GCM).
// Given by config/env, or generated into the data directory on first start and reused afterwards.
// Every replica of a deployment must use the same secret (keys are found by their HMAC).
import { randomBytes } from 'node:crypto';
import { linkSync, mkdirSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export const SECRET_BYTES = 32;
export const SECRET_FILE = 'server-secret';

/** Decodes a secret written as 64 hex digits or as base64/base64url of 32 bytes. */
export function parseSecret(text: string, where = 'secret'): Buffer {
  const t = text.trim();
  let buf: Buffer | undefined;
  if (/^[0-9a-fA-F]{64}$/.test(t)) buf = Buffer.from(t, 'hex');
  else if (/^[A-Za-z0-9+/_-]+={0,2}$/.test(t)) buf = Buffer.from(t, 'base64'); // node's base64 also reads base64url
  if (buf === undefined || buf.length !== SECRET_BYTES) {
    throw new Error(`${where}: expected ${SECRET_BYTES} bytes as 64 hex digits or base64/base64url`);
  }
  return buf;
}

/**
 * The server secret: `given` (config), else `RPCGATE_SECRET`, else `<dataDir>/server-secret` — created with 32 random
 * bytes (mode 0600) on first start. Creation is atomic and exclusive (write a temp file, then hard-link it into place),
 * so two processes starting on the same data dir agree on one secret.
 */
export function loadOrCreateServerSecret(dataDir: string, given?: string | Uint8Array): Buffer {
  if (given !== undefined && given !== '') {
    if (typeof given !== 'string') {
      if (given.length !== SECRET_BYTES) throw new Error(`secret: expected ${SECRET_BYTES} bytes, got ${given.length}`);
      return Buffer.from(given);
    }
    return parseSecret(given, 'secret (config)');
  }
  const env = process.env.RPCGATE_SECRET;
  if (env !== undefined && env !== '') return parseSecret(env, 'RPCGATE_SECRET');

  const file = join(dataDir, SECRET_FILE);
  const existing = readSecretFile(file);
  if (existing !== undefined) return existing;

  mkdirSync(dataDir, { recursive: true });
  const tmp = `${file}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
  writeFileSync(tmp, `${randomBytes(SECRET_BYTES).toString('base64')}\n`, { mode: 0o600, flag: 'wx' });
  try {
    linkSync(tmp, file); // fails with EEXIST if another process won the race: then use theirs
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
  } finally {
    unlinkSync(tmp);
  }
  const created = readSecretFile(file);
  if (created === undefined) throw new Error(`could not create ${file}`);
  return created;
}

function readSecretFile(file: string): Buffer | undefined {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw e;
  }
  return parseSecret(text, file);
}
