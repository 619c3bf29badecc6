// GET /metrics over HTTP after known traffic (test/helpers/metering-traffic.ts): the text parses with
// parse-prometheus-text-format and with a strict 0.0.4 line parser, and its counters match the traffic exactly —
// requests by network/method/outcome, latency histogram counts, limit refusals, upstream health and latency, active
// keys. No key or JWT appears in it. Access: loopback only by default, a Bearer token when configured, 404 when off.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startService, type RunningService } from '../src/gateway/server/index.js';
import { LIMITS, runTraffic, type Traffic } from './helpers/metering-traffic.js';
import { byLabels, histograms, parsePrometheusTextFormat, strictParse } from './helpers/prometheus.js';
import { deadUrl, startStubNode, type StubNode } from './helpers/stub-node.js';

let stub: StubNode;
let dead: string;
const services: RunningService[] = [];
const dirs: string[] = [];

async function gate(extra: object = {}): Promise<RunningService> {
  const dataDir = mkdtempSync(join(tmpdir(), 'rpcgate-prom-'));
  dirs.push(dataDir);
  const svc = await startService({
    port: 0,
    logLevel: 'silent',
    dataDir,
    devKey: false,
    limits: LIMITS,
    networks: { mainnet: { upstreams: [stub.url] }, testnet: { upstreams: [dead] } },
    ...extra,
  });
  services.push(svc);
  return svc;
}

const hostPort = (u: string) => new URL(u).host;

beforeAll(async () => {
  stub = await startStubNode();
  dead = await deadUrl();
});

afterAll(async () => {
  await Promise.all(services.map((s) => s.stop()));
  await stub?.close();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe('/metrics after known traffic', () => {
  let svc: RunningService;
  let t: Traffic;
  let text: string;
  beforeAll(async () => {
    svc = await gate();
    t = await runTraffic(svc, (c, w) => expect(c, w).toBe(true));
    const res = await fetch(`${svc.url}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    text = await res.text();
  });

  it('parses (package parser and strict parser); requests_total by network, method and outcome equals the traffic', () => {
    const families = new Map(parsePrometheusTextFormat(text).map((f) => [f.name, f]));
    const req = families.get('rpcgate_requests_total')!;
    expect(req.type).toBe('COUNTER');
    const got: Record<string, number> = {};
    for (const m of req.metrics) got[`${m.labels!.network}|${m.labels!.method}|${m.labels!.outcome}`] = Number(m.value);
    expect(got).toEqual(t.prometheus);

    const { types, samples } = strictParse(text);
    expect(types.get('rpcgate_request_duration_seconds')).toBe('histogram');
    expect(types.get('rpcgate_upstream_duration_seconds')).toBe('histogram');
    // Latency histograms: one observation per call, per (network, method).
    const perSeries: Record<string, number> = {};
    for (const [k, n] of Object.entries(t.prometheus)) {
      const [network, method] = k.split('|');
      perSeries[`${network}|${method}`] = (perSeries[`${network}|${method}`] ?? 0) + n;
    }
    const durations = histograms(samples, 'rpcgate_request_duration_seconds');
    const counts: Record<string, number> = {};
    for (const h of durations.values()) {
      counts[`${h.labels.network}|${h.labels.method}`] = h.count;
      expect(h.sum).toBeGreaterThan(0);
    }
    expect(counts).toEqual(perSeries);
  });

  it('limit refusals, upstream health and latency, active keys', () => {
    const { samples } = strictParse(text);
    expect(byLabels(samples, 'rpcgate_limit_refusals_total')).toEqual({ 'network=mainnet,period=day': 3 });
    expect(byLabels(samples, 'rpcgate_upstream_up')).toEqual({
      [`network=mainnet,upstream=${hostPort(stub.url)}`]: 1,
      [`network=testnet,upstream=${hostPort(dead)}`]: 0,
    });
    // One observation per upstream HTTP request that got an answer (coalesced batches are one request).
    const up = [...histograms(samples, 'rpcgate_upstream_duration_seconds').values()];
    expect(up.map((h) => [h.labels, h.count])).toEqual([
      [{ network: 'mainnet', upstream: hostPort(stub.url) }, svc.pools.get('mainnet')!.stats.requests],
    ]);
    expect(byLabels(samples, 'rpcgate_active_keys')).toEqual({ 'kind=account': 3, 'kind=static': 0 });
    expect(byLabels(samples, 'rpcgate_usage_dropped_total')).toEqual({ '': 0 });
    // Process metrics are there too (prefixed).
    expect(samples.some((s) => s.name === 'rpcgate_process_cpu_seconds_total')).toBe(true);
  });

  it('carries no key, JWT or upstream path', () => {
    for (const secret of t.secrets) expect(text.includes(secret)).toBe(false);
    expect(text.includes(`${stub.url}/`)).toBe(false);
  });

  it('counts live: another call shows up in the next scrape', async () => {
    const before = byLabels(strictParse(text).samples, 'rpcgate_requests_total')[
      'method=other,network=mainnet,outcome=auth'
    ];
    await fetch(`${svc.url}/mainnet/${'y2'.repeat(16)}`, { method: 'POST', body: '{}' });
    const after = byLabels(
      strictParse(await (await fetch(`${svc.url}/metrics`)).text()).samples,
      'rpcgate_requests_total',
    )['method=other,network=mainnet,outcome=auth'];
    expect(after).toBe(before + 1);
  });
});

describe('/metrics access', () => {
  it('default: loopback clients only, never through a proxy header; not a node API call', async () => {
    const svc = await gate();
    expect((await fetch(`${svc.url}/metrics`)).status).toBe(200);
    for (const h of [
      { 'x-forwarded-for': '203.0.113.9' },
      { forwarded: 'for=203.0.113.9' },
      { 'x-real-ip': '203.0.113.9' },
    ] as Record<string, string>[]) {
      expect((await fetch(`${svc.url}/metrics`, { headers: h })).status).toBe(403);
    }
    expect((await fetch(`${svc.url}/metrics`, { method: 'POST' })).status).toBe(405);
    const text = await (await fetch(`${svc.url}/metrics`)).text();
    expect(text).not.toMatch(/^rpcgate_requests_total\{/m); // scrapes are not metered calls
  });

  it('with a token: Bearer required (401 otherwise, also from loopback)', async () => {
    const token = 'metrics-token-0123456789abcdef';
    const svc = await gate({ metrics: { enabled: true, token } });
    const no = await fetch(`${svc.url}/metrics`);
    expect([no.status, no.headers.get('www-authenticate')]).toEqual([401, 'Bearer realm="metrics"']);
    expect((await fetch(`${svc.url}/metrics`, { headers: { authorization: `Bearer ${token}x` } })).status).toBe(401);
    const ok = await fetch(`${svc.url}/metrics`, {
      headers: { authorization: `Bearer ${token}`, 'x-forwarded-for': '203.0.113.9' },
    });
    expect(ok.status).toBe(200);
    expect(await ok.text()).toMatch(/^# HELP rpcgate_requests_total /m);
  });

  it('disabled: 404', async () => {
    const svc = await gate({ metrics: { enabled: false } });
    expect((await fetch(`${svc.url}/metrics`)).status).toBe(404);
  });
});
