// The floor of a WebSocket fan-out in Node on this machine (bench/ws-lag.ts compares rpcgate with it): the least a
// relay can do — one upstream socket subscribed to newHeads and logs, and per notification one `ws.send` per client
// subscription of that kind, from a random start like rpcgate's feed (src/gateway/subscriptions/feed.ts). No keys,
// limits, metering, validation, queues or reorg handling; the result is serialised once per notification.
// Run: `node --import tsx bench/lib/ws-relay.ts <upstream ws url>`; prints RELAY_READY <ws url>.
import type { AddressInfo } from 'node:net';
import WebSocket, { WebSocketServer } from 'ws';

type Kind = 'newHeads' | 'logs';

async function main(upstreamUrl: string): Promise<void> {
  const subs: Array<{ socket: WebSocket; id: string; kind: Kind }> = [];
  let next = 1;
  const server = new WebSocketServer({ host: '127.0.0.1', port: 0, perMessageDeflate: false });
  await new Promise<void>((r) => server.once('listening', r));
  server.on('connection', (socket) => {
    socket.on('message', (d) => {
      const m = JSON.parse(String(d)) as { id: unknown; method: string; params?: unknown[] };
      const kind = m.params?.[0];
      if (m.method !== 'eth_subscribe' || (kind !== 'newHeads' && kind !== 'logs')) {
        socket.send(JSON.stringify({ jsonrpc: '2.0', id: m.id, error: { code: -32601, message: 'not here' } }));
        return;
      }
      const id = `0x${(next++).toString(16).padStart(32, '0')}`;
      subs.push({ socket, id, kind });
      socket.send(JSON.stringify({ jsonrpc: '2.0', id: m.id, result: id }));
    });
    socket.on('close', () => {
      for (let i = subs.length - 1; i >= 0; i--) if (subs[i].socket === socket) subs.splice(i, 1);
    });
  });

  const up = new WebSocket(upstreamUrl, { perMessageDeflate: false });
  await new Promise<void>((res, rej) => {
    up.once('open', () => res());
    up.once('error', rej);
  });
  const upstreamSubs = new Map<string, Kind>();
  up.on('message', (d) => {
    const m = JSON.parse(String(d)) as {
      id?: number;
      result?: string;
      params?: { subscription: string; result: unknown };
    };
    if (m.id !== undefined) {
      upstreamSubs.set(String(m.result), m.id === 1 ? 'newHeads' : 'logs');
      return;
    }
    const kind = m.params && upstreamSubs.get(m.params.subscription);
    if (kind === undefined) return;
    const json = JSON.stringify(m.params!.result);
    const n = subs.length;
    const start = Math.floor(Math.random() * n);
    for (let i = 0; i < n; i++) {
      const s = subs[(start + i) % n];
      if (s.kind === kind)
        s.socket.send(
          `{"jsonrpc":"2.0","method":"eth_subscription","params":{"subscription":"${s.id}","result":${json}}}`,
        );
    }
  });
  up.send('{"jsonrpc":"2.0","id":1,"method":"eth_subscribe","params":["newHeads"]}');
  up.send('{"jsonrpc":"2.0","id":2,"method":"eth_subscribe","params":["logs",{}]}');
  process.stdout.write(`RELAY_READY ws://127.0.0.1:${(server.address() as AddressInfo).port}/\n`);
  process.once('SIGTERM', () => {
    up.terminate();
    for (const c of server.clients) c.terminate();
    server.close(() => process.exit(0));
  });
}

main(process.argv[2]).catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});
