// JSON Schema `pattern`s run on untrusted input, so a document's pattern must not be able to stall the process:
// `^(a+)+$` against 41 characters takes V8's backtracking engine minutes (issue 26). Every pattern the toolkit tests a
// value with (ajv's validators at run time and in generated code, the fast checks in front of them) goes through
// safeRegExp:
//   - V8's RegExp when the pattern cannot backtrack more than linearly: anchored at the start, no backreference or
//     lookaround, no quantified group, and at most one quantifier whose count varies (`*`, `+`, `?`, `{n,}`, `{n,m}`) —
//     the hex and number patterns of the Ethereum contracts, which stay as fast as before;
//   - otherwise RE2JS, a pure-JavaScript port of RE2 whose matching time is linear in the input;
//   - a pattern RE2 cannot express (lookaround, backreference) that is not linear-safe as above is split when it is a
//     leading lookahead (`^(?!A)B`, `^(?=A)B`: two RE2 tests), else refused with an error naming it.
import { RE2JS } from 're2js';

export interface RegExpLike {
  test(s: string): boolean;
  /** Distinct per pattern and flags (ajv keys compiled patterns by it). */
  toString(): string;
}

/** JS escapes RE2 spells differently: `\uXXXX` and `\u{X…}` become `\x{…}`. */
const toRe2 = (p: string): string =>
  p.replace(
    /(?<!\\)((?:\\\\)*)\\u(?:\{([0-9a-fA-F]+)\}|([0-9a-fA-F]{4}))/g,
    (_, pre: string, a?: string, b?: string) => `${pre}\\x{${a ?? b}}`,
  );

/** Whether V8's backtracking engine runs `pattern` in time linear in the input (see the header: conservative). */
export function isLinearForBacktracking(pattern: string): boolean {
  if (!pattern.startsWith('^')) return false; // ajv's test() searches: an unanchored variable quantifier is quadratic
  let variable = 0;
  let inClass = false;
  const groups: number[] = []; // quantifier count at each open group
  let quantifiers = 0;
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i];
    if (c === '\\') {
      const n = pattern[i + 1];
      if (!inClass && n !== undefined && /[1-9k]/.test(n)) return false; // backreference
      i++;
      continue;
    }
    if (inClass) {
      if (c === ']') inClass = false;
      continue;
    }
    if (c === '[') inClass = true;
    else if (c === '(') {
      if (pattern[i + 1] === '?' && /[=!<]/.test(pattern[i + 2] ?? '')) return false; // lookaround
      groups.push(quantifiers);
    } else if (c === ')') {
      const before = groups.pop();
      if (before === undefined) return false;
      // a quantified group (its content repeated) is where exponential backtracking comes from
      if (/^[*+?{]/.test(pattern.slice(i + 1))) return false;
    } else if (c === '*' || c === '+' || c === '?') {
      if (pattern[i - 1] === '(') continue;
      quantifiers++;
      variable++;
      if (pattern[i + 1] === '?' || pattern[i + 1] === '+') i++; // lazy/possessive suffix
    } else if (c === '{') {
      const m = /^\{(\d+)(,(\d*))?\}/.exec(pattern.slice(i));
      if (!m) continue;
      quantifiers++;
      if (m[2] !== undefined && m[3] !== m[1]) variable++;
      i += m[0].length - 1;
    }
  }
  return variable <= 1 && groups.length === 0;
}

const cache = new Map<string, RegExpLike>();

/** A tester for `pattern` (with ajv's flags, "u" by default) that runs in time linear in its input; throws on a
 *  pattern that can be neither proven linear for V8 nor compiled by RE2. */
export function safeRegExp(pattern: string, flags = 'u'): RegExpLike {
  const key = `${flags}/${pattern}`;
  let re = cache.get(key);
  if (!re) {
    re = build(pattern, flags);
    if (cache.size < 10_000) cache.set(key, re);
  }
  return re;
}
// ajv (code.regExp) emits this in standalone code; packages/toolkit/src/codegen/validators.ts maps it to the @rpcgate/client export.
safeRegExp.code = 'require("@rpcgate/client").safeRegExp';

function build(pattern: string, flags: string): RegExpLike {
  if (isLinearForBacktracking(pattern)) return new RegExp(pattern, flags);
  const re2Flags = flags.includes('i') ? RE2JS.CASE_INSENSITIVE : 0;
  try {
    const re = RE2JS.compile(toRe2(pattern), re2Flags);
    // toString: ajv keys its compiled patterns by it (two testers must never share a key)
    return { test: (s) => re.test(s), toString: () => `re2:/${pattern}/${flags}` };
  } catch (e) {
    // ^(?!A)B / ^(?=A)B: B, and A tested alone at the start (A must not itself contain a group: a simple lookahead)
    const m = /^\^\(\?([!=])([^()]*)\)(.*)$/s.exec(pattern);
    if (m) {
      const ahead = RE2JS.compile(`^(?:${toRe2(m[2])})`, re2Flags);
      const rest = RE2JS.compile(`^(?:${toRe2(m[3])})`, re2Flags);
      const negative = m[1] === '!';
      return { test: (s) => rest.test(s) && ahead.test(s) !== negative, toString: () => `re2:/${pattern}/${flags}` };
    }
    throw new Error(
      `pattern ${JSON.stringify(pattern)} is not supported: it may backtrack without bound in JavaScript's engine and the linear-time engine (RE2) cannot compile it (${(e as Error).message})`,
    );
  }
}
