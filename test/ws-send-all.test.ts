// WsConnection.sendAll (toolkit): the notifications a connection is owed at one moment (a block's head and its logs,
// many logs) leave in one write to the kernel, not one per frame — a loopback or LAN write costs ~10 µs of CPU
// whatever its size, so for a subscriber owed a mainnet block's hundreds of logs this is the fan-out's cost. Against a
// real ws server and client: the server-side TCP socket's writes are counted (Node's net.Socket hands corked chunks to
// `_writev` once); the client gets every frame, in order; a peer over the unread cap gets the first frames and the
// connection closes with 4008, as `send` does.
import type { AddressInfo } from 'node:net';
import type { Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import WebSocket, { WebSocketServer } from 'ws';
import { WsConnection } from '../packages/toolkit/src/ws/index.js';

let server: WebSocketServer | undefined;
const clients: WebSocket[] = [];

afterEach(async () => {
  for (const c of clients.splice(0)) c.terminate();
  await new Promise<void>((r) => (server ? server.close(() => r()) : r()));
  server = undefined;
});

/** A server-side WsConnection and the client socket's received texts; `writes()` counts the TCP socket's writes. */
async function pair(maxBufferedBytes = 1 << 20) {
  server = new WebSocketServer({ host: '127.0.0.1', port: 0, perMessageDeflate: false });
  await new Promise<void>((r) => server!.once('listening', r));
  const accepted = new Promise<WebSocket>((r) => server!.once('connection', r));
  const client = new WebSocket(`ws://127.0.0.1:${(server.address() as AddressInfo).port}/`, {
    perMessageDeflate: false,
  });
  clients.push(client);
  const received: string[] = [];
  client.on('message', (d) => received.push(String(d)));
  await new Promise<void>((r) => client.once('open', () => r()));
  const socket = await accepted;
  type Write = (...a: unknown[]) => unknown;
  const tcp = (socket as unknown as { _socket: Socket & { _writev: Write; _write: Write } })._socket;
  let writes = 0;
  const writev = tcp._writev.bind(tcp);
  const write = tcp._write.bind(tcp);
  tcp._writev = (...a: unknown[]) => (writes++, writev(...a));
  tcp._write = (...a: unknown[]) => (writes++, write(...a));
  const conn = new WsConnection(1, {}, socket, maxBufferedBytes);
  return { conn, client, received, writes: () => writes };
}

const until = async (f: () => boolean, ms = 5000) => {
  const end = Date.now() + ms;
  while (!f()) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 5));
  }
};

describe('WsConnection.sendAll', () => {
  it('sends many frames in one write, every one received in order', async () => {
    const { conn, received, writes } = await pair();
    const texts = Array.from({ length: 50 }, (_, i) => JSON.stringify({ i, log: 'x'.repeat(200) }));
    const w0 = writes();
    expect(conn.sendAll(texts)).toBe(50);
    expect(writes() - w0).toBe(1);
    await until(() => received.length === 50);
    expect(received).toEqual(texts);
  });

  it('one frame at a time with send: one write each (what sendAll saves)', async () => {
    const { conn, received, writes } = await pair();
    const w0 = writes();
    for (let i = 0; i < 5; i++) conn.send(`{"i":${i}}`);
    expect(writes() - w0).toBe(5);
    await until(() => received.length === 5);
  });

  it('a peer over the unread cap: the frames before it go, then 4008', async () => {
    const { conn, client } = await pair(1000);
    const closed = new Promise<number>((r) => client.once('close', (code) => r(code)));
    client.pause(); // reads nothing: what is sent stays buffered on the server side
    const big = 'y'.repeat(600_000);
    const sent = conn.sendAll([big, big, big, big, big, big, big, big]);
    expect(sent).toBeGreaterThanOrEqual(1);
    expect(sent).toBeLessThan(8);
    expect(conn.closed).toBe(true);
    client.resume();
    expect(await closed).toBe(4008);
  });
});
