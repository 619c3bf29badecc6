// The OpenRPC meta-schemas as the toolkit checks documents against them (validate.ts), built from
// @open-rpc/schema-utils-js's. Shared by codegen, which compiles the two plain ones (1.3 and 1.4) with ajv standalone
// into ./generated/meta-validators.ts (no meta-schema compilation, and no schema-utils import, when a command loads
// a document: ~0.3 s of CPU per process), and by validate.ts, which compiles a document's `x-extensions` variant at
// run time (it depends on the document).
import type { Options } from 'ajv';
import type { Json } from './parse.js';

const DRAFT7 = 'http://json-schema.org/draft-07/schema#';
const REF = '#/definitions/referenceObject';

/** The `$id` of each family's meta-schema (standalone exports are looked up by it). */
export const META_IDS = { '1.3': 'urn:rpcgate:openrpc-meta:1.3', '1.4': 'urn:rpcgate:openrpc-meta:1.4' } as const;

/** ajv's options for the meta-schemas: formats off (annotations; the checks that matter are done in validate.ts);
 *  inlineRefs off, so an error's schemaPath names the definition (referenceObject, methodObject, …) it comes from. */
export const META_AJV_OPTIONS: Options = {
  strict: false,
  allErrors: true,
  validateFormats: false,
  validateSchema: false,
  inlineRefs: false,
};

/** `meta` (schema-utils' meta-schema, possibly extended) with JSON Schema positions checked against draft-07 (ajv's own
 *  meta-schema stands in for json-schema.tools', not a toolkit dependency) and each "X or a reference" oneOf made
 *  if-$ref-then-reference-else-X, so errors come from the branch a node is, not from both. */
export function buildMetaSchema(meta: Json, id?: string): Json {
  const swap = (n: Json): Json => {
    if (!n || typeof n !== 'object') return n;
    if (Array.isArray(n)) return n.map(swap);
    if (typeof n.$ref === 'string' && n.$ref.startsWith('https://meta.json-schema.tools'))
      return n.$ref.includes('/properties/$ref') ? { type: 'string' } : { $ref: DRAFT7 };
    const out = Object.fromEntries(Object.entries(n).map(([k, v]) => [k, swap(v)]));
    const alt =
      Array.isArray(out.oneOf) && out.oneOf.length === 2 ? out.oneOf.findIndex((x: Json) => x?.$ref === REF) : -1;
    if (alt >= 0) {
      const other = out.oneOf[1 - alt];
      delete out.oneOf;
      // biome-ignore lint/suspicious/noThenProperty: JSON Schema's if/then/else keyword, not a thenable.
      Object.assign(out, { if: { type: 'object', required: ['$ref'] }, then: { $ref: REF }, else: other });
    }
    return out;
  };
  const out = swap(structuredClone(meta));
  return id ? { $id: id, ...out } : out;
}
