// Method meaning in the contracts (x-gateway, contracts/x-gateway.schema.json): every method of both contracts
// declares it and it is valid; codegen carries every `x-` key into the generated descriptor; the gateway reads it
// (src/gateway/method-meaning.ts) with fail-closed defaults; the node API routes by it — a forwarded method added to
// a copy of the contract needs no handler code, a local one without a handler stops the service from starting.
import { mkdtemp, rm, writeFile, readFile } from 'node:fs/promises';
import os from 'node:os';
import path, { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { Ajv } from 'ajv';
import { loadContract } from '../packages/toolkit/src/contract/model.js';
import { writeMethods } from '../packages/toolkit/src/codegen/methods.js';
import { methods as nodeMethods } from '../generated/node/methods.js';
import { methods as accountMethods } from '../generated/account/methods.js';
import {
  DEFAULT_UNITS,
  FAIL_CLOSED,
  addressParamsTable,
  meaningOf,
  meaningTable,
  methodsWhere,
  type GatewayMeaning,
} from '../src/gateway/method-meaning.js';
import { createNodeHandlers, forwarder, routeHandlers } from '../src/gateway/node-api/handlers.js';
import { FILTER_METHODS, MemoryFilterStore } from '../src/gateway/filters/index.js';
import { RawResult, type CallContext, type Handler } from '../packages/toolkit/src/rpc/engine.js';
import type { MethodTable } from '../packages/toolkit/src/rpc/descriptor.js';
import type { UpstreamPool } from '../src/gateway/upstream/pool.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;
const root = resolve(import.meta.dirname, '..');
const readJson = async (rel: string): Promise<Json> => JSON.parse(await readFile(join(root, rel), 'utf8'));
const schema = await readJson('contracts/x-gateway.schema.json');
const CONTRACTS = { node: await readJson('openrpc.json'), account: await readJson('contracts/account.openrpc.json') };
const GENERATED: Record<keyof typeof CONTRACTS, MethodTable> = { node: nodeMethods, account: accountMethods };

const ajv = new Ajv({ strict: true, allErrors: true });
const validate = ajv.compile(schema);

const scratch: string[] = [];
afterAll(async () => {
  for (const d of scratch) await rm(d, { recursive: true, force: true });
});

describe('the x-gateway schema', () => {
  it('is draft-07, closed, requires every field, and describes every field', () => {
    expect(schema.$schema).toBe('http://json-schema.org/draft-07/schema#');
    expect(schema.additionalProperties).toBe(false);
    expect(Object.keys(schema.properties).sort()).toEqual([
      'addressParams',
      'blockFromResult',
      'blockParam',
      'cache',
      'cost',
      'idempotent',
      'open',
      'readOnly',
      'retryable',
      'route',
      'units',
    ]);
    for (const [k, p] of Object.entries<Json>(schema.properties))
      expect(typeof p.description === 'string' && p.description.length > 20, k).toBe(true);
    expect(schema.required.sort()).toEqual(['cache', 'idempotent', 'open', 'readOnly', 'retryable', 'route']);
  });

  it('refuses what is not a meaning (the check can fail)', () => {
    const ok: GatewayMeaning = {
      route: 'forward',
      idempotent: true,
      retryable: true,
      cache: 'by-block',
      blockParam: 1,
      open: false,
      readOnly: true,
      cost: 'heavy',
      addressParams: [{ param: 0, path: 'to' }],
      units: 26,
    };
    expect(validate(ok)).toBe(true);
    const bad: [string, Json][] = [
      ['unknown field', { ...ok, hedge: true }],
      ['missing field', (({ open: _o, ...rest }) => rest)(ok)],
      ['sticky (removed: nothing read it)', { ...ok, sticky: false }],
      ['addressParams empty', { ...ok, addressParams: [] }],
      ['addressParams without param', { ...ok, addressParams: [{ path: 'to' }] }],
      ['addressParams negative param', { ...ok, addressParams: [{ param: -1 }] }],
      ['addressParams unknown key', { ...ok, addressParams: [{ param: 0, index: 1 }] }],
      ['addressParams path not a property path', { ...ok, addressParams: [{ param: 0, path: 'a[0]' }] }],
      ['addressParams when without equals', { ...ok, addressParams: [{ param: 1, when: { param: 0 } }] }],
      ['route', { ...ok, route: 'proxy' }],
      ['cache', { ...ok, cache: 'forever' }],
      ['by-block without its block', (({ blockParam: _b, ...rest }) => rest)(ok)],
      ['by-block with both', { ...ok, blockFromResult: true }],
      ['blockParam without by-block', { ...ok, cache: 'head' }],
      ['blockFromResult false', { ...ok, blockParam: undefined, blockFromResult: false }],
      ['negative blockParam', { ...ok, blockParam: -1 }],
      ['boolean as string', { ...ok, idempotent: 'true' }],
      ['cost', { ...ok, cost: 'medium' }],
      ['negative units', { ...ok, units: -1 }],
      ['fractional units', { ...ok, units: 2.5 }],
      ['units as string', { ...ok, units: '26' }],
    ];
    for (const [why, value] of bad) expect(validate(JSON.parse(JSON.stringify(value))), why).toBe(false);
  });
});

describe('compute units (x-gateway.units)', () => {
  it("default to the schema's default; the node contract carries Alchemy's published weights", () => {
    expect(schema.properties.units.default).toBe(DEFAULT_UNITS);
    expect(schema.properties.units.description).toContain('https://www.alchemy.com/docs/reference/compute-unit-costs');
    const units = new Map([...meaningTable(nodeMethods)].map(([n, m]) => [n, m.units]));
    expect(
      Object.fromEntries(
        ['eth_chainId', 'eth_blockNumber', 'eth_getBalance', 'eth_call', 'eth_sendRawTransaction', 'eth_getLogs'].map(
          (n) => [n, units.get(n)],
        ),
      ),
    ).toEqual({
      eth_chainId: 0,
      eth_blockNumber: 10,
      eth_getBalance: 20,
      eth_call: 26,
      eth_sendRawTransaction: 40,
      eth_getLogs: 60,
    });
    // Not in the table: the default.
    expect(units.get('eth_blobBaseFee')).toBe(DEFAULT_UNITS);
  });
});

describe.each(Object.keys(CONTRACTS) as (keyof typeof CONTRACTS)[])('%s contract', (api) => {
  const doc = CONTRACTS[api];

  it('every method has a valid x-gateway, and info.description points at its schema', () => {
    for (const m of doc.methods) {
      expect(m['x-gateway'], m.name).toBeDefined();
      expect(validate(m['x-gateway']), `${m.name}: ${ajv.errorsText(validate.errors)}`).toBe(true);
      const x = m['x-gateway'];
      if (x.blockParam !== undefined) expect(x.blockParam, m.name).toBeLessThan(m.params.length);
      for (const e of x.addressParams ?? []) {
        expect(e.param, m.name).toBeLessThan(m.params.length);
        if (e.when !== undefined) expect(e.when.param, m.name).toBeLessThan(m.params.length);
      }
    }
    expect(doc.info.description).toContain('`x-gateway`');
    expect(doc.info.description).toContain('contracts/x-gateway.schema.json');
  });

  it(`codegen carried every method's x-gateway into generated/${api}/methods.ts, literally`, () => {
    const table = GENERATED[api];
    expect(Object.keys(table)).toEqual(doc.methods.map((m: Json) => m.name));
    for (const m of doc.methods) {
      expect(table[m.name].ext, m.name).toEqual({ 'x-gateway': m['x-gateway'] });
      expect(meaningOf(table[m.name]), m.name).toEqual({ units: DEFAULT_UNITS, ...m['x-gateway'] });
    }
  });
});

/** The node API's local methods besides rpc.discover: the filters (src/gateway/filters) and eth_subscribe /
 *  eth_unsubscribe (src/gateway/subscriptions), as routeHandlers requires a handler for each. */
const SUBSCRIBE = ['eth_subscribe', 'eth_unsubscribe'];
const LOCAL_STUBS: Record<string, Handler<unknown>> = Object.fromEntries(
  [...FILTER_METHODS, ...SUBSCRIBE].map((n) => [n, () => new RawResult('null')]),
);

describe('what the contracts say', () => {
  const node = meaningTable(nodeMethods);
  it('node API: sends are forwarded, not idempotent, not retryable, never cached; subscriptions are local; every other method is a read', () => {
    expect(node.get('eth_sendRawTransaction')).toEqual({
      route: 'forward',
      idempotent: false,
      retryable: false,
      cache: 'never',
      open: false,
      readOnly: false,
      cost: 'light',
      units: 40,
    });
    // Where calls name the contracts they read (the contract-address allowlist applies there; no method names in code).
    expect(Object.fromEntries(addressParamsTable(node))).toEqual({
      eth_call: [{ param: 0, path: 'to' }],
      eth_estimateGas: [{ param: 0, path: 'to' }],
      eth_createAccessList: [{ param: 0, path: 'to' }],
      eth_getCode: [{ param: 0 }],
      eth_getStorageAt: [{ param: 0 }],
      eth_getProof: [{ param: 0 }],
      eth_getLogs: [{ param: 0, path: 'address' }],
      eth_newFilter: [{ param: 0, path: 'address' }],
      eth_subscribe: [{ param: 1, path: 'address', when: { param: 0, equals: 'logs' } }],
    });
    // Cost classes (the upstream pool batches only calls of one class): every forwarded method has one; the calls
    // whose work depends on their params are heavy, lookups light.
    for (const [n, x] of node) expect(x.cost === undefined, n).toBe(x.route === 'local');
    expect(
      [...node]
        .filter(([, x]) => x.cost === 'heavy')
        .map(([n]) => n)
        .sort(),
    ).toEqual([
      'eth_call',
      'eth_createAccessList',
      'eth_estimateGas',
      'eth_getBlockReceipts',
      'eth_getLogs',
      'eth_getProof',
    ]);
    expect(node.get('eth_getBlockByHash')).toMatchObject({ route: 'forward', cache: 'immutable' });
    expect(node.get('eth_getBlockByNumber')).toMatchObject({ cache: 'by-block', blockParam: 0 });
    expect(node.get('eth_getBalance')).toMatchObject({ cache: 'by-block', blockParam: 1 });
    expect(node.get('eth_getStorageAt')).toMatchObject({ cache: 'by-block', blockParam: 2 });
    expect(node.get('eth_getLogs')).toMatchObject({ cache: 'by-block', blockParam: 0 });
    expect(node.get('eth_getTransactionReceipt')).toMatchObject({ cache: 'by-block', blockFromResult: true });
    for (const m of ['eth_chainId', 'net_version']) expect(node.get(m)?.cache, m).toBe('immutable');
    for (const m of ['eth_blockNumber', 'eth_gasPrice', 'eth_blobBaseFee']) expect(node.get(m)?.cache, m).toBe('head');
    // issue 12's reads: proofs and access lists by their block param, per-node answers never cached, a hash is a hash.
    expect(node.get('eth_getProof')).toMatchObject({
      route: 'forward',
      idempotent: true,
      retryable: true,
      cache: 'by-block',
      blockParam: 2,
    });
    expect(node.get('eth_createAccessList')).toMatchObject({ cache: 'by-block', blockParam: 1 });
    expect(node.get('eth_getUncleCountByBlockNumber')).toMatchObject({ cache: 'by-block', blockParam: 0 });
    for (const m of ['web3_sha3', 'eth_getUncleByBlockHashAndIndex', 'eth_getUncleCountByBlockHash'])
      expect(node.get(m)?.cache, m).toBe('immutable');
    for (const m of ['eth_accounts', 'net_listening', 'net_peerCount', 'eth_protocolVersion'])
      expect(node.get(m)?.cache, m).toBe('never');
    expect(node.get('rpc.discover')).toMatchObject({ route: 'local', cache: 'immutable', readOnly: true });
    // eth_subscribe / eth_unsubscribe: answered on the WebSocket connection (src/gateway/subscriptions), they change its state.
    for (const m of SUBSCRIBE)
      expect(node.get(m), m).toMatchObject({
        route: 'local',
        idempotent: false,
        retryable: false,
        cache: 'never',
        open: false,
        readOnly: false,
      });
    const reads = [...node].filter(([, x]) => x.readOnly).map(([n]) => n);
    // Not reads: the send, the filter methods that create, move or remove a filter (eth_getFilterLogs is a read), and
    // eth_subscribe / eth_unsubscribe.
    expect(node.size - reads.length).toBe(6 + SUBSCRIBE.length);
    for (const m of [
      'eth_newFilter',
      'eth_newBlockFilter',
      'eth_newPendingTransactionFilter',
      'eth_getFilterChanges',
      'eth_uninstallFilter',
    ]) {
      expect(node.get(m), m).toMatchObject({
        route: 'local',
        idempotent: false,
        retryable: false,
        cache: 'never',
        readOnly: false,
      });
    }
    for (const n of reads) expect(node.get(n), n).toMatchObject({ idempotent: true, retryable: true });
    // Behaviour unchanged: nothing on the node API is callable without a key (rpc.discover included).
    expect([...node.values()].some((x) => x.open)).toBe(false);
    expect([...methodsWhere(nodeMethods, (x) => x.route === 'local')].sort()).toEqual(
      ['rpc.discover', ...FILTER_METHODS, ...SUBSCRIBE].sort(),
    );
  });

  it('account API: all local and never cached; open and read-only are the sets the handlers used to spell out', () => {
    expect([
      ...methodsWhere(
        accountMethods,
        (x) => x.route !== 'local' || x.cache !== 'never' || x.addressParams !== undefined,
      ),
    ]).toEqual([]);
    expect([...methodsWhere(accountMethods, (x) => x.open)].sort()).toEqual([
      'account_logIn',
      'account_logOut',
      'account_requestPasswordReset',
      'account_resetPassword',
      'account_signUp',
      'account_signUpMode',
      'account_verifyEmail',
      'networks_list',
    ]);
    expect([...methodsWhere(accountMethods, (x) => x.readOnly)].sort()).toEqual(
      [
        'account_activity',
        'account_me',
        'account_alertWebhook',
        'account_signUpMode',
        'admin_activity',
        'admin_getAccount',
        'admin_listAccounts',
        'admin_listInvites',
        'admin_plans',
        'admin_usage',
        'alerts_list',
        'apps_get',
        'apps_listAllowlist',
        'apps_listJwtKeys',
        'apps_logs',
        'apps_list',
        'apps_metrics',
        'apps_usage',
        'chains_list',
        'keys_get',
        'keys_list',
        'keys_logs',
        'keys_metrics',
        'networks_list',
        'useCases_list',
      ].sort(),
    );
  });

  it('a method without the extension is read fail-closed', () => {
    expect(meaningOf({})).toEqual(FAIL_CLOSED);
    expect(meaningOf({ ext: { 'x-other': 1 } })).toEqual(FAIL_CLOSED);
    expect(FAIL_CLOSED).toEqual({
      route: 'forward',
      idempotent: false,
      retryable: false,
      cache: 'never',
      open: false,
      readOnly: false,
      units: DEFAULT_UNITS,
    });
    expect(meaningOf({ ext: { 'x-gateway': { readOnly: true } } })).toEqual({ ...FAIL_CLOSED, readOnly: true });
    expect(
      meaningTable({ x_bare: { name: 'x_bare', summary: '', params: [], errors: [], paramStructure: 'either' } }).get(
        'x_bare',
      ),
    ).toEqual(FAIL_CLOSED);
  });
});

/** Where a schema holds the node contract's address types (components.schemas Address / Addresses), following $refs:
 *  '' for the value itself, else a dot path (`[]` after an array property: `accessList[].address`). */
function addressPlaces(
  schema: Json,
  doc: Json,
  path = '',
  seen = new Set<string>(),
  out = new Set<string>(),
): Set<string> {
  if (schema === null || typeof schema !== 'object') return out;
  const ref: string | undefined = schema.$ref;
  if (ref !== undefined) {
    if (ref === '#/components/schemas/Address' || ref === '#/components/schemas/Addresses') out.add(path);
    else if (!seen.has(ref))
      addressPlaces(doc.components.schemas[ref.split('/').pop()!], doc, path, new Set([...seen, ref]), out);
    return out;
  }
  for (const k of ['oneOf', 'anyOf', 'allOf']) for (const x of schema[k] ?? []) addressPlaces(x, doc, path, seen, out);
  if (schema.items !== undefined) addressPlaces(schema.items, doc, `${path}[]`, seen, out);
  for (const [k, v] of Object.entries(schema.properties ?? {}))
    addressPlaces(v, doc, path === '' ? k : `${path}.${k}`, seen, out);
  return out;
}

describe("addressParams cannot drift from the node contract's param schemas", () => {
  const doc = CONTRACTS.node;
  // Address places that are deliberately not contract reads; each is named, with its reason, in the x-gateway
  // schema's addressParams description (checked below), so a new one is a decision written in the contract.
  const NOT_CONTRACT_READS: Record<string, string> = {
    'eth_getBalance /0': 'eth_getBalance',
    'eth_getTransactionCount /0': 'eth_getTransactionCount',
    from: '`from`',
    'accessList[].address': '`accessList[].address`',
    'authorizationList[].address': '`authorizationList[].address`',
  };
  const places = doc.methods.flatMap((m: Json) =>
    m.params.flatMap((p: Json, i: number) => [...addressPlaces(p.schema, doc)].map((path) => ({ m, i, path }))),
  );

  it('finds the address types (the walk is not vacuous)', () => {
    const where = places.map((x: Json) => `${x.m.name} /${x.i}${x.path === '' ? '' : `/${x.path}`}`);
    expect(where).toEqual(
      expect.arrayContaining([
        'eth_getStorageAt /0',
        'eth_getProof /0',
        'eth_call /0/to',
        'eth_call /0/from',
        'eth_getLogs /0/address',
        'eth_subscribe /1/address',
      ]),
    );
  });

  it("every param that is or holds an address is in the method's addressParams, or a documented non-contract read", () => {
    const described: string = schema.properties.addressParams.description;
    for (const { m, i, path } of places) {
      const listed = (m['x-gateway'].addressParams ?? []).some((e: Json) => e.param === i && (e.path ?? '') === path);
      const exempt = NOT_CONTRACT_READS[`${m.name} /${i}`] ?? (path === '' ? undefined : NOT_CONTRACT_READS[path]);
      expect(listed || exempt !== undefined, `${m.name} param ${i} ${path}: address type, no addressParams entry`).toBe(
        true,
      );
      expect(listed && exempt !== undefined, `${m.name} param ${i} ${path}: both bound and exempt`).toBe(false);
      if (exempt !== undefined) expect(described, exempt).toContain(exempt);
    }
  });

  it('every addressParams entry points at an address place of its param', () => {
    for (const m of doc.methods) {
      for (const e of m['x-gateway'].addressParams ?? []) {
        expect(addressPlaces(m.params[e.param].schema, doc).has(e.path ?? ''), `${m.name} ${JSON.stringify(e)}`).toBe(
          true,
        );
      }
    }
  });
});

/** A stand-in pool that records what it was asked to forward. */
function recordingPools(): { pools: Map<string, UpstreamPool>; calls: [string, unknown][] } {
  const calls: [string, unknown][] = [];
  const pool = {
    call: (method: string, params: unknown) => (calls.push([method, params]), Promise.resolve(`fwd:${method}`)),
  };
  return { pools: new Map([['mainnet', pool as unknown as UpstreamPool]]), calls };
}
const ctx = { network: 'mainnet' } as CallContext;

/** Generates generated/<api>/methods.ts for a modified copy of the node contract and imports it (codegen's own functions). */
async function descriptorFor(edit: (doc: Json) => void): Promise<MethodTable> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'rpcgate-meaning-'));
  scratch.push(dir);
  const doc = structuredClone(CONTRACTS.node);
  edit(doc);
  await writeFile(join(dir, 'openrpc.json'), JSON.stringify(doc, null, 2));
  const model = await loadContract(dir, { name: 'node', file: 'openrpc.json' });
  await writeFile(join(dir, 'methods.ts'), await writeMethods(model));
  return ((await import(pathToFileURL(join(dir, 'methods.ts')).href)) as { methods: MethodTable }).methods;
}
const newMethod = (name: string, x?: Json) => ({
  name,
  summary: `A method added to a copy of the contract (${name}).`,
  paramStructure: 'by-position',
  ...(x ? { 'x-gateway': x } : {}),
  params: [],
  result: { name: 'result', schema: { type: 'string' } },
});
const FORWARD = { route: 'forward', idempotent: true, retryable: true, cache: 'head', open: false, readOnly: true };

describe('node API routing by meaning', () => {
  it("the service's handlers: every forwarded method goes to the pool by its own name; rpc.discover answers the contract", async () => {
    const { pools, calls } = recordingPools();
    const store = new MemoryFilterStore(60_000);
    const handlers = createNodeHandlers({
      pools,
      contractJson: '{"openrpc":"1.3.2"}',
      filters: { store, maxPerKey: 1 },
    });
    await store.close();
    expect(Object.keys(handlers).sort()).toEqual(Object.keys(nodeMethods).sort());
    for (const name of methodsWhere(nodeMethods, (x) => x.route === 'forward')) {
      expect(await (handlers as Record<string, Handler<unknown>>)[name]!([] as never, ctx)).toBe(`fwd:${name}`);
    }
    // Every method but the local ones (rpc.discover, the six filter methods kept by the gateway, the two subscription methods).
    expect(calls.length).toBe(Object.keys(nodeMethods).length - 7 - SUBSCRIBE.length);
    expect([...methodsWhere(nodeMethods, (x) => x.route === 'local')].sort()).toEqual(
      ['rpc.discover', ...FILTER_METHODS, ...SUBSCRIBE].sort(),
    );
    const discovered = (handlers as Record<string, Handler<unknown>>)['rpc.discover']!([] as never, ctx);
    expect(discovered).toBeInstanceOf(RawResult);
    expect((discovered as RawResult).json).toBe('{"openrpc":"1.3.2"}');
    // Without a WebSocket connection in the context (HTTP), the subscription methods answer -32601 as geth does.
    for (const m of SUBSCRIBE)
      expect(() => (handlers as Record<string, Handler<unknown>>)[m]!(['newHeads'] as never, ctx)).toThrow(
        /notifications not supported over HTTP/,
      );
  });

  it('a forwarded method added to a copy of the contract is served with no handler code', async () => {
    const table = await descriptorFor((doc) => doc.methods.push(newMethod('eth_madeUpRead', FORWARD)));
    expect(table.eth_madeUpRead.ext).toEqual({ 'x-gateway': FORWARD });
    const { pools, calls } = recordingPools();
    const discover: Handler<unknown> = () => new RawResult('{}');
    const handlers = routeHandlers(table, { 'rpc.discover': discover, ...LOCAL_STUBS }, forwarder(pools)) as Record<
      string,
      Handler<unknown>
    >;
    expect(await handlers.eth_madeUpRead!([] as never, ctx)).toBe('fwd:eth_madeUpRead');
    expect(calls).toEqual([['eth_madeUpRead', []]]);
    expect(meaningTable(table).get('eth_madeUpRead')).toMatchObject({ idempotent: true, retryable: true });
  });

  it('a method with no x-gateway is forwarded, fail-closed, and its descriptor carries no ext', async () => {
    const table = await descriptorFor((doc) => doc.methods.push(newMethod('eth_madeUpBare')));
    expect('ext' in table.eth_madeUpBare).toBe(false);
    expect(meaningOf(table.eth_madeUpBare)).toEqual(FAIL_CLOSED);
    const { pools } = recordingPools();
    const handlers = routeHandlers(
      table,
      { 'rpc.discover': () => new RawResult('{}'), ...LOCAL_STUBS },
      forwarder(pools),
    ) as Record<string, Handler<unknown>>;
    expect(await handlers.eth_madeUpBare!([] as never, ctx)).toBe('fwd:eth_madeUpBare');
  });

  it('a local method without a handler stops the start, naming the method', async () => {
    const table = await descriptorFor((doc) =>
      doc.methods.push(newMethod('rpcgate_madeUpLocal', { ...FORWARD, route: 'local' })),
    );
    const { pools } = recordingPools();
    expect(() =>
      routeHandlers(table, { 'rpc.discover': () => new RawResult('{}'), ...LOCAL_STUBS }, forwarder(pools)),
    ).toThrow(/rpcgate_madeUpLocal: x-gateway route "local".*no local handler/);
    // And the service's own builder refuses the same way when the contract names a local method it has no code for.
    const local = { ...FORWARD, route: 'local' };
    const hand: MethodTable = {
      ...nodeMethods,
      eth_blockNumber: { ...nodeMethods.eth_blockNumber, ext: { 'x-gateway': local } },
    };
    expect(() =>
      routeHandlers(hand, { 'rpc.discover': () => new RawResult('{}'), ...LOCAL_STUBS }, forwarder(pools)),
    ).toThrow(/method eth_blockNumber: x-gateway route "local"/);
  });

  it('a local handler for a method the contract does not route local is refused too', () => {
    const { pools } = recordingPools();
    const h: Handler<unknown> = () => new RawResult('"x"');
    expect(() =>
      routeHandlers(nodeMethods, { 'rpc.discover': h, ...LOCAL_STUBS, eth_call: h }, forwarder(pools)),
    ).toThrow(/local handler for eth_call/);
    expect(() => routeHandlers(nodeMethods, { 'rpc.discover': h, ...LOCAL_STUBS, nope: h }, forwarder(pools))).toThrow(
      /local handler for nope/,
    );
  });
});
