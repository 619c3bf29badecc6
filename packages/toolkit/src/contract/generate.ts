// A value of a JSON Schema, built from its keywords with a seeded random source (sample.ts drives it and checks every
// candidate with the method's own validator). Written here rather than taken from json-schema-faker because published
// documents use what that library gets wrong: draft-07 tuples (`items: [..]` with `minItems: 32`, Filecoin's hashes),
// maps whose `additionalProperties` is a ref, `patternProperties` with `additionalProperties: false`, `propertyNames`,
// `oneOf` whose branches overlap (exactly one must match). The approach:
// - `normalize` flattens a schema into one conjunction: `$ref` (its siblings apply too), `allOf` and the chosen branches
//   of `anyOf`/`oneOf` are merged keyword by keyword into a plain `base` (types intersected, bounds tightened, required
//   united, properties merged per name) plus what merging cannot express: the remaining anyOf/oneOf groups, `not`s and
//   `if`/`then`/`else`;
// - a group is satisfied by trying its branches in a seeded order, each merged into the rest; `oneOf` (exactly one),
//   `not` and `if` are then checked on the value with ajv (sub-schemas compiled once each), and a failure tries the next
//   branch or candidate;
// - recursion: past SOFT_DEPTH optional properties stay out, arrays take their minimum, and branches that end a
//   recursion (null, no ref) come first; past HARD_DEPTH the attempt fails (the caller tries the next seed).
// Everything random comes from `rand`: the same seed gives the same value.
import { Ajv, type ValidateFunction } from 'ajv';
import { safeRegExp } from '@rpcgate/client';
import type { Json } from './model.js';
import { rewriteRefs } from './schema-walk.js';
import { RegexSampleError, sampleRegex } from './regex-sample.js';

/** This attempt cannot produce a value here (the caller backtracks or tries another seed). */
export class GenerateFail extends Error {}

const fail = (why: string): never => {
  throw new GenerateFail(why);
};

export const SOFT_DEPTH = 4;
export const HARD_DEPTH = 40;

/** mulberry32: small, fast, good enough for test data, and deterministic per seed. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0 || 0x9e3779b9;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export interface GenerateOptions {
  rand: () => number;
  /** components.schemas of the document: `#/components/schemas/X` refs resolve here. */
  components: Record<string, Json>;
  /** Fill optional properties and give maps an entry (until SOFT_DEPTH): the more telling value. */
  fill: boolean;
  /** Prefer non-null types and branches where another one is allowed (a `Block | null` answers a block). */
  preferNonNull: boolean;
  /** Called for every value node emitted (the caller's node and time budget). */
  tick: () => void;
  /** Checks a value against an original sub-schema of the document (ajv, compiled once per sub-schema). */
  check: (schema: Json, value: unknown) => boolean;
}

const SCHEMA_REF = '#/components/schemas/';

/** A conjunction of constraints, flattened. */
interface Normal {
  base: Json;
  groups: { kind: 'anyOf' | 'oneOf'; branches: Json[]; src: Json }[];
  nots: Json[];
  conds: Json[];
}

const _TYPES = ['null', 'boolean', 'object', 'array', 'number', 'integer', 'string'];

const isObj = (v: unknown): v is Record<string, Json> => !!v && typeof v === 'object' && !Array.isArray(v);

function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  if (isObj(v))
    return `{${Object.keys(v)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical(v[k])}`)
      .join(',')}}`;
  return JSON.stringify(v) ?? 'null';
}
const equal = (a: unknown, b: unknown) => canonical(a) === canonical(b);

/** Sets an own property (a key named __proto__ stays data). */
function setKey(o: Record<string, unknown>, k: string, v: unknown): void {
  Object.defineProperty(o, k, { value: v, enumerable: true, writable: true, configurable: true });
}

const both = (a: Json, b: Json): Json => {
  if (a === undefined || a === true) return b;
  if (b === undefined || b === true) return a;
  if (a === false || b === false) return false;
  return { allOf: [a, b] };
};

/** Types a schema allows, or undefined for any; 'integer' is a subset of 'number'. */
function typeSet(t: Json): string[] | undefined {
  if (t === undefined) return undefined;
  return (Array.isArray(t) ? t : [t]).filter((x) => typeof x === 'string');
}
function intersectTypes(a: string[] | undefined, b: string[] | undefined): string[] | undefined {
  if (!a) return b;
  if (!b) return a;
  const out = new Set<string>();
  for (const x of a)
    for (const y of b) {
      if (x === y) out.add(x);
      else if ((x === 'integer' && y === 'number') || (x === 'number' && y === 'integer')) out.add('integer');
    }
  return [...out];
}

/** Array keywords as one form: positional schemas, then the schema of every further item (false: none). */
function arrayForm(s: Json): { prefix: Json[]; rest: Json } {
  if (Array.isArray(s.prefixItems)) return { prefix: s.prefixItems, rest: s.items };
  if (Array.isArray(s.items)) return { prefix: s.items, rest: s.additionalItems };
  return { prefix: [], rest: s.items };
}

/** Merges two plain schemas (no $ref/allOf/anyOf/oneOf/not/if left) into one that demands both. */
function mergeBase(a: Json, b: Json): Json {
  const out: Json = { ...a };
  for (const [k, v] of Object.entries(b as Record<string, Json>)) {
    const mine = out[k];
    if (mine === undefined) {
      out[k] = v;
      continue;
    }
    switch (k) {
      case 'type': {
        const t = intersectTypes(typeSet(mine), typeSet(v));
        if (t && t.length === 0) fail('types do not intersect');
        out.type = t;
        break;
      }
      case 'enum': {
        const e = (mine as Json[]).filter((x) => (v as Json[]).some((y) => equal(x, y)));
        if (e.length === 0) fail('enums do not intersect');
        out.enum = e;
        break;
      }
      case 'minimum':
      case 'exclusiveMinimum':
      case 'minLength':
      case 'minItems':
      case 'minProperties':
      case 'minContains':
        out[k] = typeof mine === 'number' && typeof v === 'number' ? Math.max(mine, v) : mine || v;
        break;
      case 'maximum':
      case 'exclusiveMaximum':
      case 'maxLength':
      case 'maxItems':
      case 'maxProperties':
      case 'maxContains':
        out[k] = typeof mine === 'number' && typeof v === 'number' ? Math.min(mine, v) : mine || v;
        break;
      case 'required':
        out.required = [...new Set([...(mine as string[]), ...(v as string[])])];
        break;
      case 'patterns':
      case 'multipleOfs':
      case 'contains':
        out[k] = [...mine, ...v];
        break;
      case 'properties':
      case 'patternProperties':
      case 'dependentSchemas': {
        const m: Json = { ...mine };
        for (const [n, s] of Object.entries(v as Json)) setKey(m, n, Object.hasOwn(m, n) ? both(m[n], s) : s);
        out[k] = m;
        break;
      }
      case 'dependentRequired': {
        const m: Json = { ...mine };
        for (const [n, s] of Object.entries(v as Json)) m[n] = [...new Set([...(m[n] ?? []), ...(s as string[])])];
        out[k] = m;
        break;
      }
      case 'additionalProperties':
      case 'propertyNames':
      case 'rest':
        out[k] = both(mine, v);
        break;
      case 'prefix': {
        const n = Math.max(mine.length, v.length);
        out.prefix = Array.from({ length: n }, (_, i) =>
          both(i < mine.length ? mine[i] : a.rest, i < v.length ? v[i] : b.rest),
        );
        break;
      }
      case 'uniqueItems':
        out.uniqueItems = mine || v;
        break;
      default:
        break; // annotations and keywords already the same: the first wins
    }
  }
  return out;
}

/** The plain keywords of one schema in merge form (draft-04 boolean exclusives, const, tuples, multipleOf, pattern). */
function plain(s: Json): Json {
  const out: Json = {};
  for (const [k, v] of Object.entries(s)) {
    if (['$ref', 'allOf', 'anyOf', 'oneOf', 'not', 'if', 'then', 'else', 'definitions', '$defs'].includes(k)) continue;
    if (k === '__proto__') continue;
    out[k] = v;
  }
  if (s.const !== undefined) {
    out.enum = out.enum ? (out.enum as Json[]).filter((x) => equal(x, s.const)) : [s.const];
    if (out.enum.length === 0) fail('const not in enum');
    delete out.const;
  }
  if (s.exclusiveMinimum === true) {
    out.exclusiveMinimum = s.minimum;
    delete out.minimum;
  } else if (s.exclusiveMinimum === false) delete out.exclusiveMinimum;
  if (s.exclusiveMaximum === true) {
    out.exclusiveMaximum = s.maximum;
    delete out.maximum;
  } else if (s.exclusiveMaximum === false) delete out.exclusiveMaximum;
  if (typeof s.multipleOf === 'number') out.multipleOfs = [s.multipleOf];
  delete out.multipleOf;
  if (typeof s.pattern === 'string') out.patterns = [s.pattern];
  delete out.pattern;
  if (s.items !== undefined || s.prefixItems !== undefined || s.additionalItems !== undefined) {
    const f = arrayForm(s);
    out.prefix = f.prefix;
    out.rest = f.rest;
    delete out.items;
    delete out.prefixItems;
    delete out.additionalItems;
  }
  if (s.contains !== undefined) {
    out.contains = [{ schema: s.contains, min: s.minContains ?? 1, max: s.maxContains }];
    delete out.minContains;
    delete out.maxContains;
  }
  if (isObj(s.dependencies)) {
    for (const [k, v] of Object.entries(s.dependencies)) {
      if (Array.isArray(v)) out.dependentRequired = { ...out.dependentRequired, [k]: v };
      else out.dependentSchemas = { ...out.dependentSchemas, [k]: v };
    }
    delete out.dependencies;
  }
  if (Array.isArray(out.type) && out.type.length === 0) fail('empty type list');
  return out;
}

export class Generator {
  constructor(readonly o: GenerateOptions) {}

  private resolveRef(ref: string): Json {
    if (!ref.startsWith(SCHEMA_REF)) return fail(`unresolvable $ref ${ref}`);
    const name = decodeURIComponent(ref.slice(SCHEMA_REF.length));
    const t = this.o.components[name];
    if (t === undefined) fail(`unresolvable $ref ${ref}`);
    return t;
  }

  /** One schema as a flattened conjunction. */
  normalize(s: Json, hops = 0): Normal {
    if (hops > 64) fail('$ref/allOf chain too long');
    if (s === true || s === undefined) return { base: {}, groups: [], nots: [], conds: [] };
    if (s === false || !isObj(s)) return fail('false schema');
    let n: Normal = { base: plain(s), groups: [], nots: [], conds: [] };
    if (typeof s.$ref === 'string') n = this.mergeNormal(n, this.normalize(this.resolveRef(s.$ref), hops + 1));
    if (Array.isArray(s.allOf)) for (const m of s.allOf) n = this.mergeNormal(n, this.normalize(m, hops + 1));
    for (const kind of ['anyOf', 'oneOf'] as const)
      if (Array.isArray(s[kind])) n.groups.push({ kind, branches: s[kind], src: s });
    if (s.not !== undefined) n.nots.push(s.not);
    if (s.if !== undefined && (s.then !== undefined || s.else !== undefined)) n.conds.push(s);
    return n;
  }

  private mergeNormal(a: Normal, b: Normal): Normal {
    return {
      base: mergeBase(a.base, b.base),
      groups: [...a.groups, ...b.groups],
      nots: [...a.nots, ...b.nots],
      conds: [...a.conds, ...b.conds],
    };
  }

  /** A value of `schema` at nesting `depth`. */
  value(schema: Json, depth: number): unknown {
    if (depth > HARD_DEPTH) fail('too deep');
    return this.fromNormal(this.normalize(schema), depth);
  }

  private deep(depth: number): boolean {
    return depth > SOFT_DEPTH;
  }

  /** Branches in the order to try them: seeded shuffle; null-only branches last (or first, when deep). */
  private order(branches: Json[], depth: number): Json[] {
    const shuffled = branches.map((b, i) => ({ b, i, r: this.o.rand() }));
    const isNull = (b: Json) => {
      try {
        const n = this.normalize(b);
        const t = typeSet(n.base.type);
        return (
          (t?.length === 1 && t[0] === 'null') ||
          (Array.isArray(n.base.enum) && n.base.enum.every((x: Json) => x === null))
        );
      } catch {
        return false;
      }
    };
    const hasRef = (b: Json) => JSON.stringify(b)?.includes('"$ref"') ?? false;
    const rank = (b: Json) => {
      if (this.deep(depth)) return (isNull(b) ? 0 : 2) + (hasRef(b) ? 1 : 0);
      return this.o.preferNonNull && isNull(b) ? 1 : 0;
    };
    return shuffled.sort((x, y) => rank(x.b) - rank(y.b) || x.r - y.r).map((x) => x.b);
  }

  private fromNormal(n: Normal, depth: number): unknown {
    if (n.groups.length) {
      const [g, ...rest] = n.groups;
      let why = 'no branch fits';
      for (const br of this.order(g.branches, depth)) {
        try {
          const merged = this.mergeNormal({ ...n, groups: rest }, this.normalize(br));
          const v = this.fromNormal(merged, depth);
          if (g.kind === 'oneOf' && g.branches.filter((b) => this.o.check(b, v)).length !== 1) {
            why = 'more than one oneOf branch matches';
            continue;
          }
          return v;
        } catch (e) {
          if (!(e instanceof GenerateFail)) throw e;
          why = e.message;
        }
      }
      return fail(why);
    }
    if (n.conds.length) {
      const [c, ...rest] = n.conds;
      const tries: Json[][] = [
        [c.if, c.then],
        [c.else, { not: c.if }],
      ];
      for (const extra of tries) {
        try {
          let m: Normal = { ...n, conds: rest };
          for (const x of extra) if (x !== undefined) m = this.mergeNormal(m, this.normalize(x));
          const v = this.fromNormal(m, depth);
          if (this.o.check(c, v)) return v;
        } catch (e) {
          if (!(e instanceof GenerateFail)) throw e;
        }
      }
      return fail('if/then/else not met');
    }
    if (n.nots.length) {
      const notEnum = n.nots.flatMap((x) =>
        isObj(x) && Array.isArray(x.enum) ? x.enum : isObj(x) && x.const !== undefined ? [x.const] : [],
      );
      const base = { ...n.base };
      if (notEnum.length && Array.isArray(base.enum))
        base.enum = base.enum.filter((v: Json) => !notEnum.some((x) => equal(x, v)));
      for (let i = 0; i < 6; i++) {
        const v = this.fromBase(base, depth);
        if (n.nots.every((x) => !this.o.check(x, v))) return v;
      }
      return fail('not: every candidate matched the negated schema');
    }
    return this.fromBase(n.base, depth);
  }

  /** A value of a plain (merged) schema. */
  private fromBase(s: Json, depth: number): unknown {
    this.o.tick();
    if (Array.isArray(s.enum)) {
      const ok = s.enum.filter((v: Json) => this.fitsPlain(s, v));
      if (ok.length === 0) fail('no enum value fits');
      const pref = this.o.preferNonNull && ok.some((v: Json) => v !== null) ? ok.filter((v: Json) => v !== null) : ok;
      return structuredClone(pref[Math.floor(this.o.rand() * pref.length)]);
    }
    let types = typeSet(s.type) ?? this.inferTypes(s);
    if (types.includes('integer') && types.includes('number')) types = types.filter((t) => t !== 'integer');
    if (types.length === 0) fail('no type');
    const nonNull = types.filter((t) => t !== 'null');
    let order: string[];
    if (this.deep(depth) && types.includes('null')) order = ['null', ...nonNull];
    else if (this.o.preferNonNull && nonNull.length)
      order = [...this.shuffle(nonNull), ...(nonNull.length < types.length ? ['null'] : [])];
    else order = this.shuffle(types);
    let why = 'no type fits';
    for (const t of order) {
      try {
        return this.ofType(t, s, depth);
      } catch (e) {
        if (!(e instanceof GenerateFail)) throw e;
        why = e.message;
      }
    }
    return fail(why);
  }

  private shuffle<T>(xs: T[]): T[] {
    return xs
      .map((x) => ({ x, r: this.o.rand() }))
      .sort((a, b) => a.r - b.r)
      .map((p) => p.x);
  }

  /** Types a schema without `type` is about, from its keywords (any type when none says). */
  private inferTypes(s: Json): string[] {
    const out: string[] = [];
    if (
      ['properties', 'required', 'additionalProperties', 'patternProperties', 'minProperties', 'propertyNames'].some(
        (k) => s[k] !== undefined,
      )
    )
      out.push('object');
    if (['prefix', 'rest', 'minItems', 'maxItems', 'contains', 'uniqueItems'].some((k) => s[k] !== undefined))
      out.push('array');
    if (['patterns', 'minLength', 'maxLength', 'format'].some((k) => s[k] !== undefined)) out.push('string');
    if (['minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum', 'multipleOfs'].some((k) => s[k] !== undefined))
      out.push('number');
    return out.length ? out : ['string', 'integer', 'boolean'];
  }

  /** Cheap checks of a candidate (enum value) against the plain keywords that concern its own type. */
  private fitsPlain(s: Json, v: Json): boolean {
    const t = typeSet(s.type);
    if (t) {
      const vt =
        v === null
          ? 'null'
          : Array.isArray(v)
            ? 'array'
            : typeof v === 'number'
              ? Number.isInteger(v)
                ? 'integer'
                : 'number'
              : typeof v;
      if (!t.includes(vt) && !(vt === 'integer' && t.includes('number'))) return false;
    }
    if (typeof v === 'string') {
      const len = [...v].length;
      if (typeof s.minLength === 'number' && len < s.minLength) return false;
      if (typeof s.maxLength === 'number' && len > s.maxLength) return false;
      for (const p of s.patterns ?? []) if (!safeTest(p, v)) return false;
    }
    if (typeof v === 'number' && !this.numberFits(s, v)) return false;
    return true;
  }

  private numberFits(s: Json, v: number): boolean {
    if (typeof s.minimum === 'number' && v < s.minimum) return false;
    if (typeof s.maximum === 'number' && v > s.maximum) return false;
    if (typeof s.exclusiveMinimum === 'number' && v <= s.exclusiveMinimum) return false;
    if (typeof s.exclusiveMaximum === 'number' && v >= s.exclusiveMaximum) return false;
    for (const m of s.multipleOfs ?? []) {
      const r = v / m;
      if (r !== Number.parseInt(String(r), 10)) return false; // ajv's test, exactly
    }
    return true;
  }

  private ofType(t: string, s: Json, depth: number): unknown {
    switch (t) {
      case 'null':
        return null;
      case 'boolean':
        return this.o.rand() < 0.5;
      case 'integer':
      case 'number':
        return this.number(s, t === 'integer');
      case 'string':
        return this.string(s);
      case 'array':
        return this.array(s, depth);
      case 'object':
        return this.object(s, depth);
      default:
        return fail(`unknown type ${t}`);
    }
  }

  private int(lo: number, hi: number): number {
    return lo + Math.floor(this.o.rand() * (hi - lo + 1));
  }

  private number(s: Json, integer: boolean): number {
    let lo = typeof s.minimum === 'number' ? s.minimum : Number.NEGATIVE_INFINITY;
    let hi = typeof s.maximum === 'number' ? s.maximum : Number.POSITIVE_INFINITY;
    const xlo = typeof s.exclusiveMinimum === 'number' ? s.exclusiveMinimum : Number.NEGATIVE_INFINITY;
    const xhi = typeof s.exclusiveMaximum === 'number' ? s.exclusiveMaximum : Number.POSITIVE_INFINITY;
    if (xlo >= lo) lo = xlo;
    if (xhi <= hi) hi = xhi;
    // an open range gets a readable window beside its bound
    if (!Number.isFinite(lo) && !Number.isFinite(hi)) [lo, hi] = [0, 1000];
    else if (!Number.isFinite(lo)) lo = hi - 1000;
    else if (!Number.isFinite(hi)) hi = lo + 1000;
    if (lo > hi) fail('empty numeric range');
    const steps: number[] = s.multipleOfs ?? [];
    const step = integer ? (steps.find((m) => Number.isInteger(m)) ?? 1) : (steps[0] ?? 1);
    const kLo = Math.ceil(lo / step);
    const kHi = Math.floor(hi / step);
    for (let i = 0; i < 24 && kLo <= kHi; i++) {
      // k near the low end first: small numbers read better
      const k =
        i === 0 && kLo <= 0 && kHi >= 0
          ? this.int(Math.max(kLo, 0), Math.min(kHi, Math.max(kLo, 0) + 100))
          : this.int(kLo, Math.min(kHi, kLo + 1000));
      const decimals = (String(step).split('.')[1] ?? '').length;
      const v = Number((k * step).toFixed(Math.min(decimals, 20)));
      if ((integer && !Number.isInteger(v)) || !this.numberFits(s, v)) continue;
      return Object.is(v, -0) ? 0 : v;
    }
    if (!integer && steps.length === 0 && lo < hi) {
      // no whole number in an open interval: its middle
      const v = lo + (hi - lo) * (0.25 + this.o.rand() / 2);
      if (this.numberFits(s, v)) return v;
    }
    return fail('no number in range meets multipleOf');
  }

  private words(n: number): string {
    const out: string[] = [];
    while (out.join(' ').length < n) out.push(WORDS[Math.floor(this.o.rand() * WORDS.length)]);
    return out.join(' ').slice(0, n).replace(/ $/, 'x');
  }

  private string(s: Json): string {
    const min = typeof s.minLength === 'number' ? s.minLength : 0;
    const max = typeof s.maxLength === 'number' ? s.maxLength : Number.POSITIVE_INFINITY;
    if (min > max) fail('minLength above maxLength');
    const fits = (v: string) => {
      const len = [...v].length;
      return len >= min && len <= max && (s.patterns ?? []).every((p: string) => safeTest(p, v));
    };
    const patterns: string[] = s.patterns ?? [];
    if (patterns.length) {
      for (const p of patterns) {
        for (let i = 0; i < 12; i++) {
          let v: string;
          try {
            // later tries let open quantifiers run longer, for a minLength above what a few repetitions give
            v = sampleRegex(p, this.o.rand, { extra: i < 4 ? 3 : Math.max(3, min) });
          } catch (e) {
            if (e instanceof RegexSampleError) break;
            throw e;
          }
          if (fits(v)) return v;
          // an unanchored pattern matches inside a longer string: pad to the length wanted
          if (!p.startsWith('^') && [...v].length < min) {
            const padded = v + this.words(min - [...v].length);
            if (fits(padded)) return padded;
          }
        }
      }
      return fail(
        `no string matching ${patterns.map((p) => JSON.stringify(p)).join(' and ')} within its length bounds`,
      );
    }
    if (typeof s.format === 'string') {
      const f = FORMATS[s.format];
      if (f) {
        const v = f(this.o.rand);
        if (fits(v)) return v;
      }
    }
    const hi = Math.min(max, Math.max(min, 8) + 12);
    const len = this.int(Math.min(Math.max(min, 5), hi), hi);
    const v = this.words(len);
    return fits(v) ? v : fail('no string within the length bounds');
  }

  private array(s: Json, depth: number): unknown[] {
    const prefix: Json[] = s.prefix ?? [];
    const rest: Json = s.rest;
    const lo = typeof s.minItems === 'number' ? s.minItems : 0;
    let hi = typeof s.maxItems === 'number' ? s.maxItems : Number.POSITIVE_INFINITY;
    if (rest === false) hi = Math.min(hi, prefix.length);
    if (lo > hi) fail('minItems above what the array may hold');
    const contains: { schema: Json; min: number; max?: number }[] = s.contains ?? [];
    const needContains = contains.reduce((n, c) => n + Math.max(0, c.min), 0);
    const want = this.deep(depth) ? 0 : this.o.fill ? Math.max(prefix.length, 2) : 1;
    let n = Math.max(lo, needContains, Math.min(want, hi, Math.max(lo, 3, prefix.length)));
    n = Math.min(n, hi);
    if (n < needContains) fail('contains needs more items than maxItems allows');
    // items past a draft-07 tuple that nothing constrains: like the last positional one (Filecoin's `items: [number]`,
    // `minItems: 32` means 32 numbers), which any value allows
    const free = (rest === undefined || rest === true) && prefix.length > 0;
    const itemSchema = (i: number): Json => (i < prefix.length ? prefix[i] : free ? prefix[prefix.length - 1] : rest);
    // contains: its items go after the positional ones where there is room, else over them
    const containsAt = new Map<number, Json>();
    let at = Math.max(0, Math.min(prefix.length, n - needContains));
    for (const c of contains) for (let k = 0; k < c.min; k++) containsAt.set(at++, c.schema);
    const out: unknown[] = [];
    const seen = new Set<string>();
    for (let i = 0; i < n; i++) {
      const schema = containsAt.has(i) ? both(itemSchema(i), containsAt.get(i)) : itemSchema(i);
      if (schema === false) fail('an item is required where none is allowed');
      let v: unknown;
      let ok = false;
      for (let tries = 0; tries < (s.uniqueItems ? 24 : 1); tries++) {
        v = this.value(schema, depth + 1);
        if (!s.uniqueItems || !seen.has(canonical(v))) {
          ok = true;
          break;
        }
      }
      if (!ok) fail('uniqueItems: not enough distinct items');
      if (s.uniqueItems) seen.add(canonical(v));
      out.push(v);
    }
    return out;
  }

  private object(s: Json, depth: number): Record<string, unknown> {
    const props: Record<string, Json> = isObj(s.properties) ? s.properties : {};
    const pattern: Record<string, Json> = isObj(s.patternProperties) ? s.patternProperties : {};
    const required: string[] = Array.isArray(s.required) ? s.required : [];
    const max = typeof s.maxProperties === 'number' ? s.maxProperties : Number.POSITIVE_INFINITY;
    const min = typeof s.minProperties === 'number' ? s.minProperties : 0;
    if (min > max || required.length > max) fail('more properties required than maxProperties allows');
    const deep = this.deep(depth);
    const keys: string[] = [...required];
    const optional = Object.keys(props).filter((k) => !required.includes(k) && props[k] !== false);
    for (const k of optional) {
      if (deep) break;
      if (this.o.fill || this.o.rand() < 0.5) keys.push(k);
    }
    // dependentRequired / dependencies: a present key brings its dependants
    const depReq: Record<string, string[]> = isObj(s.dependentRequired) ? s.dependentRequired : {};
    for (let i = 0; i < keys.length; i++) for (const d of depReq[keys[i]] ?? []) if (!keys.includes(d)) keys.push(d);
    while (keys.length > max) {
      const drop = keys.findLastIndex((k) => !required.includes(k));
      if (drop < 0) fail('maxProperties');
      keys.splice(drop, 1);
    }
    // extra keys: for minProperties, and one entry of a map (nothing but additionalProperties/patternProperties)
    const open = s.additionalProperties !== false;
    const mapLike = Object.keys(props).length === 0 && (open || Object.keys(pattern).length > 0);
    let extra = Math.max(0, min - keys.length);
    if (extra === 0 && mapLike && this.o.fill && !deep && keys.length < max) extra = 1;
    for (let e = 0, guard = 0; e < extra; guard++) {
      if (guard > extra * 12 + 12) fail('could not find names for the properties minProperties asks for');
      const name = this.propertyName(s, pattern, open);
      if (name === undefined || keys.includes(name)) continue;
      keys.push(name);
      e++;
    }
    const out: Record<string, unknown> = {};
    for (const k of keys) {
      const schemas: Json[] = [];
      if (Object.hasOwn(props, k)) schemas.push(props[k]);
      for (const [p, ps] of Object.entries(pattern)) if (safeTest(p, k)) schemas.push(ps);
      if (schemas.length === 0) schemas.push(s.additionalProperties);
      if (isObj(s.dependentSchemas) && s.dependentSchemas[k] !== undefined) {
        // a present key brings its schema for the whole object: merged and generated again
        const again = mergeBase(s, { dependentSchemas: {} });
        delete again.dependentSchemas[k];
        const n = this.normalize(s.dependentSchemas[k]);
        return this.fromNormal({ ...n, base: mergeBase(again, { ...n.base, required: [...keys] }) }, depth) as Record<
          string,
          unknown
        >;
      }
      const schema = schemas.reduce((a, b) => both(a, b), true);
      if (schema === false) fail(`property ${k} is not allowed`);
      setKey(out, k, this.value(schema, depth + 1));
    }
    return out;
  }

  /** A new property name: from a patternProperties pattern, or (when additional ones are allowed) propertyNames. */
  private propertyName(s: Json, pattern: Record<string, Json>, open: boolean): string | undefined {
    const patterns = Object.keys(pattern).filter((p) => pattern[p] !== false);
    const names = s.propertyNames;
    const fitsNames = (k: string) => names === undefined || this.o.check(names, k);
    if (patterns.length && (!open || this.o.rand() < 0.7)) {
      const p = patterns[Math.floor(this.o.rand() * patterns.length)];
      try {
        const k = sampleRegex(p, this.o.rand);
        if (safeTest(p, k) && fitsNames(k) && !(isObj(s.properties) && Object.hasOwn(s.properties, k))) return k;
      } catch (e) {
        if (!(e instanceof RegexSampleError)) throw e;
      }
      if (!open) return undefined;
    }
    if (!open) return undefined;
    let k: string;
    if (names !== undefined && names !== true) {
      try {
        const v = this.value({ type: 'string', ...(isObj(names) ? { allOf: [names] } : {}) }, HARD_DEPTH - 1);
        if (typeof v !== 'string') return undefined;
        k = v;
      } catch (e) {
        if (e instanceof GenerateFail) return undefined;
        throw e;
      }
    } else k = `${WORDS[Math.floor(this.o.rand() * WORDS.length)]}${Math.floor(this.o.rand() * 100)}`;
    if (isObj(s.properties) && Object.hasOwn(s.properties, k)) return undefined;
    if (patterns.some((p) => safeTest(p, k))) return undefined; // its value would answer to that pattern's schema
    return fitsNames(k) ? k : undefined;
  }
}

function safeTest(pattern: string, v: string): boolean {
  try {
    return safeRegExp(pattern).test(v);
  } catch {
    return false;
  }
}

const WORDS = [
  'alpha',
  'bravo',
  'delta',
  'echo',
  'lima',
  'oscar',
  'sierra',
  'tango',
  'node',
  'block',
  'chain',
  'value',
  'sample',
  'mock',
];

const hex = (rand: () => number, n: number) =>
  Array.from({ length: n }, () => Math.floor(rand() * 16).toString(16)).join('');

/** Values of the formats published documents use (ajv checks no format here; they read right all the same). */
const FORMATS: Record<string, (rand: () => number) => string> = {
  'date-time': (r) => new Date(Date.UTC(2024, 0, 1) + Math.floor(r() * 3.15e10)).toISOString().replace(/\.\d+Z$/, 'Z'),
  date: (r) => new Date(Date.UTC(2024, 0, 1) + Math.floor(r() * 3.15e10)).toISOString().slice(0, 10),
  time: (r) => `${new Date(Math.floor(r() * 8.64e7)).toISOString().slice(11, 19)}Z`,
  duration: (r) => `P${1 + Math.floor(r() * 30)}DT${Math.floor(r() * 24)}H`,
  uri: (r) => `https://example.com/${WORDS[Math.floor(r() * WORDS.length)]}`,
  url: (r) => `https://example.com/${WORDS[Math.floor(r() * WORDS.length)]}`,
  iri: (r) => `https://example.com/${WORDS[Math.floor(r() * WORDS.length)]}`,
  'uri-reference': (r) => `/${WORDS[Math.floor(r() * WORDS.length)]}`,
  'iri-reference': (r) => `/${WORDS[Math.floor(r() * WORDS.length)]}`,
  'uri-template': () => 'https://example.com/{id}',
  email: (r) => `${WORDS[Math.floor(r() * WORDS.length)]}@example.com`,
  'idn-email': (r) => `${WORDS[Math.floor(r() * WORDS.length)]}@example.com`,
  hostname: (r) => `${WORDS[Math.floor(r() * WORDS.length)]}.example.com`,
  'idn-hostname': (r) => `${WORDS[Math.floor(r() * WORDS.length)]}.example.com`,
  ipv4: (r) => Array.from({ length: 4 }, () => Math.floor(r() * 256)).join('.'),
  ipv6: (r) => Array.from({ length: 8 }, () => hex(r, 4)).join(':'),
  uuid: (r) => `${hex(r, 8)}-${hex(r, 4)}-4${hex(r, 3)}-${'89ab'[Math.floor(r() * 4)]}${hex(r, 3)}-${hex(r, 12)}`,
  byte: (r) => Buffer.from(Array.from({ length: 9 }, () => Math.floor(r() * 256))).toString('base64'),
  binary: (r) => hex(r, 16),
  regex: () => '^[a-z]+$',
  'json-pointer': (r) => `/${WORDS[Math.floor(r() * WORDS.length)]}/0`,
  'relative-json-pointer': () => '0/name',
  password: (r) => hex(r, 12),
};

/** One ajv per document's components, for the sub-schema checks (oneOf exactly one, not, if): each sub-schema is
 *  compiled once, on first use. */
export function subschemaChecker(components: Record<string, Json>): (schema: Json, value: unknown) => boolean {
  const ajv = new Ajv({
    strict: false,
    validateFormats: false,
    allErrors: false,
    inlineRefs: false,
    ownProperties: true,
    code: { regExp: safeRegExp },
  });
  const id = (n: string) => `urn:rpcgate-sample:${encodeURIComponent(n)}`;
  for (const [k, s] of Object.entries(components)) {
    const r = rewriteRefs(s, id);
    try {
      ajv.addSchema(isObj(r) ? { ...r, $id: id(k) } : r, id(k));
    } catch {
      // a component ajv refuses: checks that reach it pass (the method's validator decides in the end)
    }
  }
  const compiled = new WeakMap<object, ValidateFunction | null>();
  return (schema, value) => {
    if (schema === true || schema === undefined) return true;
    if (schema === false) return false;
    if (!isObj(schema)) return true;
    let fn = compiled.get(schema);
    if (fn === undefined) {
      try {
        const { $id: _a, id: _b, ...rest } = rewriteRefs(schema, id);
        fn = ajv.compile(rest);
      } catch {
        fn = null;
      }
      compiled.set(schema, fn);
    }
    return fn === null ? true : (fn(value) as boolean);
  };
}
