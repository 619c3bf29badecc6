// Which upstream answered a call, for the request log and the fleet's head floor: the pool tags the result or the
// node's error object it settles a call with. A cache hit (a new CachedResult) is untagged; so is a bare primitive.
// Nearly every answer is a RawResult (the node's bytes, ./batching.ts): it carries the tag under a symbol — invisible
// to JSON.stringify and to the shared types, gone with the object, ≈ 15 ns. Anything else (a parsed value a caller may
// compare or copy, an error) is tagged in a WeakMap, leaving the object as it was, at ≈ 0.4 µs.
import { RawResult } from '@rpcgate/toolkit/engine';

const ANSWERED_BY = Symbol('rpcgate.answeredBy');
type Tagged = RawResult & { [ANSWERED_BY]?: string | number };
const tags = new WeakMap<object, string | number>();

/** Records that `value` (a result or error object) came from upstream `label` (host:port or index). */
export function markAnswered(value: unknown, label: string | number): void {
  if (value instanceof RawResult) (value as Tagged)[ANSWERED_BY] = label;
  else if (typeof value === 'object' && value !== null) tags.set(value, label);
}

/** The upstream that produced `value`, if the pool tagged it. */
export function answeredBy(value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const label = value instanceof RawResult ? (value as Tagged)[ANSWERED_BY] : tags.get(value);
  return label === undefined ? undefined : String(label);
}
