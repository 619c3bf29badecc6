// A small contract for the engine tests: a method table shaped like generated/<api>/methods.ts and a
// ValidatorTable shaped like generated/<api>/validators.ts. The validators are compiled here by ajv (tests
// only; at run time they come precompiled from codegen): params validates the positional array as a tuple,
// result validates the result.
import { Ajv } from 'ajv';
import type { MethodDescriptor, ValidatorTable } from '../packages/toolkit/src/rpc/descriptor.js';
import {
  RawResult,
  createEngine,
  type CallContext,
  type EngineOptions,
  type Handlers,
} from '../packages/toolkit/src/rpc/engine.js';
import { RpcError } from '../packages/toolkit/src/rpc/errors.js';

const address = { type: 'string', pattern: '^0x[0-9a-fA-F]{40}$' };
const uint = { type: 'string', pattern: '^0x(0|[1-9a-f][0-9a-f]*)$' };
const blockTag = { type: 'string', enum: ['earliest', 'finalized', 'safe', 'latest', 'pending'] };
const blockHash = {
  type: 'object',
  properties: { blockHash: { type: 'string', pattern: '^0x[0-9a-f]{64}$' } },
  required: ['blockHash'],
  additionalProperties: false,
};
const blockSpec = { anyOf: [uint, blockTag, blockHash] };

type P = { name: string; required: boolean; schema: object };
function tuple(params: P[]): object {
  const min = params.reduce((m, p, i) => (p.required ? i + 1 : m), 0);
  if (params.length === 0) return { type: 'array', maxItems: 0 };
  return {
    type: 'array',
    items: params.map((p) => p.schema),
    minItems: min,
    maxItems: params.length,
    additionalItems: false,
  };
}

const contract = {
  eth_blockNumber: { params: [] as P[], result: uint, paramStructure: 'by-position' },
  eth_getBalance: {
    params: [
      { name: 'address', required: true, schema: address },
      { name: 'block', required: true, schema: blockSpec },
    ],
    result: uint,
    paramStructure: 'by-position',
  },
  // by-name or by-position; one optional trailing param
  eth_getCode: {
    params: [
      { name: 'address', required: true, schema: address },
      { name: 'block', required: false, schema: blockSpec },
    ],
    result: { type: 'string', pattern: '^0x([0-9a-f][0-9a-f])*$' },
    paramStructure: 'either',
  },
  named_only: {
    params: [
      { name: 'a', required: true, schema: { type: 'integer' } },
      { name: 'b', required: false, schema: { type: 'integer' } },
      { name: 'c', required: false, schema: { type: 'integer' } },
    ],
    result: { type: 'integer' },
    paramStructure: 'by-name',
  },
  echo: {
    params: [
      { name: 'value', required: true, schema: {} },
      { name: 'note', required: false, schema: { type: 'string' } },
    ],
    result: {},
    paramStructure: 'either',
  },
  filter: {
    params: [
      {
        name: 'filter',
        required: true,
        schema: { type: 'object', properties: { fromBlock: uint, address }, additionalProperties: false },
      },
    ],
    result: { type: 'array' },
    paramStructure: 'by-position',
  },
  // a recursive schema: the generated validator recurses with the input's depth
  tree: {
    params: [{ name: 'node', required: true, schema: { $ref: '#/definitions/node' } }],
    result: { type: 'integer' },
    paramStructure: 'by-position',
    definitions: { node: { type: 'array', items: { $ref: '#/definitions/node' } } },
  },
  raw: {
    params: [{ name: 'json', required: true, schema: { type: 'string' } }],
    result: { type: 'object' },
    paramStructure: 'by-position',
  },
  wrong_result: { params: [] as P[], result: uint, paramStructure: 'by-position' },
  bigint_result: { params: [] as P[], result: {}, paramStructure: 'by-position' },
  throws_rpc: {
    params: [{ name: 'kind', required: true, schema: { type: 'string' } }],
    result: {},
    paramStructure: 'by-position',
  },
  throws_plain: { params: [] as P[], result: {}, paramStructure: 'by-position' },
  not_implemented: { params: [] as P[], result: {}, paramStructure: 'by-position' },
  'rpc.discover': {
    params: [] as P[],
    result: { type: 'object', properties: { openrpc: { type: 'string' } }, required: ['openrpc'] },
    paramStructure: 'by-position',
  },
  // concurrency probe: resolves after `turns` macrotask turns, reports the peak number in flight
  wait: {
    params: [{ name: 'turns', required: true, schema: { type: 'integer', minimum: 0 } }],
    result: { type: 'integer' },
    paramStructure: 'by-position',
  },
} as const;

type Name = keyof typeof contract;

/** methods.ts-shaped table. */
export const methods = Object.fromEntries(
  Object.entries(contract).map(([name, c]) => [
    name,
    {
      name,
      summary: `test method ${name}`,
      params: c.params.map((p) => ({ name: p.name, required: p.required })),
      errors: [-32602],
      paramStructure: c.paramStructure,
    } satisfies MethodDescriptor,
  ]),
) as unknown as {
  eth_blockNumber: MethodDescriptor<[], string>;
  eth_getBalance: MethodDescriptor<[address: string, block: string], string>;
  eth_getCode: MethodDescriptor<[address: string, block?: string], string>;
  named_only: MethodDescriptor<[a: number, b?: number, c?: number], number>;
  echo: MethodDescriptor<[value: unknown, note?: string], unknown>;
  filter: MethodDescriptor<[filter: { fromBlock?: string; address?: string }], unknown[]>;
  tree: MethodDescriptor<[node: unknown[]], number>;
  raw: MethodDescriptor<[json: string], Record<string, unknown>>;
  wrong_result: MethodDescriptor<[], string>;
  bigint_result: MethodDescriptor<[], unknown>;
  throws_rpc: MethodDescriptor<[kind: string], unknown>;
  throws_plain: MethodDescriptor<[], unknown>;
  not_implemented: MethodDescriptor<[], unknown>;
  'rpc.discover': MethodDescriptor<[], { openrpc: string }>;
  wait: MethodDescriptor<[turns: number], number>;
};

/** validators.ts-shaped table, compiled once per test process. */
export const validators: ValidatorTable = (() => {
  const ajv = new Ajv({ allErrors: false, strict: true, strictTuples: false }); // optional trailing params make minItems < items.length;
  const out: Record<string, { params: ValidatorTable[string]['params']; result: ValidatorTable[string]['result'] }> =
    {};
  for (const [name, c] of Object.entries(contract)) {
    const defs = 'definitions' in c ? { definitions: c.definitions } : {};
    out[name] = {
      params: ajv.compile({ ...tuple(c.params as unknown as P[]), ...defs }),
      result: ajv.compile(c.result),
    };
  }
  return out;
})();

export const SECRET = 'db password hunter2 at /srv/secret.ts:42';

export let inFlight = 0;
export let peakInFlight = 0;
export function resetPeak(): void {
  peakInFlight = 0;
}

export const calls: { method: Name; params: unknown[] }[] = [];

export const handlers: Handlers<typeof methods> = {
  eth_blockNumber: () => '0x1b4',
  // the node's bytes, spliced as they are
  eth_getBalance: (params) => (calls.push({ method: 'eth_getBalance', params }), new RawResult('"0x234c8a3397aab58"')),
  eth_getCode: async (params) => (calls.push({ method: 'eth_getCode', params }), '0x6001'),
  named_only: ([a, b = 0, c = 0]) => a + b + c,
  echo: ([value]) => (calls.push({ method: 'echo', params: [value] }), value),
  filter: () => [],
  tree: () => 1,
  raw: ([json]) => new RawResult(json),
  wrong_result: () => 1234 as unknown as string,
  bigint_result: () => 10n,
  throws_rpc: ([kind]) => {
    // An application's own errors (status and headers are the engine's business; codes are not).
    if (kind === 'limit')
      throw new RpcError(
        -32005,
        'limit exceeded: 10 requests per second',
        { limit: 10, period: 'second', resetAt: '2030-01-01T00:00:02.000Z' },
        429,
        { 'Retry-After': '2' },
      );
    if (kind === 'node') throw new RpcError(3, 'execution reverted', '0x08c379a0');
    throw new RpcError(-32042, 'upstream unavailable', { network: 'mainnet' }, 503);
  },
  throws_plain: () => {
    throw new Error(SECRET);
  },
  'rpc.discover': () => ({ openrpc: '1.3.2' }),
  wait: async ([turns]) => {
    inFlight++;
    if (inFlight > peakInFlight) peakInFlight = inFlight;
    for (let i = 0; i < turns; i++) await new Promise((r) => setImmediate(r));
    inFlight--;
    return turns;
  },
};

export function makeEngine(
  options: Partial<EngineOptions> = {},
  onError?: (err: unknown, info: { method: string; ctx: CallContext }) => void,
) {
  return createEngine({
    methods,
    validators,
    handlers,
    options: { maxBatchSize: 5, strictResults: true, ...options },
    onError,
  });
}
