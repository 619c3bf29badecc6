// A string that matches a JSON Schema `pattern` (ECMA-262 syntax), for generated values: the pattern is parsed into a
// small AST and walked with a seeded random source. No library in the dependency tree exposes this (randexp is not
// installed; re2js matches but does not generate), and what published specs write is a narrow subset: anchors,
// literals and escapes, classes with ranges and negation, groups (capturing, non-capturing, named), alternation and
// greedy or lazy quantifiers — `^0x[0-9a-f]{64}$`, `^(latest|earliest|0x[0-9a-fA-F]{1,16})$`. Lookarounds are skipped
// (the caller's check decides); backreferences are refused (RegexSampleError), and so is anything unparsable: the caller then tries another way or
// reports the pattern. The caller checks the result with the real matcher; this only has to be right, not complete.

export class RegexSampleError extends Error {}

type Node =
  | { t: 'alt'; options: Node[][] }
  | { t: 'chars'; ranges: [number, number][]; negate: boolean }
  | { t: 'lit'; c: string }
  | { t: 'group'; alt: Node }
  | { t: 'rep'; node: Node; min: number; max: number }
  | { t: 'empty' };

const DIGIT: [number, number][] = [[48, 57]];
const WORD: [number, number][] = [
  [48, 57],
  [65, 90],
  [95, 95],
  [97, 122],
];
const SPACE: [number, number][] = [
  [9, 13],
  [32, 32],
];
/** Printable ASCII: what negated classes and `.` draw from. */
const PRINTABLE: [number, number][] = [[32, 126]];

/** Repetitions beyond what a quantifier demands: `*` and `+` and `{n,}` add at most this many. */
const EXTRA = 3;

function complement(ranges: [number, number][]): [number, number][] {
  const out: [number, number][] = [];
  for (const [lo, hi] of PRINTABLE) {
    let start = lo;
    const sorted = [...ranges].sort((a, b) => a[0] - b[0]);
    for (const [a, b] of sorted) {
      if (b < start || a > hi) continue;
      if (a > start) out.push([start, Math.min(a - 1, hi)]);
      start = Math.max(start, b + 1);
    }
    if (start <= hi) out.push([start, hi]);
  }
  return out;
}

class Parser {
  i = 0;
  constructor(
    readonly src: string,
    readonly ignoreCase: boolean,
    readonly extra = EXTRA,
  ) {}

  fail(why: string): never {
    throw new RegexSampleError(`pattern ${JSON.stringify(this.src)}: ${why} at ${this.i}`);
  }

  parse(): Node {
    const n = this.alternation();
    if (this.i < this.src.length) this.fail('unbalanced )');
    return n;
  }

  alternation(): Node {
    const options: Node[][] = [this.sequence()];
    while (this.src[this.i] === '|') {
      this.i++;
      options.push(this.sequence());
    }
    return { t: 'alt', options };
  }

  sequence(): Node[] {
    const out: Node[] = [];
    while (this.i < this.src.length && this.src[this.i] !== '|' && this.src[this.i] !== ')') {
      const atom = this.atom();
      out.push(this.quantified(atom));
    }
    return out;
  }

  quantified(atom: Node): Node {
    const c = this.src[this.i];
    let min: number;
    let max: number;
    if (c === '*') [min, max] = [0, this.extra];
    else if (c === '+') [min, max] = [1, 1 + this.extra];
    else if (c === '?') [min, max] = [0, 1];
    else if (c === '{') {
      const m = /^\{(\d+)(,(\d*))?\}/.exec(this.src.slice(this.i));
      if (!m) return atom; // a literal `{` (ECMA allows it outside a quantifier)
      min = Number(m[1]);
      max = m[2] === undefined ? min : m[3] === '' ? min + this.extra : Number(m[3]);
      if (max < min) this.fail('quantifier {n,m} with m < n');
      this.i += m[0].length - 1;
    } else return atom;
    this.i++;
    if (this.src[this.i] === '?') this.i++; // lazy: the same language
    if (atom.t === 'empty') return atom;
    return { t: 'rep', node: atom, min, max };
  }

  atom(): Node {
    const c = this.src[this.i++];
    switch (c) {
      case '^':
      case '$':
        return { t: 'empty' }; // anchors: the generated string is the whole match
      case '(': {
        if (this.src[this.i] === '?') {
          const look = /^\?(=|!|<=|<!)/.exec(this.src.slice(this.i));
          if (look) {
            // a lookaround constrains without consuming: skipped here, the real matcher checks the string
            this.i += look[0].length;
            this.alternation();
            if (this.src[this.i] !== ')') this.fail('missing )');
            this.i++;
            return { t: 'empty' };
          }
          const m = /^\?(:|<[A-Za-z_][A-Za-z0-9_]*>)/.exec(this.src.slice(this.i));
          if (!m) this.fail('unsupported group');
          this.i += m[0].length;
        }
        const alt = this.alternation();
        if (this.src[this.i] !== ')') this.fail('missing )');
        this.i++;
        return { t: 'group', alt };
      }
      case '[':
        return this.klass();
      case '.':
        return { t: 'chars', ranges: PRINTABLE, negate: false };
      case '\\':
        return this.escape(false);
      case '*':
      case '+':
      case '?':
        return this.fail('nothing to repeat');
      default:
        return this.lit(c);
    }
  }

  lit(c: string): Node {
    if (this.ignoreCase && c.toLowerCase() !== c.toUpperCase())
      return {
        t: 'chars',
        ranges: [c.toLowerCase(), c.toUpperCase()].map((x) => [x.charCodeAt(0), x.charCodeAt(0)] as [number, number]),
        negate: false,
      };
    return { t: 'lit', c };
  }

  /** After a backslash; inClass: inside [...] (where \b is a backspace). */
  escape(inClass: boolean): Node {
    const c = this.src[this.i++];
    if (c === undefined) this.fail('trailing backslash');
    const set = (ranges: [number, number][], negate = false): Node => ({ t: 'chars', ranges, negate });
    switch (c) {
      case 'd':
        return set(DIGIT);
      case 'D':
        return set(DIGIT, true);
      case 'w':
        return set(WORD);
      case 'W':
        return set(WORD, true);
      case 's':
        return set(SPACE);
      case 'S':
        return set(SPACE, true);
      case 'n':
        return { t: 'lit', c: '\n' };
      case 't':
        return { t: 'lit', c: '\t' };
      case 'r':
        return { t: 'lit', c: '\r' };
      case 'f':
        return { t: 'lit', c: '\f' };
      case 'v':
        return { t: 'lit', c: '\v' };
      case '0':
        return { t: 'lit', c: '\0' };
      case 'b':
        if (inClass) return { t: 'lit', c: '\b' };
        return { t: 'empty' }; // a word boundary: the generated words are separated anyway or it fails the check
      case 'B':
        return { t: 'empty' };
      case 'x': {
        const m = /^[0-9a-fA-F]{2}/.exec(this.src.slice(this.i));
        if (!m) return { t: 'lit', c: 'x' };
        this.i += 2;
        return { t: 'lit', c: String.fromCharCode(Number.parseInt(m[0], 16)) };
      }
      case 'u': {
        const m = /^(?:[0-9a-fA-F]{4}|\{[0-9a-fA-F]{1,6}\})/.exec(this.src.slice(this.i));
        if (!m) return { t: 'lit', c: 'u' };
        this.i += m[0].length;
        return { t: 'lit', c: String.fromCodePoint(Number.parseInt(m[0].replace(/[{}]/g, ''), 16)) };
      }
      case 'p':
      case 'P': {
        // Unicode property classes: letters (or, negated, digits) are a sound choice for the usual \p{L}, \p{Alpha}
        const m = /^\{[^}]*\}/.exec(this.src.slice(this.i));
        if (m) this.i += m[0].length;
        const letters: [number, number][] = [
          [65, 90],
          [97, 122],
        ];
        return set(c === 'p' ? letters : DIGIT);
      }
      case 'c': {
        const l = this.src[this.i++];
        return { t: 'lit', c: String.fromCharCode((l?.charCodeAt(0) ?? 64) % 32) };
      }
      default:
        if (/[1-9]/.test(c)) this.fail('backreferences are not supported');
        if (c === 'k' && this.src[this.i] === '<') this.fail('backreferences are not supported');
        return { t: 'lit', c };
    }
  }

  klass(): Node {
    let negate = false;
    if (this.src[this.i] === '^') {
      negate = true;
      this.i++;
    }
    const ranges: [number, number][] = [];
    let first = true;
    while (this.i < this.src.length && (this.src[this.i] !== ']' || first)) {
      first = false;
      const lo = this.classAtom();
      if (this.src[this.i] === '-' && this.src[this.i + 1] !== ']' && this.i + 1 < this.src.length && lo.single) {
        this.i++;
        const hi = this.classAtom();
        if (!hi.single) {
          ranges.push(...lo.ranges, [45, 45], ...hi.ranges);
          continue;
        }
        if (hi.ranges[0][0] < lo.ranges[0][0]) this.fail('range out of order in character class');
        ranges.push([lo.ranges[0][0], hi.ranges[0][0]]);
      } else ranges.push(...lo.ranges);
    }
    if (this.src[this.i] !== ']') this.fail('missing ]');
    this.i++;
    if (this.ignoreCase) {
      for (const [a, b] of [...ranges]) {
        for (let x = a; x <= Math.min(b, a + 255); x++) {
          const ch = String.fromCharCode(x);
          for (const o of [ch.toLowerCase(), ch.toUpperCase()]) ranges.push([o.charCodeAt(0), o.charCodeAt(0)]);
        }
      }
    }
    return { t: 'chars', ranges, negate };
  }

  classAtom(): { ranges: [number, number][]; single: boolean } {
    const c = this.src[this.i++];
    if (c !== '\\') return { ranges: [[c.charCodeAt(0), c.charCodeAt(0)]], single: true };
    const n = this.escape(true);
    if (n.t === 'lit') return { ranges: [[n.c.charCodeAt(0), n.c.charCodeAt(0)]], single: true };
    if (n.t === 'chars') return { ranges: n.negate ? complement(n.ranges) : n.ranges, single: false };
    return { ranges: [], single: false };
  }
}

const cache = new Map<string, Node>();

/** Parses `pattern` once (cached); throws RegexSampleError for what this generator does not handle. */
function parsed(pattern: string, ignoreCase: boolean, extra: number): Node {
  const key = `${ignoreCase ? 'i' : ''}${extra}/${pattern}`;
  let n = cache.get(key);
  if (!n) {
    n = new Parser(pattern, ignoreCase, extra).parse();
    if (cache.size > 5000) cache.clear();
    cache.set(key, n);
  }
  return n;
}

/**
 * A string matching `pattern`, drawing choices from `rand` (a function returning [0, 1)). `extra`: how many more
 * repetitions than demanded an open quantifier (`*`, `+`, `{n,}`) may take (more when a minLength needs them).
 */
export function sampleRegex(
  pattern: string,
  rand: () => number,
  opts: { ignoreCase?: boolean; extra?: number } = {},
): string {
  const root = parsed(pattern, opts.ignoreCase ?? false, opts.extra ?? EXTRA);
  const out: string[] = [];
  const pick = (n: number) => Math.floor(rand() * n);
  const walk = (n: Node): void => {
    switch (n.t) {
      case 'empty':
        return;
      case 'lit':
        out.push(n.c);
        return;
      case 'group':
        walk(n.alt);
        return;
      case 'alt': {
        const seq = n.options[pick(n.options.length)];
        for (const x of seq) walk(x);
        return;
      }
      case 'rep': {
        const count = n.min + pick(n.max - n.min + 1);
        for (let k = 0; k < count; k++) walk(n.node);
        return;
      }
      case 'chars': {
        const ranges = n.negate ? complement(n.ranges) : n.ranges;
        const total = ranges.reduce((s, [a, b]) => s + (b - a + 1), 0);
        if (total === 0) throw new RegexSampleError(`pattern ${JSON.stringify(pattern)}: an empty character class`);
        let k = pick(total);
        for (const [a, b] of ranges) {
          if (k <= b - a) {
            out.push(String.fromCodePoint(a + k));
            return;
          }
          k -= b - a + 1;
        }
      }
    }
  };
  walk(root);
  return out.join('');
}
