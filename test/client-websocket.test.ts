// @rpcgate/client's webSocketTransport: calls and batches over one socket, answers matched by id (out of order too),
// a generated client's typed request/batch on it, and a closed socket failing what is in flight. The server is a
// small JSON-RPC responder on the `ws` package (Node 20 has no global WebSocket: the constructor is passed in).
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import WebSocket, { WebSocketServer } from 'ws';
import { createClient, RpcClientError, webSocketTransport, type MethodDescriptor } from '@rpcgate/client';

let server: WebSocketServer;
let url: string;
let received = 0;

beforeAll(async () => {
  server = new WebSocketServer({ host: '127.0.0.1', port: 0 });
  await new Promise((r) => server.once('listening', r));
  url = `ws://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  server.on('connection', (socket) => {
    socket.on('message', (data) => {
      received++;
      const msg = JSON.parse(String(data));
      const answer = (m: { id: number; method: string; params: unknown[] }) =>
        m.method === 'echo'
          ? { jsonrpc: '2.0', id: m.id, result: m.params[0] }
          : { jsonrpc: '2.0', id: m.id, error: { code: -32601, message: 'Method not found' } };
      if (Array.isArray(msg))
        socket.send(JSON.stringify(msg.map(answer).reverse())); // out of order, as JSON-RPC allows
      else if (msg.method === 'slow')
        setTimeout(() => socket.send(JSON.stringify({ jsonrpc: '2.0', id: msg.id, result: 'slow' })), 200);
      else if (msg.method === 'hangup') socket.close();
      else socket.send(JSON.stringify(answer(msg)));
    });
  });
});

afterAll(async () => {
  await new Promise((r) => server.close(r));
});

const methods = {
  echo: {
    name: 'echo',
    summary: '',
    params: [{ name: 'value', required: true }],
    errors: [],
    paramStructure: 'either',
  } as MethodDescriptor<[value: string], string>,
  slow: { name: 'slow', summary: '', params: [], errors: [], paramStructure: 'either' } as MethodDescriptor<[], string>,
  hangup: { name: 'hangup', summary: '', params: [], errors: [], paramStructure: 'either' } as MethodDescriptor<
    [],
    string
  >,
  missing: { name: 'missing', summary: '', params: [], errors: [], paramStructure: 'either' } as MethodDescriptor<
    [],
    string
  >,
};

describe('webSocketTransport', () => {
  it('carries requests and batches on one socket, matching answers by id', async () => {
    const transport = webSocketTransport(url, { WebSocket: WebSocket as never });
    const client = createClient(transport, methods);
    try {
      const before = server.clients.size;
      // a slow call does not hold back the ones sent after it
      const slow = client.request('slow');
      const [a, b] = await Promise.all([client.request('echo', ['a']), client.request('echo', ['b'])]);
      expect([a, b]).toEqual(['a', 'b']);
      const batch = await client.batch([
        { method: 'echo', params: ['x'] },
        { method: 'missing' },
        { method: 'echo', params: ['y'] },
      ]);
      expect(batch[0]).toBe('x');
      expect(batch[1]).toBeInstanceOf(RpcClientError);
      expect((batch[1] as RpcClientError).code).toBe(-32601);
      expect(batch[2]).toBe('y');
      expect(await slow).toBe('slow');
      await expect(client.request('missing')).rejects.toMatchObject({ code: -32601 });
      expect(server.clients.size - before).toBe(1); // one socket for all of it
    } finally {
      transport.close();
    }
  });

  it('fails the calls in flight when the socket closes, and opens a new socket for the next call', async () => {
    const transport = webSocketTransport(url, { WebSocket: WebSocket as never });
    const client = createClient(transport, methods);
    try {
      const sent = received;
      await expect(client.request('hangup')).rejects.toBeInstanceOf(RpcClientError);
      expect(received).toBe(sent + 1);
      expect(await client.request('echo', ['again'])).toBe('again');
    } finally {
      transport.close();
    }
  });

  it('refuses to start without a WebSocket implementation and fails a connection that cannot open', async () => {
    vi.stubGlobal('WebSocket', undefined); // Node ≥ 22 and browsers have one
    try {
      expect(() => webSocketTransport(url)).toThrow(/no WebSocket implementation/);
    } finally {
      vi.unstubAllGlobals();
    }
    const transport = webSocketTransport('ws://127.0.0.1:1/', { WebSocket: WebSocket as never });
    await expect(createClient(transport, methods).request('echo', ['x'])).rejects.toThrow(/connection failed|closed/);
    transport.close();
  });
});
