// The ajv runtime helpers that ajv's standalone validators call (`require("ajv/dist/runtime/<x>").default` in ajv's
// output), re-exported by `@rpcgate/client`: generated validators import them from here and so depend on nothing else.
// They are a few lines each, written here rather than taken from ajv (2.5 MB installed with its dependencies): the
// client must stay small. test/client-ajv-runtime.test.ts checks each against ajv's own on the same inputs.

/** Deep equality as ajv's `enum`/`const`/`uniqueItems` use it (fast-deep-equal's algorithm). */
export function ajvEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (a && b && typeof a === 'object' && typeof b === 'object') {
    if (a.constructor !== b.constructor) return false;
    if (Array.isArray(a)) {
      const other = b as unknown[];
      if (a.length !== other.length) return false;
      for (let i = a.length; i-- !== 0; ) if (!ajvEqual(a[i], other[i])) return false;
      return true;
    }
    if (a instanceof RegExp) return a.source === (b as RegExp).source && a.flags === (b as RegExp).flags;
    if (a.valueOf !== Object.prototype.valueOf) return a.valueOf() === b.valueOf();
    if (a.toString !== Object.prototype.toString) return a.toString() === b.toString();
    const keys = Object.keys(a);
    if (keys.length !== Object.keys(b).length) return false;
    for (const k of keys) if (!Object.hasOwn(b, k)) return false;
    for (const k of keys)
      if (!ajvEqual((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k])) return false;
    return true;
  }
  // true if both are NaN
  return Number.isNaN(a) && Number.isNaN(b);
}

/** String length in Unicode code points, as ajv's `minLength`/`maxLength` count it (a surrogate pair is one). */
export function ajvUcs2length(s: string): number {
  let length = 0;
  for (let pos = 0; pos < s.length; length++) {
    const c = s.charCodeAt(pos++);
    if (c >= 0xd800 && c <= 0xdbff && pos < s.length && (s.charCodeAt(pos) & 0xfc00) === 0xdc00) pos++;
  }
  return length;
}

/** The URI resolver ajv resolves `$id`s with, over the platform's WHATWG URL (ajv uses fast-uri). */
export const ajvUri: { parse(uri: string): unknown; resolve(base: string, ref: string): string } = {
  parse(uri) {
    try {
      const u = new URL(uri);
      return {
        scheme: u.protocol.slice(0, -1),
        host: u.hostname,
        port: u.port || undefined,
        path: u.pathname,
        query: u.search.slice(1) || undefined,
        fragment: u.hash.slice(1) || undefined,
      };
    } catch {
      const hash = uri.indexOf('#');
      return { path: hash < 0 ? uri : uri.slice(0, hash), fragment: hash < 0 ? undefined : uri.slice(hash + 1) };
    }
  },
  resolve(base, ref) {
    try {
      return new URL(ref, base).href;
    } catch {
      return ref;
    }
  },
};

/** The error class of ajv's `$async` validators. */
export class AjvValidationError extends Error {
  readonly ajv = true;
  readonly validation = true;
  constructor(readonly errors: readonly object[]) {
    super('validation failed');
  }
}

/** ajv runtime module name (`ajv/dist/runtime/<name>`) → the name `@rpcgate/client` exports it under (for the
 *  toolkit's code generator, which rewrites ajv's require() calls into imports of these). */
export const AJV_RUNTIME_EXPORTS: Readonly<Record<string, string>> = {
  equal: 'ajvEqual',
  ucs2length: 'ajvUcs2length',
  uri: 'ajvUri',
  validation_error: 'AjvValidationError',
};
