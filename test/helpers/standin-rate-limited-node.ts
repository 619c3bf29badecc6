// A stand-in node in its OWN process that enforces a provider's plan, for the per-upstream budget tests (issue 24
// item 4): over a sliding one-second window of ARRIVALS it accepts at most `requestsPerSecond` calls (each call of a
// batch counts) and `unitsPerSecond` compute units (`weights` per method, `defaultWeight` otherwise); a request over
// either is answered HTTP 429 with Retry-After 1, as providers do. `POST /__control {refuseNext: {retryAfter}}` makes
// the next request a 429 with that Retry-After (seconds or an HTTP date) whatever the plan. `GET /__log`: every
// request received — when (Date.now() ms), its calls and units, and whether it was refused.
// Answers: eth_blockNumber 0x100, eth_chainId 0x1, others params[0] or "0x0"; batches item by item.
// The JSON-RPC plumbing is the shared stand-in module's (./standin-node.ts); this file adds the plan and the controls.
//
// Run as a script: `node --import tsx test/helpers/standin-rate-limited-node.ts '<plan json>'` prints `listening <port>`.
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { sendJson, serveJsonRpc } from './standin-node.js';

export interface StandinPlan {
  requestsPerSecond?: number;
  unitsPerSecond?: number;
  weights?: Record<string, number>;
  defaultWeight?: number;
}

export interface StandinRequest {
  /** Arrival, Date.now() ms. */
  at: number;
  calls: number;
  units: number;
  methods: string[];
  /** Answered 429. */
  refused: boolean;
}

interface Rpc {
  id?: unknown;
  method?: string;
  params?: unknown[];
}

function serve(plan: StandinPlan): void {
  const log: StandinRequest[] = [];
  let refuseNext: string | undefined;
  const weight = (m: string | undefined) => plan.weights?.[m ?? ''] ?? plan.defaultWeight ?? 1;
  const answer = (m: Rpc) => ({
    jsonrpc: '2.0',
    id: m.id ?? null,
    result: m.method === 'eth_blockNumber' ? '0x100' : m.method === 'eth_chainId' ? '0x1' : (m.params?.[0] ?? '0x0'),
  });
  /** Calls and units accepted in the second before `now`. */
  const inWindow = (now: number) => {
    let calls = 0;
    let units = 0;
    for (let i = log.length - 1; i >= 0 && log[i].at > now - 1000; i--) {
      if (log[i].refused) continue;
      calls += log[i].calls;
      units += log[i].units;
    }
    return { calls, units };
  };
  // The shared stand-in plumbing (./standin-node.ts) reads the body and answers; this node takes the request first for
  // its control endpoints and its plan.
  void serveJsonRpc(answer, {
    route(req, res, text) {
      if (req.url === '/__control') {
        if (req.method === 'POST') {
          const c = JSON.parse(text) as { refuseNext?: { retryAfter: string } };
          if (c.refuseNext !== undefined) refuseNext = c.refuseNext.retryAfter;
        }
        sendJson(res, '{}');
        return true;
      }
      if (req.url === '/__log') {
        sendJson(res, JSON.stringify(log));
        return true;
      }
      const now = Date.now();
      const msg = JSON.parse(text) as Rpc | Rpc[];
      const items = Array.isArray(msg) ? msg : [msg];
      const units = items.reduce((sum, m) => sum + weight(m.method), 0);
      const entry: StandinRequest = {
        at: now,
        calls: items.length,
        units,
        methods: items.map((m) => m.method ?? ''),
        refused: false,
      };
      const used = inWindow(now);
      let retryAfter: string | undefined;
      if (refuseNext !== undefined) {
        retryAfter = refuseNext;
        refuseNext = undefined;
      } else if (
        (plan.requestsPerSecond !== undefined && used.calls + items.length > plan.requestsPerSecond) ||
        (plan.unitsPerSecond !== undefined && used.units + units > plan.unitsPerSecond)
      )
        retryAfter = '1';
      log.push(entry);
      if (retryAfter === undefined) return false;
      entry.refused = true;
      const body = JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32005, message: 'rate limit' } });
      res.writeHead(429, { 'content-type': 'application/json', 'retry-after': retryAfter }).end(body);
      return true;
    },
  }).then((srv) => console.log(`listening ${new URL(srv.url).port}`));
}

export interface RateLimitedNode {
  readonly url: string;
  readonly pid: number;
  /** Every request received so far. */
  log(): Promise<StandinRequest[]>;
  /** The next request is answered 429 with this Retry-After (seconds, or an HTTP date). */
  refuseNext(retryAfter: string): Promise<void>;
  /** SIGKILL by PID; resolves when it is gone. */
  stop(): Promise<void>;
}

const SCRIPT = fileURLToPath(import.meta.url);

export async function startRateLimitedNode(plan: StandinPlan): Promise<RateLimitedNode> {
  const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', SCRIPT, JSON.stringify(plan)], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const port = await new Promise<number>((resolve, reject) => {
    let out = '';
    child.stdout!.setEncoding('utf8').on('data', (d: string) => {
      out += d;
      const m = /listening (\d+)/.exec(out);
      if (m) resolve(Number(m[1]));
    });
    child.on('exit', (code) => reject(new Error(`rate-limited stand-in exited (${code}) before listening: ${out}`)));
  });
  const url = `http://127.0.0.1:${port}`;
  return {
    url,
    pid: child.pid!,
    log: async () => (await (await fetch(`${url}/__log`)).json()) as StandinRequest[],
    refuseNext: async (retryAfter) =>
      void (await fetch(`${url}/__control`, { method: 'POST', body: JSON.stringify({ refuseNext: { retryAfter } }) })),
    stop: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const gone = new Promise<void>((r) => child.once('exit', () => r()));
      process.kill(child.pid!, 'SIGKILL');
      await gone;
    },
  };
}

/** The most calls and units accepted in any one-second window of arrivals. */
export function busiestSecond(log: readonly StandinRequest[]): { calls: number; units: number } {
  const ok = log.filter((r) => !r.refused);
  let calls = 0;
  let units = 0;
  for (let i = 0; i < ok.length; i++) {
    let c = 0;
    let u = 0;
    for (let j = i; j < ok.length && ok[j].at < ok[i].at + 1000; j++) {
      c += ok[j].calls;
      u += ok[j].units;
    }
    calls = Math.max(calls, c);
    units = Math.max(units, u);
  }
  return { calls, units };
}

if (process.argv[1] === SCRIPT) serve(JSON.parse(process.argv[2] ?? '{}') as StandinPlan);
