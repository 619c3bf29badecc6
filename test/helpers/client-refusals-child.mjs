// One client library over one transport, as a dApp uses it, through rpcgate's refusals (test/client-refusals.test.ts).
// argv[2]: JSON { lib: 'ethers' | 'viem' | 'web3', transport: 'http' | 'ws', chainId, cases: [{ name, url, call,
// headers?, parallel?, phase }] }. Prints one JSON line per case: { case, ok, message, ms }. The cases of phase 1 run,
// then `PAUSE` is printed and the child waits for a line on stdin (the test stops the limits backend meanwhile), then
// phase 2 runs and `END` is printed; the child then stays alive until the test ends it, so a crash after the last
// answer (an unhandled 'error' event, say) shows. Plain JavaScript: no build step, the libraries as published.
// No process-wide error handler on purpose: whatever a library throws outside a promise must be seen to kill us.
import { createInterface } from 'node:readline';
import { FetchRequest, JsonRpcProvider, Network, WebSocketProvider } from 'ethers';
import { createPublicClient, http, webSocket } from 'viem';
import { Web3 } from 'web3';
import { HttpProvider } from 'web3-providers-http';
import { WebSocketProvider as Web3WsProvider } from 'web3-providers-ws';
import WebSocket from 'ws';

const input = JSON.parse(process.argv[2]);
const { lib, transport, chainId } = input;
const CASE_TIMEOUT_MS = 10_000;
const ADDRESS = '0x00000000000000000000000000000000000000aa';
const addr = (i) => `0x${(0xa0 + i).toString(16).padStart(40, '0')}`;

/** A client of this library over this transport: { call(kind, i), close() }. */
function client(c) {
  const headers = c.headers ?? {};
  if (lib === 'ethers') {
    const network = Network.from(chainId);
    let p;
    if (transport === 'http') {
      const req = new FetchRequest(c.url);
      for (const [k, v] of Object.entries(headers)) req.setHeader(k, v);
      p = new JsonRpcProvider(req, network, { staticNetwork: network });
    } else {
      p =
        Object.keys(headers).length === 0
          ? new WebSocketProvider(c.url, network, { staticNetwork: network })
          : new WebSocketProvider(() => new WebSocket(c.url, { headers }), network, { staticNetwork: network });
    }
    return {
      call: (kind, i) =>
        kind === 'blockNumber'
          ? p.getBlockNumber()
          : kind === 'balance'
            ? p.getBalance(addr(i))
            : kind === 'logs'
              ? p.getLogs({ fromBlock: 0, toBlock: 1000 })
              : p.getCode(ADDRESS),
      close: () => p.destroy(),
    };
  }
  if (lib === 'viem') {
    const t = transport === 'http' ? http(c.url, { fetchOptions: { headers } }) : webSocket(c.url);
    const v = createPublicClient({ transport: t });
    return {
      call: (kind, i) =>
        kind === 'blockNumber'
          ? v.getBlockNumber({ cacheTime: 0 })
          : kind === 'balance'
            ? v.getBalance({ address: addr(i) })
            : kind === 'logs'
              ? v.getLogs({ fromBlock: 0n, toBlock: 1000n })
              : v.getCode({ address: ADDRESS }),
      close: async () => {
        if (transport === 'ws') (await v.transport.getRpcClient()).close();
      },
    };
  }
  const provider =
    transport === 'http'
      ? Object.keys(headers).length === 0
        ? c.url
        : new HttpProvider(c.url, { providerOptions: { headers } })
      : Object.keys(headers).length === 0
        ? c.url
        : new Web3WsProvider(c.url, { headers });
  const w = new Web3(provider);
  return {
    call: (kind, i) =>
      kind === 'blockNumber'
        ? w.eth.getBlockNumber()
        : kind === 'balance'
          ? w.eth.getBalance(addr(i))
          : kind === 'logs'
            ? w.eth.getPastLogs({ fromBlock: 0, toBlock: 1000 })
            : w.eth.getCode(ADDRESS),
    close: () => {
      if (transport === 'ws') w.provider?.disconnect?.(1000, 'done');
    },
  };
}

/** What the user reads: the thrown message (a library's own wrapping included). */
function messageOf(e) {
  return e instanceof Error ? e.message : String(e);
}

async function run(c) {
  const t0 = performance.now();
  let cl;
  let timer;
  const timeout = new Promise(
    (_, fail) =>
      (timer = setTimeout(
        () => fail(new Error(`TIMEOUT: nothing within ${CASE_TIMEOUT_MS / 1000} s`)),
        CASE_TIMEOUT_MS,
      )),
  );
  let out;
  try {
    cl = client(c);
    const n = c.parallel ?? 1;
    await Promise.race([Promise.all(Array.from({ length: n }, (_, i) => cl.call(c.call, i))), timeout]);
    out = { case: c.name, ok: true, message: n > 1 ? `all ${n} calls answered` : 'answered' };
  } catch (e) {
    out = { case: c.name, ok: false, message: messageOf(e) };
  }
  clearTimeout(timer);
  out.ms = Math.round(performance.now() - t0);
  try {
    await cl?.close();
  } catch {
    /* closing a provider whose socket the server closed */
  }
  process.stdout.write(`${JSON.stringify(out)}\n`);
}

for (const c of input.cases.filter((c) => c.phase === 1)) await run(c);
process.stdout.write('PAUSE\n');
const rl = createInterface({ input: process.stdin });
await new Promise((r) => rl.once('line', r));
for (const c of input.cases.filter((c) => c.phase === 2)) await run(c);
process.stdout.write('END\n');
// Stay alive until the test ends us (SIGTERM), or stdin closes.
rl.once('close', () => process.exit(0));
