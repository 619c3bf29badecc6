// The Logs tab of an app or a network key: the request log (apps_logs / keys_logs), newest first, with the API's
// filters (method, status, JSON-RPC code, HTTP status, latency at least, since/until, request id), "Load older" paging
// by cursor, and a detail drawer for one entry (everything stored about the call, params/result when captured).
import { useCallback, useEffect, useState, type FormEvent } from 'react';
import { api, describeError, type LogEntry, type LogQuery, type ShownError } from '../api.js';
import { ErrorText } from '../components.js';

interface Filters {
  method: string;
  status: '' | 'ok' | 'error';
  code: string;
  httpStatus: string;
  minLatencyMs: string;
  since: string;
  until: string;
  requestId: string;
}
const EMPTY: Filters = {
  method: '',
  status: '',
  code: '',
  httpStatus: '',
  minLatencyMs: '',
  since: '',
  until: '',
  requestId: '',
};

/** A datetime-local value (the browser's local time) → ISO with a zone, as the API wants. */
const isoOf = (local: string) => (local === '' ? undefined : new Date(local).toISOString());

function toQuery(f: Filters): LogQuery {
  const q: LogQuery = {};
  if (f.method.trim()) q.method = f.method.trim();
  if (f.status) q.status = f.status;
  if (f.code.trim()) q.code = Number(f.code);
  if (f.httpStatus.trim()) q.httpStatus = Number(f.httpStatus);
  if (f.minLatencyMs.trim()) q.minLatencyMs = Number(f.minLatencyMs);
  const since = isoOf(f.since);
  const until = isoOf(f.until);
  if (since) q.since = since;
  if (until) q.until = until;
  if (f.requestId.trim()) q.requestId = f.requestId.trim();
  return q;
}

export function LogsPanel({
  target,
  fail,
}: {
  target: { kind: 'app' | 'key'; id: string };
  fail: (e: unknown) => unknown;
}) {
  const [draft, setDraft] = useState<Filters>(EMPTY);
  const [applied, setApplied] = useState<Filters>(EMPTY);
  const [entries, setEntries] = useState<LogEntry[] | null>(null);
  const [next, setNext] = useState<string | null>(null);
  const [error, setError] = useState<ShownError | null>(null);
  const [open, setOpen] = useState<LogEntry | null>(null);

  const load = useCallback(
    async (f: Filters, cursor?: string) => {
      const query: LogQuery = { ...toQuery(f), limit: 50, ...(cursor ? { cursor } : {}) };
      try {
        const page =
          target.kind === 'app'
            ? await api.request('apps_logs', [target.id, query])
            : await api.request('keys_logs', [target.id, query]);
        setError(null);
        setEntries((prev) => (cursor && prev ? [...prev, ...page.entries] : page.entries));
        setNext(page.next);
      } catch (e) {
        if (!fail(e)) setError(describeError(e));
      }
    },
    [target.kind, target.id, fail],
  );

  useEffect(() => {
    void load(applied);
  }, [applied, load]);

  const submit = (e: FormEvent) => {
    e.preventDefault();
    setApplied({ ...draft });
  };
  const set = (k: keyof Filters) => (e: { target: { value: string } }) => setDraft({ ...draft, [k]: e.target.value });

  return (
    <div className="stack">
      <form className="log-filters" onSubmit={submit} aria-label="Log filters">
        <label>
          Method
          <input value={draft.method} onChange={set('method')} placeholder="eth_call" />
        </label>
        <label>
          Outcome
          <select value={draft.status} onChange={set('status')}>
            <option value="">All</option>
            <option value="ok">Successful</option>
            <option value="error">Failed</option>
          </select>
        </label>
        <label>
          JSON-RPC code
          <input value={draft.code} onChange={set('code')} inputMode="numeric" placeholder="-32000" />
        </label>
        <label>
          HTTP status
          <input value={draft.httpStatus} onChange={set('httpStatus')} inputMode="numeric" placeholder="429" />
        </label>
        <label>
          Latency at least (ms)
          <input value={draft.minLatencyMs} onChange={set('minLatencyMs')} inputMode="decimal" />
        </label>
        <label>
          Since
          <input type="datetime-local" value={draft.since} onChange={set('since')} />
        </label>
        <label>
          Until
          <input type="datetime-local" value={draft.until} onChange={set('until')} />
        </label>
        <label>
          Request id
          <input value={draft.requestId} onChange={set('requestId')} />
        </label>
        <div className="log-filter-actions">
          <button type="submit">Apply filters</button>
          <button
            type="button"
            className="secondary"
            onClick={() => {
              setDraft(EMPTY);
              setApplied(EMPTY);
            }}
          >
            Clear
          </button>
          <button type="button" className="secondary" onClick={() => void load(applied)}>
            Refresh
          </button>
        </div>
      </form>
      <ErrorText error={error} />
      {entries === null ? (
        <p className="muted">Loading logs…</p>
      ) : entries.length === 0 ? (
        <p className="muted" data-testid="logs-empty">
          No calls match. Calls show up here within a few seconds.
        </p>
      ) : (
        <table className="table log-table" data-testid="logs-table">
          <thead>
            <tr>
              <th scope="col">Time (UTC)</th>
              <th scope="col">Network</th>
              <th scope="col">Method</th>
              <th scope="col">HTTP</th>
              <th scope="col">Code</th>
              <th scope="col">Latency</th>
              <th scope="col">Cache</th>
            </tr>
          </thead>
          <tbody>
            {entries.map((e) => (
              <tr key={e.id} className={e.code === null ? '' : 'log-failed'}>
                <td>
                  <button type="button" className="linklike" onClick={() => setOpen(e)}>
                    {e.time.replace('T', ' ').replace('Z', '')}
                  </button>
                </td>
                <td>{e.network}</td>
                <td>{e.method}</td>
                <td>{e.httpStatus}</td>
                <td>{e.code ?? '—'}</td>
                <td>{e.latencyMs.toFixed(1)} ms</td>
                <td>{e.cacheHit ? 'hit' : '—'}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {next && (
        <button type="button" className="secondary" onClick={() => void load(applied, next)}>
          Load older
        </button>
      )}
      {open && <LogDrawer entry={open} onClose={() => setOpen(null)} />}
    </div>
  );
}

function LogDrawer({ entry, onClose }: { entry: LogEntry; onClose: () => void }) {
  useEffect(() => {
    const esc = (e: KeyboardEvent) => e.key === 'Escape' && onClose();
    window.addEventListener('keydown', esc);
    return () => window.removeEventListener('keydown', esc);
  }, [onClose]);
  const rows: [string, string][] = [
    ['Time', entry.time],
    ['Network', entry.network],
    ['Method', entry.method],
    ['HTTP status', String(entry.httpStatus)],
    ['JSON-RPC code', entry.code === null ? 'none (success)' : String(entry.code)],
    ['Latency', `${entry.latencyMs} ms`],
    ['Cache', entry.cacheHit ? 'hit' : 'miss'],
    ['Upstream', entry.upstream ?? '—'],
    ['Transport', entry.transport],
    ['Request id', entry.requestId ?? '—'],
    ['Client IP (hash)', entry.ipHash ?? '—'],
  ];
  return (
    <aside className="drawer" role="dialog" aria-modal="false" aria-labelledby="drawer-title">
      <div className="drawer-head">
        <h3 id="drawer-title">
          {entry.method} <span className="muted">#{entry.id}</span>
        </h3>
        <button type="button" className="secondary" onClick={onClose} aria-label="Close details">
          Close
        </button>
      </div>
      <dl className="kv">
        {rows.map(([k, v]) => (
          <div key={k}>
            <dt>{k}</dt>
            <dd>{v}</dd>
          </div>
        ))}
      </dl>
      {entry.params !== undefined && (
        <>
          <h4>Params</h4>
          <pre className="code">{entry.params}</pre>
        </>
      )}
      {entry.result !== undefined && (
        <>
          <h4>Result</h4>
          <pre className="code">{entry.result}</pre>
        </>
      )}
      {entry.params === undefined && (
        <p className="muted small">Params and results are kept only for apps with body capture on (Settings).</p>
      )}
    </aside>
  );
}
