// A deliberately small JSON-RPC caller for conformance: unlike a client library it must not hide
// envelope mistakes, so it reports what the endpoint actually sent (HTTP status, jsonrpc, id echo).

export type RpcId = number | string;

/** Positional params, or an object by name (OpenRPC `paramStructure: "by-name"`). */
export type RpcParams = unknown[] | Record<string, unknown>;

export interface RpcErrorObject {
  code: number;
  message: string;
  data?: unknown;
}

export interface CallOutcome {
  /** Envelope problems found in the reply (empty when the envelope is correct). */
  envelope: string[];
  /** HTTP status of the reply (0 when the request did not complete). */
  status: number;
  result?: unknown;
  error?: RpcErrorObject;
  /** True when the reply carried a `result` member. */
  hasResult: boolean;
  /** Transport failure (connection refused, timeout, body not JSON). */
  transport?: string;
  ms: number;
}

export interface RpcTransportOptions {
  timeoutMs: number;
  headers?: Record<string, string>;
}

export class RpcTransport {
  private nextId = 1;

  constructor(
    readonly url: string,
    private readonly opts: RpcTransportOptions,
  ) {}

  /** Alternate number and string ids so that both echo paths are exercised. */
  private id(): RpcId {
    const n = this.nextId++;
    return n % 2 === 0 ? `conformance-${n}` : n;
  }

  private async post(body: string): Promise<{ status: number; contentType: string; text: string }> {
    const res = await fetch(this.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...this.opts.headers },
      body,
      signal: AbortSignal.timeout(this.opts.timeoutMs),
    });
    return { status: res.status, contentType: res.headers.get('content-type') ?? '', text: await res.text() };
  }

  /** One call; never throws — every problem ends up in the outcome. */
  async call(method: string, params: RpcParams): Promise<CallOutcome> {
    const id = this.id();
    const started = performance.now();
    let reply: { status: number; contentType: string; text: string };
    try {
      reply = await this.post(JSON.stringify({ jsonrpc: '2.0', id, method, params }));
    } catch (err) {
      return { envelope: [], status: 0, hasResult: false, transport: describe(err), ms: performance.now() - started };
    }
    const ms = performance.now() - started;
    let body: unknown;
    try {
      body = JSON.parse(reply.text);
    } catch {
      return {
        envelope: [],
        status: reply.status,
        hasResult: false,
        transport: `HTTP ${reply.status}: body is not JSON: ${reply.text.slice(0, 120)}`,
        ms,
      };
    }
    const out = checkEnvelope(body, id);
    if (!/^application\/json\b/i.test(reply.contentType)) out.envelope.push(`content-type is "${reply.contentType}"`);
    // Node errors are HTTP 200 by contract; protocol errors may carry 4xx. A result must come with 200.
    if (out.hasResult && reply.status !== 200) out.envelope.push(`HTTP ${reply.status} with a result`);
    return { ...out, status: reply.status, ms };
  }

  /** A batch; returns the parsed array (or a problem). */
  async batch(
    calls: { method: string; params: RpcParams }[],
  ): Promise<{ ids: RpcId[]; replies?: unknown; problem?: string }> {
    const ids = calls.map(() => this.id());
    try {
      const reply = await this.post(JSON.stringify(calls.map((c, i) => ({ jsonrpc: '2.0', id: ids[i], ...c }))));
      return { ids, replies: JSON.parse(reply.text) };
    } catch (err) {
      return { ids, problem: describe(err) };
    }
  }

  /** A body sent as it is (e.g. deliberately invalid JSON); the reply parsed when it is JSON. Never throws. */
  async raw(body: string): Promise<{ status: number; reply?: unknown; problem?: string; ms: number }> {
    const started = performance.now();
    try {
      const r = await this.post(body);
      const ms = performance.now() - started;
      try {
        return { status: r.status, reply: JSON.parse(r.text), ms };
      } catch {
        return { status: r.status, problem: `HTTP ${r.status}: body is not JSON: ${r.text.slice(0, 120)}`, ms };
      }
    } catch (err) {
      return { status: 0, problem: describe(err), ms: performance.now() - started };
    }
  }
}

/** Checks one response object against JSON-RPC 2.0 for the request id that was sent (null: the request could not be
 *  read, e.g. a parse error). */
export function checkEnvelope(body: unknown, id: RpcId | null): Omit<CallOutcome, 'status' | 'ms'> {
  const envelope: string[] = [];
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    return { envelope: ['response is not a JSON object'], hasResult: false };
  }
  const o = body as Record<string, unknown>;
  if (o.jsonrpc !== '2.0') envelope.push(`jsonrpc is ${JSON.stringify(o.jsonrpc)}, not "2.0"`);
  if (o.id !== id) envelope.push(`id ${JSON.stringify(o.id)} does not echo ${JSON.stringify(id)}`);
  const hasResult = 'result' in o;
  const hasError = 'error' in o;
  if (hasResult === hasError) envelope.push('response must have exactly one of result and error');
  let error: RpcErrorObject | undefined;
  if (hasError) {
    const e = o.error as Record<string, unknown> | null;
    if (typeof e !== 'object' || e === null || !Number.isInteger(e.code) || typeof e.message !== 'string') {
      envelope.push('error is not {code: integer, message: string}');
    } else {
      error = { code: e.code as number, message: e.message, ...('data' in e ? { data: e.data } : {}) };
    }
  }
  return { envelope, hasResult, result: o.result, error };
}

export function describe(err: unknown): string {
  if (err instanceof Error) {
    const cause = (err as Error & { cause?: unknown }).cause;
    return cause instanceof Error ? `${err.message}: ${cause.message}` : err.message;
  }
  return String(err);
}
