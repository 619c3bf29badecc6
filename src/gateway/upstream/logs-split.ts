// eth_getLogs over an upstream's range limit (issue 24 item 3), as eRPC's getLogs auto-splitting does: a range wider
// than every fit upstream takes (their learned limits: ./capabilities.ts) is split into chunks of that limit, sent with
// at most `concurrency` in flight, and merged in block order — each chunk's logs are in (blockNumber, logIndex) order
// already, so the merge is the concatenation of the node's own bytes: byte for byte the answer of a node without the
// limit. A refusal of a range no limit was known for teaches the limit (or, naming none, halves the range) and splits;
// a "too many results" refusal bisects the range, down to one block (whose refusal is passed on). The blockHash form,
// `safe`/`finalized` bounds and malformed filters go as they are. rpcgate's own client-facing cap
// (upstream.getLogsMaxBlockRange, ../node-api/logs-range.ts) runs before the pool, so it still applies first.
import { RawResult } from '@rpcgate/toolkit/engine';
import { RpcError } from '@rpcgate/toolkit/errors';
import { upstreamBadResponse } from './errors.js';
import { blockRef, refusalOf } from './capabilities.js';

export interface LogsRange {
  readonly from: number;
  readonly to: number;
}

export interface LogsSplitDeps {
  /** One eth_getLogs through the pool; `range` (numeric bounds, when known) routes it to upstreams that take it. */
  send(paramsJson: string, range: LogsRange | undefined): Promise<unknown>;
  /** The widest range an upstream fit for blocks up to `to` (any block: undefined) takes (Infinity: one has shown no
   *  limit). */
  maxRange(to: number | undefined): number;
  /** The head to resolve `latest` against (only asked when a bound is a head tag). */
  head(): Promise<number>;
  readonly concurrency: number;
  /** The network, named by a bad-response error. */
  readonly network: string;
  /** Counts, for tests and the bench. */
  readonly stats?: { splits: number; chunks: number };
}

const SPLITTABLE_TAGS = new Set(['latest', 'pending', 'earliest']);

/** A bound the splitter can resolve: a number, a head tag, earliest (absent = latest). */
function splittable(v: unknown): boolean {
  return v === undefined || (typeof v === 'string' && (SPLITTABLE_TAGS.has(v) || /^0x[0-9a-fA-F]{1,16}$/.test(v)));
}

/** eth_getLogs(params) through `d`, split where needed. */
export async function getLogsSplit(paramsJson: string, d: LogsSplitDeps): Promise<unknown> {
  let filter: Record<string, unknown> | undefined;
  try {
    const p = JSON.parse(paramsJson) as unknown;
    if (Array.isArray(p) && p.length === 1 && p[0] !== null && typeof p[0] === 'object' && !Array.isArray(p[0]))
      filter = p[0] as Record<string, unknown>;
  } catch {
    // the node answers what it makes of it
  }
  if (
    filter === undefined ||
    filter.blockHash !== undefined ||
    !splittable(filter.fromBlock) ||
    !splittable(filter.toBlock)
  )
    return d.send(paramsJson, undefined);
  const from = blockRef(filter.fromBlock);
  const to = blockRef(filter.toBlock);
  if (from === undefined || to === undefined || (from === 'head' && to === 'head'))
    return d.send(paramsJson, undefined);
  const tagged = from === 'head' || to === 'head';
  let original: string | undefined = paramsJson;
  if (tagged && d.maxRange(undefined) === Number.POSITIVE_INFINITY) {
    // No limit known anywhere: sent as it is (no head lookup on the common path); a range refusal splits it below.
    try {
      return await d.send(paramsJson, undefined);
    } catch (e) {
      if (!(e instanceof RpcError) || refusalOf('eth_getLogs', e) === undefined) throw e;
      original = undefined; // refused as it is: only chunks from here
    }
  }
  const head = tagged ? await d.head() : 0;
  const lo = from === 'head' ? head : from;
  const hi = to === 'head' ? head : to;
  if (!(hi >= lo)) return d.send(paramsJson, undefined);
  const f = filter;
  const limit = limiter(d.concurrency);
  const send = (a: number, b: number, original?: string) =>
    limit(() => d.send(original ?? JSON.stringify([{ ...f, fromBlock: hex(a), toBlock: hex(b) }]), { from: a, to: b }));
  return range(lo, hi, d, send, original);
}

const hex = (n: number) => `0x${n.toString(16)}`;

type Send = (a: number, b: number, original?: string) => Promise<unknown>;

async function range(lo: number, hi: number, d: LogsSplitDeps, send: Send, original?: string): Promise<unknown> {
  const span = hi - lo + 1;
  const max = d.maxRange(hi);
  if (span > max) return chunks(lo, hi, max, d, send);
  try {
    return await send(lo, hi, original);
  } catch (e) {
    if (!(e instanceof RpcError) || span === 1) throw e;
    const r = refusalOf('eth_getLogs', e);
    if (r?.kind === 'logs-range') {
      const learned = d.maxRange(hi);
      return chunks(lo, hi, learned < span ? learned : Math.ceil(span / 2), d, send);
    }
    if (r?.kind === 'logs-results') return chunks(lo, hi, Math.ceil(span / 2), d, send);
    throw e;
  }
}

async function chunks(lo: number, hi: number, size: number, d: LogsSplitDeps, send: Send): Promise<unknown> {
  const step = Math.max(1, Math.floor(size));
  const parts: Promise<unknown>[] = [];
  for (let a = lo; a <= hi; a += step) parts.push(range(a, Math.min(hi, a + step - 1), d, send));
  if (d.stats) {
    d.stats.splits++;
    d.stats.chunks += parts.length;
  }
  return merge(await Promise.all(parts), d.network);
}

/** The chunks' answers as one: the node's bytes concatenated (RawResult), or the parsed lists concatenated. */
function merge(parts: unknown[], network: string): unknown {
  if (parts.every((p) => p instanceof RawResult)) {
    const inner: string[] = [];
    for (const p of parts as RawResult[]) {
      const s = p.json.trim();
      if (!s.startsWith('[') || !s.endsWith(']')) return mergeParsed(parts, network);
      const body = s.slice(1, -1).trim();
      if (body.length > 0) inner.push(body);
    }
    return new RawResult(`[${inner.join(',')}]`);
  }
  return mergeParsed(parts, network);
}

function mergeParsed(parts: unknown[], network: string): unknown[] {
  return parts.flatMap((p) => {
    const v = p instanceof RawResult ? (JSON.parse(p.json) as unknown) : p;
    if (!Array.isArray(v)) throw upstreamBadResponse(network, 'eth_getLogs: a chunk answered no list');
    return v;
  });
}

/** At most `n` of the tasks running at once. */
function limiter(n: number): <T>(task: () => Promise<T>) => Promise<T> {
  let running = 0;
  const waiting: (() => void)[] = [];
  return async (task) => {
    if (running >= n) await new Promise<void>((r) => waiting.push(r));
    running++;
    try {
      return await task();
    } finally {
      running--;
      waiting.shift()?.();
    }
  };
}
