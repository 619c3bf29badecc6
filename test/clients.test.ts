// Real clients through rpcgate: ethers v6 (with its JSON-RPC batching), viem (http transport, batch: true),
// web3.js v4 and the generated client (request and batch) each read the block number, a block, a balance,
// logs, a transaction and its receipt — on both URL shapes (A `/network/v2/key`, B `/network/key`) and both
// networks, against the seeded token contract and transfers of the embedded chains.
import { JsonRpcProvider } from 'ethers';
import { createPublicClient, http } from 'viem';
import { Web3 } from 'web3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient } from '../generated/node/client.js';
import { startService } from '../src/gateway/server/service.js';
import type { SeededChain } from '../src/gateway/chain/index.js';

type Service = Awaited<ReturnType<typeof startService>>;
let service: Service;

const NETWORKS = ['mainnet', 'testnet'] as const;
const SHAPES = ['A', 'B'] as const;
// keccak256("Transfer(address,address,uint256)")
const TRANSFER = '0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef' as const;

beforeAll(async () => {
  service = await startService({ port: 0, strictResults: true, logLevel: 'silent', devKey: true });
});
afterAll(async () => {
  await service?.stop();
});

/** The URL of a network on an access point: A `/{network}/v2/{key}`, B `/{network}/{key}`. */
function urlOf(network: string, shape: 'A' | 'B'): string {
  const url = service.urls[network][shape];
  // Check the shape here, so a test cannot pass on the wrong access point.
  expect(new URL(url).pathname).toBe(shape === 'A' ? `/${network}/v2/${service.key}` : `/${network}/${service.key}`);
  return url;
}
const seededOf = (network: string): SeededChain => service.seeded[network];
const chainIdOf = (network: string): number => service.networks[network].chainId!;

/** What every client must read the same way. */
interface Reading {
  chainId: number;
  blockNumber: bigint;
  blockHash: string;
  blockTxCount: number;
  balance: bigint;
  logs: { address: string; topic0: string; txHash: string }[];
  tx: { hash: string; from: string; to: string | null; blockNumber: bigint };
  receipt: { status: number; blockHash: string; logCount: number };
}

function checkReading(r: Reading, network: string) {
  const s = seededOf(network);
  expect(r.chainId).toBe(chainIdOf(network));
  expect(r.blockNumber).toBeGreaterThanOrEqual(BigInt(s.toBlock));
  expect(r.blockHash).toBe(s.blockWithLogs.hash);
  expect(r.blockTxCount).toBeGreaterThan(0);
  expect(r.balance).toBeGreaterThan(0n);
  // Four token transfers (three `transfer`, one `transferFrom`) emit Transfer; the mint in the constructor too.
  const transfers = r.logs.filter(
    (l) => l.address.toLowerCase() === s.token.address.toLowerCase() && l.topic0 === TRANSFER,
  );
  expect(transfers.length).toBeGreaterThanOrEqual(4);
  expect(transfers.map((l) => l.txHash)).toContain(s.txHash);
  expect(r.tx.hash).toBe(s.txHash);
  expect(r.tx.from.toLowerCase()).toBe(s.accounts[0].toLowerCase());
  expect(r.tx.to?.toLowerCase()).toBe(s.token.address.toLowerCase());
  expect(r.tx.blockNumber).toBe(BigInt(s.blockWithLogs.number));
  expect(r.receipt.status).toBe(1);
  expect(r.receipt.blockHash).toBe(s.blockWithLogs.hash);
  expect(r.receipt.logCount).toBeGreaterThan(0);
}

async function readWithEthers(url: string, network: string): Promise<{ reading: Reading; batches: number[] }> {
  const s = seededOf(network);
  const provider = new JsonRpcProvider(url, undefined, { batchMaxCount: 10, batchStallTime: 20, staticNetwork: false });
  // ethers emits what it sends and receives: a batch payload is an array, answered by an array.
  const batches: number[] = [];
  provider.on('debug', (e: { action: string; payload?: unknown; result?: unknown }) => {
    if (e.action === 'receiveRpcResult' && Array.isArray(e.result) && e.result.length > 1)
      batches.push(e.result.length);
  });
  try {
    const [net, blockNumber, block, balance, logs, tx, receipt] = await Promise.all([
      provider.getNetwork(),
      provider.getBlockNumber(),
      provider.getBlock(BigInt(s.blockWithLogs.number)),
      provider.getBalance(s.accounts[1]),
      provider.getLogs({
        address: s.token.address,
        fromBlock: BigInt(s.fromBlock),
        toBlock: BigInt(s.toBlock),
        topics: [TRANSFER],
      }),
      provider.getTransaction(s.txHash),
      provider.getTransactionReceipt(s.txHash),
    ]);
    return {
      batches,
      reading: {
        chainId: Number(net.chainId),
        blockNumber: BigInt(blockNumber),
        blockHash: block!.hash!,
        blockTxCount: block!.transactions.length,
        balance,
        logs: logs.map((l) => ({ address: l.address, topic0: l.topics[0], txHash: l.transactionHash })),
        tx: { hash: tx!.hash, from: tx!.from, to: tx!.to, blockNumber: BigInt(tx!.blockNumber!) },
        receipt: { status: receipt!.status!, blockHash: receipt!.blockHash, logCount: receipt!.logs.length },
      },
    };
  } finally {
    provider.destroy();
  }
}

async function readWithViem(url: string, network: string): Promise<{ reading: Reading; batches: number[] }> {
  const s = seededOf(network);
  const batches: number[] = [];
  const client = createPublicClient({
    transport: http(url, {
      batch: { batchSize: 10, wait: 20 },
      // viem hands us the Request it sends: a batch body is a JSON array.
      onFetchRequest: async (req) => {
        const body = (await req.clone().json()) as unknown;
        if (Array.isArray(body) && body.length > 1) batches.push(body.length);
      },
    }),
  });
  const [chainId, blockNumber, block, balance, logs, tx, receipt] = await Promise.all([
    client.getChainId(),
    client.getBlockNumber({ cacheTime: 0 }),
    client.getBlock({ blockNumber: BigInt(s.blockWithLogs.number) }),
    client.getBalance({ address: s.accounts[1] }),
    client.getLogs({ address: s.token.address, fromBlock: BigInt(s.fromBlock), toBlock: BigInt(s.toBlock) }),
    client.getTransaction({ hash: s.txHash }),
    client.getTransactionReceipt({ hash: s.txHash }),
  ]);
  return {
    batches,
    reading: {
      chainId,
      blockNumber,
      blockHash: block.hash!,
      blockTxCount: block.transactions.length,
      balance,
      logs: logs.map((l) => ({ address: l.address, topic0: l.topics[0] as string, txHash: l.transactionHash! })),
      tx: { hash: tx.hash, from: tx.from, to: tx.to, blockNumber: tx.blockNumber! },
      receipt: {
        status: receipt.status === 'success' ? 1 : 0,
        blockHash: receipt.blockHash,
        logCount: receipt.logs.length,
      },
    },
  };
}

async function readWithWeb3(url: string, network: string): Promise<Reading> {
  const s = seededOf(network);
  const web3 = new Web3(url);
  const [chainId, blockNumber, block, balance, logs, tx, receipt] = await Promise.all([
    web3.eth.getChainId(),
    web3.eth.getBlockNumber(),
    web3.eth.getBlock(BigInt(s.blockWithLogs.number)),
    web3.eth.getBalance(s.accounts[1]),
    web3.eth.getPastLogs({ address: s.token.address, fromBlock: s.fromBlock, toBlock: s.toBlock, topics: [TRANSFER] }),
    web3.eth.getTransaction(s.txHash),
    web3.eth.getTransactionReceipt(s.txHash),
  ]);
  const logObjs = logs.filter((l): l is Exclude<typeof l, string> => typeof l !== 'string');
  return {
    chainId: Number(chainId),
    blockNumber: BigInt(blockNumber),
    blockHash: String(block.hash),
    blockTxCount: block.transactions.length,
    balance: BigInt(balance),
    logs: logObjs.map((l) => ({
      address: String(l.address),
      topic0: String(l.topics?.[0]),
      txHash: String(l.transactionHash),
    })),
    tx: {
      hash: String(tx.hash),
      from: String(tx.from),
      to: tx.to ? String(tx.to) : null,
      blockNumber: BigInt(tx.blockNumber!),
    },
    receipt: { status: Number(receipt.status), blockHash: String(receipt.blockHash), logCount: receipt.logs.length },
  };
}

async function readWithGenerated(url: string, network: string, useBatch: boolean): Promise<Reading> {
  const s = seededOf(network);
  const client = createClient({ url });
  const filter = { address: s.token.address, fromBlock: s.fromBlock, toBlock: s.toBlock, topics: [TRANSFER] };
  // Each is cast to its shape below; the batch and the parallel requests type them differently.
  let chainId: unknown,
    blockNumber: unknown,
    block: unknown,
    balance: unknown,
    logs: unknown,
    tx: unknown,
    receipt: unknown;
  if (useBatch) {
    const out = await client.batch([
      { method: 'eth_chainId' },
      { method: 'eth_blockNumber' },
      { method: 'eth_getBlockByNumber', params: [s.blockWithLogs.number, false] },
      { method: 'eth_getBalance', params: [s.accounts[1], 'latest'] },
      { method: 'eth_getLogs', params: [filter] },
      { method: 'eth_getTransactionByHash', params: [s.txHash] },
      { method: 'eth_getTransactionReceipt', params: [s.txHash] },
    ] as const);
    for (const r of out) if (r instanceof Error) throw r;
    [chainId, blockNumber, block, balance, logs, tx, receipt] = out as unknown as never[];
  } else {
    [chainId, blockNumber, block, balance, logs, tx, receipt] = await Promise.all([
      client.request('eth_chainId'),
      client.request('eth_blockNumber'),
      client.request('eth_getBlockByNumber', [s.blockWithLogs.number, false]),
      client.request('eth_getBalance', [s.accounts[1], 'latest']),
      client.request('eth_getLogs', [filter]),
      client.request('eth_getTransactionByHash', [s.txHash]),
      client.request('eth_getTransactionReceipt', [s.txHash]),
    ]);
  }
  const b = block as unknown as { hash: string; transactions: unknown[] };
  const t = tx as unknown as { hash: string; from: string; to: string | null; blockNumber: string };
  const rc = receipt as unknown as { status: string; blockHash: string; logs: unknown[] };
  return {
    chainId: Number(chainId),
    blockNumber: BigInt(blockNumber as unknown as string),
    blockHash: b.hash,
    blockTxCount: b.transactions.length,
    balance: BigInt(balance as unknown as string),
    logs: (logs as unknown as { address: string; topics: string[]; transactionHash: string }[]).map((l) => ({
      address: l.address,
      topic0: l.topics[0],
      txHash: l.transactionHash,
    })),
    tx: { hash: t.hash, from: t.from, to: t.to, blockNumber: BigInt(t.blockNumber) },
    receipt: { status: Number(rc.status), blockHash: rc.blockHash, logCount: rc.logs.length },
  };
}

describe('the two networks', () => {
  it('have distinct chain ids, each matching its configuration', async () => {
    const ids = await Promise.all(NETWORKS.map((n) => createClient({ url: urlOf(n, 'A') }).request('eth_chainId')));
    expect(ids.map(Number)).toEqual(NETWORKS.map(chainIdOf));
    expect(new Set(ids).size).toBe(2);
  });
});

for (const network of NETWORKS) {
  for (const shape of SHAPES) {
    describe(`${network}, access point ${shape}`, () => {
      const url = () => urlOf(network, shape);

      it('ethers v6 JsonRpcProvider (batchMaxCount 10): the calls went as JSON-RPC batches', async () => {
        const { reading, batches } = await readWithEthers(url(), network);
        checkReading(reading, network);
        expect(batches.length).toBeGreaterThan(0);
        expect(Math.max(...batches)).toBeGreaterThan(1);
      });

      it('viem http transport (batch: true): the calls went as JSON-RPC batches', async () => {
        const { reading, batches } = await readWithViem(url(), network);
        checkReading(reading, network);
        expect(batches.length).toBeGreaterThan(0);
      });

      it('web3.js v4', async () => {
        checkReading(await readWithWeb3(url(), network), network);
      });

      it('the generated client: request', async () => {
        checkReading(await readWithGenerated(url(), network, false), network);
      });

      it('the generated client: batch', async () => {
        checkReading(await readWithGenerated(url(), network, true), network);
      });
    });
  }
}

describe('a wrong URL is refused by every client (the tests above can fail)', () => {
  it('unknown key → the clients reject', async () => {
    const bad = `${new URL(service.url).origin}/mainnet/v2/not-a-key-0000`;
    await expect(createClient({ url: bad }).request('eth_blockNumber')).rejects.toThrow();
    const provider = new JsonRpcProvider(bad, 1, { staticNetwork: true, batchMaxCount: 1 });
    await expect(provider.getBlockNumber()).rejects.toThrow();
    provider.destroy();
    await expect(createPublicClient({ transport: http(bad, { retryCount: 0 }) }).getBlockNumber()).rejects.toThrow();
  });
});
