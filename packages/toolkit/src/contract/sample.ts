// Values generated from a schema, for a mock's results and a conformance run's params when the document has no
// example: json-schema-faker with a seeded PRNG (deterministic), each candidate checked with the method's own
// validator; a candidate that fails (e.g. a oneOf whose branches both accept an empty array) is retried with the next
// seed. The schema is sampled with the document's components beside it, so `#/components/schemas/X` refs (recursive
// ones included) resolve where they are.
//
// Candidates come in order of preference, so the first that validates is the most useful one:
//   1. nulls stripped (null branches of anyOf/oneOf, 'null' in type lists and enums) with every optional property
//      filled — a mock's `Block | null` answers a block, an object shows all its fields;
//   2. nulls stripped, optional properties at random;
//   3. the schema as given (a result that can only be null, a recursion that must end in null).
// Each at a moderate depth first, then a deeper one: json-schema-faker counts every $ref, property and array item as
// a level and cuts at maxDepth (arrays of minItems nulls, objects of required consts), so documents that nest
// components a few levels deep (account's UsageSeries → points → UsagePoint → start) need more than a handful of
// levels, while recursive schemas stay small at the first depth that validates.
import { generateSync } from 'json-schema-faker';
import type { ValidateFn } from '../rpc/descriptor.js';
import type { ContractModel, Json } from './model.js';
import { mapSchema } from './schema-walk.js';
import { describeViolation, findBoundsViolation, sampleBudget, SampleBudgetError } from './sample-bounds.js';

export interface SampleOptions {
  /** First seed (default 1); seed, seed+1, … are tried in turn. */
  seed?: number;
  /** Candidates tried per variant (nulls stripped or not, optionals filled or not, depth) before the next (default 8). */
  tries?: number;
  /** Largest value accepted, as JSON characters (default 64 KiB): a mock's answer stays readable. */
  maxBytes?: number;
  /** Told why no value is given when the reason is a bound (sample-bounds.ts): a demand above SAMPLE_BOUNDS (with its
   *  JSON pointer) or a spent node/time budget. */
  onBounds?: (reason: string) => void;
}

const DEPTHS = [8, 16];

const SCHEMA_REF = '#/components/schemas/';

/** A schema that only accepts null (following `#/components/schemas/X` refs, e.g. execution-apis' NotFound). */
function isNullSchema(s: Json, components: Record<string, Json>, hops = 0): boolean {
  if (s === null || typeof s !== 'object' || Array.isArray(s) || hops > 16) return false;
  if (typeof s.$ref === 'string') {
    const target = s.$ref.startsWith(SCHEMA_REF)
      ? components[decodeURIComponent(s.$ref.slice(SCHEMA_REF.length))]
      : undefined;
    return target !== undefined && isNullSchema(target, components, hops + 1);
  }
  return (
    s.type === 'null' ||
    s.const === null ||
    (Array.isArray(s.enum) && s.enum.length > 0 && s.enum.every((v: unknown) => v === null))
  );
}

/**
 * The schema as the generator gets it (the validator still checks the original):
 * - arrays capped at max(minItems, 3) items and pattern-free strings at max(minLength, 40) characters, so a
 *   `maxItems: 1500` series or a 500-character description stays a readable answer;
 * - with `stripNull`, null alternatives removed where another one remains (null branches of anyOf/oneOf, also
 *   through a component ref, 'null' in type lists and enums).
 */
export function generatorSchema(schema: Json, components: Record<string, Json>, stripNull: boolean): Json {
  return mapSchema(schema, (s) => {
    const cap = Math.max(typeof s.minItems === 'number' ? s.minItems : 0, 3);
    if (
      (s.type === 'array' || s.items !== undefined || s.prefixItems !== undefined) &&
      !(typeof s.maxItems === 'number' && s.maxItems <= cap)
    )
      s.maxItems = cap;
    const len = Math.max(typeof s.minLength === 'number' ? s.minLength : 0, 40);
    if (
      s.type === 'string' &&
      s.pattern === undefined &&
      s.format === undefined &&
      !(typeof s.maxLength === 'number' && s.maxLength <= len)
    )
      s.maxLength = len;
    if (!stripNull) return s;
    if (Array.isArray(s.type) && s.type.includes('null') && s.type.length > 1)
      s.type = s.type.filter((t: string) => t !== 'null');
    if (Array.isArray(s.enum) && s.enum.includes(null) && s.enum.length > 1)
      s.enum = s.enum.filter((v: unknown) => v !== null);
    for (const k of ['anyOf', 'oneOf']) {
      if (!Array.isArray(s[k])) continue;
      const kept = s[k].filter((b: Json) => !isNullSchema(b, components));
      if (kept.length > 0 && kept.length < s[k].length) s[k] = kept;
    }
    return s;
  });
}

const prepared = new WeakMap<ContractModel, Record<'strip' | 'given', Json>>();

/** The document's components with their schemas prepared for the generator (once per model and variant). */
function preparedComponents(model: ContractModel, stripNull: boolean): Json {
  let p = prepared.get(model);
  if (!p) {
    const components = model.raw.components ?? {};
    const schemas: Record<string, Json> = components.schemas ?? {};
    const each = (strip: boolean) => ({
      ...components,
      schemas: Object.fromEntries(Object.entries(schemas).map(([k, v]) => [k, generatorSchema(v, schemas, strip)])),
    });
    p = { strip: each(true), given: each(false) };
    prepared.set(model, p);
  }
  return stripNull ? p.strip : p.given;
}

/** A value of `schema` that `validate` accepts, or undefined when none was found. */
export function sampleValid(
  model: ContractModel,
  schema: Json,
  validate: ValidateFn,
  opts: SampleOptions = {},
): { value: unknown } | undefined {
  if (schema === true || (schema && typeof schema === 'object' && Object.keys(schema).length === 0)) {
    // An empty schema (a method without a result, or `{}`) accepts anything: null says "nothing in particular".
    if (validate(null)) return { value: null };
  }
  const violation = findBoundsViolation(model, schema);
  if (violation) {
    opts.onBounds?.(`cannot be generated within bounds: ${describeViolation(violation)}`);
    return undefined;
  }
  // One budget for the value, all candidates together: the generator reports every node it emits.
  const budget = sampleBudget();
  const outputTransform = (value: unknown) => {
    budget.tick();
    return value;
  };
  const schemas: Record<string, Json> = model.raw.components?.schemas ?? {};
  const root = (stripNull: boolean): Json =>
    schema && typeof schema === 'object'
      ? { ...generatorSchema(schema, schemas, stripNull), components: preparedComponents(model, stripNull) }
      : schema;
  const stripped = root(true);
  const asGiven = root(false);
  const variants: { schema: Json; alwaysFakeOptionals: boolean }[] = [
    { schema: stripped, alwaysFakeOptionals: true },
    { schema: stripped, alwaysFakeOptionals: false },
    { schema: asGiven, alwaysFakeOptionals: false },
  ];
  const first = opts.seed ?? 1;
  const tries = opts.tries ?? 8;
  const maxBytes = opts.maxBytes ?? 64 * 1024;
  for (const maxDepth of DEPTHS) {
    for (const v of variants) {
      for (let seed = first; seed < first + tries; seed++) {
        let value: unknown;
        try {
          value = generateSync(v.schema, {
            seed,
            maxDepth,
            alwaysFakeOptionals: v.alwaysFakeOptionals,
            maxDefaultItems: 2,
            outputTransform,
          } as Parameters<typeof generateSync>[1]);
        } catch (e) {
          if (e instanceof SampleBudgetError) {
            opts.onBounds?.(`cannot be generated within bounds: ${e.message}`);
            return undefined;
          }
          continue;
        }
        if (value === undefined || !validate(value)) continue;
        if (JSON.stringify(value).length > maxBytes) continue;
        return { value };
      }
    }
  }
  return undefined;
}

/** A method's result: a generated value its result validator accepts. */
export function sampleResult(
  model: ContractModel,
  method: string,
  validate: ValidateFn,
  opts?: SampleOptions,
): { value: unknown } | undefined {
  const m = model.methods.find((x) => x.name === method);
  if (!m) throw new Error(`no method ${method}`);
  return sampleValid(model, m.result?.schema ?? {}, validate, opts);
}

/** A method's positional params: generated values its params validator accepts (every optional param filled in when
 *  that validates, else only the required ones). */
export function sampleParams(
  model: ContractModel,
  method: string,
  validate: ValidateFn,
  opts?: SampleOptions,
): { value: unknown[] } | undefined {
  const m = model.methods.find((x) => x.name === method);
  if (!m) throw new Error(`no method ${method}`);
  if (m.params.length === 0) return validate([]) ? { value: [] } : undefined;
  const required = m.params.filter((p) => p.required).length;
  const tuple = (n: number) => ({
    type: 'array',
    prefixItems: m.params.slice(0, n).map((p) => p.schema),
    items: false,
    minItems: n,
    maxItems: n,
  });
  const full = sampleValid(model, tuple(m.params.length), validate, opts);
  if (full || required === m.params.length) return full as { value: unknown[] } | undefined;
  return sampleValid(model, tuple(required), validate, opts) as { value: unknown[] } | undefined;
}
