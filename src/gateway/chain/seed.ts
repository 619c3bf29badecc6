// Seeds a fresh embedded chain with activity so there is something to read: deploys the Token contract from an
// anvil dev account (accounts are unlocked: plain eth_sendTransaction, no signing) and makes token and ETH
// transfers between dev accounts across a few blocks, waiting for every receipt.
import type { Artifact } from './compile.js';

type Hex = `0x${string}`;

export interface SeededChain {
  /** anvil's unlocked dev accounts. */
  accounts: Hex[];
  token: { address: Hex; deployTx: Hex; deployBlock: Hex; name: string; symbol: string };
  /** Every seeding transaction, in order (deploy first). */
  transactions: Hex[];
  tokenTransfers: Hex[];
  ethTransfers: Hex[];
  /** A transaction with logs (a token transfer) and the block it is in. */
  txHash: Hex;
  blockWithLogs: { number: Hex; hash: Hex };
  /** Block range covering the seeding (for eth_getLogs). */
  fromBlock: Hex;
  toBlock: Hex;
}

interface Receipt {
  status: Hex;
  blockNumber: Hex;
  blockHash: Hex;
  contractAddress: Hex | null;
  logs: unknown[];
}

let nextId = 1;
/** One JSON-RPC call to the embedded node (15 s at most; `signal` aborts it sooner). */
export async function rpc<T = unknown>(
  url: string,
  method: string,
  params: unknown[] = [],
  signal?: AbortSignal,
): Promise<T> {
  // One controller per call, unhooked from `signal` afterwards (AbortSignal.any on a long-lived signal can pile up).
  const ac = new AbortController();
  const onAbort = () => ac.abort(signal?.reason);
  const timer = setTimeout(() => ac.abort(new Error(`${method}: no answer within 15 s`)), 15_000);
  if (signal?.aborted) onAbort();
  else signal?.addEventListener('abort', onAbort, { once: true });
  let json: { result?: T; error?: { code: number; message: string } };
  try {
    const res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: nextId++, method, params }),
      signal: ac.signal,
    });
    json = (await res.json()) as typeof json;
  } finally {
    clearTimeout(timer);
    signal?.removeEventListener('abort', onAbort);
  }
  if (json.error) throw new Error(`${method}: ${json.error.message} (${json.error.code})`);
  return json.result as T;
}

const word = (hex: string) => hex.replace(/^0x/, '').toLowerCase().padStart(64, '0');
const uint = (n: bigint) => word(n.toString(16));
function encodeString(s: string): string {
  const bytes = Buffer.from(s, 'utf8');
  return uint(BigInt(bytes.length)) + bytes.toString('hex').padEnd(Math.ceil(bytes.length / 32) * 64, '0');
}
const E18 = 10n ** 18n;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function receipt(url: string, hash: Hex): Promise<Receipt> {
  for (let i = 0; i < 300; i++) {
    const r = await rpc<Receipt | null>(url, 'eth_getTransactionReceipt', [hash]);
    if (r) {
      if (r.status !== '0x1') throw new Error(`seed transaction ${hash} reverted`);
      return r;
    }
    await sleep(50);
  }
  throw new Error(`no receipt for seed transaction ${hash}`);
}

/** Sends transactions (sequentially, so anvil assigns nonces in order), mines a block, waits for the receipts. */
async function round(url: string, txs: Record<string, unknown>[]): Promise<{ hashes: Hex[]; receipts: Receipt[] }> {
  const hashes: Hex[] = [];
  for (const tx of txs) hashes.push(await rpc<Hex>(url, 'eth_sendTransaction', [tx]));
  // Mine now rather than waiting for the block timer; the interval miner keeps running afterwards.
  await rpc(url, 'evm_mine', []);
  const receipts = await Promise.all(hashes.map((h) => receipt(url, h)));
  return { hashes, receipts };
}

export async function seedChain(url: string, artifact: Artifact, label: string): Promise<SeededChain> {
  const accounts = await rpc<Hex[]>(url, 'eth_accounts');
  if (accounts.length < 6) throw new Error(`expected anvil dev accounts, got ${accounts.length}`);
  const [a0, a1, a2, a3, a4, a5] = accounts;
  const sel = (sig: string) => {
    const s = artifact.methodIdentifiers[sig];
    if (!s) throw new Error(`Token ABI has no ${sig}`);
    return s;
  };
  const transfer = (to: Hex, amount: bigint) => `0x${sel('transfer(address,uint256)')}${word(to)}${uint(amount)}`;
  const approve = (sp: Hex, amount: bigint) => `0x${sel('approve(address,uint256)')}${word(sp)}${uint(amount)}`;
  const transferFrom = (from: Hex, to: Hex, amount: bigint) =>
    `0x${sel('transferFrom(address,address,uint256)')}${word(from)}${word(to)}${uint(amount)}`;

  const name = `rpcgate ${label} token`;
  // RG + the network's initial: RGM on mainnet, RGT on testnet, RGH on holesky.
  const symbol = `RG${label.charAt(0).toUpperCase()}`;
  // constructor(string,string,uint256): three head words (two offsets and the supply), then the strings.
  const nameEnc = encodeString(name);
  const ctorArgs =
    uint(96n) + uint(BigInt(96 + nameEnc.length / 2)) + uint(1_000_000n * E18) + nameEnc + encodeString(symbol);

  const deploy = await round(url, [{ from: a0, data: artifact.bytecode + ctorArgs }]);
  const token = deploy.receipts[0].contractAddress;
  if (!token) throw new Error('token deployment has no contract address');

  const r2 = await round(url, [
    { from: a0, to: token, data: transfer(a1, 1000n * E18) },
    { from: a0, to: token, data: transfer(a2, 500n * E18) },
    { from: a0, to: a4, value: `0x${(1n * E18).toString(16)}` },
    { from: a1, to: a5, value: `0x${(E18 / 2n).toString(16)}` },
  ]);
  const r3 = await round(url, [
    { from: a1, to: token, data: transfer(a3, 250n * E18) },
    { from: a2, to: token, data: approve(a3, 100n * E18) },
    { from: a2, to: a0, value: `0x${(E18 / 4n).toString(16)}` },
  ]);
  const r4 = await round(url, [{ from: a3, to: token, data: transferFrom(a2, a4, 40n * E18) }]);

  const withLogs = r2.receipts[0];
  return {
    accounts,
    token: { address: token, deployTx: deploy.hashes[0], deployBlock: deploy.receipts[0].blockNumber, name, symbol },
    transactions: [...deploy.hashes, ...r2.hashes, ...r3.hashes, ...r4.hashes],
    tokenTransfers: [r2.hashes[0], r2.hashes[1], r3.hashes[0], r4.hashes[0]],
    ethTransfers: [r2.hashes[2], r2.hashes[3], r3.hashes[2]],
    txHash: r2.hashes[0],
    blockWithLogs: { number: withLogs.blockNumber, hash: withLogs.blockHash },
    fromBlock: deploy.receipts[0].blockNumber,
    toBlock: r4.receipts[0].blockNumber,
  };
}
