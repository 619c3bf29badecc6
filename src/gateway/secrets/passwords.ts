// Password hashing: argon2id with @node-rs/argon2's defaults (m=19456 KiB, t=2, p=1 — the OWASP baseline).
// (Its `Algorithm` is a const enum with no runtime value under tsx; argon2id is the library default, checked by test.)
import { hash, verify } from '@node-rs/argon2';

export function hashPassword(password: string): Promise<string> {
  return hash(password);
}

/** True when `password` matches; false for a mismatch or a malformed stored hash (never throws on bad input). */
export async function verifyPassword(stored: string, password: string): Promise<boolean> {
  try {
    return await verify(stored, password);
  } catch {
    return false;
  }
}
