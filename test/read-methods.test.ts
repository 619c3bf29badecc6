// The remaining standard read methods of issue 12 through rpcgate, on both networks and both URL shapes, against the
// embedded anvil: each answers a result the contract's validator accepts and that says the right thing about the
// seeded chain (the token's total supply in its proof, the token in the access list, keccak of a known input, …),
// and the same answer the node gives directly — rpcgate forwards them. net_peerCount: anvil does not implement it,
// and its own -32601 must come through unchanged (not an rpcgate refusal).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { validators } from '../generated/node/validators.js';
import { startService } from '../src/gateway/server/service.js';

type Service = Awaited<ReturnType<typeof startService>>;
let service: Service;

type Reply = { result?: unknown; error?: { code: number; message: string; data?: { source?: string } } };
async function call(url: string, method: string, params: unknown[]): Promise<Reply> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
    signal: AbortSignal.timeout(10_000),
  });
  expect(res.status, `${method} HTTP status`).toBe(200);
  return (await res.json()) as Reply;
}

const TOTAL_SUPPLY_SLOT = `0x${'2'.padStart(64, '0')}`; // Token's storage: name, symbol, totalSupply
const TOTAL_SUPPLY = 1_000_000n * 10n ** 18n;
const HELLO_WORLD = '0x68656c6c6f20776f726c64';
const KECCAK_HELLO_WORLD = '0x47173285a8d7341e5e972fc677286384f802f8ef42a5ec5f03bbfa254cb01fad';

beforeAll(async () => {
  service = await startService({ port: 0, strictResults: true, logLevel: 'silent', devKey: true });
}, 120_000);
afterAll(async () => {
  await service?.stop();
});

const CASES = ['mainnet', 'testnet'].flatMap((network) =>
  (['A', 'B'] as const).map((shape) => [network, shape] as const),
);

describe.each(CASES)('%s, URL shape %s', (network, shape) => {
  const url = () => service.urls[network][shape];
  const node = () => service.networks[network].upstreams[0];
  const s = () => service.seeded[network];

  /** The call through rpcgate: a result the contract accepts. */
  async function ok(method: string, params: unknown[]): Promise<unknown> {
    expect(new URL(url()).pathname).toBe(
      shape === 'A' ? `/${network}/v2/${service.key}` : `/${network}/${service.key}`,
    );
    const reply = await call(url(), method, params);
    expect(reply.error, `${method}: ${JSON.stringify(reply.error)}`).toBeUndefined();
    const v = validators[method as keyof typeof validators];
    expect(v, method).toBeTruthy();
    expect(v.result(reply.result), `${method} result ${JSON.stringify(reply.result)} fails the contract`).toBe(true);
    return reply.result;
  }

  it("eth_accounts: the node's dev accounts, as the node answers them", async () => {
    const accounts = (await ok('eth_accounts', [])) as string[];
    expect(accounts.map((a) => a.toLowerCase())).toEqual(s().accounts.map((a) => a.toLowerCase()));
    expect((await call(node(), 'eth_accounts', [])).result).toEqual(accounts);
  });

  it("eth_getProof: the token's account proof and its totalSupply slot", async () => {
    const token = s().token.address;
    const p = (await ok('eth_getProof', [token, [TOTAL_SUPPLY_SLOT], 'latest'])) as {
      address: string;
      accountProof: string[];
      codeHash: string;
      storageProof: { key: string; value: string; proof: string[] }[];
    };
    expect(p.address.toLowerCase()).toBe(token.toLowerCase());
    expect(p.accountProof.length).toBeGreaterThan(0);
    expect(p.codeHash).not.toBe('0xc5d2460186f7233c927e7db2dcc703c0e500b653ca82273b7bfad8045d85a470'); // it has code
    expect(p.storageProof).toHaveLength(1);
    expect(BigInt(p.storageProof[0].key)).toBe(2n);
    expect(BigInt(p.storageProof[0].value)).toBe(TOTAL_SUPPLY);
    expect(p.storageProof[0].proof.length).toBeGreaterThan(0);
    // By a pinned block, the same answer as the node's own.
    const at = s().toBlock;
    expect(await ok('eth_getProof', [token, [TOTAL_SUPPLY_SLOT], at])).toEqual(
      (await call(node(), 'eth_getProof', [token, [TOTAL_SUPPLY_SLOT], at])).result,
    );
  });

  it("eth_createAccessList: totalSupply() reads the token's slot 2", async () => {
    const token = s().token.address.toLowerCase();
    const r = (await ok('eth_createAccessList', [
      { from: s().accounts[0], to: token, input: '0x18160ddd' },
      'latest',
    ])) as { accessList: { address: string; storageKeys: string[] }[]; gasUsed: string; error?: string };
    expect(r.error).toBeUndefined();
    expect(BigInt(r.gasUsed)).toBeGreaterThan(21_000n);
    const entry = r.accessList.find((e) => e.address.toLowerCase() === token);
    expect(entry?.storageKeys).toEqual([TOTAL_SUPPLY_SLOT]);
  });

  it("net_listening, eth_protocolVersion, eth_blobBaseFee: the node's answers", async () => {
    expect(await ok('net_listening', [])).toBe(true);
    const version = await ok('eth_protocolVersion', []);
    expect(version).toEqual((await call(node(), 'eth_protocolVersion', [])).result);
    const fee = await ok('eth_blobBaseFee', []);
    expect(BigInt(fee as string)).toBeGreaterThan(0n);
  });

  it('web3_sha3: keccak-256 of the data', async () => {
    expect(await ok('web3_sha3', [HELLO_WORLD])).toBe(KECCAK_HELLO_WORLD);
    expect(await ok('web3_sha3', ['0x'])).toBe('0xc5d2460186f7233c927e7db2dcc703c0e500b653ca82273b7bfad8045d85a470');
  });

  it('uncle methods: the seeded block has none (count 0x0, uncle 0 is null)', async () => {
    const b = s().blockWithLogs;
    expect(await ok('eth_getUncleCountByBlockHash', [b.hash])).toBe('0x0');
    expect(await ok('eth_getUncleCountByBlockNumber', [b.number])).toBe('0x0');
    expect(await ok('eth_getUncleCountByBlockNumber', ['latest'])).toBe('0x0');
    expect(await ok('eth_getUncleByBlockHashAndIndex', [b.hash, '0x0'])).toBeNull();
    expect(await ok('eth_getUncleByBlockNumberAndIndex', [b.number, '0x0'])).toBeNull();
  });

  it('net_peerCount: anvil\'s own "method not found" comes through unchanged', async () => {
    const direct = await call(node(), 'net_peerCount', []);
    expect(direct.error?.code).toBe(-32601);
    const through = await call(url(), 'net_peerCount', []);
    expect(through.error?.code).toBe(-32601);
    expect(through.error?.message).toBe(direct.error?.message);
    expect(through.error?.data?.source).toBeUndefined();
  });

  it('bad params are refused by the contract before they reach the node (-32602)', async () => {
    for (const [m, p] of [
      ['web3_sha3', ['hello']],
      ['eth_getProof', [s().token.address, 'not-a-list']],
      ['eth_getUncleCountByBlockHash', ['0x12']],
    ] as const) {
      const r = await call(url(), m, [...p]);
      expect(r.error?.code, m).toBe(-32602);
    }
  });
});

describe('out of the box the embedded chains keep moving (issue 12, item 4)', () => {
  it('new Transfer logs of the token appear after the seed, read through rpcgate', async () => {
    const TRANSFER = '0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef';
    const url = service.urls.mainnet.A;
    const s = service.seeded.mainnet;
    const from = BigInt(s.toBlock) + 1n;
    let logs: unknown[] = [];
    // Default activity interval 3 s, 2 s blocks: the first rounds land within ~10 s of the start.
    for (let i = 0; i < 60 && logs.length < 2; i++) {
      const head = BigInt((await call(url, 'eth_blockNumber', [])).result as string);
      if (head >= from) {
        const r = await call(url, 'eth_getLogs', [
          {
            address: s.token.address,
            fromBlock: `0x${from.toString(16)}`,
            toBlock: `0x${head.toString(16)}`,
            topics: [TRANSFER],
          },
        ]);
        expect(r.error).toBeUndefined();
        logs = r.result as unknown[];
      }
      if (logs.length < 2) await new Promise((r) => setTimeout(r, 500));
    }
    expect(logs.length).toBeGreaterThanOrEqual(2);
  }, 40_000);
});
