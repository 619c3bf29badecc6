// Fast boolean checks in front of the ajv standalone validators (see ../codegen/validators.ts; ./compile.ts builds the same at run time).
//
// Why: ajv builds an error object for every failing branch it tries, also on VALID inputs (BlockNumberOrTag
// tries Uint before BlockTag, FilterTopic tries null before Bytes32, …), and passes an options object to every
// referenced schema function. On the params of eth_getLogs that is µs per call. The checks emitted here answer
// only true/false, allocate nothing, and short-circuit `oneOf` where its branches are provably disjoint.
//
// How it stays exact: the generated validator is `fast(data) ? true : ajvValidate(data)`, so a `false` from the
// fast check is never the answer by itself — ajv decides it and produces the errors, as before. Only a `true` is
// trusted, so the checks must never accept what ajv refuses; they are compiled for a whitelist of keywords with
// the semantics of ajv 8 as configured in validators.ts (draft-07, strict off, ownProperties off, formats not
// validated, unicode lengths), and a schema that reaches any other keyword gets no fast check at all (ajv only).
// test/codegen.test.ts checks fast checks, generated validators and a reference ajv agree on the contract's
// examples, the execution-apis fixtures and mutated inputs.
import type { Json } from './model.js';

type JsonType = 'null' | 'boolean' | 'number' | 'string' | 'array' | 'object';
/** `v[p]` as code, own properties only where it matters: `__proto__`, `constructor`, `toString`, … would otherwise read
 *  Object.prototype's members on an object that lacks them (a missing required `constructor` would pass). */
const member = (v: string, p: string): string =>
  p in Object.prototype
    ? `(Object.prototype.hasOwnProperty.call(${v}, ${lit(p)}) ? ${v}[${lit(p)}] : undefined)`
    : `${v}[${lit(p)}]`;

const ALL_TYPES: readonly JsonType[] = ['null', 'boolean', 'number', 'string', 'array', 'object'];

/** Keywords compiled here (with ajv's semantics). */
const SUPPORTED = new Set([
  '$ref',
  'type',
  'enum',
  'const',
  'pattern',
  'minLength',
  'maxLength',
  'minimum',
  'maximum',
  'exclusiveMinimum',
  'exclusiveMaximum',
  'required',
  'properties',
  'additionalProperties',
  'minProperties',
  'maxProperties',
  'items',
  'additionalItems',
  'minItems',
  'maxItems',
  'allOf',
  'anyOf',
  'oneOf',
  'not',
]);
/** Keywords ajv (as configured: strict off, validateFormats off, no useDefaults) does not validate with. */
const IGNORED = new Set([
  'title',
  'description',
  '$id',
  '$schema',
  '$comment',
  'examples',
  'example',
  'default',
  'format',
  'tsType',
  'readOnly',
  'writeOnly',
  'deprecated',
  'definitions',
  '$defs',
]);
const STRING_KW = ['pattern', 'minLength', 'maxLength'];
const NUMBER_KW = ['minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum'];
const OBJECT_KW = ['required', 'properties', 'additionalProperties', 'minProperties', 'maxProperties'];
const ARRAY_KW = ['items', 'additionalItems', 'minItems', 'maxItems'];
const COMPOSITE_KW = ['$ref', 'allOf', 'anyOf', 'oneOf', 'not'];

const isObj = (s: Json): boolean => !!s && typeof s === 'object' && !Array.isArray(s);
const isPrimitive = (v: Json): boolean => v === null || ['string', 'number', 'boolean'].includes(typeof v);
const lit = (v: Json): string => JSON.stringify(v);
const jsonTypeOf = (v: Json): JsonType =>
  v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v === 'object' ? 'object' : (typeof v as JsonType);

export interface FastCompilerOptions {
  /** Component schemas by the `$ref` string that names them. */
  components: Map<string, Json>;
  /** Compiles a schema with the reference ajv (used to prove enum branches disjoint from other branches). */
  compile: (schema: Json) => (data: unknown) => boolean;
}

/** Compiles schemas into allocation-free boolean JS functions; collects the module-level code they need. */
export class FastCompiler {
  private readonly out: string[] = [];
  private readonly regexes = new Map<string, string>();
  private readonly componentFns = new Map<string, string>();
  private usesUcs2 = false;
  private usesNumber = false;
  private readonly tables = new Map<string, string>();
  private n = 0;

  constructor(private readonly opts: FastCompilerOptions) {
    // Fixpoint: a component is supported when its own keywords are and every component it refers to is.
    const refsOf = new Map<string, string[]>();
    const ok = new Set<string>();
    for (const [ref, s] of opts.components) {
      const refs: string[] = [];
      if (this.localOk(s, refs)) ok.add(ref), refsOf.set(ref, refs);
    }
    for (let changed = true; changed; ) {
      changed = false;
      for (const ref of ok) if (!refsOf.get(ref)!.every((r) => ok.has(r))) ok.delete(ref), (changed = true);
    }
    this.supported = ok;
  }

  /** Components (by ref) that are compiled here: their keywords are supported and so are those they reach. */
  private readonly supported: Set<string>;

  /** Whether every keyword the schema reaches (through refs too) is compiled exactly here. */
  supports(s: Json): boolean {
    const refs: string[] = [];
    return this.localOk(s, refs) && refs.every((r) => this.supported.has(r));
  }

  /** Keywords of `s` (not following refs; those are collected into `refs`). */
  private localOk(s: Json, refs: string[]): boolean {
    if (typeof s === 'boolean') return true;
    if (!isObj(s)) return false;
    for (const [k, v] of Object.entries(s as Record<string, Json>)) {
      if (IGNORED.has(k)) continue;
      if (!SUPPORTED.has(k)) return false;
      switch (k) {
        case '$ref':
          if (!this.opts.components.has(v)) return false;
          refs.push(v);
          break;
        case 'type':
          if (
            !(typeof v === 'string' || Array.isArray(v)) ||
            ![v].flat().every((t) => ['integer', ...ALL_TYPES].includes(t))
          )
            return false;
          break;
        case 'enum':
          if (!Array.isArray(v) || !v.every(isPrimitive)) return false;
          break;
        case 'const':
          if (!isPrimitive(v)) return false;
          break;
        case 'pattern':
          if (typeof v !== 'string') return false;
          break;
        case 'required':
          if (!Array.isArray(v) || !v.every((x) => typeof x === 'string')) return false;
          break;
        case 'properties':
          if (!isObj(v) || !Object.values(v).every((x) => this.localOk(x, refs))) return false;
          break;
        case 'items':
          if (!(Array.isArray(v) ? v.every((x) => this.localOk(x, refs)) : this.localOk(v, refs))) return false;
          break;
        case 'additionalProperties':
        case 'additionalItems':
        case 'not':
          if (!this.localOk(v, refs)) return false;
          break;
        case 'allOf':
        case 'anyOf':
        case 'oneOf':
          if (!Array.isArray(v) || v.length === 0 || !v.every((x) => this.localOk(x, refs))) return false;
          break;
        default: // numeric limits and counts
          if (typeof v !== 'number' || !Number.isFinite(v)) return false;
      }
    }
    return true;
  }

  /** Emits a function for `s` (which must be supported) and returns its name. */
  compileRoot(s: Json): string {
    return this.fnFor(s);
  }

  /** The module-level code: regexes, helpers and functions, in dependency-free order (function declarations). */
  code(): string {
    const head = [...this.regexes].map(([k, name]) => {
      const { source, flags } = JSON.parse(k);
      return `const ${name} = safeRegExp(${lit(source)}, ${lit(flags)});\n`;
    });
    if (this.tables.size) {
      head.push(
        'function fastTable(chars) {\n  const t = new Uint8Array(128);\n  for (let i = 0; i < chars.length; i++) t[chars.charCodeAt(i)] = 1;\n  return t;\n}\n',
      );
      for (const [chars, name] of this.tables) head.push(`const ${name} = fastTable(${lit(chars)});\n`);
    }
    if (this.usesNumber) head.push(FAST_PREFIXED_NUMBER);
    return [...head, ...this.out].join('');
  }

  /** The code calls `safeRegExp` (packages/client/src/safe-regexp.ts), which its module must provide. */
  get needsRegExp(): boolean {
    return this.regexes.size > 0;
  }

  /** ajv's runtime ucs2length is needed (minLength/maxLength count code points, as ajv does by default). */
  get needsUcs2length(): boolean {
    return this.usesUcs2;
  }

  private name(prefix: string): string {
    return `${prefix}${this.n++}`;
  }

  private regex(pattern: string): string {
    // ajv compiles patterns with the `u` flag (unicodeRegExp default). Without it, a pattern made only of
    // anchors, ASCII literals, ASCII ranges, groups and quantifiers matches exactly the same strings (no `.`,
    // no escapes, no negated classes), and non-unicode regexes run faster.
    const ascii = /^[\^$()|[\]{}\-,*+?0-9A-Za-z]*$/.test(pattern) && !pattern.includes('[^');
    const key = JSON.stringify({ source: pattern, flags: ascii ? '' : 'u' });
    let name = this.regexes.get(key);
    if (!name) this.regexes.set(key, (name = `fastRe${this.regexes.size}`));
    return name;
  }

  /** Function for a component, emitted once (recursion-safe). */
  private componentFn(ref: string): string {
    let name = this.componentFns.get(ref);
    if (name) return name;
    name = this.name('fastC');
    this.componentFns.set(ref, name);
    this.emitFn(name, this.opts.components.get(ref));
    return name;
  }

  private fnFor(s: Json): string {
    const name = this.name('fast');
    this.emitFn(name, s);
    return name;
  }

  private emitFn(name: string, s: Json): void {
    const body: string[] = [];
    this.statements(s, 'd', body, { n: 0 });
    this.out.push(`function ${name}(d) {\n${body.map((l) => `  ${l}\n`).join('')}  return true;\n}\n`);
  }

  /** Types a schema can accept, as far as cheaply known (a superset of the truth). */
  private typesOf(s: Json, seen = new Set<string>()): Set<JsonType> {
    if (s === false) return new Set();
    if (!isObj(s)) return new Set(ALL_TYPES);
    let t = new Set<JsonType>(ALL_TYPES);
    const meet = (u: Set<JsonType>) => (t = new Set([...t].filter((x) => u.has(x))));
    if (s.type !== undefined)
      meet(new Set([s.type].flat().map((x: string) => (x === 'integer' ? 'number' : x) as JsonType)));
    if (Array.isArray(s.enum)) meet(new Set(s.enum.map(jsonTypeOf)));
    if ('const' in s) meet(new Set([jsonTypeOf(s.const)]));
    if (typeof s.$ref === 'string' && !seen.has(s.$ref))
      meet(this.typesOf(this.opts.components.get(s.$ref), new Set([...seen, s.$ref])));
    for (const x of s.allOf ?? []) meet(this.typesOf(x, seen));
    for (const k of ['anyOf', 'oneOf']) {
      if (Array.isArray(s[k])) meet(new Set(s[k].flatMap((x: Json) => [...this.typesOf(x, seen)])));
    }
    return t;
  }

  /** The finite set of values a schema accepts, when it has an enum/const (else undefined). */
  private finiteValues(s: Json): Json[] | undefined {
    if (!isObj(s)) return undefined;
    if ('const' in s) return [s.const];
    if (Array.isArray(s.enum)) return s.enum;
    if (typeof s.$ref === 'string' && Object.keys(s).every((k) => k === '$ref' || IGNORED.has(k))) {
      return this.finiteValues(this.opts.components.get(s.$ref));
    }
    return undefined;
  }

  /** A schema itself, or the component a bare `$ref` names (annotations aside). */
  private target(s: Json): Json {
    if (isObj(s) && typeof s.$ref === 'string' && Object.keys(s).every((k) => k === '$ref' || IGNORED.has(k)))
      return this.opts.components.get(s.$ref);
    return s;
  }

  /** Properties an object must have to pass `s` (its `required`, and its allOf members'). */
  private requiredKeys(s0: Json): Set<string> {
    const s = this.target(s0);
    const keys = new Set<string>(isObj(s) && Array.isArray(s.required) ? s.required : []);
    for (const x of (isObj(s) && s.allOf) || []) for (const k of this.requiredKeys(x)) keys.add(k);
    return keys;
  }

  /** Properties an object must NOT have to pass `s`: `not: { required: [k] }` (the `not` may also say
   *  `type: "object"`), or a `not` whose anyOf lists such single-key requirements. */
  private forbiddenKeys(s0: Json): Set<string> {
    const s = this.target(s0);
    const keys = new Set<string>();
    const single = (n: Json): string | undefined => {
      if (!isObj(n) || !Array.isArray(n.required) || n.required.length !== 1) return undefined;
      const extra = Object.keys(n).filter((k) => k !== 'required' && !IGNORED.has(k));
      if (extra.some((k) => !(k === 'type' && n.type === 'object'))) return undefined;
      return n.required[0];
    };
    const not = isObj(s) ? s.not : undefined;
    const one = single(not);
    if (one !== undefined) keys.add(one);
    if (isObj(not) && Array.isArray(not.anyOf) && Object.keys(not).every((k) => k === 'anyOf' || IGNORED.has(k))) {
      for (const x of not.anyOf) {
        const k = single(x);
        if (k !== undefined) keys.add(k);
      }
    }
    return keys;
  }

  /** True only when no value can match both: disjoint types; a property one requires and the other forbids where
   *  only objects could match both; or a finite branch none of whose values the other branch accepts (checked with
   *  the reference ajv at generate time). */
  private disjoint(a: Json, b: Json): boolean {
    const ta = this.typesOf(a);
    const tb = this.typesOf(b);
    const common = [...ta].filter((x) => tb.has(x));
    if (common.length === 0) return true;
    if (common.length === 1 && common[0] === 'object') {
      for (const [x, y] of [
        [a, b],
        [b, a],
      ]) {
        const forbidden = this.forbiddenKeys(y);
        if ([...this.requiredKeys(x)].some((k) => forbidden.has(k))) return true;
      }
    }
    for (const [fin, other] of [
      [a, b],
      [b, a],
    ]) {
      const values = this.finiteValues(fin);
      if (values && values.length <= 64) {
        const check = this.opts.compile(other);
        if (values.every((v) => !check(v))) return true;
      }
    }
    return false;
  }

  /** A boolean expression for "`v` is valid against `s`"; `v` must be an identifier. */
  private expr(s: Json, v: string): string {
    if (s === true) return 'true';
    if (s === false) return 'false';
    if (OBJECT_KW.some((k) => k in s) || ARRAY_KW.some((k) => k in s)) return `${this.fnFor(s)}(${v})`;
    const parts: string[] = [];
    const types: string[] | undefined = s.type === undefined ? undefined : [s.type].flat();
    if (types) parts.push(typeCheck(types, v));
    if (Array.isArray(s.enum))
      parts.push(s.enum.length ? `(${s.enum.map((x: Json) => `${v} === ${lit(x)}`).join(' || ')})` : 'false');
    if ('const' in s) parts.push(`${v} === ${lit(s.const)}`);
    const onlyString = types?.length === 1 && types[0] === 'string';
    const str = this.stringConds(s, v);
    if (str.length) parts.push(onlyString ? str.join(' && ') : `(typeof ${v} !== "string" || ${str.join(' && ')})`);
    const onlyNumber = types?.every((t) => t === 'number' || t === 'integer');
    const num = numberConds(s, v);
    if (num.length) parts.push(onlyNumber ? num.join(' && ') : `(typeof ${v} !== "number" || ${num.join(' && ')})`);
    if (typeof s.$ref === 'string') parts.push(this.refExpr(s.$ref, v));
    for (const x of s.allOf ?? []) parts.push(this.expr(x, v));
    if (Array.isArray(s.anyOf))
      parts.push(
        `(${this.byCost(s.anyOf)
          .map((x: Json) => this.expr(x, v))
          .join(' || ')})`,
      );
    if (Array.isArray(s.oneOf)) parts.push(this.oneOf(s.oneOf, v));
    if ('not' in s) parts.push(`!(${this.expr(s.not, v)})`);
    return parts.length === 0 ? 'true' : parts.length === 1 ? parts[0] : `(${parts.join(' && ')})`;
  }

  private oneOf(branches: Json[], v: string): string {
    const pairwise = branches.every((a, i) => branches.every((b, j) => j <= i || this.disjoint(a, b)));
    // Disjoint branches: "exactly one" is "any", in any order (cheapest first).
    if (pairwise || branches.length === 1)
      return `(${this.byCost(branches)
        .map((x) => this.expr(x, v))
        .join(' || ')})`;
    return `((${branches.map((x) => `(${this.expr(x, v)} ? 1 : 0)`).join(' + ')}) === 1)`;
  }

  /** A component that is a plain leaf (no refs, objects or arrays) is inlined; others are called. */
  private refExpr(ref: string, v: string): string {
    const target = this.opts.components.get(ref);
    if (isObj(target) && isLeaf(target)) return this.expr(target, v);
    return `${this.componentFn(ref)}(${v})`;
  }

  private stringConds(s: Json, v: string): string[] {
    const c: string[] = [];
    if (typeof s.pattern === 'string') c.push(this.patternTest(s.pattern, v));
    for (const [k, op] of [
      ['minLength', '>='],
      ['maxLength', '<='],
    ] as const) {
      if (typeof s[k] === 'number') {
        this.usesUcs2 = true;
        c.push(`fastUcs2length(${v}) ${op} ${s[k]}`);
      }
    }
    return c;
  }

  /** `pattern` as a test on string `v`, for the pattern shapes of hex/number formats (anything else: the regex).
   *  - `^<lit>$`: string equality.
   *  - `^<lit>[<class>]{m,n}$` (Address, Hash32, Bytes8, …): a length check plus `^<lit>[<class>]*$` — each class
   *    character is one UTF-16 unit, so both agree on every string, and V8 runs a `*` loop much faster than a
   *    counted one.
   *  - `^<lit>(<lit0>|[<c1>][<c2>]*)$` or `{0,k}` (Uint, Uint64, Uint256): short strings (most quantities) are
   *    checked by a char-code loop (a regex call costs more than the loop for a few characters), longer by the regex.
   *  Literals and classes are ASCII letters/digits and ranges of them only. */
  private patternTest(pattern: string, v: string): string {
    const LIT = '[0-9A-Za-z]';
    const CLS = `(?:${LIT}(?:-${LIT})?)+`;
    const literal = new RegExp(`^\\^(${LIT}*)\\$$`).exec(pattern);
    if (literal) return `${v} === ${lit(literal[1])}`;
    const fixed = new RegExp(`^\\^(${LIT}*)\\[(${CLS})\\]\\{(\\d+)(?:,(\\d+))?\\}\\$$`).exec(pattern);
    if (fixed) {
      const min = fixed[1].length + Number(fixed[3]);
      const max = fixed[1].length + Number(fixed[4] ?? fixed[3]);
      const len = min === max ? `${v}.length === ${min}` : `${v}.length >= ${min} && ${v}.length <= ${max}`;
      return `(${len} && ${this.regex(`^${fixed[1]}[${fixed[2]}]*$`)}.test(${v}))`;
    }
    const num = new RegExp(
      `^\\^(${LIT}*)\\((${LIT}+)\\|\\[(${CLS})\\]\\[(${CLS})\\](?:\\*|\\{0,(\\d+)\\})\\)\\$$`,
    ).exec(pattern);
    if (num) {
      this.usesNumber = true;
      const [, prefix, zero, c1, c2, k] = num;
      const args = [v, lit(prefix), lit(zero), this.table(c1), this.table(c2), k === undefined ? 'Infinity' : k].join(
        ', ',
      );
      return `(${v}.length <= ${prefix.length + 8} ? fastPrefixedNumber(${args}) : ${this.regex(pattern)}.test(${v}))`;
    }
    return `${this.regex(pattern)}.test(${v})`;
  }

  /** A 128-entry membership table for a character class of ASCII letters/digits and ranges of them. */
  private table(cls: string): string {
    let chars = '';
    for (let i = 0; i < cls.length; i++) {
      if (cls[i + 1] === '-' && i + 2 < cls.length) {
        for (let c = cls.charCodeAt(i); c <= cls.charCodeAt(i + 2); c++) chars += String.fromCharCode(c);
        i += 2;
      } else chars += cls[i];
    }
    let name = this.tables.get(chars);
    if (!name) this.tables.set(chars, (name = `fastT${this.tables.size}`));
    return name;
  }

  /** Rough relative cost of checking `s`, to try cheap alternatives of anyOf (and disjoint oneOf) first. */
  private cost(s: Json, depth = 0): number {
    if (!isObj(s)) return 0;
    if (depth > 8) return 100;
    let c = 0;
    if (typeof s.pattern === 'string') c += 10;
    if (typeof s.minLength === 'number' || typeof s.maxLength === 'number') c += 10;
    if (OBJECT_KW.some((k) => k in s) || ARRAY_KW.some((k) => k in s)) c += 50;
    if (typeof s.$ref === 'string') c += this.cost(this.opts.components.get(s.$ref), depth + 1);
    for (const k of ['allOf', 'anyOf', 'oneOf']) for (const x of s[k] ?? []) c += this.cost(x, depth + 1);
    if ('not' in s) c += this.cost(s.not, depth + 1);
    return c + 1;
  }

  private byCost(branches: Json[]): Json[] {
    return branches
      .map((b, i) => ({ b, i, c: this.cost(b) }))
      .sort((x, y) => x.c - y.c || x.i - y.i)
      .map((x) => x.b);
  }

  /** Statements that `return false` when `v` fails `s` (inside a function that ends with `return true`). */
  private statements(s: Json, v: string, out: string[], ids: { n: number }): void {
    if (s === true) return;
    if (s === false || !isObj(s)) {
      out.push('return false;');
      return;
    }
    // Cheap checks first (type, enum, strings, numbers), then object/array keywords, then refs and composites:
    // all are side-effect-free booleans, so the order changes only how soon a mismatch is found.
    const simple: Json = {};
    const composite: Json = {};
    for (const [k, x] of Object.entries(s)) {
      if (OBJECT_KW.includes(k) || ARRAY_KW.includes(k)) continue;
      if (COMPOSITE_KW.includes(k)) composite[k] = x;
      else simple[k] = x;
    }
    const types: string[] | undefined = s.type === undefined ? undefined : [s.type].flat();
    const simpleExpr = this.expr(simple, v);
    if (simpleExpr !== 'true') out.push(`if (!${wrap(simpleExpr)}) return false;`);
    const local = () => `v${ids.n++}`;

    if (OBJECT_KW.some((k) => k in s)) {
      const only = types?.length === 1 && types[0] === 'object';
      const inner: string[] = [];
      for (const r of s.required ?? []) inner.push(`if (${member(v, r)} === undefined) return false;`);
      if (typeof s.minProperties === 'number')
        inner.push(`if (Object.keys(${v}).length < ${s.minProperties}) return false;`);
      if (typeof s.maxProperties === 'number')
        inner.push(`if (Object.keys(${v}).length > ${s.maxProperties}) return false;`);
      for (const [p, ps] of Object.entries(s.properties ?? {})) {
        if (ps === true) continue;
        const x = local();
        const e = this.expr(ps, x);
        inner.push(`const ${x} = ${member(v, p)};`, `if (${x} !== undefined && !${wrap(e)}) return false;`);
      }
      if ('additionalProperties' in s && s.additionalProperties !== true) {
        const key = local();
        const names = Object.keys(s.properties ?? {});
        const declared = names.length ? names.map((p) => `${key} === ${lit(p)}`).join(' || ') : 'false';
        const loop: string[] = [];
        if (s.additionalProperties === false) loop.push('return false;');
        else {
          const x = local();
          loop.push(`const ${x} = ${v}[${key}];`, `if (!${wrap(this.expr(s.additionalProperties, x))}) return false;`);
        }
        inner.push(`for (const ${key} in ${v}) {`, `  if (${declared}) continue;`, ...loop.map((l) => `  ${l}`), '}');
      }
      block(out, only ? undefined : `${v} && typeof ${v} == "object" && !Array.isArray(${v})`, inner);
    }

    if (ARRAY_KW.some((k) => k in s)) {
      const only = types?.length === 1 && types[0] === 'array';
      const inner: string[] = [];
      const len = local();
      inner.push(`const ${len} = ${v}.length;`);
      if (typeof s.maxItems === 'number') inner.push(`if (${len} > ${s.maxItems}) return false;`);
      if (typeof s.minItems === 'number') inner.push(`if (${len} < ${s.minItems}) return false;`);
      if (Array.isArray(s.items)) {
        s.items.forEach((is: Json, i: number) => {
          if (is === true) return;
          const x = local();
          inner.push(
            `if (${len} > ${i}) {`,
            `  const ${x} = ${v}[${i}];`,
            `  if (!${wrap(this.expr(is, x))}) return false;`,
            '}',
          );
        });
        const ai = s.additionalItems;
        if (ai === false) inner.push(`if (${len} > ${s.items.length}) return false;`);
        else if (ai !== undefined && ai !== true) {
          const i = local();
          const x = local();
          inner.push(
            `for (let ${i} = ${s.items.length}; ${i} < ${len}; ${i}++) {`,
            `  const ${x} = ${v}[${i}];`,
            `  if (!${wrap(this.expr(ai, x))}) return false;`,
            '}',
          );
        }
      } else if (s.items !== undefined && s.items !== true) {
        const i = local();
        const x = local();
        inner.push(
          `for (let ${i} = 0; ${i} < ${len}; ${i}++) {`,
          `  const ${x} = ${v}[${i}];`,
          `  if (!${wrap(this.expr(s.items, x))}) return false;`,
          '}',
        );
      }
      block(out, only ? undefined : `Array.isArray(${v})`, inner);
    }

    const compositeExpr = this.expr(composite, v);
    if (compositeExpr !== 'true') out.push(`if (!${wrap(compositeExpr)}) return false;`);
  }
}

const wrap = (e: string): string => `(${e})`;

/** s === prefix + zero, or s === prefix + c1 + c2{0,max} (c1 ∈ t1, c2 ∈ t2): `^prefix(zero|[t1][t2]{0,max})$`. */
const FAST_PREFIXED_NUMBER = `function fastPrefixedNumber(s, prefix, zero, t1, t2, max) {
  const p = prefix.length;
  const n = s.length;
  if (n <= p || !s.startsWith(prefix)) return false;
  if (n - p === zero.length && s.endsWith(zero)) return true;
  if (n - p - 1 > max) return false;
  const c = s.charCodeAt(p);
  if (c > 127 || t1[c] === 0) return false;
  for (let i = p + 1; i < n; i++) {
    const d = s.charCodeAt(i);
    if (d > 127 || t2[d] === 0) return false;
  }
  return true;
}
`;

function block(out: string[], cond: string | undefined, inner: string[]): void {
  if (cond === undefined) out.push(...inner);
  else out.push(`if (${cond}) {`, ...inner.map((l) => `  ${l}`), '}');
}

/** A schema compiled to a plain expression with no calls: no refs, object or array keywords, composites. */
function isLeaf(s: Json): boolean {
  return Object.keys(s).every(
    (k) => IGNORED.has(k) || ['type', 'enum', 'const', ...STRING_KW, ...NUMBER_KW].includes(k),
  );
}

/** ajv's checkDataType(s) (strictNumbers off, as with `strict: false`). */
function typeCheck(types: string[], v: string): string {
  const one = (t: string): string => {
    switch (t) {
      case 'null':
        return `${v} === null`;
      case 'array':
        return `Array.isArray(${v})`;
      case 'object':
        return `(${v} && typeof ${v} == "object" && !Array.isArray(${v}))`;
      case 'integer':
        return `(typeof ${v} == "number" && !(${v} % 1) && !isNaN(${v}))`;
      case 'number':
        return `typeof ${v} == "number"`;
      default:
        return `typeof ${v} == "${t}"`;
    }
  };
  const ts = types.includes('number') ? types.filter((t) => t !== 'integer') : types;
  return ts.length === 1 ? one(ts[0]) : `(${ts.map(one).join(' || ')})`;
}

/** ajv fails a limit when the comparison is false (NaN fails too): `!(v >= min)` ⇔ `v < min || isNaN(v)`. */
function numberConds(s: Json, v: string): string[] {
  const c: string[] = [];
  if (typeof s.minimum === 'number') c.push(`${v} >= ${s.minimum}`);
  if (typeof s.maximum === 'number') c.push(`${v} <= ${s.maximum}`);
  if (typeof s.exclusiveMinimum === 'number') c.push(`${v} > ${s.exclusiveMinimum}`);
  if (typeof s.exclusiveMaximum === 'number') c.push(`${v} < ${s.exclusiveMaximum}`);
  return c;
}
