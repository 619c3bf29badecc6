// Prometheus text format (0.0.4) parsing for tests: the parse-prometheus-text-format package (every line valid,
// counters and gauges) and a strict line parser for labelled histograms (the package flattens those), with the
// format's invariants checked (HELP/TYPE once per family, samples typed, buckets ascending and cumulative, +Inf = count).
import { createRequire } from 'node:module';
import { expect } from 'vitest';

// parse-prometheus-text-format ships CommonJS without types.
export type PromFamily = {
  name: string;
  help: string;
  type: string;
  metrics: {
    value?: string;
    labels?: Record<string, string>;
    buckets?: Record<string, string>;
    count?: string;
    sum?: string;
  }[];
};
export const parsePrometheusTextFormat = createRequire(import.meta.url)('parse-prometheus-text-format') as (
  text: string,
) => PromFamily[];

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export function strictParse(text: string): { types: Map<string, string>; samples: Sample[] } {
  const types = new Map<string, string>();
  const helps = new Set<string>();
  const samples: Sample[] = [];
  const NAME = '[a-zA-Z_:][a-zA-Z0-9_:]*';
  const LABEL = '[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\\\\n]|\\\\[\\\\"n])*"';
  const sampleRe = new RegExp(`^(${NAME})(?:\\{((?:${LABEL})(?:,${LABEL})*)?\\})? ([^ ]+)(?: (-?\\d+))?$`);
  expect(text.endsWith('\n')).toBe(true);
  for (const line of text.slice(0, -1).split('\n')) {
    if (line === '') continue;
    let m: RegExpExecArray | null;
    if ((m = /^# HELP (\S+) (.*)$/.exec(line))) {
      expect(helps.has(m[1]), `duplicate HELP ${m[1]}`).toBe(false);
      helps.add(m[1]);
      continue;
    }
    if ((m = /^# TYPE (\S+) (counter|gauge|histogram|summary|untyped)$/.exec(line))) {
      expect(types.has(m[1]), `duplicate TYPE ${m[1]}`).toBe(false);
      types.set(m[1], m[2]);
      continue;
    }
    expect(line.startsWith('#'), `unexpected comment: ${line}`).toBe(false);
    m = sampleRe.exec(line);
    expect(m, `not a sample line: ${line}`).not.toBeNull();
    const [, name, labelText, valueText] = m!;
    const value = valueText === '+Inf' ? Infinity : valueText === '-Inf' ? -Infinity : Number(valueText);
    expect(Number.isNaN(value) && valueText !== 'NaN', `bad value: ${line}`).toBe(false);
    const labels: Record<string, string> = {};
    for (const l of (labelText ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) {
      expect(l[1] in labels, `duplicate label in ${line}`).toBe(false);
      labels[l[1]] = l[2].replace(/\\n/g, '\n').replace(/\\(["\\])/g, '$1');
    }
    const family = types.has(name) ? name : name.replace(/_(bucket|sum|count|total|created)$/, '');
    expect(types.has(family), `sample without TYPE: ${line}`).toBe(true);
    samples.push({ name, labels, value });
  }
  return { types, samples };
}

/** Histogram series of a family by label key (without le), with the format's invariants checked. */
export function histograms(samples: Sample[], family: string) {
  const out = new Map<
    string,
    { labels: Record<string, string>; buckets: [number, number][]; sum: number; count: number }
  >();
  const keyOf = (l: Record<string, string>) =>
    JSON.stringify(
      Object.entries(l)
        .filter(([k]) => k !== 'le')
        .sort(),
    );
  for (const s of samples) {
    if (![`${family}_bucket`, `${family}_sum`, `${family}_count`].includes(s.name)) continue;
    const k = keyOf(s.labels);
    let h = out.get(k);
    if (!h)
      out.set(
        k,
        (h = {
          labels: Object.fromEntries(Object.entries(s.labels).filter(([x]) => x !== 'le')),
          buckets: [],
          sum: NaN,
          count: NaN,
        }),
      );
    if (s.name.endsWith('_bucket')) h.buckets.push([s.labels.le === '+Inf' ? Infinity : Number(s.labels.le), s.value]);
    else if (s.name.endsWith('_sum')) h.sum = s.value;
    else h.count = s.value;
  }
  for (const h of out.values()) {
    for (let i = 1; i < h.buckets.length; i++) {
      expect(h.buckets[i][0]).toBeGreaterThan(h.buckets[i - 1][0]); // le ascending
      expect(h.buckets[i][1]).toBeGreaterThanOrEqual(h.buckets[i - 1][1]); // cumulative
    }
    expect(h.buckets.at(-1)).toEqual([Infinity, h.count]);
  }
  return out;
}

/** Samples of one metric name as "label=value,…" → value (labels sorted), for exact comparisons. */
export function byLabels(samples: Sample[], name: string, pick?: string[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const s of samples) {
    if (s.name !== name) continue;
    const k = Object.entries(s.labels)
      .filter(([l]) => pick === undefined || pick.includes(l))
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([l, v]) => `${l}=${v}`)
      .join(',');
    out[k] = (out[k] ?? 0) + s.value;
  }
  return out;
}
