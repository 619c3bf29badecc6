// The execution-apis recordings replayed THROUGH rpcgate: a stand-in upstream (node:http) answers every
// call from the recordings, matched by method + params, so what comes back out of rpcgate must be
// JSON-equal to what the reference client answered. rpcgate may re-id and coalesce calls into upstream
// batches, so the stand-in answers batches too, and ids are not compared — only result / error.
import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { methods } from '../generated/node/methods.js';
import { validators } from '../generated/node/validators.js';
import { startService } from '../src/gateway/server/service.js';
import { readRecordedExchanges, type RecordedExchange } from './helpers/execution-apis.js';

type Exchange = RecordedExchange;

const supported = new Set(Object.keys(methods));
const exchanges: Exchange[] = readRecordedExchanges((m) => supported.has(m));

/** Canonical JSON (sorted keys) so that the match does not depend on key order. */
function canon(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canon).join(',')}]`;
  if (v && typeof v === 'object') {
    return `{${Object.keys(v)
      .sort()
      .filter((k) => (v as Record<string, unknown>)[k] !== undefined)
      .map((k) => `${JSON.stringify(k)}:${canon((v as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(v);
}
const key = (method: string, params: unknown) => `${method} ${canon(params ?? [])}`;

const recorded = new Map<string, Exchange['response']>();
for (const ex of exchanges) recorded.set(key(ex.request.method, ex.request.params), ex.response);

const strip = (r: Exchange['response']) => ('error' in r ? { error: r.error } : { result: r.result });
const passesParams = (ex: Exchange) => validators[ex.request.method].params(ex.request.params ?? []);

let standIn: Server;
let standInUrl: string;
const seen = { requests: 0, batches: 0, maxBatch: 0, unmatched: [] as string[] };
let service: Awaited<ReturnType<typeof startService>>;
let url: string;

beforeAll(async () => {
  standIn = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      seen.requests++;
      const body = JSON.parse(Buffer.concat(chunks).toString()) as unknown;
      const answer = (call: { id?: unknown; method: string; params?: unknown[] }) => {
        const hit = recorded.get(key(call.method, call.params));
        if (!hit) {
          seen.unmatched.push(key(call.method, call.params).slice(0, 200));
          return {
            jsonrpc: '2.0',
            id: call.id,
            error: { code: -32000, message: 'stand-in: no recording for this call' },
          };
        }
        return { jsonrpc: '2.0', id: call.id, ...strip(hit) };
      };
      let reply: unknown;
      if (Array.isArray(body)) {
        seen.batches++;
        seen.maxBatch = Math.max(seen.maxBatch, body.length);
        reply = body.map(answer);
      } else reply = answer(body as { method: string });
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(reply));
    });
  });
  await new Promise<void>((r) => standIn.listen(0, '127.0.0.1', r));
  standInUrl = `http://127.0.0.1:${(standIn.address() as { port: number }).port}/`;
  service = await startService({
    port: 0,
    strictResults: true,
    logLevel: 'silent',
    devKey: true,
    // One network, upstreamed to the stand-in (testnet: null drops the default one): no embedded anvil.
    networks: { mainnet: { upstreams: [standInUrl] }, testnet: null as never },
    // Every call must reach the stand-in as recorded: no response cache (its head poll asks unrecorded calls, and
    // repeats would be answered from memory). The cache has its own tests (test/cache.test.ts).
    cache: { enabled: false },
  });
  url = service.urls.mainnet.A;
});

afterAll(async () => {
  await service?.stop();
  await new Promise<void>((r) => standIn?.close(() => r()));
});

async function post(body: unknown): Promise<unknown> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return res.json();
}

describe('execution-apis fixtures replayed through rpcgate', () => {
  it('covers the supported methods', () => {
    expect(exchanges.length).toBeGreaterThan(80);
    expect(new Set(exchanges.map((e) => e.request.method)).size).toBeGreaterThanOrEqual(20);
  });

  it.each(exchanges.map((e, i) => [`${e.file}#${i}`, e] as const))('%s', async (_name, ex) => {
    const reply = (await post({ ...ex.request, id: 7 })) as Exchange['response'];
    expect(reply.jsonrpc).toBe('2.0');
    expect(reply.id).toBe(7);
    if (passesParams(ex)) {
      // Forwarded: what the node answered comes back unchanged (results and node errors alike).
      expect(strip(reply)).toEqual(strip(ex.response));
    } else {
      // Refused by the contract before reaching the node: only error cases may be (file name says so),
      // and the reference client refused them with the same code.
      expect(ex.file).toMatch(/error|invalid/);
      expect(reply.error?.code).toBe(-32602);
      expect(ex.response.error?.code).toBe(-32602);
    }
  });

  it('all at once (concurrent single calls) come back JSON-equal', async () => {
    const forwarded = exchanges.filter(passesParams);
    const replies = (await Promise.all(
      forwarded.map((ex, i) => post({ ...ex.request, id: i })),
    )) as Exchange['response'][];
    replies.forEach((r, i) => {
      expect(r.id, forwarded[i].file).toBe(i);
      expect(strip(r), forwarded[i].file).toEqual(strip(forwarded[i].response));
    });
  });

  it('as one client batch come back JSON-equal, by id (coalesced into upstream batches)', async () => {
    const before = { batches: seen.batches, requests: seen.requests };
    const forwarded = exchanges.filter(passesParams);
    const replies = (await post(forwarded.map((ex, i) => ({ ...ex.request, id: `f${i}` })))) as Exchange['response'][];
    expect(replies).toHaveLength(forwarded.length);
    for (const r of replies) {
      const i = Number(String(r.id).slice(1));
      expect(strip(r), forwarded[i].file).toEqual(strip(forwarded[i].response));
    }
    // The engine runs a batch's items in the same event-loop turn, so the upstream pool coalesces them into
    // upstream JSON-RPC batches (eth_sendRawTransaction is never deduplicated, but may share a batch).
    console.log(
      `stand-in: ${seen.requests - before.requests} upstream requests for a client batch of ${forwarded.length}, ${seen.batches - before.batches} of them batches (largest ${seen.maxBatch})`,
    );
    expect(seen.batches).toBeGreaterThan(before.batches);
    expect(seen.requests - before.requests).toBeLessThan(forwarded.length);
  });

  it('the stand-in was asked only for recorded calls', () => {
    expect(seen.unmatched).toEqual([]);
  });
});
