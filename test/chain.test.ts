// The embedded chain: anvil from the npm package starts on a free port with the requested chain id and is
// seeded — the token has code, Transfer logs exist, receipts exist, balances moved — and stop() ends it.
import { mkdirSync, readdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaults, fromAssignments, fromEnv, merge, validate } from '../src/gateway/config/config.js';
import {
  anvilBinary,
  compileToken,
  DEFAULT_ACTIVITY_INTERVAL_MS,
  rpc,
  startEmbeddedChain,
  type EmbeddedChain,
} from '../src/gateway/chain/index.js';

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
      {
        address: chain.seeded.token.address,
        fromBlock: chain.seeded.fromBlock,
        toBlock: chain.seeded.toBlock,
        topics: [TRANSFER_TOPIC],
      },
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
    const block = await rpc<{ hash: string; transactions: string[] }>(chain.url, 'eth_getBlockByNumber', [
      chain.seeded.blockWithLogs.number,
      false,
    ]);
    expect(block.hash).toBe(chain.seeded.blockWithLogs.hash);
    expect(block.transactions).toContain(chain.seeded.txHash);
  });

  it('balances moved: token balance of a receiver, ETH of a receiver', async () => {
    const [, a1, , , a4] = chain.seeded.accounts;
    const balanceOf = `0x70a08231${a1.slice(2).padStart(64, '0')}`;
    const tokenBal = await rpc<string>(chain.url, 'eth_call', [
      { to: chain.seeded.token.address, data: balanceOf },
      'latest',
    ]);
    expect(BigInt(tokenBal)).toBe(750n * 10n ** 18n);
    expect(BigInt(await rpc<string>(chain.url, 'eth_getBalance', [a4, 'latest']))).toBe(10001n * 10n ** 18n);
  });

  it('caches the compiled artifact in the data dir', () => {
    const files = readdirSync(resolve(dataDir, 'artifacts'));
    expect(files.some((f) => /^Token-[0-9a-f]{16}\.json$/.test(f))).toBe(true);
    expect(compileToken(dataDir).bytecode).toMatch(/^0x[0-9a-f]+$/);
  });

  it('the default chain runs ongoing activity (the default interval of the config schema)', async () => {
    expect(DEFAULT_ACTIVITY_INTERVAL_MS).toBe(3000);
    expect(chain.activity).toBeTypeOf('function');
  });

  it('stop() ends the anvil process', async () => {
    const other = await startEmbeddedChain({ network: 'mainnet', chainId: 31_337, blockTime: 2, dataDir });
    expect(() => process.kill(other.pid, 0)).not.toThrow();
    await other.stop();
    expect(() => process.kill(other.pid, 0)).toThrow();
  });
});

describe('a live embedded chain: ongoing activity', () => {
  type Log = { address: string; topics: string[]; blockNumber: string; transactionHash: string };
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
  /** Transfer logs of the token after the seeded range (anvil refuses a fromBlock above the head: none yet). */
  const newTransfers = async (c: EmbeddedChain): Promise<Log[]> => {
    const from = BigInt(c.seeded.toBlock) + 1n;
    if (BigInt(await rpc<string>(c.url, 'eth_blockNumber')) < from) return [];
    return rpc<Log[]>(c.url, 'eth_getLogs', [
      {
        address: c.seeded.token.address,
        fromBlock: `0x${from.toString(16)}`,
        toBlock: 'latest',
        topics: [TRANSFER_TOPIC],
      },
    ]);
  };

  it('1 s blocks and 300 ms activity: new blocks with Transfer logs within seconds, then a clean stop', async () => {
    const errors: Error[] = [];
    const rejections: unknown[] = [];
    const onRejection = (r: unknown) => rejections.push(r);
    process.on('unhandledRejection', onRejection);
    try {
      const live = await startEmbeddedChain({
        network: 'live',
        chainId: 31_401,
        blockTime: 1,
        dataDir,
        activityIntervalMs: 300,
        onActivityError: (e) => errors.push(e),
      });
      const seededHead = BigInt(live.seeded.toBlock);
      let logs: Log[] = [];
      for (let i = 0; i < 100 && logs.length < 3; i++) {
        await sleep(200);
        logs = await newTransfers(live);
      }
      // At least 2 Transfer logs after the seed, from the token, in blocks after the seeded range, from distinct txs.
      expect(logs.length).toBeGreaterThanOrEqual(2);
      for (const l of logs) {
        expect(l.address.toLowerCase()).toBe(live.seeded.token.address.toLowerCase());
        expect(BigInt(l.blockNumber)).toBeGreaterThan(seededHead);
      }
      expect(new Set(logs.map((l) => l.transactionHash)).size).toBe(logs.length);
      // Senders and receivers: account 0 funds the ring once, then the ring (accounts 6+) only; accounts 1-5 untouched.
      const party = (topic: string) => `0x${topic.slice(26)}`;
      const ring = new Set(live.seeded.accounts.slice(6).map((a) => a.toLowerCase()));
      expect(party(logs[0].topics[1])).toBe(live.seeded.accounts[0].toLowerCase());
      for (const l of logs) expect(ring.has(party(l.topics[2])), l.topics[2]).toBe(true);
      for (const l of logs.slice(1)) expect(ring.has(party(l.topics[1])), l.topics[1]).toBe(true);
      expect(BigInt(await rpc<string>(live.url, 'eth_blockNumber'))).toBeGreaterThan(seededHead + 1n);
      expect(live.activity!().tokenTransfers).toBeGreaterThanOrEqual(2);

      // Stop while a round is (most likely) waiting for its block: no error, no rejection, anvil gone.
      await live.stop();
      expect(() => process.kill(live.pid, 0)).toThrow();
      await sleep(700); // a timer that outlived stop() would fire here
      expect(errors).toEqual([]);
      expect(live.activity!().errors).toBe(0);
      expect(rejections).toEqual([]);
    } finally {
      process.off('unhandledRejection', onRejection);
    }
  }, 60_000);

  it('every fourth round also moves ETH between the ring accounts', async () => {
    const live = await startEmbeddedChain({
      network: 'live',
      chainId: 31_402,
      blockTime: 1,
      dataDir,
      activityIntervalMs: 50,
    });
    try {
      for (let i = 0; i < 150 && live.activity!().ethTransfers < 1; i++) await sleep(100);
      expect(live.activity!().ethTransfers).toBeGreaterThanOrEqual(1);
      const ringBalances = await Promise.all(
        live.seeded.accounts.slice(6).map((a) => rpc<string>(live.url, 'eth_getBalance', [a, 'latest'])),
      );
      // Dev accounts start with 10000 ETH: one has paid 0.001 ETH plus gas, one has received it.
      expect(ringBalances.some((b) => BigInt(b) < 10_000n * 10n ** 18n)).toBe(true);
      expect(ringBalances.some((b) => BigInt(b) > 10_000n * 10n ** 18n)).toBe(true);
    } finally {
      await live.stop();
    }
  }, 60_000);

  it('activityIntervalMs 0: no activity, the chain holds only the seed', async () => {
    const still = await startEmbeddedChain({
      network: 'still',
      chainId: 31_403,
      blockTime: 1,
      dataDir,
      activityIntervalMs: 0,
    });
    try {
      expect(still.activity).toBeUndefined();
      await sleep(2500);
      expect(BigInt(await rpc<string>(still.url, 'eth_blockNumber'))).toBeGreaterThan(BigInt(still.seeded.toBlock)); // blocks go on
      expect(await newTransfers(still)).toEqual([]);
    } finally {
      await still.stop();
    }
  }, 60_000);
});

describe('networks.<n>.activityIntervalMs (config)', () => {
  it('is a setting by --set and by environment; 0 turns it off; a negative or fractional value is refused', () => {
    const set = merge(defaults, fromAssignments(['networks.testnet.activityIntervalMs=0']));
    expect(validate(set).networks.testnet.activityIntervalMs).toBe(0);
    const env = merge(defaults, fromEnv({ RPCGATE_NETWORKS_MAINNET_ACTIVITY_INTERVAL_MS: '1500' }, ['mainnet']));
    expect(validate(env).networks.mainnet.activityIntervalMs).toBe(1500);
    // Not set: absent, and the embedded chain applies the schema default (on).
    expect(validate(merge(defaults)).networks.mainnet.activityIntervalMs ?? DEFAULT_ACTIVITY_INTERVAL_MS).toBe(3000);
    for (const bad of [-1, 2.5])
      expect(() => validate(merge(defaults, { networks: { mainnet: { activityIntervalMs: bad } } }))).toThrow(
        /activityIntervalMs/,
      );
  });
});
