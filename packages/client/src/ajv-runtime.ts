// The ajv runtime helpers that ajv's standalone validators call (`require("ajv/dist/runtime/<x>").default` in ajv's
// output), re-exported by `rpcgate/client`: generated validators import them from the package's export and so depend on
// nothing else (ajv is a dependency of the package, not of the project holding the generated code).
import equalModule from 'ajv/dist/runtime/equal.js';
import ucs2lengthModule from 'ajv/dist/runtime/ucs2length.js';
import uriModule from 'ajv/dist/runtime/uri.js';
import validationErrorModule from 'ajv/dist/runtime/validation_error.js';

// CJS modules with `exports.default`: under Node's ESM loader the default import is module.exports; bundlers and tsx may
// hand over `.default` already.
const pick = <T>(m: unknown): T => ((m as { default?: T }).default ?? m) as T;

/** Deep equality as ajv's `enum`/`const`/`uniqueItems` use it (fast-deep-equal). */
export const ajvEqual: (a: unknown, b: unknown) => boolean = pick(equalModule);
/** String length in Unicode code points, as ajv's `minLength`/`maxLength` count it. */
export const ajvUcs2length: (s: string) => number = pick(ucs2lengthModule);
/** The URI parser ajv resolves `$id`s with (fast-uri). */
export const ajvUri: { parse(uri: string): unknown; resolve(base: string, ref: string): string } = pick(uriModule);
/** The error class of ajv's `$async` validators. */
export const AjvValidationError: new (errors: readonly object[]) => Error & { readonly errors: readonly object[] } = pick(validationErrorModule);

/** ajv runtime module name (`ajv/dist/runtime/<name>`) → the name `rpcgate/client` exports it under. */
export const AJV_RUNTIME_EXPORTS: Readonly<Record<string, string>> = {
  equal: 'ajvEqual',
  ucs2length: 'ajvUcs2length',
  uri: 'ajvUri',
  validation_error: 'AjvValidationError',
};
