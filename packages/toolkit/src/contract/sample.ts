// Values generated from a schema, for a mock's results and a conformance run's params when the document has no
// example: generate.ts (a seeded generator over the schema's keywords, `#/components/schemas/X` refs resolved against
// the document's components, recursive ones included), each candidate checked with the method's own validator; a
// candidate that fails is retried with the next seed.
//
// Candidates come in order of preference, so the first that validates is the most useful one:
//   1. non-null preferred (null branches of anyOf/oneOf, 'null' in type lists and enums come last) with every optional
//      property filled and maps given an entry — a mock's `Block | null` answers a block, an object shows all its
//      fields;
//   2. non-null preferred, optional properties at random;
//   3. every alternative equally likely (a result that can only be null, a recursion that must end in null).
// Recursion is bounded by depth (generate.ts: past a few levels optional parts stay out and branches that end it come
// first), so recursive schemas stay small.
import type { ValidateFn } from '../rpc/descriptor.js';
import { GenerateFail, Generator, seededRandom, subschemaChecker } from './generate.js';
import type { ContractModel, Json } from './model.js';
import { describeViolation, findBoundsViolation, sampleBudget, SampleBudgetError } from './sample-bounds.js';

export interface SampleOptions {
  /** First seed (default 1); seed, seed+1, … are tried in turn. */
  seed?: number;
  /** Candidates tried per variant (non-null preferred or not, optionals filled or not) before the next (default 8). */
  tries?: number;
  /** Largest value accepted, as JSON characters (default 64 KiB): a mock's answer stays readable. */
  maxBytes?: number;
  /** Told why no value is given when the reason is a bound (sample-bounds.ts): a demand above SAMPLE_BOUNDS (with its
   *  JSON pointer) or a spent node/time budget. */
  onBounds?: (reason: string) => void;
  /** Told why the last candidate failed (the generator's reason, or the validator's first error). */
  onFailure?: (reason: string) => void;
}

const checkers = new WeakMap<object, (schema: Json, value: unknown) => boolean>();

/** The sub-schema checker of a model's components (one ajv per document). */
function checkerOf(model: ContractModel): (schema: Json, value: unknown) => boolean {
  const components: Record<string, Json> = model.raw.components?.schemas ?? {};
  let c = checkers.get(components);
  if (!c) {
    c = subschemaChecker(components);
    checkers.set(components, c);
  }
  return c;
}

const VARIANTS = [
  { fill: true, preferNonNull: true },
  { fill: false, preferNonNull: true },
  { fill: false, preferNonNull: false },
];

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
  const components: Record<string, Json> = model.raw.components?.schemas ?? {};
  const check = checkerOf(model);
  const first = opts.seed ?? 1;
  const tries = opts.tries ?? 8;
  const maxBytes = opts.maxBytes ?? 64 * 1024;
  let why = 'no candidate';
  for (const [vi, v] of VARIANTS.entries()) {
    for (let seed = first; seed < first + tries; seed++) {
      let value: unknown;
      try {
        const gen = new Generator({
          rand: seededRandom(seed * 7919 + vi),
          components,
          fill: v.fill,
          preferNonNull: v.preferNonNull,
          tick: budget.tick,
          check,
        });
        value = gen.value(schema, 0);
      } catch (e) {
        if (e instanceof SampleBudgetError) {
          opts.onBounds?.(`cannot be generated within bounds: ${e.message}`);
          return undefined;
        }
        if (e instanceof GenerateFail) {
          why = e.message;
          continue;
        }
        throw e;
      }
      if (value === undefined) continue;
      if (!validate(value)) {
        const err = validate.errors?.[0];
        why = err ? `${err.instancePath || '(root)'} ${err.message}` : 'refused by the validator';
        continue;
      }
      if (JSON.stringify(value).length > maxBytes) {
        why = `larger than ${maxBytes} characters of JSON`;
        continue;
      }
      return { value };
    }
  }
  opts.onFailure?.(why);
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
