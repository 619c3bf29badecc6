// Base58 (Bitcoin alphabet): no 0/O/I/l look-alikes and no URL-special characters, so keys and ids copy cleanly
// and double-click-select as one word. Encode-only: keys and ids are opaque, never decoded.
const ALPHABET = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';

export function base58(bytes: Uint8Array): string {
  let n = 0n;
  for (const b of bytes) n = (n << 8n) | BigInt(b);
  let out = '';
  while (n > 0n) {
    out = ALPHABET[Number(n % 58n)] + out;
    n /= 58n;
  }
  // Leading zero bytes keep their place as '1's (standard base58), so equal-length inputs stay unambiguous.
  for (const b of bytes) {
    if (b !== 0) break;
    out = `1${out}`;
  }
  return out;
}
