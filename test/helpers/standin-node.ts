// The one stand-in EVM node of the tests and benches (issue 22 knot 6, issue 24 item 6). Two layers:
//
// 1. `rpcReply` / `serveJsonRpc`: the JSON-RPC plumbing every stand-in repeated — read the body, answer a single call
//    or a batch member by member, drop notifications (204 when nothing is left), optional latency. stub-node,
//    chain-node, fault-node and bench/lib/standin-node.ts answer through it.
//
// 2. A node of a real, deterministic chain, in its own process (`startStandin`), that behaves like the nodes of a fleet:
//    every stand-in started with the same `t0`/`h0`/`blockMs` serves the same chain (block n's hash, balances that
//    change every block, n % 3 logs in block n), so two of them agree wherever both hold the data. In front of the
//    chain each applies its behaviour:
//      lag K           its head is K blocks behind the chain's (blocks above it: null / "header not found");
//      stateDepth N    a pruned node: state older than head − N answers -32000 "missing trie node …";
//      logsMaxRange R  eth_getLogs over R blocks: -32005 "exceed maximum block range: R";
//      logsMaxResults  more logs than this: -32005 "query returned more than 10000 results" (as Infura words it);
//      missing [m…]    those methods answer -32601 "the method m does not exist/is not available";
//      rps             more requests than this in one second: HTTP 429 with Retry-After: 1.
//    The chain's head = h0 + floor((now − t0) / blockMs) (blockMs 0: fixed at h0). GET /__stats = calls by method.
//
// Run as a script: `node --import tsx test/helpers/standin-node.ts '<StandinOptions as JSON>'` prints `listening <port>`.
import { spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

/** One call's answer (undefined: a notification, no answer). */
export type Answer = (m: Json) => Json | undefined;

/** The response body for a request body: a single answer or the batch's answers in order; undefined when nothing is
 *  answered (notifications only). Unparseable JSON: the JSON-RPC parse error. */
export function rpcReply(text: string, answer: Answer): string | undefined {
  let msg: Json;
  try {
    msg = JSON.parse(text);
  } catch {
    return JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32700, message: 'parse error' } });
  }
  if (!Array.isArray(msg)) {
    const one = answer(msg);
    return one === undefined ? undefined : JSON.stringify(one);
  }
  const out = msg.map(answer).filter((x) => x !== undefined);
  return out.length === 0 ? undefined : JSON.stringify(out);
}

/** Reads a request's body. */
export function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((ok) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => ok(Buffer.concat(chunks).toString('utf8')));
  });
}

/** Sends a body (204 when there is none). */
export function sendJson(res: ServerResponse, body: string | undefined, status = 200): void {
  if (res.destroyed) return;
  if (body === undefined) res.writeHead(204).end();
  else
    res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }).end(body);
}

export interface JsonRpcServer {
  readonly server: Server;
  readonly url: string;
  close(): Promise<void>;
}

/** An HTTP JSON-RPC server on 127.0.0.1 (port 0 unless given) answering with `answer`, after `delayMs` when set;
 *  `route` may take a request first (a control endpoint): true = handled. */
export function serveJsonRpc(
  answer: Answer,
  opts: {
    delayMs?: number | (() => number);
    port?: number;
    route?: (req: IncomingMessage, res: ServerResponse, body: string) => boolean;
  } = {},
): Promise<JsonRpcServer> {
  const server = createServer(async (req, res) => {
    const text = await readBody(req);
    if (opts.route?.(req, res, text)) return;
    const delay = typeof opts.delayMs === 'function' ? opts.delayMs() : (opts.delayMs ?? 0);
    if (delay > 0) setTimeout(() => sendJson(res, rpcReply(text, answer)), delay).unref();
    else sendJson(res, rpcReply(text, answer));
  });
  server.keepAliveTimeout = 30_000;
  return new Promise((ok) =>
    server.listen(opts.port ?? 0, '127.0.0.1', () =>
      ok({
        server,
        url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
        close: () =>
          new Promise<void>((r) => {
            server.close(() => r());
            server.closeAllConnections();
          }),
      }),
    ),
  );
}

// ---- the deterministic chain ----

export interface StandinOptions {
  /** The chain's clock origin (ms since epoch) and its head then; stand-ins that share them share the chain. */
  t0: number;
  h0: number;
  /** One block per blockMs (0: the head stays at h0). */
  blockMs: number;
  /** Blocks behind the chain's head. */
  lag?: number;
  /** Pruned: state is held for the newest `stateDepth` blocks only (absent: archive). */
  stateDepth?: number;
  logsMaxRange?: number;
  logsMaxResults?: number;
  missing?: string[];
  rps?: number;
  /** Answer latency (ms). */
  delayMs?: number;
}

export const STANDIN_CHAIN_ID = '0x7a69';
const hex = (n: number | bigint) => `0x${n.toString(16)}`;
const sha = (s: string) => createHash('sha256').update(s).digest('hex');
/** Block n's hash carries n in its first 8 bytes, so a blockHash filter finds its block without an index. */
export const blockHash = (n: number) => `0x${n.toString(16).padStart(16, '0')}${sha(`b:${n}`).slice(0, 48)}`;
const word = (n: number | bigint) => `0x${n.toString(16).padStart(64, '0')}`;
export const LOG_ADDRESSES = [`0x${'a1'.repeat(20)}`, `0x${'b2'.repeat(20)}`];
export const TRANSFER_TOPIC = `0x${sha('Transfer(address,address,uint256)')}`;

/** Block n's logs in node order (logIndex within the block), as a node serialises them. */
export function logsOf(n: number): Json[] {
  const hash = blockHash(n);
  return Array.from({ length: n % 3 }, (_, i) => ({
    address: LOG_ADDRESSES[(n + i) % 2],
    topics: [TRANSFER_TOPIC, word(n)],
    data: word(BigInt(n) * 1000n + BigInt(i)),
    blockNumber: hex(n),
    transactionHash: `0x${sha(`tx:${n}:${i}`)}`,
    transactionIndex: hex(i),
    blockHash: hash,
    logIndex: hex(i),
    removed: false,
  }));
}

/** An account's balance at block n: changes every block, differs per account. */
export function balanceAt(address: string, n: number): string {
  return hex(BigInt(`0x${sha(String(address).toLowerCase()).slice(0, 8)}`) * 1_000_000n + BigInt(n));
}

const STATE_METHODS = new Set([
  'eth_getBalance',
  'eth_getTransactionCount',
  'eth_getCode',
  'eth_getStorageAt',
  'eth_call',
]);

/** The answer function of one stand-in of the chain (exported for in-process use). */
export function chainAnswer(o: StandinOptions, seen: Record<string, number> = {}): Answer {
  const head = () =>
    Math.max(0, o.h0 + (o.blockMs > 0 ? Math.floor((Date.now() - o.t0) / o.blockMs) : 0) - (o.lag ?? 0));
  const missing = new Set(o.missing ?? []);
  return (m: Json) => {
    if (m === null || typeof m !== 'object' || m.id === undefined) return undefined;
    seen[m.method] = (seen[m.method] ?? 0) + 1;
    const ok = (result: unknown) => ({ jsonrpc: '2.0', id: m.id, result });
    const err = (code: number, message: string) => ({ jsonrpc: '2.0', id: m.id, error: { code, message } });
    if (missing.has(m.method)) return err(-32601, `the method ${m.method} does not exist/is not available`);
    const h = head();
    const num = (tag: Json): number => {
      if (tag === undefined || tag === null || tag === 'latest' || tag === 'pending' || tag === 'safe') return h;
      if (tag === 'finalized') return Math.max(0, h - 64);
      if (tag === 'earliest') return 0;
      if (typeof tag === 'object')
        return 'blockHash' in tag ? Number.parseInt(tag.blockHash.slice(2, 18), 16) : num(tag.blockNumber);
      return Number(tag);
    };
    const p = m.params ?? [];
    if (STATE_METHODS.has(m.method)) {
      const n = num(m.method === 'eth_getStorageAt' ? p[2] : p[1]);
      if (n > h) return err(-32000, 'header not found');
      if (o.stateDepth !== undefined && n < h - o.stateDepth)
        return err(-32000, `missing trie node ${blockHash(n)} (path ) state ${blockHash(n)} is not available`);
      if (m.method === 'eth_getBalance') return ok(balanceAt(p[0], n));
      if (m.method === 'eth_getTransactionCount') return ok(hex(n % 97));
      if (m.method === 'eth_getCode') return ok('0x');
      return ok(word(n));
    }
    switch (m.method) {
      case 'eth_chainId':
        return ok(STANDIN_CHAIN_ID);
      case 'net_version':
        return ok('31337');
      case 'eth_blockNumber':
        return ok(hex(h));
      case 'eth_gasPrice':
        return ok(hex(1_000_000_000 + h));
      case 'eth_getBlockByNumber':
      case 'eth_getBlockByHash': {
        const n = m.method === 'eth_getBlockByHash' ? num({ blockHash: p[0] }) : num(p[0]);
        if (n > h || n < 0 || (m.method === 'eth_getBlockByHash' && blockHash(n) !== p[0])) return ok(null);
        return ok({
          number: hex(n),
          hash: blockHash(n),
          parentHash: n === 0 ? word(0) : blockHash(n - 1),
          timestamp: hex(1_700_000_000 + n * 12),
          gasLimit: '0x1c9c380',
          baseFeePerGas: '0x3b9aca00',
          transactions: [],
          uncles: [],
        });
      }
      case 'eth_getLogs': {
        const f = p[0] ?? {};
        let from: number;
        let to: number;
        if (f.blockHash !== undefined) from = to = num({ blockHash: f.blockHash });
        else {
          from = num(f.fromBlock);
          to = Math.min(num(f.toBlock), h);
        }
        if (from > to) return ok([]);
        if (o.logsMaxRange !== undefined && to - from + 1 > o.logsMaxRange)
          return err(-32005, `exceed maximum block range: ${o.logsMaxRange}`);
        const addresses =
          f.address === undefined || f.address === null
            ? undefined
            : new Set((Array.isArray(f.address) ? f.address : [f.address]).map((a: string) => a.toLowerCase()));
        const topic0 = f.topics?.[0];
        const out: Json[] = [];
        for (let n = from; n <= to; n++)
          for (const log of logsOf(n)) {
            if (addresses !== undefined && !addresses.has(log.address)) continue;
            if (topic0 !== undefined && topic0 !== null && topic0 !== log.topics[0]) continue;
            out.push(log);
            if (o.logsMaxResults !== undefined && out.length > o.logsMaxResults)
              return err(-32005, 'query returned more than 10000 results');
          }
        return ok(out);
      }
      default:
        return err(-32601, `the method ${m.method} does not exist/is not available`);
    }
  };
}

function serveStandin(o: StandinOptions, port: number): void {
  const seen: Record<string, number> = {};
  const answer = chainAnswer(o, seen);
  let second = 0;
  let inSecond = 0;
  void serveJsonRpc(answer, {
    port,
    delayMs: o.delayMs,
    route: (req, res) => {
      if (req.url === '/__stats') {
        sendJson(res, JSON.stringify(seen));
        return true;
      }
      if (o.rps === undefined) return false;
      const now = Math.floor(Date.now() / 1000);
      if (now !== second) {
        second = now;
        inSecond = 0;
      }
      if (++inSecond <= o.rps) return false;
      res.writeHead(429, { 'retry-after': '1', 'content-type': 'text/plain' }).end('Too Many Requests');
      return true;
    },
  }).then((s) => console.log(`listening ${(s.server.address() as AddressInfo).port}`));
}

export interface Standin {
  readonly url: string;
  readonly port: number;
  readonly pid: number;
  /** Calls seen by method. */
  stats(): Promise<Record<string, number>>;
  /** SIGTERM by PID; resolves when it is gone. */
  stop(): Promise<void>;
}

const SCRIPT = fileURLToPath(import.meta.url);

/** Starts a stand-in of the chain in its own process (on `port`, or a free one). */
export async function startStandin(o: StandinOptions, port = 0): Promise<Standin> {
  const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', SCRIPT, JSON.stringify(o), String(port)], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const got = await new Promise<number>((resolve, reject) => {
    let out = '';
    child.stdout!.setEncoding('utf8').on('data', (d: string) => {
      out += d;
      const m = /listening (\d+)/.exec(out);
      if (m) resolve(Number(m[1]));
    });
    child.on('exit', (code) => reject(new Error(`stand-in node exited (${code}) before listening: ${out}`)));
  });
  const url = `http://127.0.0.1:${got}`;
  return {
    url,
    port: got,
    pid: child.pid!,
    stats: async () => (await (await fetch(`${url}/__stats`)).json()) as Record<string, number>,
    stop: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const gone = new Promise<void>((r) => child.once('exit', () => r()));
      process.kill(child.pid!, 'SIGTERM');
      await gone;
    },
  };
}

if (process.argv[1] === SCRIPT)
  serveStandin(JSON.parse(process.argv[2]) as StandinOptions, Number(process.argv[3] ?? 0));
