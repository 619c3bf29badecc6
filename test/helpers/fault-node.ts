// A stand-in node in its OWN process, for fault tests: started, killed (by PID) and restarted on the same port, and
// switched between behaviours over HTTP (`POST /__control {mode, delayMs}`; `GET /__control` = calls seen by method).
// `delays` ({method: ms}) hold answers of those methods (a batch: its slowest member's); `slowShare` of the requests
// (0..1, at random) are held `slowMs` more (a node with a latency tail). Modes: ok, slow (every answer after delayMs), garbage (200 "not json"), http500, html (200 text/html), truncated
// (half a JSON body, then the connection is cut), batch-error (a batch answered with ONE error object; single calls
// fine), batch-413 (HTTP 413 for a batch; single calls fine), huge (eth_getLogs answers ~1 MiB), flaky (HTTP 500 for
// requests 1, 3 and 5 of every 5 since the mode was set: 60% fail, never more than 2 in a row).
// Answers: eth_blockNumber 0x100, eth_chainId 0x1, eth_getLogs [], eth_sendRawTransaction a fixed hash, others 0x0.
//
// Run as a script: `node --import tsx test/helpers/fault-node.ts <port>` prints `listening <port>` when ready.
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { readBody, rpcReply } from './standin-node.js';

export type FaultMode =
  | 'ok'
  | 'slow'
  | 'garbage'
  | 'http500'
  | 'html'
  | 'truncated'
  | 'batch-error'
  | 'batch-413'
  | 'huge'
  | 'flaky';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

function serve(port: number): void {
  let mode: FaultMode = 'ok';
  let delayMs = 30_000;
  let delays: Record<string, number> = {};
  let slowShare = 0;
  let slowMs = 0;
  let requests = 0;
  const seen: Record<string, number> = {};
  const answer = (m: Json) => {
    seen[m.method] = (seen[m.method] ?? 0) + 1;
    const result =
      m.method === 'eth_blockNumber'
        ? '0x100'
        : m.method === 'eth_chainId'
          ? '0x1'
          : m.method === 'eth_getLogs'
            ? mode === 'huge'
              ? [{ data: `0x${'ab'.repeat(512 * 1024)}` }]
              : []
            : m.method === 'eth_sendRawTransaction'
              ? `0x${'11'.repeat(32)}`
              : '0x0';
    return { jsonrpc: '2.0', id: m.id, result };
  };
  const server = createServer((req, res) => {
    void readBody(req).then((text) => {
      if (req.url === '/__control') {
        if (req.method === 'POST') {
          ({
            mode,
            delayMs = delayMs,
            delays = delays,
            slowShare = slowShare,
            slowMs = slowMs,
          } = JSON.parse(text) as {
            mode: FaultMode;
            delayMs?: number;
            delays?: Record<string, number>;
            slowShare?: number;
            slowMs?: number;
          });
          requests = 0;
        }
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ mode, seen }));
        return;
      }
      let msg: Json;
      try {
        msg = JSON.parse(text);
      } catch {
        res.writeHead(400).end();
        return;
      }
      const batch = Array.isArray(msg);
      const send = (status: number, body: string, type = 'application/json') => {
        if (!res.destroyed)
          res.writeHead(status, { 'content-type': type, 'content-length': Buffer.byteLength(body) }).end(body);
      };
      const rpc = () => rpcReply(text, answer) ?? '';
      const hold =
        Math.max(0, ...(batch ? msg : [msg]).map((m: Json) => delays[m?.method] ?? 0)) +
        (Math.random() < slowShare ? slowMs : 0);
      if (mode === 'ok' && hold > 0) {
        setTimeout(() => send(200, rpc()), hold).unref();
        return;
      }
      switch (mode) {
        case 'slow':
          setTimeout(() => send(200, rpc()), delayMs).unref();
          return;
        case 'garbage':
          return send(200, 'this is not json');
        case 'http500':
          return send(500, 'Internal Server Error', 'text/plain');
        case 'flaky':
          return (requests++ % 5) % 2 === 0 ? send(500, 'Internal Server Error', 'text/plain') : send(200, rpc());
        case 'html':
          return send(200, '<html><body><h1>502 Bad Gateway</h1></body></html>', 'text/html');
        case 'truncated': {
          const body = rpc();
          res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
          res.write(body.slice(0, Math.floor(body.length / 2)));
          setTimeout(() => res.destroy(), 5);
          return;
        }
        case 'batch-error':
          return batch
            ? send(
                200,
                JSON.stringify({
                  jsonrpc: '2.0',
                  id: null,
                  error: { code: -32600, message: 'batch requests are not supported' },
                }),
              )
            : send(200, rpc());
        case 'batch-413':
          return batch ? send(413, 'Payload Too Large', 'text/plain') : send(200, rpc());
        default:
          return send(200, rpc());
      }
    });
  });
  server.keepAliveTimeout = 30_000;
  server.listen(port, '127.0.0.1', () => console.log(`listening ${(server.address() as AddressInfo).port}`));
}

export interface FaultNode {
  readonly url: string;
  readonly port: number;
  pid(): number;
  mode(
    mode: FaultMode,
    delayMs?: number,
    delays?: Record<string, number>,
    tail?: { slowShare: number; slowMs: number },
  ): Promise<void>;
  /** Calls seen by method since this process started. */
  seen(): Promise<Record<string, number>>;
  /** SIGKILL by PID; resolves when it is gone. */
  kill(): Promise<void>;
  /** A new process on the same port. */
  restart(): Promise<void>;
}

const SCRIPT = fileURLToPath(import.meta.url);

async function spawnNode(port: number): Promise<{ child: ChildProcess; port: number }> {
  const child = spawn(process.execPath, ['--import', 'tsx', SCRIPT, String(port)], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const got = await new Promise<number>((resolve, reject) => {
    let out = '';
    child.stdout!.setEncoding('utf8').on('data', (d: string) => {
      out += d;
      const m = /listening (\d+)/.exec(out);
      if (m) resolve(Number(m[1]));
    });
    child.on('exit', (code) => reject(new Error(`fault node exited (${code}) before listening: ${out}`)));
  });
  return { child, port: got };
}

/** Starts the stand-in node process (on `port`, or a free one). */
export async function startFaultNode(port = 0): Promise<FaultNode> {
  let cur = await spawnNode(port);
  const url = `http://127.0.0.1:${cur.port}`;
  const control = async (body?: object) => {
    const res = await fetch(`${url}/__control`, body ? { method: 'POST', body: JSON.stringify(body) } : {});
    return (await res.json()) as { mode: FaultMode; seen: Record<string, number> };
  };
  return {
    url,
    port: cur.port,
    pid: () => cur.child.pid!,
    mode: async (mode, delayMs, delays, tail) => void (await control({ mode, delayMs, delays, ...tail })),
    seen: async () => (await control()).seen,
    kill: async () => {
      const c = cur.child;
      if (c.exitCode !== null || c.signalCode !== null) return;
      const gone = new Promise<void>((r) => c.once('exit', () => r()));
      process.kill(c.pid!, 'SIGKILL');
      await gone;
    },
    restart: async () => {
      cur = await spawnNode(cur.port);
    },
  };
}

if (process.argv[1] === SCRIPT) serve(Number(process.argv[2] ?? 0));
