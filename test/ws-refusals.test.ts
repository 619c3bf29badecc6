// The toolkit's WebSocket transport (packages/toolkit/src/ws/jsonrpc.ts) on its own, issue 21: an upgrade its admit hook
// refuses is accepted all the same, each message on it is answered with the refusal naming the message's ids (a batch
// per item, notifications none), and the socket closes with 4000 + the HTTP status — after a short grace once
// answered, or after a few seconds if nothing comes. At most `maxRefusedOpen` refused sockets are open at once: beyond
// it a refusal is the plain HTTP answer (a flood of refused upgrades holds a bounded number of sockets).
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Refusal } from '../packages/toolkit/src/http/jsonrpc.js';
import type { CallContext } from '../packages/toolkit/src/rpc/engine.js';
import { RpcError } from '../packages/toolkit/src/rpc/errors.js';
import { UpgradeRouter, createJsonRpcWs, type JsonRpcWs } from '../packages/toolkit/src/ws/index.js';
import { makeEngine } from './engine-fixture.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

let server: Server;
let ws: JsonRpcWs<string>;
let url: string;
let refusedCount = 0;

beforeAll(async () => {
  server = createServer();
  ws = createJsonRpcWs<CallContext, string>({
    engine: makeEngine(),
    maxPayload: 1 << 20,
    maxInFlight: 8,
    maxBufferedBytes: 1 << 20,
    pingIntervalMs: 30_000,
    maxRefusedOpen: 2,
    admit: (_req, rid, t0, _route, capture) =>
      capture === 'good'
        ? { requestId: rid, startedAt: t0 }
        : new Refusal<CallContext>(new RpcError(-32099, `no entry for ${capture}`, { why: 'test' }, 403), undefined),
    refused: () => void refusedCount++,
    messageContext: (_conn, rid, t0) => ({ requestId: rid, startedAt: t0 }),
    onError: () => undefined,
  });
  const router = new UpgradeRouter().add('/:who', (req, socket, head, rid, t0, who) =>
    ws.upgrade(req, socket, head, rid, t0, 'r', who),
  );
  router.attach(server, () => undefined);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  url = `ws://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await ws?.close();
  server?.close();
});

interface Seen {
  messages: Json[];
  closed?: { code: number; reason: string; ms: number };
  http?: { status: number; body: Json };
}

/** Opens `path`, sends `send` once open; records the messages and the close (or the HTTP refusal). */
function visit(path: string, send: string[] = []): { seen: Seen; done: Promise<Seen> } {
  const seen: Seen = { messages: [] };
  const t0 = performance.now();
  const done = new Promise<Seen>((res) => {
    const s = new WebSocket(url + path);
    s.on('error', () => undefined);
    s.once('open', () => {
      for (const m of send) s.send(m);
    });
    s.on('message', (d) => seen.messages.push(JSON.parse(d.toString())));
    s.once('close', (code, reason) => {
      seen.closed = { code, reason: reason.toString(), ms: performance.now() - t0 };
      res(seen);
    });
    s.once('unexpected-response', (_q, r) => {
      let body = '';
      r.on('data', (c: Buffer) => (body += c));
      r.on('end', () => {
        seen.http = { status: r.statusCode!, body: JSON.parse(body) };
        res(seen);
      });
    });
  });
  return { seen, done };
}

describe('a refused upgrade over the toolkit WebSocket transport', () => {
  it('answers each call with the refusal and its id (a batch per item), then closes 4000 + status shortly after', async () => {
    const before = refusedCount;
    const s = await visit('/nobody', [
      '{"jsonrpc":"2.0","id":"a","method":"eth_blockNumber","params":[]}',
      '[{"jsonrpc":"2.0","id":1,"method":"eth_blockNumber","params":[]},{"jsonrpc":"2.0","method":"eth_blockNumber","params":[]},{"jsonrpc":"2.0","id":2,"method":"eth_blockNumber","params":[]}]',
    ]).done;
    expect(s.messages[0]).toEqual({
      jsonrpc: '2.0',
      id: 'a',
      error: { code: -32099, message: 'no entry for nobody', data: { why: 'test' } },
    });
    expect(s.messages[1].map((m: Json) => [m.id, m.error.code])).toEqual([
      [1, -32099],
      [2, -32099],
    ]);
    expect([s.closed?.code, s.closed?.reason]).toEqual([4403, 'no entry for nobody']);
    expect(s.closed!.ms).toBeLessThan(2500);
    expect(refusedCount - before).toBe(1);
    // An admitted socket is served by the engine as before.
    const ok = visit('/good', ['{"jsonrpc":"2.0","id":5,"method":"eth_blockNumber","params":[]}']);
    await new Promise((r) => setTimeout(r, 300));
    expect(ok.seen.messages).toEqual([{ jsonrpc: '2.0', id: 5, result: '0x1b4' }]);
    expect(ok.seen.closed).toBeUndefined();
  });

  it('a refused socket that sends nothing closes 4403 after a few seconds', async () => {
    const s = await visit('/silent').done;
    expect(s.closed?.code).toBe(4403);
    expect(s.closed!.ms).toBeGreaterThan(2000);
    expect(s.closed!.ms).toBeLessThan(6000);
  });

  it('at most maxRefusedOpen refused sockets at once; beyond it the refusal is the HTTP answer', async () => {
    const a = visit('/one');
    const b = visit('/two');
    await new Promise((r) => setTimeout(r, 300));
    const c = await visit('/three').done;
    expect([c.http?.status, c.http?.body.error.code, c.http?.body.id]).toEqual([403, -32099, null]);
    const [x, y] = await Promise.all([a.done, b.done]);
    expect([x.closed?.code, y.closed?.code]).toEqual([4403, 4403]);
    // Once they are closed, refused upgrades open again.
    expect(
      (await visit('/four', ['{"jsonrpc":"2.0","id":9,"method":"eth_blockNumber","params":[]}']).done).messages[0].id,
    ).toBe(9);
  }, 15_000);
});
