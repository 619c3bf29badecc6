// The principal and the key stage of the access pipeline (./pipeline.ts): callers ask a KeyStore for the principal
// behind a key. Sources: the account store's in-memory index (./index.ts) and static keys from the config
// (ConfigKeyStore, including the dev-mode development key).
import { randomBytes } from 'node:crypto';
import type { AccessPoint, KeyConfig } from '../config/config.js';
import type { LimitSubject } from '../limits/types.js';
import type { CompiledAllowlists } from './allowlist.js';
import type { JwtKeySet } from './jwt.js';

export type { AccessPoint } from '../config/config.js';

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
  /** Who its calls are counted against (built once with the principal). */
  limitSubject: LimitSubject;
  /** Request log: capture params and results of its calls (redacted, size-capped); absent = off. */
  logBodies?: boolean;
  /** The account is suspended by an operator: every call is refused (`suspended`). */
  suspended?: true;
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
  /** The account is suspended by an operator: every call is refused (`suspended`). */
  suspended?: true;
}

/** Who a request acts for. */
export type Principal = StaticPrincipal | AppPrincipal | NetworkKeyPrincipal;

export interface KeyStore {
  /** The principal behind a key, wherever it is valid; undefined for an unknown (or revoked) key. */
  lookup(key: string): Principal | undefined;
  /** Runs `fn` after every change of what lookups answer (a store whose keys can change); returns an unsubscribe.
   *  Long-lived holders of a principal (open WebSockets) re-check their key then. */
  onChange?(fn: () => void): () => void;
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

  onChange(fn: () => void): () => void {
    const offs = this.stores.map((s) => s.onChange?.(fn));
    return () => {
      for (const off of offs) off?.();
    };
  }
}
