// App allowlists (access point A), as Alchemy's and Infura's work: the kinds (origin, ip, address, method) combine
// with AND, the entries of one kind with OR, and an empty kind allows everything. Compiled once per app update
// (./index.ts), so a request does Set/BlockList lookups only.
//
// Origins (matched against the request's Origin header; a request WITHOUT Origin fails an origin allowlist):
//   https://app.example.com        exact origin: scheme, host and port (default ports 80/443 may be written or not)
//   https://*.example.com          any subdomain, at any depth (a.example.com, a.b.example.com) — not example.com
//                                  itself, not badexample.com; scheme and port must match
//   app.example.com, *.example.com scheme-less: the same host rules, any scheme (http or https). A port written
//                                  (localhost:3000) must match; without one, only the scheme's default port matches.
//   Entries compare case-insensitively; a trailing slash is ignored; an entry that parses as none of these never
//   matches (a non-empty kind stays restrictive: fail closed). `Origin: null` (sandboxed frames, file://) never matches.
// IPs: single IPv4/IPv6 addresses and CIDRs (node's net.BlockList; IPv4-mapped IPv6 peers match IPv4 entries).
// Addresses (contract allowlist), case-insensitive, applied per call where the contract says the call names the
//   contracts it reads: the method's `x-gateway.addressParams` (contracts/x-gateway.schema.json; the table comes from
//   the generated descriptor through method-meaning.ts — no method names here). Every applicable place must name at
//   least one address and all must be listed: a filter with no address (it would read every contract), an eth_call
//   without `to`, an eth_subscribe("logs") without `address` are refused. Methods without addressParams are not
//   restricted by it. Logs handed out later (filter polls, log subscriptions) are checked again (`addressListed`).
// Methods: only the listed method names.
// Refusals (src/gateway/errors.ts): 403 -32041 with data { source: 'rpcgate', reason: 'origin' | 'ip' | 'address', … };
// a method not on the list: 403 -32601 with data { source: 'rpcgate', reason: 'method', method }.
import { BlockList, isIP } from 'node:net';
import type { Allowlists } from '../store/access.js';
import type { RpcError } from '@rpcgate/toolkit/errors';
import { forbidden, methodNotAllowed } from '../errors.js';
import type { AddressParam } from '../method-meaning.js';

/** An origin entry, parsed. `scheme` undefined = any scheme; `port` '' = the scheme's default port. */
interface OriginRule {
  scheme: string | undefined;
  /** Exact host, or for a wildcard the suffix including its leading dot (".example.com"). */
  host: string;
  wildcard: boolean;
  port: string;
}

export interface OriginMatcher {
  /** Exact origins with a scheme, normalised (`https://app.example.com`): one Set lookup for the common case. */
  exact: Set<string>;
  rules: OriginRule[];
}

export interface CompiledAllowlists {
  origin: OriginMatcher | undefined;
  ip: BlockList | undefined;
  address: Set<string> | undefined;
  method: Set<string> | undefined;
  /** Any per-call kind (method, address) set: the engine hook has work to do. */
  perCall: boolean;
}

const DEFAULT_PORT: Record<string, string> = { http: '80', https: '443', ws: '80', wss: '443' };

/** `scheme://host[:port]` or `host[:port]` → parts, lower-cased, default port dropped; undefined when malformed. */
function splitOrigin(s: string): { scheme: string | undefined; host: string; port: string } | undefined {
  let t = s.trim().toLowerCase();
  while (t.endsWith('/')) t = t.slice(0, -1);
  let scheme: string | undefined;
  const sep = t.indexOf('://');
  if (sep !== -1) {
    scheme = t.slice(0, sep);
    if (!/^[a-z][a-z0-9+.-]*$/.test(scheme)) return undefined;
    t = t.slice(sep + 3);
  }
  if (t === '' || /[/?#@\s]/.test(t)) return undefined;
  let host = t;
  let port = '';
  const m = /^(\[[0-9a-f:.]+\]|[^:[\]]+)(?::(\d{1,5}))?$/.exec(t);
  if (m === null) return undefined;
  host = m[1];
  port = m[2] ?? '';
  if (port !== '' && scheme !== undefined && DEFAULT_PORT[scheme] === port) port = '';
  return { scheme, host, port };
}

export function compileOrigins(entries: readonly string[]): OriginMatcher {
  const exact = new Set<string>();
  const rules: OriginRule[] = [];
  for (const e of entries) {
    const p = splitOrigin(e);
    if (p === undefined) continue;
    if (p.host.startsWith('*.')) {
      const suffix = p.host.slice(1);
      if (suffix.length < 2 || suffix.includes('*')) continue;
      rules.push({ scheme: p.scheme, host: suffix, wildcard: true, port: p.port });
    } else if (p.host.includes('*')) {
    } else if (p.scheme !== undefined) {
      exact.add(`${p.scheme}://${p.host}${p.port === '' ? '' : `:${p.port}`}`);
    } else {
      rules.push({ scheme: undefined, host: p.host, wildcard: false, port: p.port });
    }
  }
  return { exact, rules };
}

export function originAllowed(m: OriginMatcher, origin: string | undefined): boolean {
  if (origin === undefined || origin === '' || origin === 'null') return false;
  if (m.exact.has(origin)) return true; // browsers send origins already normalised
  const o = splitOrigin(origin);
  if (o === undefined || o.scheme === undefined) return false;
  if (m.exact.size > 0 && m.exact.has(`${o.scheme}://${o.host}${o.port === '' ? '' : `:${o.port}`}`)) return true;
  for (const r of m.rules) {
    if (r.scheme !== undefined && r.scheme !== o.scheme) continue;
    if (r.port !== o.port) continue;
    if (r.wildcard ? o.host.length > r.host.length && o.host.endsWith(r.host) : o.host === r.host) return true;
  }
  return false;
}

export function compileIps(entries: readonly string[]): BlockList {
  const list = new BlockList();
  for (const raw of entries) {
    const e = raw.trim();
    const slash = e.indexOf('/');
    const addr = slash === -1 ? e : e.slice(0, slash);
    const v = isIP(addr);
    if (v === 0) continue;
    const type = v === 4 ? 'ipv4' : 'ipv6';
    if (slash === -1) {
      list.addAddress(addr, type);
      continue;
    }
    const bits = e.slice(slash + 1);
    const prefix = Number(bits);
    if (!/^\d{1,3}$/.test(bits) || prefix > (v === 4 ? 32 : 128)) continue;
    list.addSubnet(addr, prefix, type);
  }
  return list;
}

export function ipAllowed(list: BlockList, ip: string | undefined): boolean {
  if (ip === undefined || ip === '') return false;
  const v = isIP(ip);
  if (v === 0) return false;
  // IPv4 peers on a dual-stack socket show up as ::ffff:a.b.c.d; BlockList matches those against IPv4 rules too.
  return list.check(ip, v === 4 ? 'ipv4' : 'ipv6');
}

/** Compiles an app's allowlists; undefined when no kind is restricted (the request path then skips all checks). */
export function compileAllowlists(a: Allowlists): CompiledAllowlists | undefined {
  const origin = a.origin.length > 0 ? compileOrigins(a.origin) : undefined;
  const ip = a.ip.length > 0 ? compileIps(a.ip) : undefined;
  const address = a.address.length > 0 ? new Set(a.address.map((x) => x.trim().toLowerCase())) : undefined;
  const method = a.method.length > 0 ? new Set(a.method.map((x) => x.trim())) : undefined;
  if (!origin && !ip && !address && !method) return undefined;
  return { origin, ip, address, method, perCall: address !== undefined || method !== undefined };
}

const shown = (s: string) => (s.length > 200 ? `${s.slice(0, 200)}…` : s);

/** Request-level kinds (origin, IP): the refusal, or undefined when allowed. */
export function checkRequestAllowlists(
  c: CompiledAllowlists,
  origin: string | undefined,
  ip: string | undefined,
): RpcError | undefined {
  if (c.origin !== undefined && !originAllowed(c.origin, origin)) {
    return origin === undefined
      ? forbidden('this app accepts requests only from allowlisted origins: the request has no Origin header', {
          reason: 'origin',
          origin: null,
        })
      : forbidden(`origin ${shown(origin)} is not on this app's allowlist`, {
          reason: 'origin',
          origin: shown(origin),
        });
  }
  if (c.ip !== undefined && !ipAllowed(c.ip, ip)) {
    return forbidden(`IP address ${ip ?? '(unknown)'} is not on this app's allowlist`, {
      reason: 'ip',
      ip: ip ?? null,
    });
  }
  return undefined;
}

/** The value at a dot-separated path inside an object (undefined where the path ends early). */
function at(v: unknown, path: string | undefined): unknown {
  if (path === undefined) return v;
  for (const k of path.split('.')) {
    if (v === null || typeof v !== 'object' || Array.isArray(v) || !Object.hasOwn(v, k)) return undefined;
    v = (v as Record<string, unknown>)[k];
  }
  return v;
}

/** The contract addresses a call names, by its method's addressParams: undefined = none applies (not restricted),
 *  null = an applicable place names no address (refused). */
export function addressesOf(
  spec: readonly AddressParam[] | undefined,
  params: readonly unknown[],
): readonly unknown[] | null | undefined {
  if (spec === undefined) return undefined;
  let out: unknown[] | undefined;
  for (const e of spec) {
    if (e.when !== undefined && params[e.when.param] !== e.when.equals) continue;
    const v = at(params[e.param], e.path);
    if (v === undefined || v === null || (Array.isArray(v) && v.length === 0)) return null;
    (out ??= []).push(...(Array.isArray(v) ? v : [v]));
  }
  return out;
}

/** Whether an app's address allowlist lets this contract address through (no allowlist: any). */
export function addressListed(c: CompiledAllowlists | undefined, address: unknown): boolean {
  return c?.address === undefined || (typeof address === 'string' && c.address.has(address.toLowerCase()));
}

/** Per-call kinds (method, address): the refusal for this call, or undefined when allowed. */
export function checkCallAllowlists(
  c: CompiledAllowlists,
  method: string,
  params: readonly unknown[],
  addressParams: readonly AddressParam[] | undefined,
): RpcError | undefined {
  if (c.method !== undefined && !c.method.has(method)) {
    return methodNotAllowed(shown(method));
  }
  if (c.address !== undefined) {
    const addrs = addressesOf(addressParams, params);
    if (addrs === undefined) return undefined;
    if (addrs === null) {
      return forbidden(`${method} must name a contract address on this app's allowlist`, {
        reason: 'address',
        method,
        address: null,
      });
    }
    for (const a of addrs) {
      if (typeof a !== 'string' || !c.address.has(a.toLowerCase())) {
        return forbidden(`address ${shown(String(a))} is not on this app's allowlist`, {
          reason: 'address',
          method,
          address: shown(String(a)),
        });
      }
    }
  }
  return undefined;
}
