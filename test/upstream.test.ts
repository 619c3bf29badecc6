// The upstream pool against small local node:http stand-in nodes: coalescing into batches, mapping answers back
// by id (also reordered), node errors passed through, down/slow upstreams, failover, recovery and dedupe — the last
// two decided by the methods' meaning in the node contract (x-gateway idempotent / retryable), fail closed without it.
import { createServer, type Server } from 'node:http';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { defaults, type UpstreamConfig } from '../src/gateway/config/config.js';
import { RawResult } from '../packages/toolkit/src/rpc/engine.js';
import { RpcError } from '../packages/toolkit/src/rpc/errors.js';
import { UpstreamPool, type UpstreamMethodPolicy } from '../src/gateway/upstream/index.js';
import { meaningTable } from '../src/gateway/method-meaning.js';
import { methods as nodeMethods } from '../generated/node/methods.js';
import { splitResponse } from '../src/gateway/upstream/split.js';
import { LatencyQuantile } from '../src/gateway/upstream/latency.js';
import { checkLogsRange, guardLogsRange } from '../src/gateway/node-api/logs-range.js';
import { createResponseCaches } from '../src/gateway/cache/index.js';
import { setTimeout as sleep } from 'node:timers/promises';
import { startFaultNode, type FaultNode } from './helpers/fault-node.js';
import { rpcReply } from './helpers/standin-node.js';

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
  /** Requests whose connection closed before the answer was sent (the pool aborted them). */
  aborted: number;
  answer: Answer;
  close(): Promise<void>;
}

/** A node stand-in: by default echoes `params[0]` as the result of every call (batch or single). */
async function standIn(answer?: Answer): Promise<StandIn> {
  const s: StandIn = {
    url: '',
    requests: [],
    aborted: 0,
    answer: answer ?? (() => undefined),
    close: async () => undefined,
  };
  const echo = (r: Req) => ({ jsonrpc: '2.0', id: r.id, result: r.params[0] ?? r.method });
  const server: Server = createServer((req, res) => {
    let raw = '';
    req.setEncoding('utf8').on('data', (d: string) => (raw += d));
    req.on('end', () => {
      const body = JSON.parse(raw) as Req | Req[];
      s.requests.push(body);
      const custom = s.answer(body, raw);
      const reply = custom ?? { body: rpcReply(raw, echo) ?? '' };
      res.on('close', () => {
        if (!res.writableEnded) s.aborted++;
      });
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

// The fleet's head poll off: these tests count every request a node gets (the poll is test/fleet.test.ts's).
const cfg = (over: Partial<UpstreamConfig> = {}): UpstreamConfig => ({
  ...defaults.upstream,
  probeIntervalMs: 50,
  fleet: { headPollMs: 0 },
  ...over,
});
const breaker = (over: Partial<UpstreamConfig['circuitBreaker']>): UpstreamConfig['circuitBreaker'] => ({
  ...defaults.upstream.circuitBreaker,
  ...over,
});
const callCount = (reqs: (Req | Req[])[]) => reqs.reduce((n, r) => n + (Array.isArray(r) ? r.length : 1), 0);

const cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (cleanup.length) await cleanup.pop()!();
});
/** The node contract's meaning of every method, as the service passes it. */
const NODE_MEANING = meaningTable(nodeMethods);
/** Parsed results unless `raw` (the service's default: RawResult, the node's bytes). */
function pool(
  urls: string[],
  over?: Partial<UpstreamConfig>,
  raw = false,
  methods: ReadonlyMap<string, UpstreamMethodPolicy> | undefined = NODE_MEANING,
): UpstreamPool {
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
      Array.isArray(body)
        ? {
            body: [...body]
              .reverse()
              .map((r) => ({ jsonrpc: '2.0', id: r.id, result: `${r.method}:${String(r.params[0])}` })),
          }
        : undefined,
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
    const n = await node((body) =>
      Array.isArray(body)
        ? {
            body: body
              .filter((r) => r.params[0] !== 'lost')
              .map((r) => ({ jsonrpc: '2.0', id: r.id, result: r.params[0] })),
          }
        : undefined,
    );
    const p = pool([n.url]);
    const [a, b] = await Promise.allSettled([
      p.call('eth_getCode', ['kept', 'latest']),
      p.call('eth_getCode', ['lost', 'latest']),
    ]);
    expect(a).toEqual({ status: 'fulfilled', value: 'kept' });
    expect(b.status).toBe('rejected');
    const err = (b as PromiseRejectedResult).reason as RpcError;
    expect(err.code).toBe(-32042);
    expect(err.httpStatus).toBe(502);
  });
});

describe("raw results (the node's bytes, not re-serialised)", () => {
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
        ? {
            body:
              '[\n ' +
              [...body]
                .reverse()
                .map((r) => `{ "id" : ${r.id}, "jsonrpc":"2.0", "result" : ${results[r.params[0] as string]} }`)
                .join(' ,\n ') +
              ' ]',
          }
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
        ? {
            body: JSON.stringify(
              body
                .filter((r) => r.params[0] !== 'lost')
                .map((r) =>
                  r.params[0] === 'bad'
                    ? { jsonrpc: '2.0', id: r.id, error: { code: -32000, message: 'missing trie node' } }
                    : { jsonrpc: '2.0', id: r.id, result: r.params[0] },
                ),
            ),
          }
        : undefined,
    );
    const p = pool([n.url], {}, true);
    const [ok, bad, lost] = await Promise.allSettled(
      ['ok', 'bad', 'lost'].map((x) => p.call('eth_getBlockByNumber', [x, false])),
    );
    expect((ok as PromiseFulfilledResult<RawResult>).value.json).toBe('"ok"');
    expect(((bad as PromiseRejectedResult).reason as RpcError).code).toBe(-32000);
    expect(((bad as PromiseRejectedResult).reason as RpcError).message).toBe('missing trie node');
    expect(((lost as PromiseRejectedResult).reason as RpcError).code).toBe(-32042);
  });

  it('falls back to parsing for non-numeric ids or odd shapes, and still answers', async () => {
    const n = await node((body) =>
      Array.isArray(body)
        ? undefined
        : { body: { jsonrpc: '2.0', id: null, error: { code: -32600, message: 'nope' } } },
    );
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
    const p = pool(
      [n.url],
      undefined,
      false,
      new Map([
        ['x_made_up', { idempotent: true, retryable: true }],
        ['eth_getBalance', { idempotent: false, retryable: true }],
      ]),
    );
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
    await Promise.all([
      bare.call('eth_getBalance', ['0xaa', 'latest']),
      bare.call('eth_getBalance', ['0xaa', 'latest']),
    ]);
    expect(callCount(n.requests)).toBe(4);
    expect(known.stats.deduped + bare.stats.deduped).toBe(0);
  });
});

describe('node errors', () => {
  it('pass through unchanged with HTTP 200, per call', async () => {
    const one = (r: Req) =>
      r.method === 'eth_call'
        ? { jsonrpc: '2.0', id: r.id, error: { code: 3, message: 'execution reverted', data: '0x08c379a0' } }
        : { jsonrpc: '2.0', id: r.id, result: '0x1' };
    const n = await node((body) => ({ body: Array.isArray(body) ? body.map(one) : one(body) }));
    const p = pool([n.url]);
    const [ok, bad] = await Promise.allSettled([
      p.call('eth_blockNumber', []),
      p.call('eth_call', [{ to: '0x00' }, 'latest']),
    ]);
    expect(ok).toEqual({ status: 'fulfilled', value: '0x1' });
    const err = (bad as PromiseRejectedResult).reason as RpcError;
    expect(err).toBeInstanceOf(RpcError);
    expect({ code: err.code, message: err.message, data: err.data, http: err.httpStatus }).toEqual({
      code: 3,
      message: 'execution reverted',
      data: '0x08c379a0',
      http: 200,
    });
  });

  it('a single error object answering a whole batch: the batch is split and each call answered on its own; later batches are smaller', async () => {
    const n = await node((body) =>
      Array.isArray(body) && body.length > 2
        ? { body: { jsonrpc: '2.0', id: null, error: { code: -32005, message: 'batch too large' } } }
        : undefined,
    );
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
    const p = pool([await deadUrl()], { circuitBreaker: breaker({ failureThreshold: 1 }) });
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
    const p = pool([flaky.url, good.url], { circuitBreaker: breaker({ failureThreshold: 1 }) });
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
    for (const [method, resent] of [
      ['x_retry', true],
      ['eth_getBalance', false],
      ['x_unknown', false],
    ] as const) {
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

const echo1 = (r: Req) => ({ jsonrpc: '2.0', id: r.id, result: r.params[0] ?? r.method });
const echoBody = (body: Req | Req[]) => (Array.isArray(body) ? body.map(echo1) : echo1(body));
const has = (body: Req | Req[], test: (r: Req) => boolean) => (Array.isArray(body) ? body.some(test) : test(body));
const classes = (over: {
  light?: Partial<UpstreamConfig['classes']['light']>;
  heavy?: Partial<UpstreamConfig['classes']['heavy']>;
}): UpstreamConfig['classes'] => ({
  light: { ...defaults.upstream.classes.light, ...over.light },
  heavy: { ...defaults.upstream.classes.heavy, ...over.heavy },
});
const p99 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.ceil(xs.length * 0.99) - 1];
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/** `n` eth_blockNumber calls from `conc` sequential callers; their latencies (ms). */
async function blockNumberLatencies(p: UpstreamPool, n: number, conc: number): Promise<number[]> {
  const out: number[] = [];
  let left = n;
  await Promise.all(
    Array.from({ length: conc }, async () => {
      while (left-- > 0) {
        const t0 = performance.now();
        await p.call('eth_blockNumber', []);
        out.push(performance.now() - t0);
      }
    }),
  );
  return out;
}

/** Starts a new eth_getLogs (distinct, so never deduped) every 25 ms until stopped: ~20 in flight at 500 ms each. */
function logsLoad(p: UpstreamPool): { stop(): Promise<void> } {
  let i = 0;
  const pending: Promise<unknown>[] = [];
  const t = setInterval(
    () =>
      pending.push(
        p.call('eth_getLogs', [{ fromBlock: `0x${(i++).toString(16)}`, toBlock: 'latest' }]).catch(() => undefined),
      ),
    25,
  );
  return {
    stop: async () => {
      clearInterval(t);
      await Promise.all(pending);
    },
  };
}

describe('isolation: cost classes, own deadlines, split batches', () => {
  /** A node in its own process (its work does not share this event loop): eth_getLogs (alone or in a batch) takes
   *  500 ms, eth_blockNumber 1 ms. */
  const slowLogsNode = async (): Promise<FaultNode> => {
    const n = await startFaultNode();
    cleanup.push(() => n.kill());
    await n.mode('ok', 0, { eth_getLogs: 500, eth_blockNumber: 1 });
    return n;
  };

  it('head-of-line: the p99 of eth_blockNumber while 500 ms eth_getLogs calls are in flight stays within 2 ms of its p99 alone', async () => {
    const n = await slowLogsNode();
    // Two pools to the same node, measured AT THE SAME TIME: `alone` carries only eth_blockNumber, `loaded` the same
    // eth_blockNumber traffic plus eth_getLogs in flight. The machine's load (2 shared cores) hits both alike, so
    // the difference is the pool's doing.
    const alonePool = pool([n.url]);
    const loadedPool = pool([n.url]);
    await Promise.all([blockNumberLatencies(alonePool, 200, 4), blockNumberLatencies(loadedPool, 200, 4)]); // warm
    const alone: number[] = [];
    const loaded: number[] = [];
    const load = logsLoad(loadedPool);
    await sleep(100);
    // Nine rounds of 500 calls per pool; the median of the rounds' differences decides.
    for (let round = 0; round < 9; round++) {
      const [a, l] = await Promise.all([
        blockNumberLatencies(alonePool, 500, 4),
        blockNumberLatencies(loadedPool, 500, 4),
      ]);
      alone.push(p99(a));
      loaded.push(p99(l));
    }
    await load.stop();
    const diffs = loaded.map((x, i) => x - alone[i]);
    console.log(
      `[head-of-line] eth_blockNumber p99 alone ${alone.map((x) => x.toFixed(2)).join('/')} ms, with eth_getLogs in flight ${loaded.map((x) => x.toFixed(2)).join('/')} ms`,
    );
    expect(median(diffs)).toBeLessThanOrEqual(2);
    expect((await n.seen()).eth_getLogs).toBeGreaterThan(40);
    expect(loadedPool.stats.calls - alonePool.stats.calls).toBeGreaterThan(40);
  }, 90_000);

  it('the same measurement fails when eth_getLogs is (wrongly) declared light: it then shares batches with eth_blockNumber', async () => {
    const n = await slowLogsNode();
    const wrong = new Map(NODE_MEANING);
    wrong.set('eth_getLogs', { ...NODE_MEANING.get('eth_getLogs')!, cost: 'light' });
    // A linger of 5 ms makes batches form as they do under many clients (here the callers are few).
    const p = pool([n.url], { classes: classes({ light: { lingerMs: 5 } }) }, false, wrong);
    const load = logsLoad(p);
    await sleep(50);
    const loaded = p99(await blockNumberLatencies(p, 40, 4));
    await load.stop();
    console.log(`[head-of-line control] eth_getLogs declared light: eth_blockNumber p99 ${loaded.toFixed(1)} ms`);
    expect(loaded).toBeGreaterThan(300);
  }, 60_000);

  it('every call has its own deadline: a slow heavy call times out alone, light calls meanwhile are answered, the node stays in service (issue 14.10)', async () => {
    const n = await node((body) => ({
      body: echoBody(body),
      delayMs: has(body, (r) => r.method === 'eth_getLogs') ? 3000 : 0,
    }));
    const p = pool([n.url], {
      classes: classes({ heavy: { timeoutMs: 200 } }),
      circuitBreaker: breaker({ failureThreshold: 1 }),
    });
    const order: string[] = [];
    const slow = rejection(p.call('eth_getLogs', [{ fromBlock: '0x1' }]).finally(() => order.push('logs')));
    const fast = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        p.call('eth_getBalance', [`0x${i}`, 'latest']).finally(() => order.push('balance')),
      ),
    );
    expect(fast).toEqual(Array.from({ length: 20 }, (_, i) => `0x${i}`));
    const err = await slow;
    expect([err.code, err.httpStatus]).toEqual([-32043, 504]);
    expect(err.data).toMatchObject({ source: 'rpcgate', reason: 'timeout', network: 'mainnet', timeoutMs: 200 });
    expect(order.indexOf('logs')).toBe(20);
    // Even with a failure threshold of 1 the timeout did not take the node out: a timeout opens a circuit only as
    // the second failure in a row or later.
    expect(await p.call('eth_blockNumber', [])).toBe('eth_blockNumber');
    expect(p.status()[0]).toMatchObject({ healthy: true, circuit: 'closed' });
    await vi.waitFor(() => expect(n.aborted).toBe(1)); // the timed-out request was cut, not left running
  });

  it('a light batch held up by one slow call is split after splitAfterMs: the others are answered then, the slow one when its own answer is in', async () => {
    // The whole batch waits for its slow member (as nodes answer a batch at once); the slow call alone takes 300 ms.
    const n = await node((body) => ({
      body: echoBody(body),
      delayMs: has(body, (r) => r.params[0] === 'slow') ? (Array.isArray(body) ? 5000 : 300) : 0,
    }));
    const p = pool([n.url], { classes: classes({ light: { splitAfterMs: 100 } }) });
    const t0 = performance.now();
    const times: Record<string, number> = {};
    const names = ['a', 'b', 'slow', 'c', 'd'];
    const out = await Promise.all(
      names.map((x) => p.call('eth_getCode', [x, 'latest']).then((r) => ((times[x] = performance.now() - t0), r))),
    );
    expect(out).toEqual(names);
    expect(n.requests.map((r) => (Array.isArray(r) ? r.length : 1))).toEqual([5, 1, 1, 1, 1, 1]);
    expect(p.stats.splits).toBe(5);
    for (const x of ['a', 'b', 'c', 'd']) expect(times[x]).toBeLessThan(times.slow);
    expect(times.slow).toBeLessThan(4000); // not the batch's 5 s
    await vi.waitFor(() => expect(n.aborted).toBe(1)); // the batch, once its last call was answered by a single
  });

  it('an answer over maxResponseBytes fails that call only (-32005 response-size); in a batch the others are answered', async () => {
    const big = JSON.stringify('x'.repeat(200_000));
    const one = (r: Req) =>
      r.params[0] === 'big' ? `{"jsonrpc":"2.0","id":${r.id},"result":${big}}` : JSON.stringify(echo1(r));
    const n = await node((body) => ({ body: Array.isArray(body) ? `[${body.map(one).join(',')}]` : one(body) }));
    const p = pool([n.url], { maxResponseBytes: 100_000 }, true);
    const single = await rejection(p.call('eth_getCode', ['big', 'latest']));
    expect([single.code, single.httpStatus]).toEqual([-32005, 200]);
    expect(single.data).toEqual({ source: 'rpcgate', reason: 'response-size', limit: 100_000, network: 'mainnet' });
    const [a, b, c] = await Promise.allSettled(['a', 'big', 'c'].map((x) => p.call('eth_getCode', [x, 'latest'])));
    expect([
      (a as PromiseFulfilledResult<RawResult>).value.json,
      (c as PromiseFulfilledResult<RawResult>).value.json,
    ]).toEqual(['"a"', '"c"']);
    expect(((b as PromiseRejectedResult).reason as RpcError).data).toMatchObject({ reason: 'response-size' });
    expect(p.status()[0].circuit).toBe('closed');
  });

  it('a batch refused with HTTP 413 (no JSON-RPC body) is split and resent; the node is not counted as failing', async () => {
    const n = await node((body) => (Array.isArray(body) ? { status: 413, body: 'Payload Too Large' } : undefined));
    const p = pool([n.url], { circuitBreaker: breaker({ failureThreshold: 1 }) });
    const xs = ['0x1', '0x2', '0x3'];
    expect(await Promise.all(xs.map((x) => p.call('eth_getBalance', [x, 'latest'])))).toEqual(xs);
    expect(n.requests.map((r) => (Array.isArray(r) ? r.length : 1))).toEqual([3, 1, 1, 1]);
    expect(p.status()[0].circuit).toBe('closed');
  });
});

describe('hedging', () => {
  const hedge = (over: Partial<UpstreamConfig['hedge']> = {}): UpstreamConfig['hedge'] => ({
    ...defaults.upstream.hedge,
    ...over,
  });

  it('an idempotent call slower than its method quantile is hedged to the other upstream: the first answer wins, the loser is aborted', async () => {
    // Whichever node gets the call first is slow with it; a second request for the same call is answered at once.
    const seen = new Set<string>();
    const answer: Answer = (body) => {
      const k = JSON.stringify((body as Req).params);
      const first = !seen.has(k);
      seen.add(k);
      return { body: echoBody(body), delayMs: first ? 2000 : 0 };
    };
    const a = await node(answer);
    const b = await node(answer);
    const p = pool([a.url, b.url], { coalesce: false, hedge: hedge({ minDelayMs: 30, maxDelayMs: 30 }) });
    const t0 = performance.now();
    expect(await p.call('eth_getBalance', ['0x5', 'latest'])).toBe('0x5');
    expect(performance.now() - t0).toBeLessThan(1500);
    expect(p.stats.hedges).toBe(1);
    expect([a.requests.length, b.requests.length]).toEqual([1, 1]);
    await vi.waitFor(() => expect(a.aborted + b.aborted).toBe(1));
  });

  it('a slow batch is hedged as ONE batch to the other upstream (not one request per call)', async () => {
    let first = true;
    const answer: Answer = (body) => {
      const slow = Array.isArray(body) && first;
      if (slow) first = false;
      return { body: echoBody(body), delayMs: slow ? 2000 : 0 };
    };
    const a = await node(answer);
    const b = await node(answer);
    const p = pool([a.url, b.url], { hedge: hedge({ minDelayMs: 300, maxDelayMs: 300 }) });
    const xs = ['0x1', '0x2', '0x3', '0x4'];
    expect(await Promise.all(xs.map((x) => p.call('eth_getBalance', [x, 'latest'])))).toEqual(xs);
    expect([...a.requests, ...b.requests].map((r) => (Array.isArray(r) ? r.length : 1))).toEqual([4, 4]);
    expect([p.stats.hedges, p.stats.splits]).toEqual([1, 0]);
    await vi.waitFor(() => expect(a.aborted + b.aborted).toBe(1));
  });

  it('the hedge delay is the method quantile: after fast calls a slow one is hedged long before maxDelayMs', async () => {
    const seen = new Set<string>();
    const answer: Answer = (body) => {
      const r = body as Req;
      const first = r.params[0] === 'slow' && !seen.has('slow');
      if (first) seen.add('slow');
      return { body: echoBody(body), delayMs: first ? 3000 : 1 };
    };
    const a = await node(answer);
    const b = await node(answer);
    const p = pool([a.url, b.url], {
      coalesce: false,
      hedge: hedge({ minDelayMs: 1, maxDelayMs: 2500, minSamples: 20 }),
    });
    for (let i = 0; i < 40; i++) await p.call('eth_getBalance', [`0x${i}`, 'latest']);
    const hedges = p.stats.hedges; // a few of the fast ones were over their own p90 too: that is what the quantile means
    const t0 = performance.now();
    expect(await p.call('eth_getBalance', ['slow', 'latest'])).toBe('slow');
    expect(performance.now() - t0).toBeLessThan(2000);
    expect(p.stats.hedges).toBe(hedges + 1);
  });

  it('the quantile estimator follows the data and forgets old data', () => {
    const q = new LatencyQuantile(0.9, 1000);
    for (let i = 1; i <= 1000; i++) q.observe(i);
    expect(q.value()).toBeGreaterThan(900 * 0.85);
    expect(q.value()).toBeLessThan(900 * 1.2);
    for (let i = 0; i < 5000; i++) q.observe(2);
    expect(q.value()).toBeLessThan(3);
  });

  it('eth_sendRawTransaction is never sent twice: not hedged, not retried after a timeout, a 5xx or a reset; counted on the nodes', async () => {
    let mode: 'slow' | 'http500' | 'reset' = 'slow';
    const answer: Answer = () =>
      mode === 'slow'
        ? { body: { jsonrpc: '2.0', id: 0, result: '0xhash' }, delayMs: 1000 }
        : mode === 'http500'
          ? { status: 500, body: 'oops' }
          : { body: '', delayMs: 99_999 };
    const a = await node(answer);
    const b = await node(answer);
    const p = pool([a.url, b.url], { hedge: hedge({ minDelayMs: 5, maxDelayMs: 5 }), requestTimeoutMs: 300 });
    const sends = () =>
      callCount([...a.requests, ...b.requests].filter((r) => has(r, (x) => x.method === 'eth_sendRawTransaction')));
    expect((await rejection(p.call('eth_sendRawTransaction', ['0x01']))).code).toBe(-32043);
    expect(sends()).toBe(1);
    mode = 'http500';
    expect((await rejection(p.call('eth_sendRawTransaction', ['0x02']))).code).toBe(-32042);
    expect(sends()).toBe(2);
    // The same call made twice by the client is two sends — never deduped into one, never more than one each.
    mode = 'slow';
    await Promise.allSettled([p.call('eth_sendRawTransaction', ['0x03']), p.call('eth_sendRawTransaction', ['0x03'])]);
    expect(sends()).toBe(4);
    expect(p.stats.hedges + p.stats.retries).toBe(0);
  });
});

describe('retries', () => {
  it('a retryable call is retried after a listed node error ("header not found"), not after others; a send never', async () => {
    let lag = 0;
    const one = (r: Req) =>
      r.params[0] === 'lag' && lag++ === 0
        ? { jsonrpc: '2.0', id: r.id, error: { code: -32000, message: 'header not found' } }
        : r.params[0] === 'rev' || r.method === 'eth_sendRawTransaction'
          ? {
              jsonrpc: '2.0',
              id: r.id,
              error: {
                code: -32000,
                message: r.method === 'eth_sendRawTransaction' ? 'header not found' : 'execution reverted',
              },
            }
          : echo1(r);
    const n = await node((body) => ({ body: Array.isArray(body) ? body.map(one) : one(body) }));
    const p = pool([n.url], { coalesce: false });
    expect(await p.call('eth_getBalance', ['lag', 'latest'])).toBe('lag');
    expect([n.requests.length, p.stats.retries]).toEqual([2, 1]);
    expect((await rejection(p.call('eth_getBalance', ['rev', 'latest']))).message).toBe('execution reverted');
    expect(n.requests.length).toBe(3);
    expect((await rejection(p.call('eth_sendRawTransaction', ['0x01']))).message).toBe('header not found');
    expect(n.requests.length).toBe(4);
  });

  it("a provider's -32005 is retried on the other upstream; a retry stops at maxAttempts", async () => {
    let limited = true;
    const answer: Answer = (body) => {
      const r = body as Req;
      return limited
        ? { body: { jsonrpc: '2.0', id: r.id, error: { code: -32005, message: 'rate limited' } } }
        : undefined;
    };
    const a = await node(answer);
    const b = await node(answer);
    const p = pool([a.url, b.url], {
      coalesce: false,
      retry: { ...defaults.upstream.retry, maxAttempts: 3, delayMs: 1 },
    });
    const err = await rejection(p.call('eth_getBalance', ['0x9', 'latest']));
    expect([err.code, err.message]).toEqual([-32005, 'rate limited']);
    expect(a.requests.length + b.requests.length).toBe(3);
    expect(Math.min(a.requests.length, b.requests.length)).toBeGreaterThanOrEqual(1);
    limited = false;
    expect(await p.call('eth_getBalance', ['0x9', 'latest'])).toBe('0x9');
  });
});

describe('circuit breaker', () => {
  it('opens after consecutive failures (503 at once while open), half-opens after probeIntervalMs, a good probe closes it; metrics and onHealth see each state', async () => {
    let down = false;
    const n = await node(() => (down ? { status: 502, body: 'bad gateway' } : undefined));
    const states: number[] = [];
    const health: [boolean, string | undefined][] = [];
    const metrics = {
      observeUpstream: () => undefined,
      setUpstreamHealth: () => undefined,
      setUpstreamCircuit: (_n: string, _u: string | number, s: number) => void states.push(s),
    };
    const p = new UpstreamPool({
      network: 'mainnet',
      urls: [n.url],
      raw: false,
      methods: NODE_MEANING,
      metrics,
      onHealth: (_u, h, r) => void health.push([h, r]),
      config: cfg({
        probeIntervalMs: 100,
        circuitBreaker: breaker({ failureThreshold: 3 }),
        retry: { ...defaults.upstream.retry, maxAttempts: 1 },
      }),
    });
    cleanup.push(() => p.close());
    expect(await p.call('eth_blockNumber', [])).toBe('eth_blockNumber');
    down = true;
    for (let i = 0; i < 3; i++) expect((await rejection(p.call('eth_chainId', []))).httpStatus).toBe(502);
    const before = n.requests.length;
    const open = await rejection(p.call('eth_chainId', []));
    expect([open.code, open.httpStatus]).toEqual([-32042, 503]);
    expect(n.requests.length).toBe(before); // not even tried
    expect(p.status()[0]).toMatchObject({ healthy: false, circuit: 'open' });
    expect(health[0][0]).toBe(false);
    expect(health[0][1]).toMatch(/circuit open: upstream answered HTTP 502/);
    down = false;
    await vi.waitFor(() => expect(p.status()[0].circuit).toBe('closed'), { timeout: 5000, interval: 20 });
    expect(await p.call('eth_chainId', [])).toBe('eth_chainId');
    expect(states[0]).toBe(0);
    expect(states.slice(-3)).toEqual([2, 1, 0]);
    expect(health.at(-1)).toEqual([true, undefined]);
  });
});

describe('circuit breaker: error rate over the last requests', () => {
  const BAD: ReturnType<Answer> = { status: 502, body: 'bad gateway' };
  /** A node failing (HTTP 502) the requests whose place in `pattern` (repeated) is 1; probes count too, so tests that
   *  count requests keep the circuit from half-opening (probeIntervalMs 60 s). */
  const patterned = (pattern: number[]) => {
    let i = 0;
    return node(() => (pattern[i++ % pattern.length] ? BAD : undefined));
  };
  /** A pool with one upstream that reports its health events; calls one after another, no retries. */
  const watched = (url: string, over: Partial<UpstreamConfig> = {}) => {
    const health: [boolean, string | undefined, string | undefined][] = [];
    const p = new UpstreamPool({
      network: 'mainnet',
      urls: [url],
      raw: false,
      methods: NODE_MEANING,
      onHealth: (_u, h, r, rule) => void health.push([h, r, rule]),
      config: cfg({
        coalesce: false,
        probeIntervalMs: 60_000,
        retry: { ...defaults.upstream.retry, maxAttempts: 1 },
        ...over,
      }),
    });
    cleanup.push(() => p.close());
    return { p, health };
  };
  /** `n` calls one after another: each one's outcome, 'ok' or the HTTP status of its error. */
  const sequential = async (p: UpstreamPool, n: number, method = 'eth_getBalance') => {
    const out: (number | 'ok')[] = [];
    for (let i = 0; i < n; i++)
      out.push(
        await p.call(method, [`0x${i.toString(16)}`, 'latest']).then(
          () => 'ok' as const,
          (e: RpcError) => e.httpStatus,
        ),
      );
    return out;
  };
  const longestRun = (xs: unknown[], v: unknown) =>
    xs.reduce<[number, number]>(
      ([best, run], x) => (x === v ? [Math.max(best, run + 1), run + 1] : [best, 0]),
      [0, 0],
    )[0];

  it('a node failing 60% of requests, never 5 in a row, opens by rate (not by the in-a-row rule); with the rate rule off it stays in service', async () => {
    expect(defaults.upstream.circuitBreaker).toEqual({
      failureThreshold: 5,
      errorRate: 0.5,
      windowSize: 20,
      minCalls: 10,
    });
    const pattern = [1, 0, 1, 0, 1]; // 60% failed; at most 2 in a row (the 1 that ends a round and the 1 that starts the next)
    const n = await patterned(pattern);
    const { p, health } = watched(n.url);
    const out = await sequential(p, 40);
    // minCalls = 10 requests in: 6 of them failed ≥ 0.5 → open; every later call refused at once (503), not sent.
    expect(n.requests.length).toBe(10);
    expect(out.slice(0, 10)).toEqual([502, 'ok', 502, 'ok', 502, 502, 'ok', 502, 'ok', 502]);
    expect(out.slice(10)).toEqual(Array(30).fill(503));
    expect(longestRun(out.slice(0, 10), 502)).toBeLessThan(defaults.upstream.circuitBreaker.failureThreshold);
    expect(health).toHaveLength(1);
    expect(health[0][0]).toBe(false);
    expect(health[0][1]).toMatch(
      /^circuit open: upstream answered HTTP 502 \(6 of the last 10 requests failed, errorRate 0.5\)$/,
    );
    expect(health[0][2]).toBe('rate');
    expect(p.status()[0]).toMatchObject({ healthy: false, circuit: 'open' });

    // The same node with only the in-a-row rule: never 5 in a row, so it stays in service (and fails 60% of calls).
    const m = await patterned(pattern);
    const only = watched(m.url, { circuitBreaker: breaker({ errorRate: 0 }) });
    const out2 = await sequential(only.p, 40);
    expect(m.requests.length).toBe(40);
    expect(out2.filter((x) => x === 502)).toHaveLength(24);
    expect(only.health).toEqual([]);
    expect(only.p.status()[0].circuit).toBe('closed');
  });

  it('the window slides: 50 good requests earlier do not dilute a node that starts failing 60% of requests', async () => {
    const n = await patterned([...Array(50).fill(0), ...Array(10).fill([1, 0, 1, 0, 1]).flat()].slice(0, 100));
    const { p, health } = watched(n.url);
    const out = await sequential(p, 80);
    // The last 20 requests hold 10 failures at the 16th request of the failing pattern (request 66), against 10 of 66
    // overall: a window over all requests since start would not open it.
    expect(n.requests.length).toBe(66);
    expect(out.slice(0, 50)).toEqual(Array(50).fill('ok'));
    expect(out.slice(66)).toEqual(Array(14).fill(503));
    expect(health).toEqual([
      [false, 'circuit open: upstream answered HTTP 502 (10 of the last 20 requests failed, errorRate 0.5)', 'rate'],
    ]);
  });

  it('the in-a-row rule still opens it alone, and says so', async () => {
    const n = await patterned([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1]);
    const { p, health } = watched(n.url);
    await sequential(p, 20);
    // 5 of 20 failed (25%: under the rate), but 5 in a row.
    expect(n.requests.length).toBe(20);
    expect(health).toEqual([
      [false, 'circuit open: upstream answered HTTP 502 (5 failed requests in a row)', 'consecutive'],
    ]);
  });

  it('rare failures (10%, and 40% below a 50% rate) keep the circuit closed', async () => {
    for (const pattern of [
      [1, 0, 0, 0, 0, 0, 0, 0, 0, 0],
      [1, 0, 1, 0, 0],
    ]) {
      const n = await patterned(pattern);
      const { p, health } = watched(n.url);
      const out = await sequential(p, 100);
      expect(n.requests.length).toBe(100);
      expect(out.filter((x) => x === 502)).toHaveLength((100 * pattern.filter(Boolean).length) / pattern.length);
      expect(out.filter((x) => x === 503)).toEqual([]);
      expect(health).toEqual([]);
      expect(p.status()[0].circuit).toBe('closed');
    }
  });

  it('timeouts count: a node timing out on 60% of calls opens by rate; one timeout never does, even where it would be half the window', async () => {
    const slowAt = (pattern: number[]) => {
      let i = 0;
      return node((body) => ({ body: echoBody(body), delayMs: pattern[i++ % pattern.length] ? 5000 : 0 }));
    };
    const n = await slowAt([1, 0, 1, 0, 1]);
    const { p, health } = watched(n.url, { requestTimeoutMs: 250 });
    const out = await sequential(p, 12);
    expect(out.slice(0, 10)).toEqual([504, 'ok', 504, 'ok', 504, 504, 'ok', 504, 'ok', 504]);
    expect(out.slice(10)).toEqual([503, 503]);
    expect(health).toEqual([
      [false, 'circuit open: timeout (6 of the last 10 requests failed, errorRate 0.5)', 'rate'],
    ]);

    // minCalls 2, errorRate 0.5: one success and one timeout is 50% — but a single timeout is not evidence enough.
    const m = await slowAt([0, 1, 0, 0, 0, 0]);
    const one = watched(m.url, {
      requestTimeoutMs: 250,
      circuitBreaker: breaker({ minCalls: 2, failureThreshold: 1 }),
    });
    expect(await sequential(one.p, 6)).toEqual(['ok', 504, 'ok', 'ok', 'ok', 'ok']);
    expect(one.health).toEqual([]);
  });
});

describe('learned batch size', () => {
  const size = (r: Req | Req[]) => (Array.isArray(r) ? r.length : 1);
  /** A node that refuses (one error object) any batch larger than `limit`. */
  const limited = async (): Promise<StandIn & { limit: number }> => {
    const s: StandIn & { limit: number } = Object.assign(
      await node((body) =>
        Array.isArray(body) && body.length > s.limit
          ? { body: { jsonrpc: '2.0', id: null, error: { code: -32005, message: 'batch too large' } } }
          : undefined,
      ),
      { limit: 2 },
    );
    return s;
  };
  /** 8 concurrent calls (one flush); every one must be answered; the sizes of the requests the node got meanwhile. */
  let k = 0;
  const round = async (p: UpstreamPool, n: StandIn) => {
    const before = n.requests.length;
    const addrs = Array.from({ length: 8 }, () => `0x${(k++).toString(16)}`);
    expect(await Promise.all(addrs.map((a) => p.call('eth_getBalance', [a, 'latest'])))).toEqual(addrs);
    return n.requests
      .slice(before)
      .map(size)
      .sort((a, b) => b - a);
  };

  it('shrinks on refusal and grows back (doubling) once the node takes larger batches', async () => {
    const n = await limited();
    const p = pool([n.url], { batchRecovery: { afterBatches: 3, intervalMs: 0 } });
    expect(await round(p, n)).toEqual([8, 1, 1, 1, 1, 1, 1, 1, 1]); // refused: split, next time at most 4
    expect(await round(p, n)).toEqual([4, 4, 1, 1, 1, 1, 1, 1, 1, 1]); // refused again: at most 2
    expect(await round(p, n)).toEqual([2, 2, 2, 2]); // 3 full batches answered: 4 is tried next
    // Still refused: back to 2, and the refused batches are resent as batches of 2 (not one call at a time); those
    // are 3 more full batches of 2 answered, so 4 is tried again next time.
    expect(await round(p, n)).toEqual([4, 4, 2, 2, 2, 2]);
    n.limit = 8; // the node's operator raised its limit
    const after: number[][] = [];
    for (let i = 0; i < 10 && after.at(-1)?.[0] !== 8; i++) after.push(await round(p, n));
    expect(after).toEqual([[4, 4], [4, 4], [8]]);
    expect(await round(p, n)).toEqual([8]);
  });

  it('a node that keeps refusing is tried with a larger batch at most once per intervalMs, and never gets single calls again', async () => {
    const n = await limited();
    const p = pool([n.url], { batchRecovery: { afterBatches: 1, intervalMs: 300 } });
    await round(p, n);
    await round(p, n); // learned: 2
    const t0 = performance.now();
    const rounds: number[][] = [];
    while (performance.now() - t0 < 1300) {
      rounds.push(await round(p, n));
      await sleep(5);
    }
    const elapsed = performance.now() - t0;
    const probes = rounds.filter((r) => r[0] > 2);
    expect(rounds.length).toBeGreaterThan(10);
    expect(probes.length).toBeGreaterThanOrEqual(1);
    expect(probes.length).toBeLessThanOrEqual(Math.floor(elapsed / 300) + 1);
    for (const r of probes) expect(r).toEqual([4, 4, 2, 2, 2, 2]);
    expect(rounds.flat().filter((s) => s === 1)).toEqual([]);
    // With growth off the cap stays where the refusals put it.
    const m = await limited();
    const off = pool([m.url], { batchRecovery: { afterBatches: 0, intervalMs: 0 } });
    await round(off, m);
    await round(off, m);
    m.limit = 8;
    for (let i = 0; i < 5; i++) expect(await round(off, m)).toEqual([2, 2, 2, 2]);
  });
});

describe('dedupe and the circuit', () => {
  it('a call refused at once while every circuit is open does not stay as the answer of later identical calls', async () => {
    let down = true;
    const n = await node(() => (down ? { status: 502, body: 'bad gateway' } : undefined));
    const p = pool([n.url], {
      circuitBreaker: breaker({ failureThreshold: 1 }),
      retry: { ...defaults.upstream.retry, maxAttempts: 1 },
    });
    const params = [{ to: '0x00' }, 'latest'];
    expect((await rejection(p.call('eth_call', params))).httpStatus).toBe(502);
    expect((await rejection(p.call('eth_call', params))).httpStatus).toBe(503); // settled before it was sent
    down = false;
    await vi.waitFor(() => expect(p.status()[0].circuit).toBe('closed'), { timeout: 5000, interval: 20 });
    expect(await p.call('eth_call', params)).toEqual({ to: '0x00' });
  });
});

describe('eth_getLogs block-range cap', () => {
  it('refuses ranges over the cap before the node sees them (numbers and tags, head from eth_blockNumber); blockHash is exempt', async () => {
    const n = await node((body) => ({
      body: Array.isArray(body)
        ? body.map((r) => ({ jsonrpc: '2.0', id: r.id, result: r.method === 'eth_blockNumber' ? '0x100000' : [] }))
        : {
            jsonrpc: '2.0',
            id: (body as Req).id,
            result: (body as Req).method === 'eth_blockNumber' ? '0x100000' : [],
          },
    }));
    const p = pool([n.url]);
    const g = guardLogsRange(new Map([['mainnet', p]]), 10_000).get('mainnet')!;
    const logsSent = () => callCount(n.requests.filter((r) => has(r, (x) => x.method === 'eth_getLogs')));
    const refused = async (f: object, range: number) => {
      const e = await rejection(g.call('eth_getLogs', [f]));
      expect([e.code, e.httpStatus, e.data]).toEqual([
        -32005,
        200,
        { source: 'rpcgate', reason: 'block-range', limit: 10_000, range },
      ]);
    };
    await refused({ fromBlock: '0x0', toBlock: '0xffffffffffff' }, 0xffffffffffff + 1);
    await refused({ fromBlock: '0x0' }, 0x100000 + 1);
    await refused({ fromBlock: 'earliest', toBlock: 'latest' }, 0x100000 + 1);
    await refused({ fromBlock: '0x10', toBlock: '0x2720' }, 10_001);
    expect(logsSent()).toBe(0);
    for (const f of [
      { fromBlock: '0x10', toBlock: '0x271f' },
      { fromBlock: `0x${(0x100000 - 9_999).toString(16)}`, toBlock: 'latest' },
      {},
      { fromBlock: 'latest' },
      { blockHash: `0x${'ab'.repeat(32)}` },
    ]) {
      expect(await g.call('eth_getLogs', [f]), JSON.stringify(f)).toEqual([]);
    }
    expect(logsSent()).toBe(5);
    // Other methods pass untouched; cap 0 = no guard at all.
    expect(await g.call('eth_chainId', [])).toEqual([]);
    const pools = new Map([['mainnet', p]]);
    expect(guardLogsRange(pools, 0)).toBe(pools);
  });

  it('uses a head the response cache saw recently instead of asking the node (no extra round trip before fromBlock..latest)', async () => {
    let asked = 0;
    const caller = { call: async (method: string) => (asked++, method === 'eth_blockNumber' ? '0x100000' : []) };
    await checkLogsRange({ fromBlock: '0xfd8f1' }, 10_000, caller, () => 0x100000); // 0x100000 - 0xfd8f1 + 1 = 10,000
    expect(asked).toBe(0);
    const e = await rejection(checkLogsRange({ fromBlock: '0xfd8f0' }, 10_000, caller, () => 0x100000));
    expect([e.code, e.data]).toEqual([
      -32005,
      { source: 'rpcgate', reason: 'block-range', limit: 10_000, range: 10_001 },
    ]);
    expect(asked).toBe(0);
    // No known head: the node is asked.
    await checkLogsRange({ fromBlock: '0xfd8f1' }, 10_000, caller);
    expect(asked).toBe(1);
  });
  it('with the cache off, the network still tracks its head: fromBlock..latest queries ask the node for it once, not each time', async () => {
    const head = 0x100000;
    const asked: string[] = [];
    const block = (n: number) => ({
      number: `0x${n.toString(16)}`,
      hash: `0x${n.toString(16).padStart(64, '0')}`,
      parentHash: `0x${(n - 1).toString(16).padStart(64, '0')}`,
    });
    const upstream = {
      call: async (method: string, params?: readonly unknown[]) => {
        asked.push(method);
        if (method === 'eth_blockNumber') return `0x${head.toString(16)}`;
        if (method === 'eth_getBlockByNumber') return params?.[0] === 'finalized' ? block(head - 64) : block(head);
        return [];
      },
    };
    const caches = createResponseCaches({
      config: {
        cache: { enabled: false, pollIntervalMs: 60_000 },
        networks: { mainnet: { blockTime: 12 } },
      } as unknown as Parameters<typeof createResponseCaches>[0]['config'],
      upstreams: new Map([['mainnet', upstream]]),
      meanings: meaningTable(nodeMethods),
    });
    try {
      expect(caches.networks.size).toBe(0);
      const tracker = caches.heads.get('mainnet')!;
      const g = guardLogsRange(new Map([['mainnet', upstream]]), 10_000, (n) => caches.heads.get(n)?.knownHead()).get(
        'mainnet',
      )!;
      // The first query finds no head yet (the node is asked) and starts the tracker's poll.
      expect(await g.call('eth_getLogs', [{ fromBlock: '0xfd8f1' }])).toEqual([]);
      expect(asked.filter((m) => m === 'eth_blockNumber')).toHaveLength(1);
      await vi.waitFor(() => expect(tracker.recentHead).toBe(head));
      for (let i = 0; i < 20; i++) expect(await g.call('eth_getLogs', [{ fromBlock: '0xfd8f1' }])).toEqual([]);
      const e = await rejection(g.call('eth_getLogs', [{ fromBlock: '0xfd8f0', toBlock: 'latest' }]));
      expect([e.code, e.data]).toEqual([
        -32005,
        { source: 'rpcgate', reason: 'block-range', limit: 10_000, range: 10_001 },
      ]);
      expect(asked.filter((m) => m === 'eth_blockNumber')).toHaveLength(1);
      expect(asked.filter((m) => m === 'eth_getLogs')).toHaveLength(21);
    } finally {
      await caches.close();
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
      case 0:
        return Array.from({ length: rnd(6) }, () => chars[rnd(chars.length)]).join('');
      case 1:
        return rnd(2) ? rnd(100000) - 50000 : rnd(1000) / 7;
      case 2:
        return [true, false, null][rnd(3)];
      case 3:
        return `0x${rnd(1e9).toString(16)}`;
      case 4:
        return Array.from({ length: rnd(4) }, () => value(depth + 1));
      default:
        return Object.fromEntries(
          Array.from({ length: rnd(4) }, (_, i) => [`k${i}${chars[rnd(chars.length)]}`, value(depth + 1)]),
        );
    }
  }

  it('agrees with JSON.parse on random batches, compact and indented', () => {
    for (let round = 0; round < 300; round++) {
      const items = Array.from({ length: 1 + rnd(5) }, (_, i) =>
        rnd(5) === 0
          ? { jsonrpc: '2.0', id: i, error: { code: -32000, message: String(value(3)), data: value(2) } }
          : { jsonrpc: '2.0', result: value(0), id: i },
      );
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
    ])
      expect(splitResponse(bad), bad).toBeUndefined();
  });
});
