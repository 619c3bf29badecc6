// Where a quota-alert webhook may point (issue 25): public addresses only, unless the operator sets
// `alerts.allowPrivateWebhooks`. A webhook URL is chosen by any account holder, and rpcgate POSTs to it from inside the
// deployment's network: without this check an account could make rpcgate reach loopback services, the private network
// or a cloud metadata endpoint (169.254.169.254) — server-side request forgery.
//
// Checked twice: when the URL is set (`webhookUrlRefusal`: an IP literal, `localhost`, or a name that resolves to such
// an address is refused with the reason), and at every delivery (`guardedLookup`, undici's `connect.lookup`): the name
// is resolved once, every address it resolves to must be public, and the connection goes to exactly those addresses —
// no second resolution between check and connect, so a name re-pointed after it was set (DNS rebinding) is refused.
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { BlockList, isIP, type LookupFunction } from 'node:net';

/** Ranges a webhook must not reach, each with the words a refusal names (IANA special-purpose registries). */
const RANGES: readonly [cidr: string, what: string][] = [
  ['0.0.0.0/8', 'unspecified ("this network", 0.0.0.0/8)'],
  ['10.0.0.0/8', 'private (RFC 1918)'],
  ['100.64.0.0/10', 'carrier-grade NAT (RFC 6598)'],
  ['127.0.0.0/8', 'loopback'],
  ['169.254.0.0/16', 'link-local (169.254/16, cloud metadata)'],
  ['172.16.0.0/12', 'private (RFC 1918)'],
  ['192.0.0.0/24', 'IETF protocol assignments (192.0.0/24)'],
  ['192.0.2.0/24', 'documentation (TEST-NET-1)'],
  ['192.88.99.0/24', '6to4 relay anycast'],
  ['192.168.0.0/16', 'private (RFC 1918)'],
  ['198.18.0.0/15', 'benchmarking (RFC 2544)'],
  ['198.51.100.0/24', 'documentation (TEST-NET-2)'],
  ['203.0.113.0/24', 'documentation (TEST-NET-3)'],
  ['224.0.0.0/4', 'multicast'],
  ['240.0.0.0/4', 'reserved (240/4, broadcast)'],
  ['::/128', 'unspecified (::)'],
  ['::1/128', 'loopback (::1)'],
  ['::/96', 'IPv4-compatible IPv6 (deprecated)'],
  ['64:ff9b::/96', 'NAT64 (64:ff9b::/96)'],
  ['64:ff9b:1::/48', 'NAT64 local-use (64:ff9b:1::/48)'],
  ['100::/64', 'discard-only (100::/64)'],
  ['2001:db8::/32', 'documentation (2001:db8::/32)'],
  ['2002::/16', '6to4 (2002::/16)'],
  ['fc00::/7', 'unique local (fc00::/7)'],
  ['fe80::/10', 'link-local (fe80::/10)'],
  ['fec0::/10', 'site-local (deprecated, fec0::/10)'],
  ['ff00::/8', 'multicast (ff00::/8)'],
];

const LISTS: readonly [BlockList, string][] = RANGES.map(([cidr, what]) => {
  const list = new BlockList();
  const [net, bits] = cidr.split('/');
  const type = isIP(net) === 6 ? 'ipv6' : 'ipv4';
  list.addSubnet(net, Number(bits), type);
  return [list, what];
});

/** Why `ip` is no public address (e.g. "loopback", "private (RFC 1918)"), or undefined for a public one. IPv4-mapped IPv6 is read as IPv4. */
export function nonPublicAddress(ip: string): string | undefined {
  let addr = ip.startsWith('[') && ip.endsWith(']') ? ip.slice(1, -1) : ip;
  const zone = addr.indexOf('%');
  if (zone >= 0) addr = addr.slice(0, zone); // fe80::1%eth0
  const family = isIP(addr);
  if (family === 0) return 'not an IP address';
  // BlockList matches IPv4-mapped IPv6 (::ffff:a.b.c.d, also written ::ffff:7f00:1) against the IPv4 ranges.
  const type = family === 6 ? 'ipv6' : 'ipv4';
  for (const [list, what] of LISTS) if (list.check(addr, type)) return what;
  return undefined;
}

/** A webhook address refused at delivery (no connection was made). */
export class WebhookAddressError extends Error {
  readonly code = 'ERR_RPCGATE_WEBHOOK_ADDRESS';
}

export type Lookup = typeof dnsLookup;

/**
 * undici's `connect.lookup` for webhook deliveries: resolves the name once (all addresses), refuses the connection if
 * any of them is no public address (unless `allowPrivate`), and hands exactly the checked addresses to the socket.
 */
export function guardedLookup(allowPrivate: boolean, lookup: Lookup = dnsLookup): LookupFunction {
  return (hostname, options, callback) => {
    lookup(hostname, { family: options.family, hints: options.hints, all: true }, (err, addresses) => {
      const cb = callback as (e: Error | null, a: string | LookupAddress[], f?: number) => void;
      if (err) return cb(err, '');
      const list = addresses as LookupAddress[];
      if (list.length === 0) return cb(new WebhookAddressError(`${hostname} resolves to no address`), '');
      if (!allowPrivate) {
        for (const a of list) {
          const why = nonPublicAddress(a.address);
          if (why !== undefined)
            return cb(
              new WebhookAddressError(
                `${hostname} resolves to ${a.address}, ${why}: webhooks go to public addresses only (alerts.allowPrivateWebhooks)`,
              ),
              '',
            );
        }
      }
      if (options.all === true) cb(null, list);
      else cb(null, list[0].address, list[0].family);
    });
  };
}

/** The URL's host as an IP literal (brackets removed), or undefined for a name. */
function ipLiteral(url: URL): string | undefined {
  const h = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  return isIP(h) === 0 ? undefined : h;
}

/**
 * Delivery-time check of an IP-literal host (the socket skips `lookup` for those): the reason it is refused, else
 * undefined. Names are checked by `guardedLookup` as they are resolved.
 */
export function literalRefusal(url: URL, allowPrivate: boolean): string | undefined {
  if (allowPrivate) return undefined;
  const ip = ipLiteral(url);
  const why = ip === undefined ? undefined : nonPublicAddress(ip);
  return why === undefined ? undefined : `${ip} is ${why}: webhooks go to public addresses only`;
}

/**
 * Set-time check: why an http(s) webhook URL is refused, or undefined. An IP literal is judged as is; `localhost`
 * (and `*.localhost`, RFC 6761) is loopback; another name is resolved (at most `timeoutMs`) and refused if any address
 * is no public one. A name that does not resolve now is accepted — each delivery checks again.
 */
export async function webhookUrlRefusal(
  url: URL,
  opts: { allowPrivate: boolean; lookup?: Lookup; timeoutMs?: number },
): Promise<string | undefined> {
  if (opts.allowPrivate) return undefined;
  const literal = literalRefusal(url, false);
  if (literal !== undefined || ipLiteral(url) !== undefined) return literal;
  const host = url.hostname.toLowerCase().replace(/\.$/, '');
  if (host === 'localhost' || host.endsWith('.localhost'))
    return `${host} is a loopback name: webhooks go to public addresses only`;
  const lookup = opts.lookup ?? dnsLookup;
  const resolved = await new Promise<LookupAddress[] | undefined>((resolve) => {
    const timer = setTimeout(() => resolve(undefined), opts.timeoutMs ?? 3_000);
    timer.unref();
    lookup(host, { all: true }, (err, addresses) => {
      clearTimeout(timer);
      resolve(err ? undefined : (addresses as LookupAddress[]));
    });
  });
  for (const a of resolved ?? []) {
    const why = nonPublicAddress(a.address);
    if (why !== undefined) return `${host} resolves to ${a.address}, ${why}: webhooks go to public addresses only`;
  }
  return undefined;
}
