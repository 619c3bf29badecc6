// The key check, its own module: callers ask a KeyStore for the principal behind a key. Today the source is the
// config (plus a development key); the next issue swaps in an index over the account store — callers stay.
import { randomBytes } from 'node:crypto';
import type { AccessPoint, KeyConfig } from '../config/config.js';
import { forbidden, unauthorized, type RpcError } from '../rpc/errors.js';

export type { AccessPoint } from '../config/config.js';

/** Who a request acts for. */
export interface Principal {
  /** Stable id (here: the key's name or a short key prefix; accounts give real ids later). */
  id: string;
  name: string;
  key: string;
  /** Networks the key may use; undefined = all. */
  networks?: readonly string[];
  accessPoints?: readonly AccessPoint[];
  /** True for the generated development key. */
  development?: boolean;
}

export interface KeyStore {
  /** The principal for a key valid on this network and access point; undefined otherwise. */
  resolve(key: string, network: string, accessPoint: AccessPoint): Principal | undefined;
}

/** Why a key was refused: distinguishes an unknown key (401) from a key not valid here (403). */
export interface KeyStoreWithReasons extends KeyStore {
  lookup(key: string): Principal | undefined;
}

/** A random development key: 128 bits, hex (URL-safe, no ambiguity when copied). */
export function generateDevKey(): string {
  return randomBytes(16).toString('hex');
}

export class ConfigKeyStore implements KeyStoreWithReasons {
  private readonly byKey = new Map<string, Principal>();

  constructor(keys: readonly (string | KeyConfig)[]) {
    for (const k of keys) {
      const c: KeyConfig = typeof k === 'string' ? { key: k } : k;
      this.byKey.set(c.key, {
        id: c.name ?? `key-${c.key.slice(0, 6)}`,
        name: c.name ?? `key ${c.key.slice(0, 6)}…`,
        key: c.key,
        networks: c.networks,
        accessPoints: c.accessPoints,
      });
    }
  }

  /** Adds the generated development key (valid everywhere). */
  addDevelopmentKey(key: string): Principal {
    const p: Principal = { id: 'development', name: 'development key', key, development: true };
    this.byKey.set(key, p);
    return p;
  }

  lookup(key: string): Principal | undefined {
    return this.byKey.get(key);
  }

  resolve(key: string, network: string, accessPoint: AccessPoint): Principal | undefined {
    const p = this.byKey.get(key);
    if (p === undefined) return undefined;
    if (p.networks !== undefined && !p.networks.includes(network)) return undefined;
    if (p.accessPoints !== undefined && !p.accessPoints.includes(accessPoint)) return undefined;
    return p;
  }

  get size(): number {
    return this.byKey.size;
  }
}

/** The key check callers use: the principal, or the RpcError to answer (401 unknown/missing, 403 not valid here). */
export function checkKey(store: KeyStore, key: string | undefined, network: string, accessPoint: AccessPoint): Principal | RpcError {
  if (!key) return unauthorized('missing API key: put it in the URL path');
  const p = store.resolve(key, network, accessPoint);
  if (p !== undefined) return p;
  const known = 'lookup' in store ? (store as KeyStoreWithReasons).lookup(key) : undefined;
  if (known !== undefined) return forbidden(`API key is not valid for network ${network} on this access point`, { network, accessPoint });
  return unauthorized('invalid API key');
}
