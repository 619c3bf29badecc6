// The key check, its own module: callers ask a KeyStore for the principal behind a key, then check it against the
// route (network, access point). Sources: the account store's in-memory index (./index.ts) and static keys from the
// config (./keys.ts: ConfigKeyStore, including the dev-mode development key).
import { randomBytes } from 'node:crypto';
import type { AccessPoint, KeyConfig } from '../config/config.js';
import type { RpcError } from '../../toolkit/rpc/errors.js';
import { forbidden, unauthorized } from '../errors.js';
import type { CompiledAllowlists } from './allowlist.js';
import type { JwtKeySet } from './jwt.js';

export type { AccessPoint } from '../config/config.js';

/** Who requests are counted against (the limiter's subject; one object per principal, built once). */
export type LimitSubject = { kind: 'A'; appId: string; userId: string } | { kind: 'B'; userId: string };

/** A static key from the config (or the development key): no account, no limits, no allowlists. */
export interface StaticPrincipal {
  kind: 'static';
  /** Stable id (the key's name or a short key prefix). */
  id: string;
  name: string;
  key: string;
  /** Networks the key may use; undefined = all. */
  networks?: readonly string[];
  accessPoints?: readonly AccessPoint[];
  /** True for the dev-mode development key. */
  development?: boolean;
  limitSubject?: undefined;
}

/** An app's key (access point A): every network of the app's chain, allowlists, JWT. */
export interface AppPrincipal {
  kind: 'app';
  id: string;
  appId: string;
  userId: string;
  name: string;
  chain: string;
  /** Networks of the app's chain served by this deployment (empty: the chain is not served here). */
  networks: ReadonlySet<string>;
  /** Compiled allowlists; undefined when no kind is restricted. */
  allowlists: CompiledAllowlists | undefined;
  requireJwt: boolean;
  /** The app's JWT public keys by kid; undefined when it has none. */
  jwt: JwtKeySet | undefined;
  limitSubject: LimitSubject;
}

/** A network API key (access point B): one network, no allowlists. */
export interface NetworkKeyPrincipal {
  kind: 'network-key';
  id: string;
  keyId: string;
  userId: string;
  name: string;
  network: string;
  limitSubject: LimitSubject;
}

/** Who a request acts for. */
export type Principal = StaticPrincipal | AppPrincipal | NetworkKeyPrincipal;

export interface KeyStore {
  /** The principal behind a key, wherever it is valid; undefined for an unknown (or revoked) key. */
  lookup(key: string): Principal | undefined;
}

/** A random development key: 128 bits, hex (URL-safe, no ambiguity when copied). */
export function generateDevKey(): string {
  return randomBytes(16).toString('hex');
}

/** Static keys from the config, plus the dev-mode development key. */
export class ConfigKeyStore implements KeyStore {
  private readonly byKey = new Map<string, StaticPrincipal>();

  constructor(keys: readonly (string | KeyConfig)[]) {
    for (const k of keys) {
      const c: KeyConfig = typeof k === 'string' ? { key: k } : k;
      this.byKey.set(c.key, {
        kind: 'static',
        id: c.name ?? `key-${c.key.slice(0, 6)}`,
        name: c.name ?? `key ${c.key.slice(0, 6)}…`,
        key: c.key,
        networks: c.networks,
        accessPoints: c.accessPoints,
      });
    }
  }

  /** Adds the development key (valid on every network and both access points). */
  addDevelopmentKey(key: string): StaticPrincipal {
    const p: StaticPrincipal = { kind: 'static', id: 'development', name: 'development key', key, development: true };
    this.byKey.set(key, p);
    return p;
  }

  lookup(key: string): Principal | undefined {
    return this.byKey.get(key);
  }

  get size(): number {
    return this.byKey.size;
  }
}

/** Several sources, asked in order (static keys first: a Map hit without hashing). */
export class KeyStores implements KeyStore {
  constructor(private readonly stores: readonly KeyStore[]) {}
  lookup(key: string): Principal | undefined {
    for (const s of this.stores) {
      const p = s.lookup(key);
      if (p !== undefined) return p;
    }
    return undefined;
  }
}

/** Why a principal may not use this network / URL shape; undefined when it may. */
export function routeRefusal(p: Principal, network: string, accessPoint: AccessPoint): RpcError | undefined {
  switch (p.kind) {
    case 'static':
      if (p.networks !== undefined && !p.networks.includes(network))
        return forbidden(`API key is not valid for network ${network}`, { reason: 'network', network, accessPoint });
      if (p.accessPoints !== undefined && !p.accessPoints.includes(accessPoint))
        return forbidden(`API key is not valid on this access point`, { reason: 'url', network, accessPoint });
      return undefined;
    case 'app':
      if (accessPoint !== 'A')
        return forbidden(`this is an app key: use /${network}/v2/<key> (access point A)`, { reason: 'url', network, accessPoint, expected: 'A' });
      if (!p.networks.has(network))
        return forbidden(
          p.networks.size === 0
            ? `the app's chain "${p.chain}" is not served by this deployment`
            : `the app's chain "${p.chain}" has no network ${network} (networks: ${[...p.networks].join(', ')})`,
          { reason: 'network', network, accessPoint, chain: p.chain, networks: [...p.networks] },
        );
      return undefined;
    case 'network-key':
      if (accessPoint !== 'B')
        return forbidden(`this is a network API key: use /${p.network}/<key> (access point B), without /v2`, { reason: 'url', network, accessPoint, expected: 'B' });
      if (network !== p.network)
        return forbidden(`API key is valid only for network ${p.network}`, { reason: 'network', network, accessPoint, keyNetwork: p.network });
      return undefined;
  }
}

/** The key check callers use: the principal, or the RpcError to answer (401 unknown/missing, 403 not valid here). */
export function checkKey(store: KeyStore, key: string | undefined, network: string, accessPoint: AccessPoint): Principal | RpcError {
  if (!key) return unauthorized('missing API key: put it in the URL path', { reason: 'key' });
  const p = store.lookup(key);
  if (p === undefined) return unauthorized('invalid API key', { reason: 'key' });
  return routeRefusal(p, network, accessPoint) ?? p;
}
