// The embedded chain: anvil from the npm package starts on a free port with the requested chain id and is
// seeded — the token has code, Transfer logs exist, receipts exist, balances moved — and stop() ends it.
import { mkdirSync, readdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { anvilBinary, compileToken, rpc, startEmbeddedChain, type EmbeddedChain } from '../src/gateway/chain/index.js';

const dataDir = resolve(import.meta.dirname, '../test-output/chain');
const TRANSFER_TOPIC = '0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef';

let chain: EmbeddedChain;

beforeAll(async () => {
  mkdirSync(dataDir, { recursive: true });
  chain = await startEmbeddedChain({ network: 'testnet', chainId: 31_338, blockTime: 2, dataDir });
});
afterAll(async () => {
  await chain?.stop();
});

describe('embedded chain', () => {
  it('resolves the anvil binary from the platform package', () => {
    expect(anvilBinary()).toMatch(/@foundry-rs[\\/]anvil-[a-z0-9]+-[a-z0-9]+[\\/]bin[\\/]anvil(\.exe)?$/);
  });

  it('anvil answers on 127.0.0.1 with the requested chain id', async () => {
    expect(chain.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/);
    expect(await rpc(chain.url, 'eth_chainId')).toBe('0x7a6a');
  });

  it('the token is deployed and has code', async () => {
    const code = await rpc<string>(chain.url, 'eth_getCode', [chain.seeded.token.address, 'latest']);
    expect(code.length).toBeGreaterThan(100);
  });

  it('Transfer logs exist for the token', async () => {
    const logs = await rpc<{ topics: string[]; transactionHash: string }[]>(chain.url, 'eth_getLogs', [
      { address: chain.seeded.token.address, fromBlock: chain.seeded.fromBlock, toBlock: chain.seeded.toBlock, topics: [TRANSFER_TOPIC] },
    ]);
    // mint + 4 transfers
    expect(logs.length).toBe(5);
    expect(logs.map((l) => l.transactionHash)).toContain(chain.seeded.txHash);
  });

  it('receipts exist for every seeded transaction, and the block with logs holds the tx', async () => {
    for (const h of chain.seeded.transactions) {
      const r = await rpc<{ status: string } | null>(chain.url, 'eth_getTransactionReceipt', [h]);
      expect(r?.status).toBe('0x1');
    }
    const block = await rpc<{ hash: string; transactions: string[] }>(chain.url, 'eth_getBlockByNumber', [chain.seeded.blockWithLogs.number, false]);
    expect(block.hash).toBe(chain.seeded.blockWithLogs.hash);
    expect(block.transactions).toContain(chain.seeded.txHash);
  });

  it('balances moved: token balance of a receiver, ETH of a receiver', async () => {
    const [, a1, , , a4] = chain.seeded.accounts;
    const balanceOf = `0x70a08231${a1.slice(2).padStart(64, '0')}`;
    const tokenBal = await rpc<string>(chain.url, 'eth_call', [{ to: chain.seeded.token.address, data: balanceOf }, 'latest']);
    expect(BigInt(tokenBal)).toBe(750n * 10n ** 18n);
    expect(BigInt(await rpc<string>(chain.url, 'eth_getBalance', [a4, 'latest']))).toBe(10001n * 10n ** 18n);
  });

  it('caches the compiled artifact in the data dir', () => {
    const files = readdirSync(resolve(dataDir, 'artifacts'));
    expect(files.some((f) => /^Token-[0-9a-f]{16}\.json$/.test(f))).toBe(true);
    expect(compileToken(dataDir).bytecode).toMatch(/^0x[0-9a-f]+$/);
  });

  it('stop() ends the anvil process', async () => {
    const other = await startEmbeddedChain({ network: 'mainnet', chainId: 31_337, blockTime: 2, dataDir });
    expect(() => process.kill(other.pid, 0)).not.toThrow();
    await other.stop();
    expect(() => process.kill(other.pid, 0)).toThrow();
  });
});
