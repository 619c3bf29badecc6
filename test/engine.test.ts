// The engine's behaviour beyond the envelope: RawResult splicing, strict results, RpcError passthrough,
// unexpected errors, by-name params, concurrency and order, the params-only entry point, and errors.ts.
import { Ajv } from 'ajv';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { ValidateFn, ValidatorTable } from '../packages/toolkit/src/rpc/descriptor.js';
import { createEngine, errorResponse, type CallContext } from '../packages/toolkit/src/rpc/engine.js';
import {
  ErrorCode,
  RpcError,
  internalError,
  invalidParams,
  invalidRequest,
  methodNotFound,
  parseError,
  payloadTooLarge,
} from '../packages/toolkit/src/rpc/errors.js';
import { SECRET, calls, handlers, makeEngine, methods, peakInFlight, resetPeak, validators } from './engine-fixture.js';

const A = '0x1111111111111111111111111111111111111111';
const call = (method: string, params?: unknown, id: unknown = 1) =>
  JSON.stringify({ jsonrpc: '2.0', method, params, id });
const notify = (method: string, params: unknown) => JSON.stringify({ jsonrpc: '2.0', method, params });

afterEach(() => {
  vi.restoreAllMocks();
  calls.length = 0;
});

describe('RawResult', () => {
  it('splices the node bytes as they are', async () => {
    const res = await makeEngine().handle(call('eth_getBalance', [A, 'latest']), {});
    expect(res).toStrictEqual({ status: 200, body: '{"jsonrpc":"2.0","id":1,"result":"0x234c8a3397aab58"}' });
  });

  it('is not re-stringified: whitespace and member order survive', async () => {
    const json = '{ "b" : [1,  2], "a":{"z":null} }';
    const res = await makeEngine().handle(call('raw', [json]), {});
    expect(res.body).toBe(`{"jsonrpc":"2.0","id":1,"result":${json}}`);
  });

  it('costs no JSON.stringify at all for a numeric id; a plain result is stringified once', async () => {
    const engine = makeEngine({ strictResults: false });
    const body1 = call('eth_getBalance', [A, 'latest']);
    const body2 = call('eth_getCode', [A]);
    const spy = vi.spyOn(JSON, 'stringify');
    await engine.handle(body1, {});
    expect(spy).toHaveBeenCalledTimes(0);
    await engine.handle(body2, {});
    expect(spy).toHaveBeenCalledTimes(1);
    expect(spy).toHaveBeenLastCalledWith('0x6001');
  });

  it('strict mode parses it to validate it', async () => {
    const bad = await makeEngine().handle(call('raw', ['[1]']), {});
    expect(bad).toStrictEqual({
      status: 500,
      body: '{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"internal error: result violates the contract at (the result): must be object","data":{"reason":"must be object","path":"","schemaPath":"#/type"}}}',
    });
    const notJson = await makeEngine().handle(call('raw', ['{"a":']), {});
    expect(notJson.body).toBe(
      '{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"internal error: result violates the contract at (the result): raw result is not valid JSON","data":{"reason":"raw result is not valid JSON","path":""}}}',
    );
  });

  it('without strict mode it is trusted (documented): spliced unchecked', async () => {
    const res = await makeEngine({ strictResults: false }).handle(call('raw', ['[1]']), {});
    expect(res.body).toBe('{"jsonrpc":"2.0","id":1,"result":[1]}');
  });
});

describe('strict results', () => {
  it('on: a result that breaks the contract is -32603 with reason and path, and is reported', async () => {
    const onError = vi.fn();
    const res = await makeEngine({ strictResults: true }, onError).handle(call('wrong_result', []), {});
    expect(res).toStrictEqual({
      status: 500,
      body: '{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"internal error: result violates the contract at (the result): must be string","data":{"reason":"must be string","path":"","schemaPath":"#/type"}}}',
    });
    expect(onError).toHaveBeenCalledTimes(1);
    expect(onError.mock.calls[0][0]).toBeInstanceOf(RpcError);
    expect(onError.mock.calls[0][1]).toMatchObject({ method: 'wrong_result' });
  });

  it('on: the path points inside the result', async () => {
    const ajv = new Ajv();
    const v: ValidatorTable = {
      ...validators,
      raw: {
        params: validators.raw.params,
        result: ajv.compile({
          type: 'object',
          properties: { block: { type: 'object', properties: { n: { type: 'string' } } } },
        }),
      },
    };
    const engine = createEngine({
      methods,
      validators: v,
      handlers,
      options: { maxBatchSize: 5, strictResults: true },
    });
    const res = await engine.handle(call('raw', ['{"block":{"n":1}}']), {});
    expect(res.body).toBe(
      '{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"internal error: result violates the contract at /block/n: must be string","data":{"reason":"must be string","path":"/block/n","schemaPath":"#/properties/block/properties/n/type"}}}',
    );
  });

  it('off: the result passes unchecked and the result validator is never called', async () => {
    let resultCalls = 0;
    const counted: ValidatorTable = Object.fromEntries(
      Object.entries(validators).map(([name, { params, result }]) => {
        const wrapped = ((data: unknown) => {
          resultCalls++;
          return result(data);
        }) as ValidateFn;
        return [name, { params, result: wrapped }];
      }),
    );
    const off = createEngine({
      methods,
      validators: counted,
      handlers,
      options: { maxBatchSize: 5, strictResults: false },
    });
    const res = await off.handle(`[${call('wrong_result', [])},${call('eth_getBalance', [A, 'latest'], 2)}]`, {});
    expect(res.body).toBe(
      '[{"jsonrpc":"2.0","id":1,"result":1234},{"jsonrpc":"2.0","id":2,"result":"0x234c8a3397aab58"}]',
    );
    expect(resultCalls).toBe(0);

    const on = createEngine({
      methods,
      validators: counted,
      handlers,
      options: { maxBatchSize: 5, strictResults: true },
    });
    await on.handle(call('eth_getBalance', [A, 'latest']), {});
    expect(resultCalls).toBe(1);
  });
});

describe('errors thrown by handlers', () => {
  it('RpcError passes through with its httpStatus and headers (rate limit → 429 + Retry-After)', async () => {
    const res = await makeEngine().handle(call('throws_rpc', ['limit']), {});
    expect(res).toStrictEqual({
      status: 429,
      headers: { 'Retry-After': '2' },
      body: '{"jsonrpc":"2.0","id":1,"error":{"code":-32005,"message":"limit exceeded: 10 requests per second","data":{"limit":10,"period":"second","resetAt":"2030-01-01T00:00:02.000Z"}}}',
    });
  });

  it("the node's own error passes through at 200", async () => {
    const res = await makeEngine().handle(call('throws_rpc', ['node'], 'x'), {});
    expect(res).toStrictEqual({
      status: 200,
      body: '{"jsonrpc":"2.0","id":"x","error":{"code":3,"message":"execution reverted","data":"0x08c379a0"}}',
    });
  });

  it('upstream errors keep their 5xx status for a single request', async () => {
    const res = await makeEngine().handle(call('throws_rpc', ['down']), {});
    expect(res).toStrictEqual({
      status: 503,
      body: '{"jsonrpc":"2.0","id":1,"error":{"code":-32042,"message":"upstream unavailable","data":{"network":"mainnet"}}}',
    });
  });

  it('inside a batch the batch answers 200, per-item errors, no headers', async () => {
    const res = await makeEngine().handle(
      `[${call('throws_rpc', ['limit'])},${call('throws_rpc', ['down'], 2)},${call('eth_blockNumber', [], 3)}]`,
      {},
    );
    expect(res).toStrictEqual({
      status: 200,
      body:
        '[{"jsonrpc":"2.0","id":1,"error":{"code":-32005,"message":"limit exceeded: 10 requests per second","data":{"limit":10,"period":"second","resetAt":"2030-01-01T00:00:02.000Z"}}},' +
        '{"jsonrpc":"2.0","id":2,"error":{"code":-32042,"message":"upstream unavailable","data":{"network":"mainnet"}}},' +
        '{"jsonrpc":"2.0","id":3,"result":"0x1b4"}]',
    });
  });

  it('a plain Error becomes -32603 "Internal error" without leaking, and goes to onError', async () => {
    const onError = vi.fn();
    const ctx: CallContext = { requestId: 'r1' };
    const res = await makeEngine({}, onError).handle(call('throws_plain', []), ctx);
    expect(res).toStrictEqual({
      status: 500,
      body: '{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"Internal error"}}',
    });
    expect(res.body).not.toContain('hunter2');
    expect(res.body).not.toContain('secret');
    expect(onError).toHaveBeenCalledTimes(1);
    expect(onError.mock.calls[0][0]).toBeInstanceOf(Error);
    expect((onError.mock.calls[0][0] as Error).message).toBe(SECRET);
    expect(onError.mock.calls[0][1]).toStrictEqual({ method: 'throws_plain', ctx });
  });

  it('a notification whose handler throws: no answer, still reported', async () => {
    const onError = vi.fn();
    const res = await makeEngine({}, onError).handle(notify('throws_plain', []), {});
    expect(res).toStrictEqual({ status: 204 });
    expect(onError).toHaveBeenCalledTimes(1);
  });

  it('a result that cannot be serialised (BigInt) is -32603, reported', async () => {
    const onError = vi.fn();
    const res = await makeEngine({}, onError).handle(call('bigint_result', []), {});
    expect(res).toStrictEqual({
      status: 500,
      body: '{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"Internal error"}}',
    });
    expect(onError.mock.calls[0][0]).toBeInstanceOf(TypeError);
  });

  it('an onError that throws does not break the answer', async () => {
    const res = await makeEngine({}, () => {
      throw new Error('logger down');
    }).handle(call('throws_plain', []), {});
    expect(res.status).toBe(500);
  });

  it('RpcError data that cannot be serialised is dropped, not fatal', async () => {
    const engine = createEngine({
      methods,
      validators,
      handlers: {
        ...handlers,
        throws_plain: () => {
          throw new RpcError(-32000, 'odd', { n: 1n });
        },
      },
      options: { maxBatchSize: 5, strictResults: true },
    });
    const res = await engine.handle(call('throws_plain', []), {});
    expect(res).toStrictEqual({
      status: 200,
      body: '{"jsonrpc":"2.0","id":1,"error":{"code":-32000,"message":"odd"}}',
    });
  });
});

describe('by-name params', () => {
  it('map onto positions by the descriptor names, in contract order whatever the object order', async () => {
    const res = await makeEngine().handle(call('eth_getCode', { block: 'latest', address: A }), {});
    expect(res.body).toBe('{"jsonrpc":"2.0","id":1,"result":"0x6001"}');
    expect(calls).toStrictEqual([{ method: 'eth_getCode', params: [A, 'latest'] }]);
  });

  it('optional trailing params may be left out', async () => {
    await makeEngine().handle(call('eth_getCode', { address: A }), {});
    expect(calls).toStrictEqual([{ method: 'eth_getCode', params: [A] }]);
    const r = await makeEngine().handle(call('named_only', { a: 1, b: 2 }), {});
    expect(r.body).toBe('{"jsonrpc":"2.0","id":1,"result":3}');
  });

  it("a gap before a given optional param is refused (positions can't have holes)", async () => {
    const r = await makeEngine().handle(call('named_only', { a: 1, c: 5 }), {});
    expect(r.body).toBe(
      '{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"invalid params: b must be given when a later param is given","data":{"param":"b","path":"/1","reason":"must be given when a later param is given"}}}',
    );
  });

  it('validator errors name the param', async () => {
    const r = await makeEngine().handle(call('named_only', { a: 'x' }), {});
    expect(r.body).toBe(
      '{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"invalid params: a must be integer","data":{"param":"a","path":"/0","reason":"must be integer"}}}',
    );
  });

  it("'either' methods take both forms", async () => {
    const engine = makeEngine();
    expect((await engine.handle(call('echo', { value: 5 }), {})).body).toBe('{"jsonrpc":"2.0","id":1,"result":5}');
    expect((await engine.handle(call('echo', [5]), {})).body).toBe('{"jsonrpc":"2.0","id":1,"result":5}');
  });
});

describe('batches', () => {
  it('run concurrently and answer in request order', async () => {
    resetPeak();
    const turns = [4, 1, 3, 2]; // each waits at least one turn, so all four are in flight at once
    const res = await makeEngine().handle(`[${turns.map((t, i) => call('wait', [t], i)).join(',')}]`, {});
    expect(res.body).toBe(`[${turns.map((t, i) => `{"jsonrpc":"2.0","id":${i},"result":${t}}`).join(',')}]`);
    expect(peakInFlight).toBe(4);
  });

  it("every item gets the same ctx: the host's own context type (its extra fields) passes through untouched", async () => {
    // The engine knows no host words (rpcgate's `network`): a host extends CallContext and types the engine with it.
    interface HostContext extends CallContext<{ key: string }> {
      scope: string;
    }
    const seen: HostContext[] = [];
    const engine = createEngine<typeof methods, HostContext>({
      methods,
      validators,
      handlers: { ...handlers, eth_blockNumber: (_p, ctx) => (seen.push(ctx), '0x1') },
      options: { maxBatchSize: 5, strictResults: true },
    });
    const ctx: HostContext = { scope: 'testnet', principal: { key: 'k' } };
    await engine.handle(`[${call('eth_blockNumber', [], 1)},${call('eth_blockNumber', [], 2)}]`, ctx);
    expect(seen).toStrictEqual([ctx, ctx]);
    expect(seen[0]).toBe(ctx);
  });
});

describe('validateParams (the params path alone, for benchmarks and tools)', () => {
  const engine = makeEngine();
  it('null when valid, the -32602 error when not, -32601 for unknown methods', () => {
    expect(engine.validateParams('eth_getBalance', [A, 'latest'])).toBeNull();
    expect(engine.validateParams('eth_getBalance', [A, '0x10'])).toBeNull();
    expect(engine.validateParams('eth_getCode', { address: A })).toBeNull();
    const bad = engine.validateParams('eth_getBalance', [A, 'soon']);
    expect(bad).toBeInstanceOf(RpcError);
    expect(bad).toMatchObject({
      code: -32602,
      message: expect.stringMatching(
        /^invalid params: block must match pattern "\^0x\(0\|\[1-9a-f\]\[0-9a-f\]\*\)\$" or /,
      ),
      data: { param: 'block', path: '/1' },
    });
    expect(engine.validateParams('eth_nope', [])).toMatchObject({ code: -32601 });
    expect(engine.validateParams('toString', [])).toMatchObject({ code: -32601 });
  });
});

describe('createEngine wiring checks', () => {
  it('refuses a handler without validators, and a handler for a method not in the table', () => {
    const { eth_getBalance: _omit, ...rest } = validators;
    expect(() =>
      createEngine({ methods, validators: rest, handlers, options: { maxBatchSize: 1, strictResults: false } }),
    ).toThrow(/no validators for eth_getBalance/);
    expect(() =>
      createEngine({
        methods,
        validators,
        handlers: { ...handlers, nope: () => 1 } as typeof handlers,
        options: { maxBatchSize: 1, strictResults: false },
      }),
    ).toThrow(/nope/);
  });
});

describe('errors.ts', () => {
  it("constructors of the JSON-RPC 2.0 standard errors (rpcgate's own: test/contract.test.ts)", () => {
    const t = (e: RpcError) => [e.code, e.httpStatus, e.message, e.data, e.headers];
    expect(t(parseError('x'))).toStrictEqual([
      -32700,
      400,
      'parse error: body is not valid JSON',
      { reason: 'x' },
      undefined,
    ]);
    expect(t(invalidRequest('empty batch'))).toStrictEqual([
      -32600,
      400,
      'invalid request: empty batch',
      undefined,
      undefined,
    ]);
    expect(t(methodNotFound('x'))).toStrictEqual([-32601, 200, 'method not found: x', undefined, undefined]);
    expect(t(invalidParams('block bad', { param: 'block', reason: 'bad' }))).toStrictEqual([
      -32602,
      200,
      'invalid params: block bad',
      { param: 'block', reason: 'bad' },
      undefined,
    ]);
    expect(t(internalError())).toStrictEqual([-32603, 500, 'Internal error', undefined, undefined]);
    expect(t(payloadTooLarge('body', 1024, 2048))).toStrictEqual([
      -32600,
      413,
      'invalid request: body of 2048 bytes exceeds the limit of 1024 bytes',
      { limit: 1024 },
      undefined,
    ]);
    // Only the standard codes: an application's own live beside the toolkit.
    expect(Object.values(ErrorCode).sort((a, b) => a - b)).toStrictEqual([-32700, -32603, -32602, -32601, -32600]);
  });

  it('errorResponse serialises a whole-request error for the server', () => {
    expect(errorResponse(new RpcError(-32016, 'no key', undefined, 401))).toStrictEqual({
      status: 401,
      body: '{"jsonrpc":"2.0","id":null,"error":{"code":-32016,"message":"no key"}}',
    });
    expect(errorResponse(invalidRequest('x'), 'a')).toStrictEqual({
      status: 400,
      body: '{"jsonrpc":"2.0","id":"a","error":{"code":-32600,"message":"invalid request: x"}}',
    });
    const limited = errorResponse(new RpcError(-32005, 'slow down', { limit: 1 }, 429, { 'Retry-After': '1' }), 7);
    expect(limited.status).toBe(429);
    expect(limited.headers).toStrictEqual({ 'Retry-After': '1' });
    expect(limited.body).toBe(
      '{"jsonrpc":"2.0","id":7,"error":{"code":-32005,"message":"slow down","data":{"limit":1}}}',
    );
  });
});

describe('the call observer gets the params of every call that had some', () => {
  it('validated for a handled or admission-refused call; as sent for an unknown method or invalid params', async () => {
    const seen: { method: string | undefined; stage: string; params: unknown }[] = [];
    const engine = createEngine({
      methods,
      validators,
      handlers,
      options: { maxBatchSize: 5, strictResults: true },
      admit: (items) =>
        items.some((c) => c.method === 'eth_getCode') ? { error: invalidRequest('refused by the hook') } : undefined,
      onCall: (method, stage, _err, _ctx, _result, params) => seen.push({ method, stage, params }),
    });
    await engine.handle(call('eth_getBalance', [A, 'latest']), {});
    await engine.handle(call('eth_getCode', [A]), {});
    await engine.handle(call('eth_nope', ['x', 1]), {});
    await engine.handle(call('eth_getBalance', ['not an address', 'latest']), {});
    await engine.handle(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_getBalance', params: 7 }), {});
    expect(seen).toEqual([
      { method: 'eth_getBalance', stage: 'ok', params: [A, 'latest'] },
      { method: 'eth_getCode', stage: 'refused', params: [A] },
      { method: 'eth_nope', stage: 'invalid', params: ['x', 1] },
      { method: 'eth_getBalance', stage: 'invalid', params: ['not an address', 'latest'] },
      { method: 'eth_getBalance', stage: 'invalid', params: undefined }, // not an array or object: a bad request
    ]);
  });
});
