// Splits a node's JSON-RPC response text into per-call pieces WITHOUT parsing the results: one pass over the
// characters that tracks strings and bracket depth, recording where each response object's `id`, `result` and
// `error` values start and end. Results are then handed to the engine as RawResult (the node's bytes, spliced
// into the client's response), which saves a JSON.parse + JSON.stringify of every block/receipt/log list.
// Anything unexpected (whitespace layouts are fine; non-numeric ids, duplicate keys, truncated text) returns
// undefined and the caller falls back to JSON.parse. The node is trusted to send valid JSON inside a value
// (strict mode parses and validates every result anyway).

export interface SplitItem {
  /** The numeric id (index of the call in the batch we sent). */
  id: number;
  /** [start, end) of the result value in the text, or -1. */
  resultStart: number;
  resultEnd: number;
  /** [start, end) of the error value in the text, or -1. */
  errorStart: number;
  errorEnd: number;
}

const QUOTE = 34,
  BACKSLASH = 92,
  LBRACE = 123,
  RBRACE = 125,
  LBRACKET = 91,
  RBRACKET = 93,
  COMMA = 44,
  COLON = 58;

function ws(c: number): boolean {
  return c === 32 || c === 10 || c === 13 || c === 9;
}

function skipWs(s: string, i: number): number {
  while (i < s.length && ws(s.charCodeAt(i))) i++;
  return i;
}

/** End (exclusive) of the string starting at the quote at i, or -1. */
function endOfString(s: string, i: number): number {
  let j = i + 1;
  for (;;) {
    const q = s.indexOf('"', j);
    if (q === -1) return -1;
    // Count backslashes before the quote: an odd number escapes it.
    let b = q - 1;
    while (b > i && s.charCodeAt(b) === BACKSLASH) b--;
    if ((q - 1 - b) % 2 === 0) return q + 1;
    j = q + 1;
  }
}

/** End (exclusive) of the JSON value starting at i, or -1. */
function endOfValue(s: string, i: number): number {
  const c = s.charCodeAt(i);
  if (c === QUOTE) return endOfString(s, i);
  if (c === LBRACE || c === LBRACKET) {
    let depth = 0;
    const n = s.length;
    for (let j = i; j < n; j++) {
      const d = s.charCodeAt(j);
      if (d === QUOTE) {
        j = endOfString(s, j) - 1;
        if (j < 0) return -1;
      } else if (d === LBRACE || d === LBRACKET) depth++;
      else if (d === RBRACE || d === RBRACKET) {
        if (--depth === 0) return j + 1;
      }
    }
    return -1;
  }
  // number, true, false, null
  let j = i;
  const n = s.length;
  while (j < n) {
    const d = s.charCodeAt(j);
    if (d === COMMA || d === RBRACE || d === RBRACKET || ws(d)) break;
    j++;
  }
  return j === i ? -1 : j;
}

/** One response object at i; pushes its item and returns the index after it, or -1. */
function object(s: string, i: number, out: SplitItem[]): number {
  if (s.charCodeAt(i) !== LBRACE) return -1;
  const item: SplitItem = { id: -1, resultStart: -1, resultEnd: -1, errorStart: -1, errorEnd: -1 };
  i = skipWs(s, i + 1);
  if (s.charCodeAt(i) === RBRACE) return -1;
  for (;;) {
    if (s.charCodeAt(i) !== QUOTE) return -1;
    const ke = endOfString(s, i);
    if (ke < 0) return -1;
    // Keys we care about never contain escapes; compare the raw text.
    const key = s.slice(i + 1, ke - 1);
    i = skipWs(s, ke);
    if (s.charCodeAt(i) !== COLON) return -1;
    i = skipWs(s, i + 1);
    const ve = endOfValue(s, i);
    if (ve < 0) return -1;
    if (key === 'id') {
      if (item.id !== -1) return -1;
      const id = Number(s.slice(i, ve));
      if (!Number.isInteger(id) || id < 0 || s.charCodeAt(i) === QUOTE) return -1;
      item.id = id;
    } else if (key === 'result') {
      if (item.resultStart !== -1) return -1;
      item.resultStart = i;
      item.resultEnd = ve;
    } else if (key === 'error') {
      if (item.errorStart !== -1) return -1;
      item.errorStart = i;
      item.errorEnd = ve;
    }
    i = skipWs(s, ve);
    const c = s.charCodeAt(i);
    if (c === COMMA) {
      i = skipWs(s, i + 1);
      continue;
    }
    if (c === RBRACE) break;
    return -1;
  }
  if (item.id === -1 || (item.resultStart === -1) === (item.errorStart === -1)) return -1;
  out.push(item);
  return i + 1;
}

/** A response (single object or batch array) split into items; undefined when it must be parsed instead. */
export function splitResponse(s: string): SplitItem[] | undefined {
  const out: SplitItem[] = [];
  let i = skipWs(s, 0);
  const c = s.charCodeAt(i);
  if (c === LBRACE) {
    i = object(s, i, out);
    if (i < 0) return undefined;
  } else if (c === LBRACKET) {
    i = skipWs(s, i + 1);
    if (s.charCodeAt(i) === RBRACKET) i++;
    else {
      for (;;) {
        i = object(s, i, out);
        if (i < 0) return undefined;
        i = skipWs(s, i);
        const d = s.charCodeAt(i);
        if (d === COMMA) {
          i = skipWs(s, i + 1);
          continue;
        }
        if (d === RBRACKET) {
          i++;
          break;
        }
        return undefined;
      }
    }
  } else return undefined;
  return skipWs(s, i) === s.length ? out : undefined;
}
