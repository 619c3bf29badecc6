// Document text → JSON, JSON or YAML, with problems located by file, JSON pointer and line:column (issue 19 item 4:
// "position 792" tells a reader nothing). Also the problem type every loading step reports with.
import { LineCounter, parseDocument, isMap, isSeq, type Node as YamlNode } from 'yaml';

// biome-ignore lint/suspicious/noExplicitAny: a contract is untyped JSON walked by shape checks everywhere; typing it `unknown` would put a cast at each of ~500 reads without making one of them safer
export type Json = any;

/** One thing wrong with (or doubtful in) a document: where, and what. */
export interface DocumentProblem {
  /** The file (relative to the working directory when inside it) or URL. */
  file: string;
  /** JSON pointer as a URI fragment: `#/methods/12/result/schema/$ref` (`#` for the document itself). */
  pointer: string;
  message: string;
  /** 1-based, when the text is at hand. */
  line?: number;
  column?: number;
}

/** `file:line:column #/pointer: message` (line and pointer where known). */
export const formatProblem = (p: DocumentProblem): string =>
  `${p.file}${p.line ? `:${p.line}:${p.column ?? 1}` : ''}${p.pointer && p.pointer !== '#' ? ` ${p.pointer}` : ''}: ${p.message}`;

/** A document that cannot be used: every problem found, each naming file, pointer and (where known) line. The message
 *  is one line (`summary: problem; problem; …`), as the commands print it. */
export class DocumentError extends Error {
  constructor(
    readonly problems: DocumentProblem[],
    summary?: string,
  ) {
    const list = problems.map(formatProblem).join('; ');
    super(
      summary
        ? `${summary}: ${list}`
        : problems.length === 1
          ? formatProblem(problems[0])
          : `${problems.length} problems: ${list}`,
    );
    this.name = 'DocumentError';
  }
}

/** `a/b~c` segments → `#/a~1b~0c`. */
export const toPointer = (segments: readonly (string | number)[]): string =>
  `#${segments.map((s) => `/${String(s).replace(/~/g, '~0').replace(/\//g, '~1')}`).join('')}`;

/** `#/a~1b/0` or `/a~1b/0` → ['a/b', '0'] (percent-decoded, as a URI fragment is). */
export function fromPointer(pointer: string): string[] {
  let p = pointer.startsWith('#') ? pointer.slice(1) : pointer;
  try {
    p = decodeURIComponent(p);
  } catch {
    // a literal % in a key: keep the text as written
  }
  if (p === '') return [];
  if (!p.startsWith('/')) throw new Error(`"${pointer}" is not a JSON pointer`);
  return p
    .slice(1)
    .split('/')
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
}

/** The node at `segments` in `doc` (own keys only, never the prototype), or the index of the first segment missing. */
export function valueAt(
  doc: Json,
  segments: readonly string[],
): { ok: true; node: Json } | { ok: false; missing: number } {
  let cur = doc;
  for (let i = 0; i < segments.length; i++) {
    const s = segments[i];
    if (cur === null || typeof cur !== 'object' || !Object.hasOwn(cur, s)) return { ok: false, missing: i };
    cur = cur[s];
  }
  return { ok: true, node: cur };
}

const isYamlName = (file: string) => /\.ya?ml$/i.test(file.replace(/[?#].*$/, ''));

/** Parses a document's text: YAML by extension (`.yaml`, `.yml`) or when it does not start with `{`/`[`, else JSON. */
export function parseText(text: string, file: string): Json {
  const t = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  const json = /\.json$/i.test(file.replace(/[?#].*$/, '')) || (!isYamlName(file) && /^\s*[[{]/.test(t));
  if (json) {
    try {
      return JSON.parse(t);
    } catch (e) {
      const at = jsonErrorOffset(t);
      const why = (e as Error).message
        .replace(/ in JSON at position \d+.*$/, '')
        .replace(/, ".*" is not valid JSON$/s, '')
        .replace(/^Unexpected end of JSON input$/, 'unexpected end of text');
      throw new DocumentError([{ file, pointer: '#', message: `not valid JSON: ${why}`, ...lineColumn(t, at) }]);
    }
  }
  const lineCounter = new LineCounter();
  // YAML 1.2 core schema (no 1.1 timestamps or sexagesimal numbers); merge keys (`<<`) as OpenAPI authors use them;
  // aliases are capped (a "billion laughs" of anchors stops at once).
  const doc = parseDocument(t, { lineCounter, merge: true, uniqueKeys: true, prettyErrors: false });
  const err = doc.errors[0];
  if (err) {
    const pos = lineCounter.linePos(err.pos[0]);
    throw new DocumentError([
      { file, pointer: '#', message: `not valid YAML: ${err.message.split('\n')[0]}`, line: pos.line, column: pos.col },
    ]);
  }
  try {
    return doc.toJS({ maxAliasCount: 100 });
  } catch (e) {
    throw new DocumentError([{ file, pointer: '#', message: `not usable YAML: ${(e as Error).message}` }]);
  }
}

/** 1-based line and column of a character offset. */
export function lineColumn(text: string, offset: number): { line: number; column: number } {
  let line = 1;
  let start = 0;
  for (let i = text.indexOf('\n'); i !== -1 && i < offset; i = text.indexOf('\n', i + 1)) {
    line++;
    start = i + 1;
  }
  return { line, column: offset - start + 1 };
}

/** Offset of the first JSON syntax error (V8's messages do not always carry it). Only run on text JSON.parse refused. */
export function jsonErrorOffset(s: string): number {
  let i = 0;
  const ws = () => {
    while (i < s.length && (s[i] === ' ' || s[i] === '\t' || s[i] === '\n' || s[i] === '\r')) i++;
  };
  class Stop extends Error {}
  const fail = (): never => {
    throw new Stop();
  };
  const str = () => {
    i++; // opening quote
    while (i < s.length) {
      const c = s.charCodeAt(i);
      if (c === 0x22) return void i++;
      if (c < 0x20) fail();
      if (c === 0x5c) {
        const e = s[i + 1];
        if (e === 'u') {
          if (!/^[0-9a-fA-F]{4}$/.test(s.slice(i + 2, i + 6))) return (void (i += 2), fail());
          i += 6;
        } else if (e !== undefined && '"\\/bfnrt'.includes(e)) i += 2;
        else return (void i++, fail());
      } else i++;
    }
    fail();
  };
  const value = (): void => {
    ws();
    const c = s[i];
    if (c === '{') {
      i++;
      ws();
      if (s[i] === '}') return void i++;
      for (;;) {
        ws();
        if (s[i] !== '"') fail();
        str();
        ws();
        if (s[i] !== ':') fail();
        i++;
        value();
        ws();
        if (s[i] === ',') i++;
        else if (s[i] === '}') return void i++;
        else fail();
      }
    }
    if (c === '[') {
      i++;
      ws();
      if (s[i] === ']') return void i++;
      for (;;) {
        value();
        ws();
        if (s[i] === ',') i++;
        else if (s[i] === ']') return void i++;
        else fail();
      }
    }
    if (c === '"') return str();
    const m = /^(?:-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?|true|false|null)/.exec(s.slice(i, i + 400));
    if (!m) fail();
    i += (m as RegExpExecArray)[0].length;
  };
  try {
    value();
    ws();
    if (i < s.length) fail();
  } catch (e) {
    if (!(e instanceof Stop)) throw e;
  }
  return Math.min(i, s.length);
}

/** Line and column of the value at `pointer` in a JSON or YAML text (the nearest existing ancestor if it is missing);
 *  undefined when the text cannot be mapped. Only called when there is a problem to report. */
export function locate(text: string, pointer: string): { line: number; column: number } | undefined {
  try {
    const lineCounter = new LineCounter();
    const doc = parseDocument(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text, {
      lineCounter,
      uniqueKeys: false,
    });
    let node: unknown = doc.contents;
    for (const seg of fromPointer(pointer)) {
      let next: unknown;
      if (isMap(node)) next = node.items.find((p) => (p.key as { value?: unknown })?.value === seg)?.value;
      else if (isSeq(node)) next = node.items[Number(seg)];
      if (!next) break;
      node = next;
    }
    const range = (node as YamlNode | null)?.range;
    if (!range) return undefined;
    const pos = lineCounter.linePos(range[0]);
    return { line: pos.line, column: pos.col };
  } catch {
    return undefined;
  }
}
