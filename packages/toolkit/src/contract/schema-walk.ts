// A structural mapper over JSON Schema subschemas, and the `$ref` rewriting built on it.
import type { Json } from './model.js';

const SCHEMA_MAPS = ['properties', 'patternProperties', 'definitions', '$defs', 'dependentSchemas'];
const SCHEMA_LISTS = ['allOf', 'anyOf', 'oneOf', 'prefixItems'];
const SCHEMA_ONE = [
  'additionalProperties',
  'additionalItems',
  'not',
  'if',
  'then',
  'else',
  'contains',
  'propertyNames',
  'unevaluatedProperties',
  'unevaluatedItems',
];

/**
 * Copies a schema, applying `fn` to every (sub)schema after its children were mapped. `depth` is 0 for the
 * schema passed in. Non-schema keywords (enum, const, examples, default, …) are copied untouched.
 */
export function mapSchema(schema: Json, fn: (s: Json, depth: number) => Json, depth = 0): Json {
  if (!schema || typeof schema !== 'object' || Array.isArray(schema)) return schema;
  const out: Json = {};
  for (const [k, v] of Object.entries(schema)) {
    if (k === '__proto__') {
      // not a keyword: copied as data, defined (an assignment would set the copy's prototype)
      Object.defineProperty(out, k, {
        value: structuredClone(v),
        enumerable: true,
        writable: true,
        configurable: true,
      });
    } else if (SCHEMA_MAPS.includes(k) && v && typeof v === 'object') {
      out[k] = Object.fromEntries(Object.entries(v).map(([n, s]) => [n, mapSchema(s, fn, depth + 1)]));
    } else if (SCHEMA_LISTS.includes(k) && Array.isArray(v)) {
      out[k] = v.map((s) => mapSchema(s, fn, depth + 1));
    } else if (k === 'items') {
      out[k] = Array.isArray(v) ? v.map((s) => mapSchema(s, fn, depth + 1)) : mapSchema(v, fn, depth + 1);
    } else if (k === 'dependencies' && v && typeof v === 'object') {
      out[k] = Object.fromEntries(
        Object.entries(v).map(([n, s]) => [n, Array.isArray(s) ? s : mapSchema(s, fn, depth + 1)]),
      );
    } else if (SCHEMA_ONE.includes(k)) {
      out[k] = mapSchema(v, fn, depth + 1);
    } else {
      out[k] = structuredClone(v);
    }
  }
  return fn(out, depth);
}

/** Rewrites `#/components/schemas/X` refs with `to(X)`. */
export const rewriteRefs = (schema: Json, to: (name: string) => string): Json =>
  mapSchema(schema, (s) => {
    if (typeof s.$ref === 'string' && s.$ref.startsWith('#/components/schemas/')) {
      s.$ref = to(decodeURIComponent(s.$ref.slice('#/components/schemas/'.length)));
    }
    return s;
  });
