// How the commands print a failure: one line on stderr.
import { DocumentError } from '../contract/parse.js';

/** An error as one line for stderr (schema-utils' validation messages span many lines), at most ~400 characters — a
 *  document's problems (each naming file, line, pointer) at most ~2,000. */
export function errorLine(e: unknown): string {
  const max = e instanceof DocumentError ? 2000 : 400;
  const msg = (e instanceof Error ? e.message : String(e)).replace(/\s+/g, ' ').trim();
  return msg.length > max ? `${msg.slice(0, max)}…` : msg;
}
