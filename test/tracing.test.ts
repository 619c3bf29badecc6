// Traces (issue 25 item 4): a real rpcgate process with OTEL_EXPORTER_OTLP_ENDPOINT pointed at an OTLP/HTTP receiver
// this test runs itself (node:http, the exporter's JSON), in front of a dead upstream and a stand-in node that records
// the `traceparent` it is sent. Calls — single with the client's traceparent (first upstream refused, retried on the
// second), a cache hit, a batch, a node error, a bad key — and then the spans: names, parent/child, attributes
// (method, network, key id and never the key, cache hit, the upstream's redacted URL), and the node saw the same trace.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newNetworkKey, startRpcgateChild, type RpcgateChild } from './helpers/rpcgate-child.js';
import { deadUrl, startStubNode, type StubNode } from './helpers/stub-node.js';
import { Raw } from './helpers/ws-client.js';
import { tracing, tracingWanted } from '../src/gateway/telemetry/index.js';
import { startService } from '../src/gateway/server/service.js';

type AnyValue = { stringValue?: string; intValue?: number | string; boolValue?: boolean; doubleValue?: number };
interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  startTimeUnixNano: string;
  endTimeUnixNano: string;
  kind: number;
  attributes?: { key: string; value: AnyValue }[];
  status?: { code?: number; message?: string };
  links?: { traceId: string; spanId: string }[];
}
interface Received {
  service: string | undefined;
  span: OtlpSpan;
  attrs: Record<string, string | number | boolean | undefined>;
}

function value(v: AnyValue): string | number | boolean | undefined {
  if (v.stringValue !== undefined) return v.stringValue;
  if (v.intValue !== undefined) return Number(v.intValue);
  if (v.boolValue !== undefined) return v.boolValue;
  return v.doubleValue;
}

/** An OTLP/HTTP trace receiver: POST /v1/traces with the JSON encoding of ExportTraceServiceRequest. */
function startReceiver(): Promise<{ url: string; spans: Received[]; contentTypes: string[]; close(): Promise<void> }> {
  const spans: Received[] = [];
  const contentTypes: string[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (req.method !== 'POST' || req.url !== '/v1/traces') {
        res.writeHead(404).end();
        return;
      }
      contentTypes.push(String(req.headers['content-type']));
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
        resourceSpans: {
          resource?: { attributes?: { key: string; value: AnyValue }[] };
          scopeSpans: { spans: OtlpSpan[] }[];
        }[];
      };
      for (const rs of body.resourceSpans) {
        const service = rs.resource?.attributes?.find((a) => a.key === 'service.name')?.value.stringValue;
        for (const ss of rs.scopeSpans)
          for (const span of ss.spans)
            spans.push({
              service,
              span,
              attrs: Object.fromEntries((span.attributes ?? []).map((a) => [a.key, value(a.value)])),
            });
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  return new Promise((ok) =>
    server.listen(0, '127.0.0.1', () =>
      ok({
        url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
        spans,
        contentTypes,
        close: () => new Promise<void>((r) => server.close(() => r())),
      }),
    ),
  );
}

const CLIENT_TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const CLIENT_SPAN = '00f067aa0ba902b7';
const SPAN_KIND_SERVER = 2;
const SPAN_KIND_CLIENT = 3;
const STATUS_ERROR = 2;

describe('OpenTelemetry traces over OTLP/HTTP (issue 25 item 4)', () => {
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let node: StubNode;
  let child: RpcgateChild | undefined;
  let dataDir: string;
  let key: string;
  let keyId: string;
  let dead: string;

  async function post(url: string, body: unknown, headers: Record<string, string> = {}) {
    const res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify(body),
    });
    return { status: res.status, json: (await res.json()) as unknown };
  }

  beforeAll(async () => {
    receiver = await startReceiver();
    node = await startStubNode();
    dead = await deadUrl();
    dataDir = mkdtempSync(join(tmpdir(), 'rpcgate-tracing-'));
    child = await startRpcgateChild(
      {
        port: 0,
        logLevel: 'warn',
        dataDir,
        devKey: false,
        // The dead one first: the first call's first upstream request is refused, and it is retried on the node.
        networks: { mainnet: { upstreams: [dead, node.url] } },
        // Head polls every 250 ms: they outlive the calls that started them, and must not join those calls' traces.
        cache: { pollIntervalMs: 250 },
      },
      {
        OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
        OTEL_SERVICE_NAME: 'rpcgate-under-test',
        OTEL_BSP_SCHEDULE_DELAY: '100',
      },
    );
    ({ key, keyId } = await newNetworkKey(child.url, 'mainnet'));
    const url = `${child.url}/mainnet/${key}`;

    // 1. Single call continuing the client's trace.
    const first = await post(
      url,
      { jsonrpc: '2.0', id: 1, method: 'eth_chainId', params: [] },
      { traceparent: `00-${CLIENT_TRACE}-${CLIENT_SPAN}-01` },
    );
    expect(first.json).toMatchObject({ result: '0x1' });
    // 2. The same call again: a cache hit.
    expect((await post(url, { jsonrpc: '2.0', id: 2, method: 'eth_chainId', params: [] })).json).toMatchObject({
      result: '0x1',
    });
    // 3. A batch of two.
    const batch = await post(url, [
      { jsonrpc: '2.0', id: 3, method: 'net_version', params: [] },
      { jsonrpc: '2.0', id: 4, method: 'eth_gasPrice', params: [] },
    ]);
    expect(batch.json).toHaveLength(2);
    // 4. A node error.
    const failing = await post(url, {
      jsonrpc: '2.0',
      id: 5,
      method: 'eth_call',
      params: [{ to: '0x0000000000000000000000000000000000000001', data: '0x' }, 'latest'],
    });
    expect(failing.json).toMatchObject({ error: { code: -32000 } });
    // 5. Over a WebSocket: each call a trace of its own.
    const ws = await Raw.open(`${child.url.replace('http', 'ws')}/mainnet/${key}`);
    expect(
      await ws.call('eth_getTransactionCount', ['0x0000000000000000000000000000000000000002', 'latest']),
    ).toMatchObject({ result: '0x0' });
    ws.socket.close();
    // 6. A bad key: refused at access.
    const refused = await post(`${child.url}/mainnet/notakey0000000000000000000000000`, {
      jsonrpc: '2.0',
      id: 6,
      method: 'eth_chainId',
      params: [],
    });
    expect(refused.status).toBe(401);
    await new Promise((r) => setTimeout(r, 1500)); // several head polls after the last call
    // A graceful stop flushes what the batch processor still holds.
    await child.stop();
    child = undefined;
  }, 90_000);

  afterAll(async () => {
    await child?.stop();
    await node?.close();
    await receiver?.close();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  const named = (name: string) => receiver.spans.filter((s) => s.span.name === name);
  const inTrace = (traceId: string) => receiver.spans.filter((s) => s.span.traceId === traceId);
  const childrenOf = (span: OtlpSpan) =>
    receiver.spans.filter((s) => s.span.traceId === span.traceId && s.span.parentSpanId === span.spanId);

  it('exports over OTLP/HTTP JSON with the service name from OTEL_SERVICE_NAME', () => {
    expect(receiver.spans.length).toBeGreaterThan(0);
    expect(receiver.contentTypes.every((c) => c.startsWith('application/json'))).toBe(true);
    expect(new Set(receiver.spans.map((s) => s.service))).toEqual(new Set(['rpcgate-under-test']));
  });

  it('continues the client traceparent: request → access, limits, call → cache → upstream per attempt; the node saw the trace', () => {
    const trace = inTrace(CLIENT_TRACE);
    const request = trace.find((s) => s.span.name === 'rpcgate.request');
    expect(request, JSON.stringify(receiver.spans.map((s) => s.span.name))).toBeDefined();
    expect(request!.span.parentSpanId).toBe(CLIENT_SPAN);
    expect(request!.span.kind).toBe(SPAN_KIND_SERVER);
    expect(request!.attrs).toMatchObject({
      'rpcgate.network': 'mainnet',
      'rpcgate.key.id': keyId,
      'http.response.status_code': 200,
    });
    const kids = childrenOf(request!.span);
    expect(kids.map((k) => k.span.name).sort()).toEqual([
      'rpcgate.access',
      'rpcgate.call eth_chainId',
      'rpcgate.limits',
    ]);
    expect(kids.find((k) => k.span.name === 'rpcgate.access')!.attrs).toMatchObject({
      'rpcgate.access.allowed': true,
      'rpcgate.key.id': keyId,
    });
    expect(kids.find((k) => k.span.name === 'rpcgate.limits')!.attrs).toMatchObject({
      'rpcgate.limits.allowed': true,
      'rpcgate.limits.calls': 1,
    });
    const call = kids.find((k) => k.span.name === 'rpcgate.call eth_chainId')!;
    expect(call.attrs).toMatchObject({
      'rpc.method': 'eth_chainId',
      'rpcgate.network': 'mainnet',
      'rpcgate.cache.hit': false,
    });
    const cache = childrenOf(call.span);
    expect(cache.map((c) => c.span.name)).toEqual(['rpcgate.cache']);
    expect(cache[0].attrs['rpcgate.cache.hit']).toBe(false);
    // Two upstream requests carried eth_chainId: refused by the dead one, answered by the node on the retry. (The
    // cache's head poll, which this first call started, is in the trace too: its eth_getBlockByNumber requests.)
    const upstream = childrenOf(cache[0].span).filter((s) => s.span.name === 'rpcgate.upstream');
    const carrying = upstream.filter((s) => String(s.attrs['rpc.method']).split(',').includes('eth_chainId'));
    expect(carrying, JSON.stringify(upstream.map((u) => u.attrs))).toHaveLength(2);
    const [refusedAttempt, answered] = carrying.sort(
      (a, b) => Number(a.attrs['rpcgate.upstream.attempt']) - Number(b.attrs['rpcgate.upstream.attempt']),
    );
    expect(refusedAttempt.span.kind).toBe(SPAN_KIND_CLIENT);
    expect(refusedAttempt.attrs).toMatchObject({
      'rpcgate.upstream.url': dead,
      'rpcgate.upstream.attempt': 1,
      'rpcgate.upstream.error': 'connect',
    });
    expect(refusedAttempt.span.status?.code).toBe(STATUS_ERROR);
    expect(answered.attrs).toMatchObject({
      'rpcgate.upstream.url': node.url,
      'rpcgate.upstream.attempt': 2,
      'rpcgate.upstream.calls': 1,
      'rpc.method': 'eth_chainId',
    });
    expect(answered.span.status?.code).not.toBe(STATUS_ERROR);
    // The node got the upstream span's context: same trace, the answered attempt as parent.
    expect(node.traceparents()).toContain(`00-${CLIENT_TRACE}-${answered.span.spanId}-01`);
  });

  it('no span starts under a parent that had already ended (background polls start no spans of their own)', () => {
    const byId = new Map(receiver.spans.map((s) => [s.span.spanId, s.span]));
    // 1 ms of slack: the SDK stamps a span's start from Date.now() (whole milliseconds) and its end from the
    // performance clock, per span, so a sub-millisecond child (a cache hit) can read up to 1 ms after its parent's end.
    // A span started from a leaked context (a later poll) starts many milliseconds after its parent ended.
    const CLOCK_SLACK_NS = 1_000_000n;
    const late = receiver.spans.filter((s) => {
      const parent = s.span.parentSpanId ? byId.get(s.span.parentSpanId) : undefined;
      return parent !== undefined && BigInt(s.span.startTimeUnixNano) > BigInt(parent.endTimeUnixNano) + CLOCK_SLACK_NS;
    });
    expect(late.map((s) => `${s.span.name} ${JSON.stringify(s.attrs)}`)).toEqual([]);
  });

  it('a cache hit: a cache span with hit=true and no upstream span in its trace', () => {
    const hits = named('rpcgate.cache').filter((s) => s.attrs['rpcgate.cache.hit'] === true);
    expect(hits).toHaveLength(1);
    const trace = inTrace(hits[0].span.traceId);
    expect(trace.some((s) => s.span.name === 'rpcgate.upstream')).toBe(false);
    expect(trace.find((s) => s.span.name === 'rpcgate.call eth_chainId')!.attrs['rpcgate.cache.hit']).toBe(true);
    expect(hits[0].span.traceId).not.toBe(CLIENT_TRACE); // no traceparent from the client: a new trace
  });

  it('a batch: one call span per item under one request span, and the node saw that trace', () => {
    const gas = named('rpcgate.call eth_gasPrice');
    expect(gas).toHaveLength(1);
    const request = inTrace(gas[0].span.traceId).find((s) => s.span.name === 'rpcgate.request')!;
    expect(gas[0].span.parentSpanId).toBe(request.span.spanId);
    const calls = childrenOf(request.span).filter((s) => s.span.name.startsWith('rpcgate.call '));
    expect(calls.map((c) => c.attrs['rpc.method']).sort()).toEqual(['eth_gasPrice', 'net_version']);
    expect(childrenOf(request.span).find((s) => s.span.name === 'rpcgate.limits')!.attrs['rpcgate.limits.calls']).toBe(
      2,
    );
    const upstream = inTrace(request.span.traceId).filter((s) => s.span.name === 'rpcgate.upstream');
    expect(upstream.length).toBeGreaterThan(0);
    for (const u of upstream) expect(u.attrs['rpcgate.upstream.url']).toBe(node.url);
    expect(node.traceparents().some((t) => t?.split('-')[1] === request.span.traceId)).toBe(true);
  });

  it('a WebSocket call: its call span is the root of its own trace, its cache and upstream spans under it', () => {
    const calls = named('rpcgate.call eth_getTransactionCount');
    expect(calls).toHaveLength(1);
    expect(calls[0].span.parentSpanId ?? '').toBe('');
    expect(calls[0].attrs['rpcgate.network']).toBe('mainnet');
    const upstream = inTrace(calls[0].span.traceId).filter((s) => s.span.name === 'rpcgate.upstream');
    expect(upstream.length).toBeGreaterThan(0);
    const cache = childrenOf(calls[0].span);
    expect(cache.map((c) => c.span.name)).toEqual(['rpcgate.cache']);
    expect(upstream.every((u) => u.span.parentSpanId === cache[0].span.spanId)).toBe(true);
    expect(node.traceparents().some((t) => t?.split('-')[1] === calls[0].span.traceId)).toBe(true);
  });

  it('a node error: the call span carries the error and its code', () => {
    const calls = named('rpcgate.call eth_call');
    expect(calls).toHaveLength(1);
    expect(calls[0].span.status?.code).toBe(STATUS_ERROR);
    expect(calls[0].attrs['rpc.jsonrpc.error_code']).toBe(-32000);
  });

  it('a bad key: the request span says 401 and access refused, and nothing ran', () => {
    const refusals = named('rpcgate.access').filter((s) => s.attrs['rpcgate.access.allowed'] === false);
    expect(refusals).toHaveLength(1);
    const trace = inTrace(refusals[0].span.traceId);
    expect(trace.map((s) => s.span.name).sort()).toEqual(['rpcgate.access', 'rpcgate.request']);
    expect(trace.find((s) => s.span.name === 'rpcgate.request')!.attrs['http.response.status_code']).toBe(401);
  });

  it('never exports a key, in any attribute', () => {
    const text = JSON.stringify(receiver.spans);
    expect(text).not.toContain(key);
    expect(text).not.toContain('notakey0000000000000000000000000');
  });

  it('on only with an OTLP endpoint, and off with OTEL_SDK_DISABLED', () => {
    expect(tracingWanted({})).toBe(false);
    expect(tracingWanted({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318' })).toBe(true);
    expect(tracingWanted({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://127.0.0.1:4318/v1/traces' })).toBe(true);
    expect(tracingWanted({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318', OTEL_SDK_DISABLED: 'true' })).toBe(
      false,
    );
  });

  it('off (no OTLP endpoint): no tracer, and no traceparent reaches the node', async () => {
    for (const k of ['OTEL_EXPORTER_OTLP_ENDPOINT', 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT']) delete process.env[k];
    const plain = await startStubNode();
    const dir = mkdtempSync(join(tmpdir(), 'rpcgate-tracing-off-'));
    const svc = await startService({
      port: 0,
      logLevel: 'silent',
      devKey: true,
      dataDir: dir,
      networks: { mainnet: { upstreams: [plain.url] } },
    });
    try {
      expect(tracing.tracer).toBeUndefined();
      const r = await post(
        svc.urls.mainnet.B,
        { jsonrpc: '2.0', id: 1, method: 'eth_blockNumber', params: [] },
        { traceparent: `00-${CLIENT_TRACE}-${CLIENT_SPAN}-01` },
      );
      expect(r.json).toMatchObject({ result: '0x10' });
      expect(plain.traceparents().length).toBeGreaterThan(0);
      expect(plain.traceparents().every((t) => t === undefined)).toBe(true);
    } finally {
      await svc.stop();
      await plain.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
