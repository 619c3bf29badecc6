// What a method means to the gateway, read from the contract: the `x-gateway` extension of each OpenRPC method object
// (JSON Schema: contracts/x-gateway.schema.json), which codegen copies into the generated descriptor's `ext`. This is
// the one place that knows the extension's shape; the upstream pool, the node API handlers and the account API take
// what they need from here, built once at start (a Map/Set lookup on the hot path). A method without the extension
// gets the fail-closed meaning: forwarded, not idempotent, not retryable, never cached, not open, not read-only (and
// no `addressParams`: the contract-address allowlist has nothing to check — the contract test requires the extension).
import type { MethodDescriptor, MethodTable } from '@rpcgate/client';

/** Cache class by finality (see contracts/x-gateway.schema.json). */
export type CacheClass = 'immutable' | 'by-block' | 'head' | 'never';

/** How much work a forwarded call costs the node (see contracts/x-gateway.schema.json): the upstream pool batches
 *  only calls of one class together, with the class's own batch size and deadline. */
export type CostClass = 'light' | 'heavy';

/** The `x-gateway` object of one method. */
export interface GatewayMeaning {
  /** `forward`: sent to the network's upstream node; `local`: answered by a handler of rpcgate. */
  readonly route: 'forward' | 'local';
  /** The same call twice has the same effect: may be deduped, hedged. */
  readonly idempotent: boolean;
  /** May be resent (on another upstream) after a transport error that may have reached the node. */
  readonly retryable: boolean;
  readonly cache: CacheClass;
  /** With cache `by-block`: index of the param that names the block. */
  readonly blockParam?: number;
  /** With cache `by-block`: the answer's own blockNumber decides. */
  readonly blockFromResult?: true;
  /** Callable without a key (node API) or a session (account API). */
  readonly open: boolean;
  /** Changes nothing. */
  readonly readOnly: boolean;
  /** Forwarded methods: `light` or `heavy` (absent: the upstream pool takes `heavy`). */
  readonly cost?: CostClass;
  /** Where the call names the contracts it reads (the contract-address allowlist applies there); absent: none. */
  readonly addressParams?: readonly AddressParam[];
  /** Compute units one call weighs (`x-gateway.units`; absent in the contract: DEFAULT_UNITS). */
  readonly units: number;
}

/** The weight of a method whose contract gives none: the `default` of `units` in contracts/x-gateway.schema.json (the
 *  contract test checks they agree). */
export const DEFAULT_UNITS = 20;

/** One place a call names contract addresses (see contracts/x-gateway.schema.json `addressParams`). */
export interface AddressParam {
  /** 0-based param index. */
  readonly param: number;
  /** Dot-separated property path inside an object param; absent: the param itself. */
  readonly path?: string;
  /** Applies only when params[when.param] === when.equals. */
  readonly when?: { readonly param: number; readonly equals: string };
}

/** The meaning of a method whose contract says nothing: treat it as the most dangerous kind of call. */
export const FAIL_CLOSED: GatewayMeaning = Object.freeze({
  route: 'forward',
  idempotent: false,
  retryable: false,
  cache: 'never',
  open: false,
  readOnly: false,
  units: DEFAULT_UNITS,
});

/** The method's `x-gateway`, fields it lacks taken from FAIL_CLOSED (the contract test checks every field is there). */
export function meaningOf(d: Pick<MethodDescriptor, 'ext'>): GatewayMeaning {
  const x = d.ext?.['x-gateway'];
  if (x === null || typeof x !== 'object' || Array.isArray(x)) return FAIL_CLOSED;
  return { ...FAIL_CLOSED, ...(x as Partial<GatewayMeaning>) };
}

/** Every method's meaning by name, built once (the upstream pool takes this: `idempotent`/`retryable` per method). */
export function meaningTable(table: MethodTable): ReadonlyMap<string, GatewayMeaning> {
  return new Map(Object.entries(table).map(([name, d]) => [name, meaningOf(d)]));
}

/** The `addressParams` of every method that has them, by name: the address allowlist's table, taken from the meaning
 *  table the service builds once (meaningTable). */
export function addressParamsTable(
  meanings: ReadonlyMap<string, GatewayMeaning>,
): ReadonlyMap<string, readonly AddressParam[]> {
  const out = new Map<string, readonly AddressParam[]>();
  for (const [name, m] of meanings) if (m.addressParams !== undefined) out.set(name, m.addressParams);
  return out;
}

/** Compute units by method name, built once (what limits, usage and metrics count); a method not in the table weighs
 *  DEFAULT_UNITS. */
export function unitsTable(table: MethodTable): ReadonlyMap<string, number> {
  return new Map([...meaningTable(table)].map(([name, m]) => [name, m.units]));
}

/** Names of the methods whose meaning passes `test` (e.g. the account API's read-only or open methods). */
export function methodsWhere(table: MethodTable, test: (m: GatewayMeaning) => boolean): ReadonlySet<string> {
  return new Set(Object.keys(table).filter((name) => test(meaningOf(table[name]))));
}

/** The names of a generated table's methods whose `x-gateway.route` is `local` (for typing local handler maps). */
export type LocalMethodName<T extends MethodTable> = {
  [K in keyof T]: T[K] extends { readonly ext?: { readonly 'x-gateway': { readonly route: 'local' } } } ? K : never;
}[keyof T];
