// The device cookie (issue 26 item 6): proof that this browser logged in to this account before, so others cannot
// lock its owner out.
//
// `rpcgate_device=<id>.<issued>.<mac>`: a random 128-bit device id, the issue time (epoch seconds) and an HMAC-SHA256
// over (normalized email, id, issued) with a key derived from the server secret. Nothing is stored: the cookie is
// valid for exactly the email it was issued for (another account's log-in presenting it gets nothing), for
// DEVICE_TTL_SEC. Set on every successful log-in (keeping the device id when the browser already held a valid cookie
// for that email); kept on log-out (it is not a session and opens nothing by itself: the password is still checked).
// HttpOnly, SameSite=Strict (only the dashboard's own log-in POST needs it), Secure exactly when the session cookie is.
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

export const DEVICE_COOKIE = 'rpcgate_device';
/** How long a device stays known without logging in again: 180 days. */
export const DEVICE_TTL_SEC = 180 * 86_400;
const COOKIE_RE = /^([A-Za-z0-9_-]{22})\.(\d{1,12})\.([A-Za-z0-9_-]{43})$/;

export class DeviceCookies {
  private readonly key: Buffer;

  constructor(
    secret: Uint8Array,
    private readonly ttlSec = DEVICE_TTL_SEC,
  ) {
    // A key of its own (the server secret also keys API key hashes): a MAC here can never be replayed there.
    this.key = createHmac('sha256', secret).update('rpcgate device cookie v1').digest();
  }

  private mac(email: string, id: string, issued: string): Buffer {
    return createHmac('sha256', this.key).update(`${email}\n${id}\n${issued}`).digest();
  }

  /** The device id when `raw` is a cookie issued for `email` (normalized) and not expired; else undefined. */
  verify(raw: string | undefined, email: string, now = Date.now()): string | undefined {
    const m = raw === undefined ? null : COOKIE_RE.exec(raw);
    if (m === null) return undefined;
    const [, id, issued, mac] = m;
    const age = now / 1000 - Number(issued);
    if (!(age >= -300 && age < this.ttlSec)) return undefined; // five minutes of clock skew between replicas
    const want = this.mac(email, id, issued);
    const got = Buffer.from(mac, 'base64url');
    return got.length === want.length && timingSafeEqual(got, want) ? id : undefined;
  }

  /** A fresh cookie for `email` (device id `id`, or a new one) as a `Set-Cookie` value. */
  issue(email: string, id: string | undefined, secure: boolean, now = Date.now()): string {
    const device = id ?? randomBytes(16).toString('base64url');
    const issued = String(Math.floor(now / 1000));
    const value = `${device}.${issued}.${this.mac(email, device, issued).toString('base64url')}`;
    return `${DEVICE_COOKIE}=${value}; Path=/; HttpOnly; SameSite=Strict; Max-Age=${this.ttlSec}${secure ? '; Secure' : ''}`;
  }
}
