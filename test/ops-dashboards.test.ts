// Operators' dashboards (issue 25 item 5): the Grafana dashboard (ops/grafana/rpcgate.json) and the Prometheus alert
// rules (ops/prometheus/alerts.yml) name only metrics a running rpcgate exports. A service is started (stand-in node,
// a few calls so the histograms and labelled counters have samples), /metrics is scraped, and every metric name in
// every PromQL expression must be a family of that scrape — `_bucket` of a histogram, `_sum` / `_count` of a histogram
// or summary, otherwise the family itself. The rules file must be well-formed Prometheus rules (YAML, unique alert
// names, durations, severities, templates naming labels the expression keeps).
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startService, type RunningService } from '../src/gateway/server/service.js';
import { startStubNode, type StubNode } from './helpers/stub-node.js';
import { haveRedisServer, ownRedis } from './helpers/redis-server.js';

const HAVE_REDIS = haveRedisServer();
if (!HAVE_REDIS && process.env.CI) throw new Error('CI is set but redis-server is not installed');
if (!HAVE_REDIS)
  console.warn('[ops-dashboards] redis-server not found: the quota-backend case SKIPPED (required when CI is set)');

const ROOT = join(import.meta.dirname, '..');
const DASHBOARD = join(ROOT, 'ops/grafana/rpcgate.json');
const ALERTS = join(ROOT, 'ops/prometheus/alerts.yml');

interface Family {
  type: string;
  /** Label names seen on its samples. */
  labels: Set<string>;
}

/** Families of a Prometheus text scrape: `# TYPE` lines, and the label names of each family's samples. */
function families(text: string): Map<string, Family> {
  const out = new Map<string, Family>();
  for (const line of text.split('\n')) {
    const t = /^# TYPE (\S+) (\S+)$/.exec(line);
    if (t) out.set(t[1], { type: t[2], labels: new Set() });
  }
  for (const line of text.split('\n')) {
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{([^}]*)\})? /.exec(line);
    if (!m) continue;
    const fam = out.get(m[1]) ?? out.get(m[1].replace(/_(bucket|sum|count)$/, ''));
    if (fam && m[2]) for (const l of m[2].matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="/g)) fam.labels.add(l[1]);
  }
  return out;
}

/** The family a metric name in a query reads, or undefined when the scrape has none. */
function familyOf(name: string, fams: Map<string, Family>): Family | undefined {
  const own = fams.get(name);
  if (own !== undefined && own.type !== 'histogram' && own.type !== 'summary') return own;
  const m = /^(.*)_(bucket|sum|count)$/.exec(name);
  if (m === null) return undefined;
  const base = fams.get(m[1]);
  if (base === undefined) return undefined;
  if (m[2] === 'bucket') return base.type === 'histogram' ? base : undefined;
  return base.type === 'histogram' || base.type === 'summary' ? base : undefined;
}

/** Metric names in a PromQL expression (rpcgate's all start with `rpcgate_`; label values in quotes are skipped). */
function metricNames(expr: string): string[] {
  const bare = expr.replace(/"(?:[^"\\]|\\.)*"/g, '""');
  return [...bare.matchAll(/\brpcgate_[a-zA-Z0-9_:]*/g)].map((m) => m[0]);
}

function balanced(expr: string): boolean {
  const pairs: Record<string, string> = { ')': '(', ']': '[', '}': '{' };
  const stack: string[] = [];
  for (const ch of expr.replace(/"(?:[^"\\]|\\.)*"/g, '""')) {
    if (ch === '(' || ch === '[' || ch === '{') stack.push(ch);
    else if (ch in pairs && stack.pop() !== pairs[ch]) return false;
  }
  return stack.length === 0;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

describe('operators: Grafana dashboard and Prometheus alert rules (issue 25 item 5)', () => {
  let node: StubNode;
  let svc: RunningService;
  let dataDir: string;
  let fams: Map<string, Family>;

  beforeAll(async () => {
    node = await startStubNode();
    dataDir = mkdtempSync(join(tmpdir(), 'rpcgate-ops-'));
    svc = await startService({
      port: 0,
      logLevel: 'silent',
      devKey: true,
      dataDir,
      networks: { mainnet: { upstreams: [node.url] } },
    });
    const url = svc.urls.mainnet.B;
    const call = (method: string, params: unknown[] = []) =>
      fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
      }).then((r) => r.json());
    await call('eth_chainId');
    await call('eth_chainId'); // a cache hit
    await call('eth_blockNumber');
    await call('eth_call', [{ to: '0x0000000000000000000000000000000000000001', data: '0x' }, 'latest']); // node error
    await fetch(`${svc.url}/mainnet/not-a-key`, { method: 'POST', body: '{}' }); // an own refusal (key)
    const res = await fetch(`${svc.url}/metrics`);
    expect(res.status).toBe(200);
    fams = families(await res.text());
  }, 60_000);

  afterAll(async () => {
    await svc?.stop();
    await node?.close();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  it('the scrape parses into families (sanity: histograms and counters are there)', () => {
    expect(fams.get('rpcgate_request_duration_seconds')?.type).toBe('histogram');
    expect(fams.get('rpcgate_requests_total')?.type).toBe('counter');
    expect(familyOf('rpcgate_request_duration_seconds_bucket', fams)).toBeDefined();
    expect(familyOf('rpcgate_requests_total_bucket', fams)).toBeUndefined(); // a counter has no buckets
    expect(familyOf('rpcgate_no_such_metric', fams)).toBeUndefined();
    expect(fams.get('rpcgate_backend_up')?.labels.has('backend')).toBe(true);
  });

  it('every metric of the Grafana dashboard exists in /metrics', () => {
    const dash = JSON.parse(readFileSync(DASHBOARD, 'utf8')) as Json;
    expect(dash.uid).toBe('rpcgate-overview');
    expect(typeof dash.schemaVersion).toBe('number');
    const vars = dash.templating.list as Json[];
    expect(vars.map((v) => v.name)).toEqual(['datasource', 'network']);
    const exprs: string[] = [vars[1].definition];
    const ids = new Set<number>();
    const panels = dash.panels as Json[];
    for (const p of panels) {
      expect(ids.has(p.id), `panel id ${p.id} twice`).toBe(false);
      ids.add(p.id);
      expect(p.gridPos.x + p.gridPos.w).toBeLessThanOrEqual(24);
      if (p.type === 'row') continue;
      expect(p.datasource).toEqual({ type: 'prometheus', uid: '${datasource}' });
      expect(p.targets.length, p.title).toBeGreaterThan(0);
      for (const t of p.targets) {
        expect(typeof t.refId).toBe('string');
        exprs.push(t.expr);
      }
    }
    const titles = panels.map((p) => p.title as string).join(' | ');
    for (const what of [
      'Request rate',
      'Errors by code',
      'p50',
      'Cache hit ratio',
      'Upstream health',
      'Circuit',
      'Backends',
      'Request log',
      'Open sockets',
    ])
      expect(titles).toContain(what);
    const missing: string[] = [];
    for (const e of exprs) {
      expect(balanced(e), e).toBe(true);
      const names = metricNames(e);
      expect(names.length, `no rpcgate metric in: ${e}`).toBeGreaterThan(0);
      for (const n of names) if (familyOf(n, fams) === undefined) missing.push(n);
    }
    expect(missing).toEqual([]);
  });

  it('the alert rules are well-formed and every metric they name exists in /metrics', () => {
    const doc = parse(readFileSync(ALERTS, 'utf8'), { uniqueKeys: true, strict: true }) as Json;
    expect(Object.keys(doc)).toEqual(['groups']);
    const alerts = new Set<string>();
    const missing: string[] = [];
    for (const g of doc.groups as Json[]) {
      expect(typeof g.name).toBe('string');
      expect(Array.isArray(g.rules) && g.rules.length > 0).toBe(true);
      for (const r of g.rules as Json[]) {
        expect(Object.keys(r).sort()).toEqual(['alert', 'annotations', 'expr', 'for', 'labels']);
        expect(r.alert).toMatch(/^[A-Z][A-Za-z0-9]+$/);
        expect(alerts.has(r.alert), `${r.alert} twice`).toBe(false);
        alerts.add(r.alert);
        expect(r.for).toMatch(/^\d+[smhdwy]$/);
        expect(['warning', 'critical']).toContain(r.labels.severity);
        expect(typeof r.annotations.summary).toBe('string');
        const expr = r.expr as string;
        expect(balanced(expr), r.alert).toBe(true);
        const names = metricNames(expr);
        expect(names.length, r.alert).toBeGreaterThan(0);
        for (const n of names) if (familyOf(n, fams) === undefined) missing.push(`${r.alert}: ${n}`);
        // Templates name only labels the expression keeps: its `by (…)` labels, or (no aggregation) the metric's own.
        const kept = new Set<string>(['instance', 'job']);
        const bys = [...expr.matchAll(/\bby \(([^)]*)\)/g)].flatMap((m) => m[1].split(',').map((s) => s.trim()));
        if (bys.length > 0) for (const l of bys) kept.add(l);
        else for (const n of names) for (const l of familyOf(n, fams)?.labels ?? []) kept.add(l);
        const text = JSON.stringify(r.annotations);
        for (const m of text.matchAll(/\$labels\.([a-zA-Z_][a-zA-Z0-9_]*)/g))
          expect(kept.has(m[1]), `${r.alert} uses $labels.${m[1]}, not kept by its expression`).toBe(true);
      }
    }
    expect(missing).toEqual([]);
    // What the issue asks the rules to cover.
    for (const a of [
      'RpcgateUpstreamDown',
      'RpcgateHighErrorRate',
      'RpcgateQuotaBackendDown',
      'RpcgateCacheHitRatioFall',
    ])
      expect(alerts.has(a), a).toBe(true);
  });

  it.skipIf(!HAVE_REDIS)(
    'the quota backend alert reads a gauge that follows Redis: rpcgate_backend_up{backend="redis-limits"} 1 → 0 when it dies → 1 again',
    { timeout: 60_000 },
    async () => {
      const redis = await ownRedis();
      const dir = mkdtempSync(join(tmpdir(), 'rpcgate-ops-redis-'));
      const gate = await startService({
        port: 0,
        logLevel: 'silent',
        devKey: true,
        dataDir: dir,
        redisUrl: redis.url,
        redisPrefix: `rpcgate-ops-${process.pid}-${Date.now()}`,
        redis: { commandTimeoutMs: 300, maxReconnectDelayMs: 200 },
        networks: { mainnet: { upstreams: [node.url] } },
      });
      const limitsUp = async () => {
        const text = await (await fetch(`${gate.url}/metrics`)).text();
        const m = /^rpcgate_backend_up\{backend="redis-limits"\} (\d+)$/m.exec(text);
        return m === null ? undefined : Number(m[1]);
      };
      const until = async (want: number) => {
        const end = Date.now() + 15_000;
        while ((await limitsUp()) !== want) {
          if (Date.now() > end) throw new Error(`rpcgate_backend_up{backend="redis-limits"} never became ${want}`);
          await new Promise((r) => setTimeout(r, 100));
        }
      };
      try {
        await until(1);
        expect(
          (await (await fetch(`${gate.url}/metrics`)).text()).match(/^rpcgate_backend_up\{backend="store"\} 1$/m),
        ).not.toBeNull();
        await redis.kill();
        await until(0);
        await redis.start();
        await until(1);
      } finally {
        await gate.stop();
        await redis.kill();
        rmSync(dir, { recursive: true, force: true });
      }
    },
  );
});
