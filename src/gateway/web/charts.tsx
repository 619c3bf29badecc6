// Hand-drawn SVG charts for usage metrics (no chart library): bars over time, lines over time, a horizontal bar
// list. Each chart is a <figure> whose SVG has role="img" with a <title> and a <desc> summarising the values, and a
// "Show data table" disclosure with the exact numbers — what a screen reader (or a careful reader) needs.
// Only values the account API returned are drawn: a bucket without calls is a zero bar or a gap in a line, never an
// interpolated point.
import { useId, type ReactNode } from 'react';
import { fmt } from './components.js';

export type Granularity = 'minute' | 'hour' | 'day';

// Drawn for about 380 px wide (two charts side by side); ticks stay legible from phone to desktop.
const W = 420;
const H = 200;
const M = { l: 52, r: 10, t: 12, b: 26 };
const PW = W - M.l - M.r;
const PH = H - M.t - M.b;
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const pad = (n: number) => String(n).padStart(2, '0');

/** Bucket start as shown on an axis (UTC, like the buckets). */
export function timeLabel(ms: number, g: Granularity): string {
  const d = new Date(ms);
  return g === 'day'
    ? `${MONTHS[d.getUTCMonth()]} ${d.getUTCDate()}`
    : `${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}`;
}

/** Bucket start in full (for tables and tooltips). */
export function timeLong(ms: number, g: Granularity): string {
  const d = new Date(ms);
  const day = `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())}`;
  return g === 'day' ? `${day} (UTC)` : `${day} ${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())} UTC`;
}

/** A round upper bound for an axis (1, 2, 2.5, 5 × 10^k). */
function niceMax(v: number): number {
  if (!(v > 0)) return 1;
  const p = 10 ** Math.floor(Math.log10(v));
  for (const m of [1, 2, 2.5, 5, 10]) if (m * p >= v) return m * p;
  return 10 * p;
}

export interface Column {
  label: string;
  format: (v: number) => string;
}

/** The exact values behind a chart, in a disclosure. Rows are given by the caller (typically buckets with calls). */
function DataTable({
  caption,
  head,
  rows,
  note,
}: {
  caption: string;
  head: string[];
  /** One row per period, keyed by the period's start. */
  rows: { key: number; cells: ReactNode[] }[];
  note?: string;
}) {
  return (
    <details className="chart-data">
      <summary>Show data table</summary>
      {note && <p className="muted small">{note}</p>}
      <div className="table-wrap">
        <table className="table">
          <caption className="visually-hidden">{caption}</caption>
          <thead>
            <tr>
              {head.map((h) => (
                <th key={h} scope="col">
                  {h}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {rows.map(({ key, cells }) => (
              <tr key={key}>
                {cells.map((c, j) =>
                  j === 0 ? (
                    <th key={head[j]} scope="row">
                      {c}
                    </th>
                  ) : (
                    <td key={head[j]}>{c}</td>
                  ),
                )}
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </details>
  );
}

function Frame({
  title,
  desc,
  yMax,
  yFormat,
  starts,
  granularity,
  children,
  testId,
}: {
  title: string;
  desc: string;
  yMax: number;
  yFormat: (v: number) => string;
  starts: number[];
  granularity: Granularity;
  children: ReactNode;
  testId?: string;
}) {
  const id = useId();
  const n = starts.length;
  const ticks = [0, 0.5, 1].map((f) => f * yMax);
  // About six labels along x, on bucket boundaries.
  const every = Math.max(1, Math.ceil(n / 6));
  const band = PW / Math.max(1, n);
  return (
    <svg
      viewBox={`0 0 ${W} ${H}`}
      className="chart-svg"
      role="img"
      aria-labelledby={`${id}-t`}
      aria-describedby={`${id}-d`}
      data-testid={testId}
    >
      <title id={`${id}-t`}>{title}</title>
      <desc id={`${id}-d`}>{desc}</desc>
      {ticks.map((t) => {
        const y = M.t + PH - (t / yMax) * PH;
        return (
          // biome-ignore lint/a11y/noAriaHiddenOnFocusable: an SVG <g> is not focusable; the ticks repeat the data table
          <g key={t} aria-hidden="true">
            <line x1={M.l} x2={W - M.r} y1={y} y2={y} className="chart-rule" />
            <text x={M.l - 6} y={y + 4} textAnchor="end" className="chart-tick">
              {yFormat(t)}
            </text>
          </g>
        );
      })}
      {starts.map((s, i) =>
        i % every === 0 ? (
          // biome-ignore lint/a11y/noAriaHiddenOnFocusable: an SVG <text> is not focusable; the labels repeat the data table
          <text
            key={s}
            x={M.l + i * band + band / 2}
            y={H - 8}
            textAnchor="middle"
            className="chart-tick"
            aria-hidden="true"
          >
            {timeLabel(s, granularity)}
          </text>
        ) : null,
      )}
      {children}
    </svg>
  );
}

/** Bars over time (e.g. total requests per bucket). */
export function TimeBars({
  title,
  starts,
  values,
  granularity,
  unit,
  testId,
}: {
  title: string;
  starts: number[];
  values: number[];
  granularity: Granularity;
  /** e.g. "requests" */
  unit: string;
  testId?: string;
}) {
  const max = Math.max(0, ...values);
  const yMax = niceMax(max);
  const band = PW / Math.max(1, values.length);
  const w = Math.max(1, band * 0.78);
  const total = values.reduce((s, v) => s + v, 0);
  const peak = values.indexOf(max);
  const desc =
    total === 0
      ? `No ${unit} in this period.`
      : `${fmt(total)} ${unit} in ${values.length} ${granularity} buckets from ${timeLong(starts[0], granularity)}; the most, ${fmt(max)}, at ${timeLong(starts[peak], granularity)}.`;
  const rows = starts.flatMap((s, i) =>
    values[i] > 0 ? [{ key: s, cells: [timeLong(s, granularity), fmt(values[i])] }] : [],
  );
  return (
    <figure className="chart">
      <figcaption>{title}</figcaption>
      <Frame
        title={title}
        desc={desc}
        yMax={yMax}
        yFormat={(v) => fmt(Math.round(v * 10) / 10)}
        starts={starts}
        granularity={granularity}
        testId={testId}
      >
        {values.map((v, i) =>
          v > 0 ? (
            <rect
              key={starts[i]}
              x={M.l + i * band + (band - w) / 2}
              y={M.t + PH - (v / yMax) * PH}
              width={w}
              height={(v / yMax) * PH}
              className="chart-bar"
            >
              <title>{`${timeLong(starts[i], granularity)}: ${fmt(v)} ${unit}`}</title>
            </rect>
          ) : null,
        )}
      </Frame>
      <DataTable
        caption={title}
        head={['Period', capitalise(unit)]}
        rows={rows}
        note="Periods without calls are left out."
      />
    </figure>
  );
}

export interface LineSeries {
  name: string;
  /** One per bucket; null = no calls in that bucket (a gap, not a zero). */
  values: (number | null)[];
  className: string;
}

/** Lines over time (success rate; latency percentiles). Gaps where a bucket had no calls; a dot on every value. */
export function TimeLines({
  title,
  starts,
  series,
  granularity,
  yMax: fixedMax,
  format,
  describe,
  testId,
}: {
  title: string;
  starts: number[];
  series: LineSeries[];
  granularity: Granularity;
  /** Fixed top of the y axis (e.g. 1 for a rate); default: a round number above the largest value. */
  yMax?: number;
  format: (v: number) => string;
  /** The <desc> text. */
  describe: string;
  testId?: string;
}) {
  const all = series.flatMap((s) => s.values.filter((v): v is number => v !== null));
  const yMax = fixedMax ?? niceMax(Math.max(0, ...all));
  const band = PW / Math.max(1, starts.length);
  const x = (i: number) => M.l + i * band + band / 2;
  const y = (v: number) => M.t + PH - (Math.min(v, yMax) / yMax) * PH;
  const rows = starts.flatMap((s, i) =>
    series.some((sr) => sr.values[i] !== null)
      ? [
          {
            key: s,
            cells: [
              timeLong(s, granularity),
              ...series.map((sr) => (sr.values[i] === null ? '—' : format(sr.values[i]!))),
            ],
          },
        ]
      : [],
  );
  return (
    <figure className="chart">
      <figcaption>{title}</figcaption>
      <Frame
        title={title}
        desc={describe}
        yMax={yMax}
        yFormat={format}
        starts={starts}
        granularity={granularity}
        testId={testId}
      >
        {/* Later series first, with bigger dots, so equal values (p95 = p99) stay visible instead of hidden. */}
        {series
          .map((s, idx) => ({ s, r: 2.5 + 1.5 * idx }))
          .reverse()
          .map(({ s, r }) => {
            let d = '';
            s.values.forEach((v, i) => {
              if (v === null) return;
              d += `${i > 0 && s.values[i - 1] !== null ? 'L' : 'M'}${x(i).toFixed(1)},${y(v).toFixed(1)}`;
            });
            return (
              <g key={s.name} className={s.className}>
                <path d={d} className="chart-line" />
                {s.values.map((v, i) =>
                  v === null ? null : (
                    <circle key={starts[i]} cx={x(i)} cy={y(v)} r={r} className="chart-dot">
                      <title>{`${s.name} ${timeLong(starts[i], granularity)}: ${format(v)}`}</title>
                    </circle>
                  ),
                )}
              </g>
            );
          })}
      </Frame>
      {series.length > 1 && (
        <ul className="chart-legend" aria-hidden="true">
          {series.map((s) => (
            <li key={s.name} className={s.className}>
              <span className="chart-swatch" /> {s.name}
            </li>
          ))}
        </ul>
      )}
      <DataTable
        caption={title}
        head={['Period', ...series.map((s) => s.name)]}
        rows={rows}
        note="Periods without calls are left out."
      />
    </figure>
  );
}

/** Horizontal bars with the exact count beside each (HTML, so it reads as a list without extra work). */
export function BarList({
  title,
  items,
  testId,
}: {
  title: string;
  items: { label: string; value: number }[];
  testId?: string;
}) {
  const max = Math.max(1, ...items.map((i) => i.value));
  const total = items.reduce((s, i) => s + i.value, 0);
  return (
    <figure className="chart">
      <figcaption>{title}</figcaption>
      <ul className="bar-list" data-testid={testId}>
        {items.map((i) => (
          <li key={i.label}>
            <span className="bar-label mono">{i.label}</span>
            <span className="bar-track" aria-hidden="true">
              <span className="bar-fill" style={{ width: `${(i.value / max) * 100}%` }} />
            </span>
            <span className="bar-value">
              {fmt(i.value)}
              <span className="muted small"> ({total > 0 ? pct(i.value / total) : '—'})</span>
            </span>
          </li>
        ))}
      </ul>
    </figure>
  );
}

/** A share as a percentage, never rounded up to 100 % (99.96 % shows as 99.9 %). */
export function pct(r: number): string {
  if (r >= 1) return '100%';
  if (r <= 0) return '0%';
  return `${(Math.floor(r * 1000) / 10).toFixed(1)}%`;
}

/** Milliseconds with sensible precision. */
export function ms(v: number): string {
  if (v === 0) return '0 ms';
  if (v >= 1000) return `${(v / 1000).toFixed(v >= 10_000 ? 1 : 2)} s`;
  if (v >= 100) return `${Math.round(v)} ms`;
  if (v >= 10) return `${v.toFixed(1)} ms`;
  return `${v.toFixed(2)} ms`;
}

const capitalise = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);
