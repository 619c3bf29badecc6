// Which schemas of a document admit no value at all: a document defect, not something a server or a mock can fix.
// `mock` answers such a method -32603 naming the defect, `conformance` reports it as a warning instead of failing the
// endpoint, and `generate` and `docs` print it. The check is conservative — only contradictions that are certain,
// each named by the JSON pointer of the keyword that causes it:
//   - `false` (a schema, `not: {}`), an empty `type` list or `enum`;
//   - the conjunction of a schema, its `$ref` target and its `allOf` members: types that do not intersect, an `enum`
//     or `const` with no value of the allowed types or outside another member's enum, numeric bounds with nothing
//     between them (exclusive bounds, integers and a single multipleOf counted), minLength above maxLength, minItems
//     above maxItems or above what a closed tuple holds, minProperties/required above maxProperties, a required
//     property that a member's `additionalProperties: false` forbids or whose own schema is unsatisfiable;
//   - `anyOf`/`oneOf` whose every branch is unsatisfiable beside the rest of the conjunction;
//   - items an array must have (minItems) whose schema is unsatisfiable.
// Type-specific bounds only count when the types allowed are all of that kind (`minimum > maximum` on a schema that
// also allows strings is satisfiable by a string). Recursive components are assumed satisfiable where they recur.
import type { ContractModel, Json } from './model.js';
import { safeRegExp } from '@rpcgate/client';

export interface Unsatisfiable {
  /** JSON pointer of the keyword that makes the schema admit no value (`#/methods/3/result/schema/allOf/1/…`). */
  pointer: string;
  reason: string;
}

export interface SatisfiabilityProblem extends Unsatisfiable {
  method: string;
  /** The method's result, or a required param by name. */
  what: 'result' | { param: string };
}

const SCHEMA_REF = '#/components/schemas/';
const esc = (k: string) => k.replace(/~/g, '~0').replace(/\//g, '~1');
const isObj = (v: unknown): v is Record<string, Json> => !!v && typeof v === 'object' && !Array.isArray(v);
const show = (v: unknown) => {
  const s = JSON.stringify(v) ?? String(v);
  return s.length > 60 ? `${s.slice(0, 57)}...` : s;
};

function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  if (isObj(v))
    return `{${Object.keys(v)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical(v[k])}`)
      .join(',')}}`;
  return JSON.stringify(v) ?? 'null';
}

const typeOf = (v: unknown): string =>
  v === null
    ? 'null'
    : Array.isArray(v)
      ? 'array'
      : typeof v === 'number'
        ? Number.isInteger(v)
          ? 'integer'
          : 'number'
        : typeof v;

const allows = (types: Set<string>, t: string) => types.has(t) || (t === 'integer' && types.has('number'));

/** A schema with where it sits in the document. */
type At = [Json, string];

export class SatisfiabilityChecker {
  private memo = new WeakMap<object, Unsatisfiable | null>();

  constructor(private readonly components: Record<string, Json>) {}

  /** Why `schema` (at `pointer`) admits no value, or undefined when it may admit one. */
  check(schema: Json, pointer: string): Unsatisfiable | undefined {
    return this.conj([[schema, pointer]], []);
  }

  /** Flattens $ref and allOf into the members of one conjunction. */
  private members(list: At[], stack: string[], out: At[] = []): At[] | Unsatisfiable {
    for (const [s, p] of list) {
      if (s === false) return { pointer: p, reason: 'the schema is `false`: no value is valid' };
      if (!isObj(s)) continue;
      out.push([s, p]);
      if (typeof s.$ref === 'string' && s.$ref.startsWith(SCHEMA_REF)) {
        const name = decodeURIComponent(s.$ref.slice(SCHEMA_REF.length));
        const target = this.components[name];
        if (target !== undefined && !stack.includes(name)) {
          stack.push(name);
          const r = this.members([[target, `${SCHEMA_REF}${esc(name)}`]], stack, out);
          if (!Array.isArray(r)) return r;
        }
      }
      if (Array.isArray(s.allOf)) {
        const r = this.members(
          s.allOf.map((m: Json, i: number): At => [m, `${p}/allOf/${i}`]),
          stack,
          out,
        );
        if (!Array.isArray(r)) return r;
      }
    }
    return out;
  }

  private conj(list: At[], stack: string[]): Unsatisfiable | undefined {
    const single = list.length === 1 && isObj(list[0][0]) ? list[0][0] : undefined;
    if (single) {
      const m = this.memo.get(single);
      if (m !== undefined) return m === null ? undefined : { ...m, pointer: m.pointer.replace(/^\0/, list[0][1]) };
    }
    const r = this.conjUncached(list, [...stack]);
    if (single) {
      // pointers under the schema given are stored relative to it (the same component is reached from many places)
      const base = list[0][1];
      this.memo.set(
        single,
        r === undefined
          ? null
          : { ...r, pointer: r.pointer.startsWith(base) ? `\0${r.pointer.slice(base.length)}` : r.pointer },
      );
    }
    return r;
  }

  private conjUncached(list: At[], stack: string[]): Unsatisfiable | undefined {
    const flat = this.members(list, stack);
    if (!Array.isArray(flat)) return flat;

    // types
    let types: Set<string> | undefined;
    let typeAt = '';
    for (const [s, p] of flat) {
      if (s.type === undefined) continue;
      const t: string[] = (Array.isArray(s.type) ? s.type : [s.type]).filter((x: unknown) => typeof x === 'string');
      if (t.length === 0) return { pointer: `${p}/type`, reason: 'an empty type list: no value is valid' };
      const mine = new Set(t);
      if (!types) {
        types = mine;
        typeAt = `${p}/type`;
        continue;
      }
      const next = new Set<string>();
      for (const x of types) {
        if (allows(mine, x)) next.add(x);
        else if (x === 'number' && mine.has('integer')) next.add('integer');
      }
      if (next.size === 0)
        return {
          pointer: `${p}/type`,
          reason: `type ${show(s.type)} and type ${show([...types])} (at ${typeAt}) have no type in common`,
        };
      types = next;
      typeAt = `${p}/type`;
    }
    const only = (...kinds: string[]) => types !== undefined && [...types].every((t) => kinds.includes(t));

    // enum / const
    let values: unknown[] | undefined;
    let valuesAt = '';
    for (const [s, p] of flat) {
      for (const [kw, vs] of [
        ['enum', s.enum],
        ['const', s.const === undefined ? undefined : [s.const]],
      ] as const) {
        if (!Array.isArray(vs)) continue;
        if (vs.length === 0) return { pointer: `${p}/${kw}`, reason: 'an empty enum: no value is valid' };
        if (!values) {
          values = vs;
          valuesAt = `${p}/${kw}`;
          continue;
        }
        const keys = new Set(vs.map(canonical));
        const next = values.filter((v) => keys.has(canonical(v)));
        if (next.length === 0)
          return {
            pointer: `${p}/${kw}`,
            reason: `${kw} ${show(kw === 'const' ? s.const : vs)} has no value in common with ${show(values)} (at ${valuesAt})`,
          };
        values = next;
        valuesAt = `${p}/${kw}`;
      }
    }
    if (values && types) {
      const t = types;
      const ok = values.filter((v) => allows(t, typeOf(v)));
      if (ok.length === 0)
        return {
          pointer: valuesAt,
          reason: `${valuesAt.endsWith('const') ? 'const' : 'enum'} ${show(values)} has no value of type ${show([...t])} (at ${typeAt})`,
        };
    }
    if (values) {
      const ok = values.filter((v) => this.valueFits(flat, v));
      if (ok.length === 0)
        return {
          pointer: valuesAt,
          reason: `no value of ${valuesAt.endsWith('const') ? 'const' : 'enum'} ${show(values)} meets the other keywords beside it`,
        };
    }

    // numbers
    if (only('number', 'integer')) {
      let lo = Number.NEGATIVE_INFINITY;
      let hi = Number.POSITIVE_INFINITY;
      let loX = false;
      let hiX = false;
      let loAt = '';
      let hiAt = '';
      const multiples: number[] = [];
      for (const [s, p] of flat) {
        const bound = (kw: string, v: unknown, exclusive: boolean, upper: boolean) => {
          if (typeof v !== 'number') return;
          if (upper ? v < hi || (v === hi && exclusive) : v > lo || (v === lo && exclusive)) {
            if (upper) [hi, hiX, hiAt] = [v, exclusive, `${p}/${kw}`];
            else [lo, loX, loAt] = [v, exclusive, `${p}/${kw}`];
          }
        };
        bound('minimum', s.minimum, s.exclusiveMinimum === true, false);
        bound('maximum', s.maximum, s.exclusiveMaximum === true, true);
        bound('exclusiveMinimum', s.exclusiveMinimum, true, false);
        bound('exclusiveMaximum', s.exclusiveMaximum, true, true);
        if (typeof s.multipleOf === 'number' && s.multipleOf > 0) multiples.push(s.multipleOf);
      }
      const integer = only('integer');
      let empty = lo > hi || (lo === hi && (loX || hiX));
      if (!empty && integer) {
        const a = loX ? Math.floor(lo) + 1 : Math.ceil(lo);
        const b = hiX ? Math.ceil(hi) - 1 : Math.floor(hi);
        empty = a > b;
      }
      if (!empty && multiples.length === 1 && Number.isFinite(lo) && Number.isFinite(hi)) {
        const m = multiples[0];
        let k = Math.ceil(lo / m);
        if (loX && k * m <= lo) k++;
        const v = k * m;
        empty = v > hi || (hiX && v >= hi);
      }
      if (empty)
        return {
          pointer: hiAt || loAt,
          reason: `no ${integer ? 'integer' : 'number'} lies between ${loAt.split('/').pop()} ${lo} (at ${loAt}) and ${hiAt.split('/').pop()} ${hi}${multiples.length === 1 ? ` as a multiple of ${multiples[0]}` : ''}`,
        };
    }

    // strings
    if (only('string')) {
      const r = this.range(flat, 'minLength', 'maxLength', 'characters');
      if (r) return r;
    }

    // arrays
    if (only('array')) {
      const r = this.range(flat, 'minItems', 'maxItems', 'items');
      if (r) return r;
      const min = Math.max(0, ...flat.map(([s]) => (typeof s.minItems === 'number' ? s.minItems : 0)));
      for (const [s, p] of flat) {
        const tuple = Array.isArray(s.prefixItems)
          ? { items: s.prefixItems, kw: 'prefixItems', rest: s.items, restKw: 'items' }
          : Array.isArray(s.items)
            ? { items: s.items, kw: 'items', rest: s.additionalItems, restKw: 'additionalItems' }
            : undefined;
        if (tuple && tuple.rest === false && min > tuple.items.length)
          return {
            pointer: `${p}/${tuple.restKw}`,
            reason: `minItems ${min} but the tuple holds at most ${tuple.items.length} items (${tuple.restKw}: false)`,
          };
        // items the array must have
        const need = Math.min(min, 64);
        for (let i = 0; i < need; i++) {
          const [sub, at] = tuple
            ? i < tuple.items.length
              ? [tuple.items[i], `${p}/${tuple.kw}/${i}`]
              : [tuple.rest, `${p}/${tuple.restKw}`]
            : [s.items, `${p}/items`];
          if (sub === undefined || (tuple && i >= tuple.items.length && !isObj(sub) && sub !== false)) continue;
          const r2 = this.conj([[sub, at]], stack);
          if (r2)
            return { pointer: r2.pointer, reason: `a required item (minItems ${min}) cannot be valid: ${r2.reason}` };
          if (!tuple) break; // the same schema for every item
        }
      }
    }

    // objects
    if (only('object')) {
      const r = this.range(flat, 'minProperties', 'maxProperties', 'properties');
      if (r) return r;
      const required = [...new Set(flat.flatMap(([s]) => (Array.isArray(s.required) ? s.required : [])))];
      const max = Math.min(
        ...flat.map(([s]) => (typeof s.maxProperties === 'number' ? s.maxProperties : Number.POSITIVE_INFINITY)),
      );
      if (required.length > max)
        return {
          pointer: `${flat.find(([s]) => s.maxProperties === max)![1]}/maxProperties`,
          reason: `${required.length} required properties but maxProperties ${max}`,
        };
      for (const name of required) {
        const schemas: At[] = [];
        for (const [s, p] of flat) {
          const declared = isObj(s.properties) && Object.hasOwn(s.properties, name);
          if (declared) schemas.push([s.properties[name], `${p}/properties/${esc(name)}`]);
          const patterns = isObj(s.patternProperties)
            ? Object.entries(s.patternProperties).filter(([re]) => safeTest(re, name))
            : [];
          for (const [re, ps] of patterns) schemas.push([ps, `${p}/patternProperties/${esc(re)}`]);
          if (!declared && patterns.length === 0 && s.additionalProperties !== undefined) {
            if (s.additionalProperties === false)
              return {
                pointer: `${p}/additionalProperties`,
                reason: `required property ${JSON.stringify(name)} is not allowed here (additionalProperties: false; it is not among the properties beside it)`,
              };
            schemas.push([s.additionalProperties, `${p}/additionalProperties`]);
          }
        }
        if (schemas.length === 0) continue;
        const r2 = this.conj(schemas, stack);
        if (r2)
          return {
            pointer: r2.pointer,
            reason: `required property ${JSON.stringify(name)} cannot be valid: ${r2.reason}`,
          };
      }
    }

    // not
    for (const [s, p] of flat) {
      if (s.not === true || (isObj(s.not) && Object.keys(s.not).length === 0))
        return { pointer: `${p}/not`, reason: '`not` of a schema that accepts everything: no value is valid' };
    }

    // anyOf / oneOf: every branch impossible beside the rest
    const rest: At[] = flat.map(([s, p]) => {
      const { anyOf: _a, oneOf: _o, allOf: _l, $ref: _r, ...plain } = s;
      return [plain, p];
    });
    for (const [s, p] of flat) {
      for (const kw of ['anyOf', 'oneOf']) {
        if (!Array.isArray(s[kw])) continue;
        if (s[kw].length === 0) return { pointer: `${p}/${kw}`, reason: `an empty ${kw}: no value is valid` };
        const why: string[] = [];
        for (const [i, b] of s[kw].entries()) {
          const r2 = this.conj([...rest, [b, `${p}/${kw}/${i}`]], stack);
          if (!r2) break;
          why.push(`${r2.pointer}: ${r2.reason}`);
        }
        if (why.length === s[kw].length)
          return { pointer: `${p}/${kw}`, reason: `no branch of ${kw} can be valid (${why.join('; ')})` };
      }
    }
    return undefined;
  }

  private range(flat: At[], minKw: string, maxKw: string, what: string): Unsatisfiable | undefined {
    let lo = 0;
    let hi = Number.POSITIVE_INFINITY;
    let loAt = '';
    let hiAt = '';
    for (const [s, p] of flat) {
      if (typeof s[minKw] === 'number' && s[minKw] > lo) [lo, loAt] = [s[minKw], `${p}/${minKw}`];
      if (typeof s[maxKw] === 'number' && s[maxKw] < hi) [hi, hiAt] = [s[maxKw], `${p}/${maxKw}`];
    }
    if (lo > hi)
      return { pointer: hiAt, reason: `${minKw} ${lo} (at ${loAt}) is above ${maxKw} ${hi}: no ${what} count fits` };
    return undefined;
  }

  /** Whether a const/enum value meets the simple keywords of every member (type-specific ones for its type). */
  private valueFits(flat: At[], v: unknown): boolean {
    for (const [s] of flat) {
      if (typeof v === 'number') {
        if (typeof s.minimum === 'number' && (s.exclusiveMinimum === true ? v <= s.minimum : v < s.minimum))
          return false;
        if (typeof s.maximum === 'number' && (s.exclusiveMaximum === true ? v >= s.maximum : v > s.maximum))
          return false;
        if (typeof s.exclusiveMinimum === 'number' && v <= s.exclusiveMinimum) return false;
        if (typeof s.exclusiveMaximum === 'number' && v >= s.exclusiveMaximum) return false;
      }
      if (typeof v === 'string') {
        const len = [...v].length;
        if (typeof s.minLength === 'number' && len < s.minLength) return false;
        if (typeof s.maxLength === 'number' && len > s.maxLength) return false;
        if (typeof s.pattern === 'string' && !safeTest(s.pattern, v, true)) return false;
      }
    }
    return true;
  }
}

/** `pattern` tested safely; an unusable pattern counts as `ifBroken` (never a reason to call a schema impossible). */
function safeTest(pattern: string, v: string, ifBroken = false): boolean {
  try {
    return safeRegExp(pattern).test(v);
  } catch {
    return ifBroken;
  }
}

const checkers = new WeakMap<object, SatisfiabilityChecker>();

/** The checker of a document's components (one per document: results are remembered per schema). */
export function satisfiabilityChecker(model: Pick<ContractModel, 'raw'>): SatisfiabilityChecker {
  const components: Record<string, Json> = model.raw.components?.schemas ?? {};
  let c = checkers.get(components);
  if (!c) {
    c = new SatisfiabilityChecker(components);
    checkers.set(components, c);
  }
  return c;
}

/** Where a method's content descriptor sits: inline in the method, or the component it refers to. */
function descriptorPointer(raw: Json, mi: number, key: 'result' | number): string {
  const m = raw.methods?.[mi];
  const ref = (key === 'result' ? m?.result : m?.params?.[key])?.$ref;
  if (typeof ref === 'string' && ref.startsWith('#/')) return ref;
  return `#/methods/${mi}/${key === 'result' ? 'result' : `params/${key}`}`;
}

/** Every method whose result schema, or a required param's schema, admits no value — by method and JSON pointer. */
export function documentSatisfiability(model: ContractModel): SatisfiabilityProblem[] {
  const checker = satisfiabilityChecker(model);
  const out: SatisfiabilityProblem[] = [];
  for (const [mi, m] of model.methods.entries()) {
    if (m.result) {
      const r = checker.check(m.result.schema, `${descriptorPointer(model.raw, mi, 'result')}/schema`);
      if (r) out.push({ method: m.name, what: 'result', ...r });
    }
    for (const [pi, p] of m.params.entries()) {
      if (!p.required) continue;
      const r = checker.check(p.schema, `${descriptorPointer(model.raw, mi, pi)}/schema`);
      if (r) out.push({ method: m.name, what: { param: p.name }, ...r });
    }
  }
  return out;
}

/** One line for a problem: `method: its result schema admits no value: reason (at #/…)`. */
export function describeSatisfiability(p: SatisfiabilityProblem): string {
  const what =
    p.what === 'result' ? 'its result schema' : `the schema of its required param ${JSON.stringify(p.what.param)}`;
  return `${p.method}: ${what} admits no value (unsatisfiable): ${p.reason} (at ${p.pointer})`;
}
