// Bounds on generating a value from a schema (sample.ts: mock results, conformance params). A schema can demand a value
// of any size (`minItems: 1e8` took the mock 1.5 GB and never let it start, issue 26), and nested arrays and refs can
// multiply small demands into a huge value; so:
//   - a schema that demands more than SAMPLE_BOUNDS anywhere it can reach is reported before generating anything
//     ("cannot be generated within bounds", naming the keyword and the JSON pointer);
//   - each value's generation has a budget of nodes and of time, checked as the generator emits each node.
import type { ContractModel, Json } from './model.js';

/** The largest demand a generated value may meet. A mock's answer stays readable (sample.ts caps values at 64 KiB of
 *  JSON anyway), so a schema beyond these cannot be mocked. */
export const SAMPLE_BOUNDS = Object.freeze({
  /** `minItems`, `minContains`, `prefixItems` that must be filled. */
  items: 1000,
  /** `minLength` of a string (characters). */
  length: 65_536,
  /** `minProperties` and `required` of an object. */
  properties: 1000,
  /** Nodes (values of any kind) the generator may emit for one value, across its candidates. */
  nodes: 200_000,
  /** Milliseconds one value's generation may take, across its candidates. */
  ms: 2000,
});

export interface BoundsViolation {
  keyword: string;
  value: number;
  bound: number;
  /** Where: a JSON pointer into the schema given, or `#/components/schemas/X/…` inside a component. */
  pointer: string;
}

const SCHEMA_REF = '#/components/schemas/';
const esc = (k: string) => k.replace(/~/g, '~0').replace(/\//g, '~1');

const LIMITS: [string, keyof typeof SAMPLE_BOUNDS][] = [
  ['minItems', 'items'],
  ['minContains', 'items'],
  ['minLength', 'length'],
  ['minProperties', 'properties'],
];

/** The first demand above SAMPLE_BOUNDS that `schema` can reach (following `#/components/schemas/*` refs, each once). */
export function findBoundsViolation(model: ContractModel, schema: Json): BoundsViolation | undefined {
  const components: Record<string, Json> = model.raw.components?.schemas ?? {};
  const seen = new Set<string>();
  const stack: [Json, string][] = [[schema, '']];
  while (stack.length) {
    const [s, at] = stack.pop()!;
    if (!s || typeof s !== 'object') continue;
    if (Array.isArray(s)) {
      for (const [i, x] of s.entries()) stack.push([x, `${at}/${i}`]);
      continue;
    }
    for (const [kw, bound] of LIMITS) {
      const v = s[kw];
      if (typeof v === 'number' && v > SAMPLE_BOUNDS[bound])
        return { keyword: kw, value: v, bound: SAMPLE_BOUNDS[bound], pointer: `${at}/${kw}` || '/' };
    }
    if (Array.isArray(s.required) && s.required.length > SAMPLE_BOUNDS.properties)
      return {
        keyword: 'required',
        value: s.required.length,
        bound: SAMPLE_BOUNDS.properties,
        pointer: `${at}/required`,
      };
    if (Array.isArray(s.prefixItems) && s.prefixItems.length > SAMPLE_BOUNDS.items)
      return {
        keyword: 'prefixItems',
        value: s.prefixItems.length,
        bound: SAMPLE_BOUNDS.items,
        pointer: `${at}/prefixItems`,
      };
    if (typeof s.$ref === 'string' && s.$ref.startsWith(SCHEMA_REF)) {
      const name = decodeURIComponent(s.$ref.slice(SCHEMA_REF.length));
      if (!seen.has(name) && components[name] !== undefined) {
        seen.add(name);
        stack.push([components[name], `#/components/schemas/${esc(name)}`]);
      }
    }
    // every keyword's value may hold subschemas (properties, items, allOf, …); annotations (enum, const, examples,
    // default) are data, not schemas, and are skipped
    for (const [k, v] of Object.entries(s)) {
      if (v && typeof v === 'object' && !['enum', 'const', 'examples', 'default', 'required'].includes(k))
        stack.push([v, `${at}/${esc(k)}`]);
    }
  }
  return undefined;
}

export const describeViolation = (v: BoundsViolation): string =>
  `${v.keyword} ${v.value} at ${v.pointer} is above the generator's bound of ${v.bound}`;

/** Thrown from inside the generator when a value's budget is spent. */
export class SampleBudgetError extends Error {
  constructor(readonly what: 'nodes' | 'time') {
    super(
      what === 'nodes'
        ? `generating a value took more than ${SAMPLE_BOUNDS.nodes} nodes`
        : `generating a value took more than ${SAMPLE_BOUNDS.ms} ms`,
    );
    this.name = 'SampleBudgetError';
  }
}

/** A budget for one value (all its candidates): `tick` is called for every node the generator emits. */
export function sampleBudget(bounds: { nodes: number; ms: number } = SAMPLE_BOUNDS): { tick: () => void } {
  const deadline = performance.now() + bounds.ms;
  let nodes = 0;
  return {
    tick: () => {
      if (++nodes > bounds.nodes) throw new SampleBudgetError('nodes');
      if ((nodes & 63) === 0 && performance.now() > deadline) throw new SampleBudgetError('time');
    },
  };
}
