// Values generated from a schema, for a mock's results and a conformance run's params when the document has no
// example: json-schema-faker with a seeded PRNG (deterministic), each candidate checked with the method's own
// validator; a candidate that fails (e.g. a oneOf whose branches both accept an empty array) is retried with the next
// seed. The schema is sampled with the document's components beside it, so `#/components/schemas/X` refs (recursive
// ones included) resolve where they are.
import { generateSync } from 'json-schema-faker';
import type { ValidateFn } from '../rpc/descriptor.js';
import type { ContractModel, Json } from './model.js';

export interface SampleOptions {
  /** First seed (default 1); seed, seed+1, … are tried in turn. */
  seed?: number;
  /** Candidates tried before giving up (default 25). */
  tries?: number;
}

/** A value of `schema` that `validate` accepts, or undefined when none was found in `tries` candidates. */
export function sampleValid(model: ContractModel, schema: Json, validate: ValidateFn, opts: SampleOptions = {}): { value: unknown } | undefined {
  const root = schema && typeof schema === 'object' ? { ...schema, components: model.raw.components ?? {} } : schema;
  const first = opts.seed ?? 1;
  for (let seed = first; seed < first + (opts.tries ?? 25); seed++) {
    let value: unknown;
    try {
      value = generateSync(root, { seed, maxDepth: 4, alwaysFakeOptionals: false } as Parameters<typeof generateSync>[1]);
    } catch {
      continue;
    }
    if (validate(value)) return { value };
  }
  return undefined;
}

/** A method's result: a generated value its result validator accepts. */
export function sampleResult(model: ContractModel, method: string, validate: ValidateFn, opts?: SampleOptions): { value: unknown } | undefined {
  const m = model.methods.find((x) => x.name === method);
  if (!m) throw new Error(`no method ${method}`);
  return sampleValid(model, m.result?.schema ?? {}, validate, opts);
}

/** A method's positional params: generated values its params validator accepts (required params, then each optional
 *  one generated too when that still validates). */
export function sampleParams(model: ContractModel, method: string, validate: ValidateFn, opts?: SampleOptions): { value: unknown[] } | undefined {
  const m = model.methods.find((x) => x.name === method);
  if (!m) throw new Error(`no method ${method}`);
  const tuple = { type: 'array', prefixItems: m.params.map((p) => p.schema), items: false, minItems: m.params.filter((p) => p.required).length, maxItems: m.params.length };
  const r = sampleValid(model, m.params.length ? tuple : { type: 'array', maxItems: 0 }, validate, opts);
  return r as { value: unknown[] } | undefined;
}
