// Usage metrics of an app (the Metrics tab) and of a network key (the key detail view), from apps_metrics /
// keys_metrics. Everything shown is what the account API returned; with no calls in the range the tab says so.
import { useCallback, useEffect, useId, useState } from 'react';
import { api, describeError, type ShownError, type UsagePoint, type UsageSeries } from '../api.js';
import { BarList, TimeBars, TimeLines, ms, pct, timeLong, type Granularity } from '../charts.js';
import { ErrorText, fmt } from '../components.js';
import { GATEWAY_ERRORS } from '../../errors.js';

export interface RangeDef {
  id: string;
  label: string;
  granularity: Granularity;
  /** Buckets shown, ending with the current (partly counted) one. */
  buckets: number;
}

export const RANGES: RangeDef[] = [
  { id: '1h', label: 'Last hour', granularity: 'minute', buckets: 60 },
  { id: '24h', label: 'Last 24 hours', granularity: 'hour', buckets: 24 },
  { id: '30d', label: 'Last 30 days', granularity: 'day', buckets: 30 },
];

const STEP: Record<Granularity, number> = { minute: 60_000, hour: 3_600_000, day: 86_400_000 };

/** The range ending with the bucket that holds `now` (UTC-aligned, like the store's buckets). */
export function rangeQuery(r: RangeDef, now = Date.now()): { from: string; to: string; granularity: Granularity } {
  const G = STEP[r.granularity];
  const to = (Math.floor(now / G) + 1) * G;
  return {
    from: new Date(to - r.buckets * G).toISOString(),
    to: new Date(to).toISOString(),
    granularity: r.granularity,
  };
}

/** JSON-RPC codes rpcgate itself answers with (the standard ones and src/gateway/errors.ts); others are the node's. */
const CODE_NAMES: Record<string, string> = {
  '-32700': 'parse error',
  '-32600': 'invalid request / too large',
  '-32601': 'method not found / not allowed',
  '-32602': 'invalid params',
  '-32603': 'internal error',
  ...Object.fromEntries(
    GATEWAY_ERRORS.filter((r) => r.code !== -32601).map((r) => [String(r.code), r.message.toLowerCase()]),
  ),
  '0': 'no code',
};

const OUTCOME_LABELS: [keyof UsagePoint['byOutcome'], string][] = [
  ['ok', 'Succeeded'],
  ['node_error', 'Node answered with an error'],
  ['auth', 'Refused: key or JWT'],
  ['allowlist', 'Refused: allowlist'],
  ['limit', 'Refused: rate or daily limit'],
  // -32700 / -32600 / -32601 / -32602: the errors-by-code list below tells them apart.
  ['validation', 'Refused: invalid request, unknown method or params'],
  ['upstream_error', 'Node unreachable or timed out'],
  ['backend_unavailable', 'Refused: limits backend (Redis) down'],
];

type Target = { kind: 'app'; id: string } | { kind: 'key'; id: string };

function fetchSeries(
  target: Target,
  query: { from: string; to: string; granularity: Granularity; network?: string },
): Promise<UsageSeries> {
  return target.kind === 'app'
    ? api.request('apps_metrics', [target.id, query])
    : api.request('keys_metrics', [target.id, query]);
}

/** The app's Metrics tab: range picker (and network when the app has several), totals, four charts, errors. */
export function MetricsPanel({
  target,
  networks,
  fail,
}: {
  target: Target;
  networks: string[];
  fail: (e: unknown) => unknown;
}) {
  const [rangeId, setRangeId] = useState('24h');
  const [network, setNetwork] = useState('');
  const [series, setSeries] = useState<UsageSeries | null>(null);
  const [error, setError] = useState<ShownError | null>(null);
  const [loading, setLoading] = useState(false);
  const netId = useId();
  const range = RANGES.find((r) => r.id === rangeId)!;

  // The target's fields, not the object: the parent builds a new one on every render.
  const { kind, id } = target;
  const load = useCallback(() => {
    setLoading(true);
    setError(null);
    const picked = RANGES.find((r) => r.id === rangeId)!;
    fetchSeries({ kind, id }, { ...rangeQuery(picked), ...(network ? { network } : {}) })
      .then(setSeries, (e) => fail(e) || setError(describeError(e)))
      .finally(() => setLoading(false));
  }, [kind, id, rangeId, network, fail]);
  useEffect(load, [load]);

  return (
    <div className="stack metrics">
      <div className="metrics-controls">
        <fieldset className="segmented-group">
          <legend>Range</legend>
          <div className="segmented">
            {RANGES.map((r) => (
              <button key={r.id} type="button" aria-pressed={r.id === rangeId} onClick={() => setRangeId(r.id)}>
                {r.label}
              </button>
            ))}
          </div>
        </fieldset>
        {networks.length > 1 && (
          <div className="field">
            <label htmlFor={netId}>Network</label>
            <select id={netId} value={network} onChange={(e) => setNetwork(e.target.value)}>
              <option value="">All networks</option>
              {networks.map((n) => (
                <option key={n} value={n}>
                  {n}
                </option>
              ))}
            </select>
          </div>
        )}
        <button type="button" className="btn btn-small" onClick={load} disabled={loading}>
          {loading ? 'Loading…' : 'Refresh'}
        </button>
      </div>
      <ErrorText error={error} />
      {series && <SeriesView series={series} range={range} />}
      {!series && !error && <p className="muted">Loading metrics…</p>}
    </div>
  );
}

function SeriesView({ series, range }: { series: UsageSeries; range: RangeDef }) {
  const s = series.summary;
  const g = series.granularity;
  const starts = series.points.map((p) => Date.parse(p.start));
  const period = `${timeLong(Date.parse(series.from), g)} – ${timeLong(Date.parse(series.to), g)}`;
  if (s.total === 0)
    return (
      <div className="empty card" data-testid="metrics-empty">
        <h3>No requests in this period</h3>
        <p className="muted">
          {range.label}, by {g} ({period}). Calls appear here once the minute they were made in is complete.
        </p>
      </div>
    );
  // Most frequent first (object key order is not an order: JSON parsers put integer-like keys such as "3" first).
  const byCount = (o: Record<string, number | undefined>) =>
    Object.entries(o)
      .filter((e): e is [string, number] => typeof e[1] === 'number')
      .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
  const errors = byCount(s.errorsByCode);
  // Methods outside the API are metered as one label (bounded cardinality): say what it holds.
  const methodItems = byCount(s.methods).map(([label, value]) => ({
    label: label === 'other' ? 'other (not in the API: see -32601 below)' : label,
    value,
  }));
  const rates = series.points.map((p) => p.successRate);
  const withCalls = rates.filter((r): r is number => r !== null);
  const lat = s.latencyMs;
  return (
    <>
      <p className="muted small" data-testid="metrics-period">
        {range.label}, by {g}: {period}. Counts are exact, up to a few seconds ago. Latency percentiles are within ±9 %
        (bucketed histogram); the mean is exact.
      </p>
      <dl className="stats" data-testid="metrics-summary">
        <div>
          <dt>Total requests</dt>
          <dd data-testid="metric-total">{fmt(s.total)}</dd>
        </div>
        <div>
          <dt>Success rate</dt>
          <dd data-testid="metric-success-rate">{s.successRate === null ? '—' : pct(s.successRate)}</dd>
        </div>
        <div>
          <dt>Not successful</dt>
          <dd data-testid="metric-errors">{fmt(s.total - s.success)}</dd>
        </div>
        <div>
          <dt>Compute units</dt>
          <dd data-testid="metric-units">{fmt(s.units)}</dd>
        </div>
        <div>
          <dt>Served from cache</dt>
          <dd data-testid="metric-cache-hits">
            {fmt(s.cacheHits)} <span className="muted small">({pct(s.cacheHits / s.total)})</span>
          </dd>
        </div>
        <div>
          <dt>Latency p50 / p95 / p99</dt>
          <dd data-testid="metric-latency">{lat ? `${ms(lat.p50)} / ${ms(lat.p95)} / ${ms(lat.p99)}` : '—'}</dd>
        </div>
      </dl>
      <div className="chart-grid">
        <TimeLines
          title="Success rate"
          starts={starts}
          granularity={g}
          yMax={1}
          format={(v) => pct(v)}
          series={[{ name: 'Success rate', values: rates, className: 'series-1' }]}
          describe={`Success rate per ${g}: ${withCalls.length} of ${rates.length} periods had calls; lowest ${pct(Math.min(...withCalls))}, highest ${pct(Math.max(...withCalls))}; ${pct(s.successRate ?? 0)} over the whole range.`}
          testId="chart-success-rate"
        />
        <TimeBars
          title="Total requests"
          starts={starts}
          values={series.points.map((p) => p.total)}
          granularity={g}
          unit="requests"
          testId="chart-totals"
        />
        <BarList title="Calls per method" items={methodItems} testId="chart-methods" />
        <TimeLines
          title="Latency (p50, p95, p99)"
          starts={starts}
          granularity={g}
          format={ms}
          series={[
            { name: 'p50', values: series.points.map((p) => p.latencyMs?.p50 ?? null), className: 'series-1' },
            { name: 'p95', values: series.points.map((p) => p.latencyMs?.p95 ?? null), className: 'series-2' },
            { name: 'p99', values: series.points.map((p) => p.latencyMs?.p99 ?? null), className: 'series-3' },
          ]}
          describe={
            lat
              ? `Latency per ${g}. Over the whole range: p50 ${ms(lat.p50)}, p95 ${ms(lat.p95)}, p99 ${ms(lat.p99)}, mean ${ms(lat.mean)}.`
              : 'No latency: no calls.'
          }
          testId="chart-latency"
        />
      </div>
      <div className="chart-grid">
        <section className="card" aria-labelledby="outcomes-title">
          <h3 id="outcomes-title">Outcomes</h3>
          <table className="table compact" data-testid="metrics-outcomes">
            <tbody>
              {OUTCOME_LABELS.filter(([k]) => s.byOutcome[k] > 0).map(([k, label]) => (
                <tr key={k}>
                  <th scope="row">{label}</th>
                  <td className="num">{fmt(s.byOutcome[k])}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </section>
        <section className="card" aria-labelledby="errors-title">
          <h3 id="errors-title">Errors by code</h3>
          {errors.length === 0 ? (
            <p className="muted">Every call succeeded.</p>
          ) : (
            <table className="table compact" data-testid="metrics-errors">
              <thead>
                <tr>
                  <th scope="col">Code</th>
                  <th scope="col">Meaning</th>
                  <th scope="col" className="num">
                    Calls
                  </th>
                </tr>
              </thead>
              <tbody>
                {errors.map(([code, count]) => (
                  <tr key={code}>
                    <th scope="row" className="mono">
                      {code}
                    </th>
                    <td className="muted">{CODE_NAMES[code] ?? 'from the node'}</td>
                    <td className="num">{fmt(count)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
        </section>
      </div>
    </>
  );
}

/** The key view's one range: the last 24 hours by hour. */
const KEY_RANGE = RANGES[1];

/** The key detail view's usage: requests per hour over the last 24 hours (a small bar chart), or an empty state. */
export function KeyUsageChart({ keyId, fail }: { keyId: string; fail: (e: unknown) => unknown }) {
  const [series, setSeries] = useState<UsageSeries | null>(null);
  const [error, setError] = useState<ShownError | null>(null);
  useEffect(() => {
    fetchSeries({ kind: 'key', id: keyId }, rangeQuery(KEY_RANGE)).then(
      setSeries,
      (e) => fail(e) || setError(describeError(e)),
    );
  }, [keyId, fail]);
  if (error) return <ErrorText error={error} />;
  if (!series) return <p className="muted">Loading usage…</p>;
  if (series.summary.total === 0)
    return (
      <p className="muted" data-testid="key-usage-empty">
        No requests on this key in the last 24 hours.
      </p>
    );
  const s = series.summary;
  return (
    <div className="key-usage-chart" data-testid="key-usage-chart">
      <TimeBars
        title={`Requests on this key, last 24 hours (${fmt(s.total)}, ${s.successRate === null ? '—' : pct(s.successRate)} successful, ${fmt(s.cacheHits)} served from cache)`}
        starts={series.points.map((p) => Date.parse(p.start))}
        values={series.points.map((p) => p.total)}
        granularity={series.granularity}
        unit="requests"
        testId="chart-key-totals"
      />
    </div>
  );
}
