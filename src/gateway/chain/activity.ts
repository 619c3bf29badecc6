// Ongoing activity on an embedded chain, so that block, log and pending-transaction subscribers (and the dashboard's
// examples) see a moving chain: every `intervalMs` one token transfer (a Transfer log), and every fourth round an ETH
// transfer too, between dev accounts the one-off seed (./seed.ts) leaves alone (accounts 6 and up), so the seeded
// state other code reads (balances of accounts 0-5, the seeded range's logs) does not change. The first round funds
// that ring with tokens from account 0; after that one token travels around the ring, so it never runs dry.
//
// One round at a time: a round sends, then waits for its receipts (anvil's interval miner includes them in its next
// block; waiting is bounded), and only then is the next one scheduled. stop() aborts the round in flight and
// resolves once it has settled; a failure while stopping is not an error.
import type { Artifact } from './compile.js';
import { rpc, type SeededChain } from './seed.js';

type Hex = `0x${string}`;

export interface ActivityOptions {
  url: string;
  seeded: SeededChain;
  artifact: Artifact;
  /** Milliseconds between the end of one round and the start of the next (> 0). */
  intervalMs: number;
  /** Longest wait for a round's receipts (ms): a few block times. */
  receiptTimeoutMs: number;
  /** A round failed while the chain was running (not called for failures caused by stop()). */
  onError?: (err: Error) => void;
}

export interface ActivityStats {
  rounds: number;
  tokenTransfers: number;
  ethTransfers: number;
  errors: number;
}

export interface Activity {
  stats(): ActivityStats;
  stop(): Promise<void>;
}

const E18 = 10n ** 18n;
const word = (hex: string) => hex.replace(/^0x/, '').toLowerCase().padStart(64, '0');
/** Every fourth round also moves ETH. */
const ETH_EVERY = 4;

export function startActivity(opts: ActivityOptions): Activity {
  if (!(opts.intervalMs > 0)) throw new Error(`activity interval must be > 0 ms, got ${opts.intervalMs}`);
  const { url, seeded } = opts;
  const ring = seeded.accounts.slice(6);
  if (ring.length < 2) throw new Error(`chain activity needs at least 8 dev accounts, got ${seeded.accounts.length}`);
  const transferSel = opts.artifact.methodIdentifiers['transfer(address,uint256)'];
  if (!transferSel) throw new Error('Token ABI has no transfer(address,uint256)');
  const transfer = (to: Hex, amount: bigint) => `0x${transferSel}${word(to)}${word(amount.toString(16))}`;

  const stats: ActivityStats = { rounds: 0, tokenTransfers: 0, ethTransfers: 0, errors: 0 };
  const abort = new AbortController();
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let inFlight: Promise<void> | undefined;

  // Cut short by stop(); the listener goes with the timer, so a long-running chain does not pile them up.
  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      const onAbort = () => {
        clearTimeout(t);
        resolve();
      };
      const t = setTimeout(() => {
        abort.signal.removeEventListener('abort', onAbort);
        resolve();
      }, ms);
      abort.signal.addEventListener('abort', onAbort, { once: true });
    });

  async function mined(hash: Hex): Promise<void> {
    const deadline = Date.now() + opts.receiptTimeoutMs;
    while (!stopped && Date.now() < deadline) {
      const r = await rpc<{ status: Hex } | null>(url, 'eth_getTransactionReceipt', [hash], abort.signal);
      if (r) {
        if (r.status !== '0x1') throw new Error(`activity transaction ${hash} reverted`);
        return;
      }
      await sleep(100);
    }
    if (!stopped) throw new Error(`activity transaction ${hash} not mined within ${opts.receiptTimeoutMs} ms`);
  }

  async function round(n: number): Promise<void> {
    const txs: { tx: Record<string, unknown>; kind: 'token' | 'eth' }[] = [];
    if (n === 0) {
      txs.push({
        kind: 'token',
        tx: { from: seeded.accounts[0], to: seeded.token.address, data: transfer(ring[0], 1000n * E18) },
      });
    } else {
      const k = (n - 1) % ring.length;
      const from = ring[k];
      const to = ring[(k + 1) % ring.length];
      txs.push({ kind: 'token', tx: { from, to: seeded.token.address, data: transfer(to, E18) } });
      if (n % ETH_EVERY === 0) txs.push({ kind: 'eth', tx: { from, to, value: `0x${(E18 / 1000n).toString(16)}` } });
    }
    const hashes: Hex[] = [];
    // Sequentially: anvil assigns each unlocked sender's nonces in order.
    for (const { tx } of txs) hashes.push(await rpc<Hex>(url, 'eth_sendTransaction', [tx], abort.signal));
    for (const h of hashes) await mined(h);
    if (stopped) return;
    stats.rounds++;
    for (const { kind } of txs) kind === 'token' ? stats.tokenTransfers++ : stats.ethTransfers++;
  }

  let n = 0;
  const schedule = () => {
    if (stopped) return;
    timer = setTimeout(() => {
      timer = undefined;
      inFlight = round(n++)
        .catch((err: unknown) => {
          if (stopped) return; // anvil is going away: an aborted or refused call is expected
          stats.errors++;
          opts.onError?.(err instanceof Error ? err : new Error(String(err)));
        })
        .finally(() => {
          inFlight = undefined;
          schedule();
        });
    }, opts.intervalMs);
    // Never keep the process alive just for the activity.
    timer.unref();
  };
  schedule();

  return {
    stats: () => ({ ...stats }),
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      abort.abort();
      await inFlight;
    },
  };
}
