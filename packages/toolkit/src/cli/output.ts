/** An error as one line for stderr (schema-utils' validation messages span many lines), at most ~400 characters. */
export function errorLine(e: unknown): string {
  const msg = (e instanceof Error ? e.message : String(e)).replace(/\s+/g, ' ').trim();
  return msg.length > 400 ? `${msg.slice(0, 400)}…` : msg;
}
