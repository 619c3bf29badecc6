// The upstream pool against small local node:http stand-in nodes: coalescing into batches, mapping answers back
// by id (also reordered), node errors passed through, down/slow upstreams, failover, recovery and dedupe — the last
// two decided by the methods' meaning in the node contract (x-gateway idempotent / retryable), fail closed without it.
import { createServer, type Server } from 'node:http';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { defaults, type UpstreamConfig } from '../src/gateway/config/config.js';
import { RawResult } from '../src/toolkit/rpc/engine.js';
import { RpcError } from '../src/toolkit/rpc/errors.js';
import { UpstreamPool, type UpstreamMethodPolicy } from '../src/gateway/upstream/index.js';
import { meaningTable } from '../src/gateway/method-meaning.js';
import { methods as nodeMethods } from '../generated/node/methods.js';
import { splitResponse } from '../src/gateway/upstream/split.js';

interface Req {
  jsonrpc: string;
  id: number;
  method: string;
  params: unknown[];
}
type Answer = (body: Req | Req[], raw: string) => { status?: number; body: unknown; delayMs?: number } | undefined;

interface StandIn {
  url: string;
  /** Every HTTP request body received, parsed. */
  requests: (Req | Req[])[];
  answer: Answer;
  close(): Promise<void>;
}

/** A node stand-in: by default echoes `params[0]` as the result of every call (batch or single). */
async function standIn(answer?: Answer): Promise<StandIn> {
  const s: StandIn = { url: '', requests: [], answer: answer ?? (() => undefined), close: async () => undefined };
  const echo = (r: Req) => ({ jsonrpc: '2.0', id: r.id, result: r.params[0] ?? r.method });
  const server: Server = createServer((req, res) => {
    let raw = '';
    req.setEncoding('utf8').on('data', (d: string) => (raw += d));
    req.on('end', () => {
      const body = JSON.parse(raw) as Req | Req[];
      s.requests.push(body);
      const custom = s.answer(body, raw);
      const reply = custom ?? { body: Array.isArray(body) ? body.map(echo) : echo(body) };
      const send = () => {
        if (res.destroyed) return;
        res.writeHead(reply.status ?? 200, { 'content-type': 'application/json' });
        res.end(typeof reply.body === 'string' ? reply.body : JSON.stringify(reply.body));
      };
      if (reply.delayMs) setTimeout(send, reply.delayMs).unref();
      else send();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  s.url = `http://127.0.0.1:${(server.address() as { port: number }).port}/`;
  s.close = () =>
    new Promise<void>((r) => {
      server.closeAllConnections();
      server.close(() => r());
    });
  return s;
}

/** A URL nothing listens on (a port we bound and released). */
async function deadUrl(): Promise<string> {
  const s = await standIn();
  const url = s.url;
  await s.close();
  return url;
}

const cfg = (over: Partial<UpstreamConfig> = {}): UpstreamConfig => ({ ...defaults.upstream, probeIntervalMs: 50, ...over });
const callCount = (reqs: (Req | Req[])[]) => reqs.reduce((n, r) => n + (Array.isArray(r) ? r.length : 1), 0);

const cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (cleanup.length) await cleanup.pop()!();
});
/** The node contract's meaning of every method, as the service passes it. */
const NODE_MEANING = meaningTable(nodeMethods);
/** Parsed results unless `raw` (the service's default: RawResult, the node's bytes). */
function pool(urls: string[], over?: Partial<UpstreamConfig>, raw = false, methods: ReadonlyMap<string, UpstreamMethodPolicy> | undefined = NODE_MEANING): UpstreamPool {
  const p = new UpstreamPool({ network: 'mainnet', urls, config: cfg(over), raw, methods });
  cleanup.push(() => p.close());
  return p;
}
async function node(answer?: Answer): Promise<StandIn> {
  const s = await standIn(answer);
  cleanup.push(() => s.close());
  return s;
}
async function rejection(p: Promise<unknown>): Promise<RpcError> {
  const e = await p.then(
    () => {
      throw new Error('expected a rejection');
    },
    (err: unknown) => err,
  );
  expect(e).toBeInstanceOf(RpcError);
  return e as RpcError;
}

describe('coalescing', () => {
  it('sends N concurrent calls as fewer upstream requests and maps every answer back', async () => {
    const n = await node();
    const p = pool([n.url]);
    const addrs = Array.from({ length: 50 }, (_, i) => `0x${i.toString(16).padStart(40, '0')}`);
    const results = await Promise.all(addrs.map((a) => p.call('eth_getBalance', [a, 'latest'])));
    expect(results).toEqual(addrs);
    expect(callCount(n.requests)).toBe(50);
    expect(n.requests.length).toBeLessThan(50);
    expect(Array.isArray(n.requests[0])).toBe(true);
    expect(p.stats.requests).toBe(n.requests.length);
  });

  it('maps answers by id when the node reorders a batch', async () => {
    const n = await node((body) =>
      Array.isArray(body) ? { body: [...body].reverse().map((r) => ({ jsonrpc: '2.0', id: r.id, result: `${r.method}:${String(r.params[0])}` })) } : undefined,
    );
    const p = pool([n.url]);
    const out = await Promise.all([1, 2, 3, 4, 5].map((i) => p.call('eth_getBlockByNumber', [`0x${i}`, false])));
    expect(out).toEqual([1, 2, 3, 4, 5].map((i) => `eth_getBlockByNumber:0x${i}`));
    expect(n.requests.length).toBe(1);
  });

  it('respects maxBatch', async () => {
    const n = await node();
    const p = pool([n.url], { maxBatch: 4 });
    await Promise.all(Array.from({ length: 10 }, (_, i) => p.call('eth_getBalance', [`0x${i}`, 'latest'])));
    expect(n.requests.length).toBe(3);
    expect(n.requests.map((r) => (Array.isArray(r) ? r.length : 1))).toEqual([4, 4, 2]);
  });

  it('with coalesce off, one upstream request per call', async () => {
    const n = await node();
    const p = pool([n.url], { coalesce: false });
    const out = await Promise.all(['0x1', '0x2', '0x2', '0x3'].map((a) => p.call('eth_getBalance', [a, 'latest'])));
    expect(out).toEqual(['0x1', '0x2', '0x2', '0x3']);
    expect(n.requests.length).toBe(4);
    expect(n.requests.every((r) => !Array.isArray(r))).toBe(true);
  });

  it('a call that gets no answer in the batch fails alone', async () => {
    const n = await node((body) => (Array.isArray(body) ? { body: body.filter((r) => r.params[0] !== 'lost').map((r) => ({ jsonrpc: '2.0', id: r.id, result: r.params[0] })) } : undefined));
    const p = pool([n.url]);
    const [a, b] = await Promise.allSettled([p.call('eth_getCode', ['kept', 'latest']), p.call('eth_getCode', ['lost', 'latest'])]);
    expect(a).toEqual({ status: 'fulfilled', value: 'kept' });
    expect(b.status).toBe('rejected');
    const err = (b as PromiseRejectedResult).reason as RpcError;
    expect(err.code).toBe(-32042);
    expect(err.httpStatus).toBe(502);
  });
});

describe('raw results (the node\'s bytes, not re-serialised)', () => {
  it('splits a reordered batch with tricky strings and hands each result back verbatim', async () => {
    const results: Record<string, string> = {
      a: '{"hash":"0x1","note":"brace } bracket ] quote \\" comma , colon :","nested":[{"x":[1,2,{"y":null}]}]}',
      b: '"0xabc"',
      c: 'null',
      d: '[ "0x1" , "0x2" ]',
      e: 'true',
      f: '-1.5e3',
    };
    const n = await node((body) =>
      Array.isArray(body)
        ? { body: '[\n ' + [...body].reverse().map((r) => `{ "id" : ${r.id}, "jsonrpc":"2.0", "result" : ${results[r.params[0] as string]} }`).join(' ,\n ') + ' ]' }
        : undefined,
    );
    const p = pool([n.url], {}, true);
    const keys = Object.keys(results);
    const out = await Promise.all(keys.map((k) => p.call('eth_getBlockByHash', [k, false])));
    expect(out.map((r) => (r as RawResult).json)).toEqual(keys.map((k) => results[k]));
    for (const r of out) expect(r).toBeInstanceOf(RawResult);
    expect(out.map((r) => JSON.parse((r as RawResult).json))).toEqual(keys.map((k) => JSON.parse(results[k])));
  });

  it('node errors and missing answers in the raw path', async () => {
    const n = await node((body) =>
      Array.isArray(body)
        ? { body: JSON.stringify(body.filter((r) => r.params[0] !== 'lost').map((r) => (r.params[0] === 'bad' ? { jsonrpc: '2.0', id: r.id, error: { code: -32000, message: 'missing trie node' } } : { jsonrpc: '2.0', id: r.id, result: r.params[0] }))) }
        : undefined,
    );
    const p = pool([n.url], {}, true);
    const [ok, bad, lost] = await Promise.allSettled(['ok', 'bad', 'lost'].map((x) => p.call('eth_getBlockByNumber', [x, false])));
    expect((ok as PromiseFulfilledResult<RawResult>).value.json).toBe('"ok"');
    expect(((bad as PromiseRejectedResult).reason as RpcError).code).toBe(-32000);
    expect(((bad as PromiseRejectedResult).reason as RpcError).message).toBe('missing trie node');
    expect(((lost as PromiseRejectedResult).reason as RpcError).code).toBe(-32042);
  });

  it('falls back to parsing for non-numeric ids or odd shapes, and still answers', async () => {
    const n = await node((body) => (Array.isArray(body) ? undefined : { body: { jsonrpc: '2.0', id: null, error: { code: -32600, message: 'nope' } } }));
    const p = pool([n.url], { coalesce: false }, true);
    const err = await rejection(p.call('eth_blockNumber', []));
    expect([err.code, err.message]).toEqual([-32600, 'nope']);
  });
});

describe('dedupe', () => {
  it('identical concurrent reads share one upstream call', async () => {
    const n = await node();
    const p = pool([n.url]);
    const out = await Promise.all(Array.from({ length: 10 }, () => p.call('eth_getBalance', ['0xaa', 'latest'])));
    expect(out).toEqual(Array(10).fill('0xaa'));
    expect(callCount(n.requests)).toBe(1);
    expect(p.stats.deduped).toBe(9);
    // Not cached beyond the flight: a later identical call goes upstream again.
    await p.call('eth_getBalance', ['0xaa', 'latest']);
    expect(callCount(n.requests)).toBe(2);
  });

  it('never dedupes eth_sendRawTransaction (not idempotent in the contract)', async () => {
    expect(NODE_MEANING.get('eth_sendRawTransaction')).toMatchObject({ idempotent: false, retryable: false });
    const n = await node();
    const p = pool([n.url]);
    await Promise.all([p.call('eth_sendRawTransaction', ['0x01']), p.call('eth_sendRawTransaction', ['0x01'])]);
    expect(callCount(n.requests)).toBe(2);
    expect(p.stats.deduped).toBe(0);
  });

  it('follows the meaning it is given, not the method name: a made-up idempotent method is deduped, a read marked not idempotent is not', async () => {
    const n = await node();
    const p = pool([n.url], undefined, false, new Map([
      ['x_made_up', { idempotent: true, retryable: true }],
      ['eth_getBalance', { idempotent: false, retryable: true }],
    ]));
    await Promise.all([p.call('x_made_up', ['0x1']), p.call('x_made_up', ['0x1'])]);
    expect([callCount(n.requests), p.stats.deduped]).toEqual([1, 1]);
    await Promise.all([p.call('eth_getBalance', ['0xaa', 'latest']), p.call('eth_getBalance', ['0xaa', 'latest'])]);
    expect([callCount(n.requests), p.stats.deduped]).toEqual([3, 1]);
  });

  it('fails closed: a method with no meaning (unknown, or no table at all) is never deduped', async () => {
    const n = await node();
    const known = pool([n.url]);
    await Promise.all([known.call('eth_newFilter', [{}]), known.call('eth_newFilter', [{}])]);
    expect(callCount(n.requests)).toBe(2);
    const bare = new UpstreamPool({ network: 'mainnet', urls: [n.url], config: cfg(), raw: false });
    cleanup.push(() => bare.close());
    await Promise.all([bare.call('eth_getBalance', ['0xaa', 'latest']), bare.call('eth_getBalance', ['0xaa', 'latest'])]);
    expect(callCount(n.requests)).toBe(4);
    expect(known.stats.deduped + bare.stats.deduped).toBe(0);
  });
});

describe('node errors', () => {
  it('pass through unchanged with HTTP 200, per call', async () => {
    const one = (r: Req) => (r.method === 'eth_call' ? { jsonrpc: '2.0', id: r.id, error: { code: 3, message: 'execution reverted', data: '0x08c379a0' } } : { jsonrpc: '2.0', id: r.id, result: '0x1' });
    const n = await node((body) => ({ body: Array.isArray(body) ? body.map(one) : one(body) }));
    const p = pool([n.url]);
    const [ok, bad] = await Promise.allSettled([p.call('eth_blockNumber', []), p.call('eth_call', [{ to: '0x00' }, 'latest'])]);
    expect(ok).toEqual({ status: 'fulfilled', value: '0x1' });
    const err = (bad as PromiseRejectedResult).reason as RpcError;
    expect(err).toBeInstanceOf(RpcError);
    expect({ code: err.code, message: err.message, data: err.data, http: err.httpStatus }).toEqual({ code: 3, message: 'execution reverted', data: '0x08c379a0', http: 200 });
  });

  it('a single error object answering a whole batch: the batch is split and each call answered on its own; later batches are smaller', async () => {
    const n = await node((body) => (Array.isArray(body) && body.length > 2 ? { body: { jsonrpc: '2.0', id: null, error: { code: -32005, message: 'batch too large' } } } : undefined));
    const p = pool([n.url]);
    const four = ['0x1', '0x2', '0x3', '0x4'];
    expect(await Promise.all(four.map((a) => p.call('eth_getBalance', [a, 'latest'])))).toEqual(four);
    expect(n.requests.map((r) => (Array.isArray(r) ? r.length : 1))).toEqual([4, 1, 1, 1, 1]);
    expect(p.stats.splits).toBe(4);
    // The node took no batch of 4: the pool now sends it at most 2 at a time.
    n.requests.length = 0;
    expect(await Promise.all(four.map((a) => p.call('eth_getCode', [a, 'latest'])))).toEqual(four);
    expect(n.requests.map((r) => (Array.isArray(r) ? r.length : 1))).toEqual([2, 2]);
  });

  it('a node answering invalid JSON gives 502 -32042', async () => {
    const n = await node(() => ({ body: 'not json' }));
    const p = pool([n.url]);
    const err = await rejection(p.call('eth_blockNumber', []));
    expect([err.code, err.httpStatus]).toEqual([-32042, 502]);
  });
});

describe('health and failover', () => {
  it('upstream down → -32042 with network and detail; once its circuit opens, 503 (no healthy upstream) until it is back', async () => {
    const p = pool([await deadUrl()], { circuitBreaker: { failureThreshold: 1 } });
    const first = await rejection(p.call('eth_blockNumber', []));
    expect(first.code).toBe(-32042);
    expect([502, 503]).toContain(first.httpStatus);
    expect(first.data).toMatchObject({ source: 'rpcgate', reason: 'upstream', network: 'mainnet' });
    expect(String((first.data as { detail: string }).detail)).toMatch(/connect/);
    const second = await rejection(p.call('eth_blockNumber', []));
    expect([second.code, second.httpStatus]).toEqual([-32042, 503]);
    expect(p.status()[0].healthy).toBe(false);
  });

  it('slow upstream → 504 -32043', async () => {
    const n = await node(() => ({ body: { jsonrpc: '2.0', id: 0, result: '0x1' }, delayMs: 3000 }));
    const p = pool([n.url], { requestTimeoutMs: 150, coalesce: false });
    const err = await rejection(p.call('eth_blockNumber', []));
    expect([err.code, err.httpStatus]).toEqual([-32043, 504]);
    expect(err.data).toMatchObject({ source: 'rpcgate', reason: 'timeout', network: 'mainnet' });
  });

  it('fails over to a second upstream for reads', async () => {
    const good = await node();
    const p = pool([await deadUrl(), good.url]);
    const out = await Promise.all(Array.from({ length: 6 }, (_, i) => p.call('eth_getBalance', [`0x${i}`, 'latest'])));
    expect(out).toEqual(['0x0', '0x1', '0x2', '0x3', '0x4', '0x5']);
    const st = p.status();
    expect(st.filter((s) => s.healthy).length).toBeGreaterThanOrEqual(1);
    expect(good.requests.length).toBeGreaterThan(0);
  });

  it('fails over on HTTP 5xx, and a probe brings the upstream back', async () => {
    let failing = true;
    const flaky = await node(() => (failing ? { status: 503, body: 'busy' } : undefined));
    const good = await node();
    const p = pool([flaky.url, good.url], { circuitBreaker: { failureThreshold: 1 } });
    expect(await p.call('eth_getBalance', ['0x1', 'latest'])).toBe('0x1');
    expect(p.status()[0].healthy).toBe(false);
    failing = false;
    await vi.waitFor(() => expect(p.status()[0].healthy).toBe(true), { timeout: 5000, interval: 20 });
  });

  it('does not resend eth_sendRawTransaction to another upstream once a node may have received it', async () => {
    const broken = await node(() => ({ status: 500, body: 'oops' }));
    const good = await node();
    const p = pool([broken.url, good.url], { coalesce: false });
    const err = await rejection(p.call('eth_sendRawTransaction', ['0x02']));
    expect(err.code).toBe(-32042);
    expect(broken.requests.length).toBe(1);
    expect(good.requests.length).toBe(0);
  });

  it('resends by meaning: retryable → the next upstream answers; not retryable or unknown → fails after one attempt', async () => {
    const table = new Map([
      ['x_retry', { idempotent: false, retryable: true }],
      ['eth_getBalance', { idempotent: true, retryable: false }],
    ]);
    const broken = await node(() => ({ status: 500, body: 'oops' }));
    const good = await node();
    for (const [method, resent] of [['x_retry', true], ['eth_getBalance', false], ['x_unknown', false]] as const) {
      const p = pool([broken.url, good.url], { coalesce: false }, false, table);
      const before = [broken.requests.length, good.requests.length];
      const out = p.call(method, ['0x7', 'latest']);
      if (resent) expect(await out).toBe('0x7');
      else expect((await rejection(out)).code).toBe(-32042);
      expect([broken.requests.length - before[0], good.requests.length - before[1]]).toEqual([1, resent ? 1 : 0]);
      await p.close();
    }
  });
});

describe('splitResponse', () => {
  // Deterministic pseudo-random JSON values with the characters that matter to a scanner.
  let seed = 42;
  const rnd = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2 ** 31), seed % n);
  const chars = ['a', '"', '\\', '{', '}', '[', ']', ',', ':', ' ', 'é', '\n', '\u2028', '😀'];
  function value(depth: number): unknown {
    switch (rnd(depth > 3 ? 4 : 6)) {
      case 0: return Array.from({ length: rnd(6) }, () => chars[rnd(chars.length)]).join('');
      case 1: return rnd(2) ? rnd(100000) - 50000 : rnd(1000) / 7;
      case 2: return [true, false, null][rnd(3)];
      case 3: return `0x${rnd(1e9).toString(16)}`;
      case 4: return Array.from({ length: rnd(4) }, () => value(depth + 1));
      default: return Object.fromEntries(Array.from({ length: rnd(4) }, (_, i) => [`k${i}${chars[rnd(chars.length)]}`, value(depth + 1)]));
    }
  }

  it('agrees with JSON.parse on random batches, compact and indented', () => {
    for (let round = 0; round < 300; round++) {
      const items = Array.from({ length: 1 + rnd(5) }, (_, i) => (rnd(5) === 0 ? { jsonrpc: '2.0', id: i, error: { code: -32000, message: String(value(3)), data: value(2) } } : { jsonrpc: '2.0', result: value(0), id: i }));
      const text = JSON.stringify(items, null, rnd(2) ? 2 : undefined);
      const split = splitResponse(text);
      expect(split, text).toBeDefined();
      expect(split!.length).toBe(items.length);
      for (const it of split!) {
        const orig = items[it.id] as { result?: unknown; error?: unknown };
        if (it.resultStart !== -1) expect(JSON.parse(text.slice(it.resultStart, it.resultEnd))).toEqual(orig.result);
        else expect(JSON.parse(text.slice(it.errorStart, it.errorEnd))).toEqual(orig.error);
      }
    }
  });

  it('refuses what it cannot map: truncated text, string or null ids, both result and error, trailing garbage', () => {
    for (const bad of [
      '[{"jsonrpc":"2.0","id":0,"result":"0x1"}',
      '[{"jsonrpc":"2.0","id":0,"result":"0x1}]',
      '{"jsonrpc":"2.0","id":"0","result":1}',
      '{"jsonrpc":"2.0","id":null,"error":{"code":1,"message":"x"}}',
      '{"jsonrpc":"2.0","id":0,"result":1,"error":{"code":1}}',
      '{"jsonrpc":"2.0","id":0}',
      '{"jsonrpc":"2.0","id":0,"result":1} x',
      'not json',
      '',
    ]) expect(splitResponse(bad), bad).toBeUndefined();
  });
});
