// The vendored Ethereum execution-apis corpus (test/fixtures/execution-apis: CC0, see its README for the source
// commit and how to refresh it): one reader of its recorded exchanges for every test that uses them. The corpus is
// part of the repository, so a missing or empty folder is an error that says what is missing — never a silent skip.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

/** Root of the vendored copy (spec sources in src/, recorded exchanges in tests/). */
export const EXECUTION_APIS_DIR = resolve(import.meta.dirname, '../fixtures/execution-apis');
/** The recorded exchanges: tests/<method>/<case>.io */
export const EXECUTION_APIS_FIXTURES = join(EXECUTION_APIS_DIR, 'tests');

export interface RecordedExchange {
  /** `<method>/<case>.io` */
  file: string;
  request: { jsonrpc: string; id: unknown; method: string; params?: unknown[] };
  response: {
    jsonrpc: string;
    id: unknown;
    result?: unknown;
    error?: { code: number; message: string; data?: unknown };
  };
}

/** `//` comments, `>> {json}` a request, `<< {json}` the response that follows it. */
export function parseIo(file: string, text: string): RecordedExchange[] {
  const out: RecordedExchange[] = [];
  let pending: RecordedExchange['request'] | undefined;
  for (const line of text.split('\n')) {
    if (line.startsWith('>>')) pending = JSON.parse(line.slice(2));
    else if (line.startsWith('<<')) {
      if (!pending) throw new Error(`${file}: response without request`);
      out.push({ file, request: pending, response: JSON.parse(line.slice(2)) });
      pending = undefined;
    }
  }
  return out;
}

/**
 * Every recorded exchange, in file order (optionally only for the methods `only` accepts). Throws when the vendored
 * corpus is missing or holds no exchange: the tests that read it must fail, saying what is missing.
 */
export function readRecordedExchanges(only?: (method: string) => boolean): RecordedExchange[] {
  if (!existsSync(EXECUTION_APIS_FIXTURES)) {
    throw new Error(
      `the vendored execution-apis fixtures are missing: expected ${EXECUTION_APIS_FIXTURES} (see test/fixtures/execution-apis/README.md)`,
    );
  }
  const out: RecordedExchange[] = [];
  for (const dir of readdirSync(EXECUTION_APIS_FIXTURES).sort()) {
    if (only !== undefined && !only(dir)) continue;
    for (const name of readdirSync(join(EXECUTION_APIS_FIXTURES, dir)).sort()) {
      if (!name.endsWith('.io')) continue;
      out.push(...parseIo(`${dir}/${name}`, readFileSync(join(EXECUTION_APIS_FIXTURES, dir, name), 'utf8')));
    }
  }
  if (out.length === 0) throw new Error(`no recorded exchange (*.io) under ${EXECUTION_APIS_FIXTURES}`);
  return out;
}
