// OpenTelemetry traces (issue 25 item 4), with the official JS SDK: one span per node API request (`rpcgate.request`,
// continuing the client's W3C `traceparent`), and under it `rpcgate.access` (key → principal), `rpcgate.limits` (the
// admission hook), per forwarded call `rpcgate.call <method>` with `rpcgate.cache` (when the network caches the
// method) and `rpcgate.upstream` per request to a node (each retry, hedge or split its own span), whose context goes to
// the node as `traceparent` (HTTP upstreams; a WebSocket message has no headers). A request the pool coalesced with
// calls of other traces is one upstream span: parented by its first call, linked to the others.
//
// On when OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is set (and OTEL_SDK_DISABLED is not
// true, OTEL_TRACES_EXPORTER not `none`): spans go over OTLP/HTTP (JSON) in batches (the BatchSpanProcessor and the
// exporter read the standard OTEL_BSP_* / OTEL_EXPORTER_OTLP_* variables; the sampler OTEL_TRACES_SAMPLER, default
// parent-based always-on); service.name from OTEL_SERVICE_NAME (default `rpcgate`). Off, `tracing.tracer` is
// undefined and every hook on the hot path is one property read: no span, no context, no AsyncLocalStorage.
// One provider per process, shared by the services in it (counted), flushed and shut down when the last one stops.
import {
  type Attributes,
  type Context,
  type Link,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  type TextMapGetter,
  type Tracer,
  context,
  propagation,
  trace,
} from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BatchSpanProcessor, NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { ATTR_SERVICE_NAME, ATTR_SERVICE_VERSION } from '@opentelemetry/semantic-conventions';
import type { IncomingHttpHeaders } from 'node:http';

export type { Span } from '@opentelemetry/api';

/** The process's tracer while tracing is on; undefined otherwise (the hot path's only check). */
export const tracing: { tracer: Tracer | undefined } = { tracer: undefined };

let provider: NodeTracerProvider | undefined;
let users = 0;

/** Whether the environment asks for traces (the standard OpenTelemetry variables). */
export function tracingWanted(env: NodeJS.ProcessEnv = process.env): boolean {
  if ((env.OTEL_SDK_DISABLED ?? '').trim().toLowerCase() === 'true') return false;
  if ((env.OTEL_TRACES_EXPORTER ?? '').trim().toLowerCase() === 'none') return false;
  return Boolean(env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim() || env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim());
}

/** Starts tracing when the environment asks for it (once per process); returns the stop (flush + shut down), which
 *  the service runs last. */
export function startTracing(version: string, env: NodeJS.ProcessEnv = process.env): () => Promise<void> {
  if (!tracingWanted(env)) return async () => {};
  if (users++ === 0) {
    provider = new NodeTracerProvider({
      resource: resourceFromAttributes({
        [ATTR_SERVICE_NAME]: env.OTEL_SERVICE_NAME?.trim() || 'rpcgate',
        [ATTR_SERVICE_VERSION]: version,
      }),
      spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter())],
    });
    // AsyncLocalStorage context (a call's span reaches the cache and the pool through awaits) and W3C propagation.
    provider.register({ propagator: new W3CTraceContextPropagator() });
    tracing.tracer = provider.getTracer('rpcgate', version);
  }
  let stopped = false;
  return async () => {
    if (stopped) return;
    stopped = true;
    if (--users > 0) return;
    const p = provider;
    provider = undefined;
    tracing.tracer = undefined;
    try {
      await p?.shutdown(); // flushes what is queued
    } finally {
      trace.disable();
      context.disable();
      propagation.disable();
    }
  };
}

const headerGetter: TextMapGetter<IncomingHttpHeaders> = {
  keys: (h) => Object.keys(h),
  get: (h, key) => h[key],
};

/** Wall-clock ms of a performance.now() reading (spans take the request's arrival as their start). */
function wallMs(perfMs: number): number {
  return performance.timeOrigin + perfMs;
}

/** The request's span: a child of the client's `traceparent` when it sent one. */
export function startRequestSpan(
  tracer: Tracer,
  headers: IncomingHttpHeaders,
  t0: number,
  attributes: Attributes,
): Span {
  const parent = propagation.extract(ROOT_CONTEXT, headers, headerGetter);
  return tracer.startSpan('rpcgate.request', { kind: SpanKind.SERVER, startTime: wallMs(t0), attributes }, parent);
}

/** A finished step under `parent` (e.g. `rpcgate.access`, which is synchronous): from `t0` (performance.now()) to now. */
export function stepSpan(tracer: Tracer, name: string, parent: Span, t0: number, attributes: Attributes): void {
  tracer.startSpan(name, { startTime: wallMs(t0), attributes }, trace.setSpan(ROOT_CONTEXT, parent)).end();
}

/** Ends a span with an error status. */
export function failSpan(span: Span, err: unknown): void {
  const e = err as { message?: string; code?: number };
  if (typeof e?.code === 'number') span.setAttribute('rpc.jsonrpc.error_code', e.code);
  span.setStatus({ code: SpanStatusCode.ERROR, message: e?.message ?? String(err) });
}

/** Runs `fn` inside a new span (child of `parent`, else of the active context) and ends it when its result settles;
 *  `done` may add attributes from the result. */
export function inSpan<T>(
  tracer: Tracer,
  name: string,
  parent: Span | undefined,
  attributes: Attributes,
  fn: () => T | Promise<T>,
  done?: (span: Span, result: T) => void,
): T | Promise<T> {
  const base = parent === undefined ? context.active() : trace.setSpan(context.active(), parent);
  const span = tracer.startSpan(name, { attributes }, base);
  const ok = (r: T) => {
    done?.(span, r);
    span.end();
    return r;
  };
  const fail = (e: unknown): never => {
    failSpan(span, e);
    span.end();
    throw e;
  };
  let r: T | Promise<T>;
  try {
    r = context.with(trace.setSpan(base, span), fn);
  } catch (e) {
    return fail(e);
  }
  return r instanceof Promise ? r.then(ok, fail) : ok(r);
}

/** The active context, for work that starts later (the pool queues calls before a batch is sent). */
export function activeContext(): Context {
  return context.active();
}

/** A span for one request to an upstream: parented by the first call's context, linked to the other calls'. */
export function startUpstreamSpan(
  tracer: Tracer,
  contexts: readonly (Context | undefined)[],
  attributes: Attributes,
): Span {
  const parent = contexts.find((c) => c !== undefined) ?? ROOT_CONTEXT;
  const first = trace.getSpanContext(parent);
  let links: Link[] | undefined;
  for (const c of contexts) {
    const sc = c === undefined ? undefined : trace.getSpanContext(c);
    if (sc === undefined || sc === first || (first !== undefined && sc.spanId === first.spanId)) continue;
    (links ??= []).push({ context: sc });
  }
  return tracer.startSpan('rpcgate.upstream', { kind: SpanKind.CLIENT, attributes, links }, parent);
}

/** The W3C `traceparent` of a span (sent to the node). */
export function traceparentOf(span: Span): string {
  const carrier: Record<string, string> = {};
  propagation.inject(trace.setSpan(ROOT_CONTEXT, span), carrier);
  return carrier.traceparent;
}

/** Who a request acts for, as span attributes: ids only, never a key (a static key shows by its configured name or
 *  the short prefix the logs use). */
export function principalAttributes(
  p:
    | { kind: 'app'; appId: string; userId: string }
    | { kind: 'network-key'; keyId: string; userId: string }
    | { kind: 'static'; id: string }
    | undefined,
): Attributes {
  if (p === undefined) return {};
  switch (p.kind) {
    case 'app':
      return { 'rpcgate.principal.kind': 'app', 'rpcgate.app.id': p.appId, 'rpcgate.user.id': p.userId };
    case 'network-key':
      return { 'rpcgate.principal.kind': 'key', 'rpcgate.key.id': p.keyId, 'rpcgate.user.id': p.userId };
    default:
      return { 'rpcgate.principal.kind': 'static', 'rpcgate.key.name': p.id };
  }
}

/** Ends a request's span with the HTTP status it was answered with. */
export function endRequestSpan(span: Span, status: number): void {
  span.setAttribute('http.response.status_code', status);
  if (status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
  span.end();
}

/** The active context when it holds a span still recording (a traced call in flight), else undefined. Background
 *  work (head polls, subscription feeds) keeps the context of the call that first started its timers; once that call
 *  has ended its span no longer records, and the polls start no spans of their own. */
export function callTrace(): Context | undefined {
  return liveTrace(context.active());
}

/** `c` while its span still records (the call has not ended), else undefined. A call queued for a batch may have
 *  ended by the time the batch leaves (a head poll a call started but did not wait for): that request is not its. */
export function liveTrace(c: Context | undefined): Context | undefined {
  return c !== undefined && trace.getSpan(c)?.isRecording() === true ? c : undefined;
}
