// Human output of the account commands: key: value lines and small tables. (`--json` output is the API's own
// objects, printed by src/cli/account.ts.)

type Row = Record<string, unknown>;

const show = (v: unknown): string => {
  if (v === null || v === undefined || v === '') return '-';
  if (Array.isArray(v)) return v.length ? v.map(show).join(', ') : '-';
  if (typeof v === 'object') return JSON.stringify(v);
  return String(v);
};

/** `label: value` lines, labels padded to one column. */
export function keyValues(pairs: [label: string, value: unknown][]): string {
  const w = Math.max(...pairs.map(([l]) => l.length)) + 1;
  return pairs.map(([l, v]) => `${`${l}:`.padEnd(w)} ${show(v)}`).join('\n');
}

/** A table with a header row; `columns` maps a header to a field (or a function of the row). */
export function table<R extends object>(
  rows: readonly R[],
  columns: Record<string, keyof R | ((r: R) => unknown)>,
  empty = '(none)',
): string {
  if (rows.length === 0) return empty;
  const heads = Object.keys(columns);
  const cells = rows.map((r) =>
    heads.map((h) => {
      const c = columns[h];
      return show(typeof c === 'function' ? c(r) : (r as Row)[c as string]);
    }),
  );
  const widths = heads.map((h, i) => Math.max(h.length, ...cells.map((row) => row[i].length)));
  const line = (vals: string[]) => vals.map((v, i) => (i === vals.length - 1 ? v : v.padEnd(widths[i]))).join('  ');
  return [line(heads), ...cells.map(line)].join('\n');
}

/** One line summarising an error's `data` (`limit=4, what=network API keys`), at most ~300 characters. */
export function summarizeData(data: unknown): string | undefined {
  if (data === undefined || data === null) return undefined;
  let s: string;
  if (typeof data === 'object' && !Array.isArray(data)) {
    s = Object.entries(data as Row)
      .map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`)
      .join(', ');
  } else s = typeof data === 'string' ? data : JSON.stringify(data);
  return s.length > 300 ? `${s.slice(0, 300)}…` : s;
}

/** An error as one line for stderr (schema-utils' validation messages span many lines), at most ~400 characters. */
export function errorLine(e: unknown): string {
  const msg = (e instanceof Error ? e.message : String(e)).replace(/\s+/g, ' ').trim();
  return msg.length > 400 ? `${msg.slice(0, 400)}…` : msg;
}
