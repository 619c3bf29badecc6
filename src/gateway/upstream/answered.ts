// Which upstream answered a call, for the request log: the pool tags the result (RawResult) or the node's error object
// it settles a call with, keyed by identity in a WeakMap — nothing added to the call's path but one WeakMap set, no
// field on shared types, and nothing kept once the result is gone. A cache hit (a new CachedResult) is untagged.
const tags = new WeakMap<object, string>();

/** Records that `value` (a result or error object) came from upstream `label` (host:port or index). */
export function markAnswered(value: unknown, label: string | number): void {
  if (typeof value === 'object' && value !== null) tags.set(value, String(label));
}

/** The upstream that produced `value`, if the pool tagged it. */
export function answeredBy(value: unknown): string | undefined {
  return typeof value === 'object' && value !== null ? tags.get(value) : undefined;
}
