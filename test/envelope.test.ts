// The JSON-RPC 2.0 envelope: a table of malformed and edge inputs, each with its exact documented answer
// (HTTP status and the byte-exact body). Decisions where the spec is silent are listed in packages/toolkit/src/rpc/engine.ts.
import { describe, expect, it } from 'vitest';
import { makeEngine } from './engine-fixture.js';

const engine = makeEngine({ maxBatchSize: 8, strictResults: true });

const A = '0x1111111111111111111111111111111111111111';
const ok = (id: string, result: string) => `{"jsonrpc":"2.0","id":${id},"result":${result}}`;
const fail = (id: string, error: string) => `{"jsonrpc":"2.0","id":${id},"error":${error}}`;
const invalid = (id: string, reason: string) => fail(id, `{"code":-32600,"message":"invalid request: ${reason}"}`);
const parse = (reason: string) =>
  fail(
    'null',
    `{"code":-32700,"message":"parse error: body is not valid JSON","data":{"reason":${JSON.stringify(reason)}}}`,
  );
const notFound = (id: string, name: string) => fail(id, `{"code":-32601,"message":"method not found: ${name}"}`);
const req = (method: string, params?: string, id?: string) =>
  `{"jsonrpc":"2.0","method":${JSON.stringify(method)}${params === undefined ? '' : `,"params":${params}`}${id === undefined ? '' : `,"id":${id}`}}`;
const BN = (id: string) => req('eth_blockNumber', '[]', id);
const BN_OK = (id: string) => ok(id, '"0x1b4"');

const deep = (n: number, open: string, close: string, inner = '') => open.repeat(n) + inner + close.repeat(n);
const DEEP = 100_000;

type Case = [name: string, body: string, status: number, expected: string | undefined];

const cases: Case[] = [
  // ---- parse errors: 400, id null
  [
    'invalid JSON: truncated',
    '{"jsonrpc":"2.0",',
    400,
    parse('Expected double-quoted property name in JSON at position 17'),
  ],
  ['invalid JSON: bare word', 'xyz', 400, parse(`Unexpected token 'x', "xyz" is not valid JSON`)],
  ['invalid JSON: empty body', '', 400, parse('Unexpected end of JSON input')],
  [
    'invalid JSON: trailing comma',
    '{"a":1,}',
    400,
    parse('Expected double-quoted property name in JSON at position 7'),
  ],
  [
    'invalid JSON: trailing garbage',
    `${BN('1')} x`,
    400,
    parse('Unexpected non-whitespace character after JSON at position 64'),
  ],
  ['invalid JSON: unclosed deep nesting', '['.repeat(DEEP), 400, parse('Unexpected end of JSON input')],
  ['byte order mark is ignored', `\ufeff${BN('1')}`, 200, BN_OK('1')],
  ['surrounding whitespace', ` \n\t${BN('1')}\r\n`, 200, BN_OK('1')],

  // ---- not a request object: 400, id null
  ['number', '1', 400, invalid('null', 'not a request object')],
  ['null', 'null', 400, invalid('null', 'not a request object')],
  ['string', '"eth_blockNumber"', 400, invalid('null', 'not a request object')],
  ['boolean', 'true', 400, invalid('null', 'not a request object')],
  ['empty object', '{}', 400, invalid('null', 'jsonrpc must be \\"2.0\\"')],

  // ---- jsonrpc member: id echoed
  ['jsonrpc missing', '{"method":"eth_blockNumber","id":7}', 400, invalid('7', 'jsonrpc must be \\"2.0\\"')],
  [
    'jsonrpc "1.0"',
    '{"jsonrpc":"1.0","method":"eth_blockNumber","id":7}',
    400,
    invalid('7', 'jsonrpc must be \\"2.0\\"'),
  ],
  [
    'jsonrpc "2.0 "',
    '{"jsonrpc":"2.0 ","method":"eth_blockNumber","id":7}',
    400,
    invalid('7', 'jsonrpc must be \\"2.0\\"'),
  ],
  [
    'jsonrpc number 2',
    '{"jsonrpc":2,"method":"eth_blockNumber","id":7}',
    400,
    invalid('7', 'jsonrpc must be \\"2.0\\"'),
  ],
  [
    'jsonrpc number 2.0',
    '{"jsonrpc":2.0,"method":"eth_blockNumber","id":7}',
    400,
    invalid('7', 'jsonrpc must be \\"2.0\\"'),
  ],
  [
    'jsonrpc null',
    '{"jsonrpc":null,"method":"eth_blockNumber","id":"s"}',
    400,
    invalid('"s"', 'jsonrpc must be \\"2.0\\"'),
  ],

  // ---- method member
  ['method missing', '{"jsonrpc":"2.0","id":"a"}', 400, invalid('"a"', 'method is missing')],
  [
    'method number (spec example, no id)',
    '{"jsonrpc":"2.0","method":1,"params":"bar"}',
    400,
    invalid('null', 'method must be a string'),
  ],
  ['method null', '{"jsonrpc":"2.0","method":null,"id":1}', 400, invalid('1', 'method must be a string')],
  [
    'method array',
    '{"jsonrpc":"2.0","method":["eth_blockNumber"],"id":1}',
    400,
    invalid('1', 'method must be a string'),
  ],
  ['method object', '{"jsonrpc":"2.0","method":{},"id":1}', 400, invalid('1', 'method must be a string')],

  // ---- params member: must be structured
  ['params string', req('eth_blockNumber', '"bar"', '1'), 400, invalid('1', 'params must be an array or an object')],
  ['params number', req('eth_blockNumber', '5', '1'), 400, invalid('1', 'params must be an array or an object')],
  ['params null', req('eth_blockNumber', 'null', '1'), 400, invalid('1', 'params must be an array or an object')],
  ['params boolean', req('eth_blockNumber', 'true', '1'), 400, invalid('1', 'params must be an array or an object')],

  // ---- id member: wrong types → id null
  ['id object', req('eth_blockNumber', '[]', '{}'), 400, invalid('null', 'id must be a string, a number or null')],
  ['id array', req('eth_blockNumber', '[]', '[1]'), 400, invalid('null', 'id must be a string, a number or null')],
  ['id true', req('eth_blockNumber', '[]', 'true'), 400, invalid('null', 'id must be a string, a number or null')],
  ['id false', req('eth_blockNumber', '[]', 'false'), 400, invalid('null', 'id must be a string, a number or null')],
  [
    'id overflows to Infinity',
    req('eth_blockNumber', '[]', '1e400'),
    400,
    invalid('null', 'id must be a finite number'),
  ],
  [
    'id deeply nested',
    req('eth_blockNumber', '[]', deep(DEEP, '[', ']')),
    400,
    invalid('null', 'id must be a string, a number or null'),
  ],
  [
    'id invalid and jsonrpc wrong: id reported first',
    '{"jsonrpc":"1.0","method":"x","id":{}}',
    400,
    invalid('null', 'id must be a string, a number or null'),
  ],

  // ---- ids of every valid type, echoed
  ['id 0', BN('0'), 200, BN_OK('0')],
  ['id negative', BN('-1'), 200, BN_OK('-1')],
  ['id float', BN('1.5'), 200, BN_OK('1.5')],
  ['id 1.0 echoed as 1', BN('1.0'), 200, BN_OK('1')],
  ['id 1e2 echoed as 100', BN('1e2'), 200, BN_OK('100')],
  ['id -0 echoed as 0', BN('-0'), 200, BN_OK('0')],
  ['id 2^53+1 echoed as JSON.parse gives it', BN('9007199254740993'), 200, BN_OK('9007199254740992')],
  ['id 20 digits echoed as JSON.parse gives it', BN('12345678901234567890'), 200, BN_OK('12345678901234567000')],
  ['id 1e21', BN('1e21'), 200, BN_OK('1e+21')],
  ['id empty string', BN('""'), 200, BN_OK('""')],
  ['id string', BN('"abc-123"'), 200, BN_OK('"abc-123"')],
  ['id numeric string stays a string', BN('"1"'), 200, BN_OK('"1"')],
  ['id unicode escapes', BN('"\\u00e9\\ud834\\udd1e"'), 200, BN_OK('"é𝄞"')],
  ['id lone surrogate', BN('"\\udc00"'), 200, BN_OK('"\\udc00"')],
  ['id null', BN('null'), 200, BN_OK('null')],
  [
    'extra members are ignored',
    '{"jsonrpc":"2.0","method":"eth_blockNumber","id":1,"extra":{"x":[1]},"ID":2}',
    200,
    BN_OK('1'),
  ],

  // ---- notifications (valid request, no id): never answered
  ['notification', req('eth_blockNumber', '[]'), 204, undefined],
  ['notification without params', req('eth_blockNumber'), 204, undefined],
  ['notification to an unknown method', req('eth_foo', '[]'), 204, undefined],
  ['notification with invalid params', req('eth_getBalance', '["0x1"]'), 204, undefined],
  ['notification whose handler throws', req('throws_plain', '[]'), 204, undefined],
  [
    'invalid request without id is answered',
    '{"jsonrpc":"1.0","method":"eth_blockNumber"}',
    400,
    invalid('null', 'jsonrpc must be \\"2.0\\"'),
  ],

  // ---- methods
  ['unknown method', req('eth_foo', '[]', '1'), 200, notFound('1', 'eth_foo')],
  ['empty method name', req('', '[]', '1'), 200, notFound('1', '')],
  ['method names are case-sensitive', req('ETH_BLOCKNUMBER', '[]', '1'), 200, notFound('1', 'ETH_BLOCKNUMBER')],
  [
    'method in the table without a handler',
    req('not_implemented', '[]', '1'),
    200,
    fail('1', '{"code":-32601,"message":"method not supported: not_implemented"}'),
  ],
  ['rpc.* not in the table', req('rpc.foo', '[]', '1'), 200, notFound('1', 'rpc.foo')],
  ['rpc.discover in the table', req('rpc.discover', undefined, '1'), 200, ok('1', '{"openrpc":"1.3.2"}')],
  ['method __proto__', req('__proto__', '[]', '1'), 200, notFound('1', '__proto__')],
  ['method constructor', req('constructor', '[]', '1'), 200, notFound('1', 'constructor')],
  ['method toString', req('toString', '[]', '1'), 200, notFound('1', 'toString')],
  ['method hasOwnProperty', req('hasOwnProperty', '[]', '1'), 200, notFound('1', 'hasOwnProperty')],
  ['method valueOf', req('valueOf', '[]', '1'), 200, notFound('1', 'valueOf')],
  [
    'long method name is truncated in the message',
    req('m'.repeat(300), '[]', '1'),
    200,
    notFound('1', `${'m'.repeat(128)}…`),
  ],
  ['unicode method name', req('eth_blöck', '[]', '1'), 200, notFound('1', 'eth_blöck')],
  ['lone surrogate in method name', '{"jsonrpc":"2.0","method":"\\ud800","id":1}', 200, notFound('1', '\\ud800')],

  // ---- params: count
  [
    'params absent → [] → too few',
    req('eth_getBalance', undefined, '1'),
    200,
    fail(
      '1',
      '{"code":-32602,"message":"invalid params: expected 2 params, got 0","data":{"param":"address","reason":"expected 2 params, got 0","min":2,"max":2,"got":0}}',
    ),
  ],
  [
    'one param short',
    req('eth_getBalance', `["${A}"]`, '1'),
    200,
    fail(
      '1',
      '{"code":-32602,"message":"invalid params: expected 2 params, got 1","data":{"param":"block","reason":"expected 2 params, got 1","min":2,"max":2,"got":1}}',
    ),
  ],
  [
    'one param too many',
    req('eth_getBalance', `["${A}","latest","x"]`, '1'),
    200,
    fail(
      '1',
      '{"code":-32602,"message":"invalid params: expected 2 params, got 3","data":{"reason":"expected 2 params, got 3","min":2,"max":2,"got":3}}',
    ),
  ],
  [
    'params to a method that takes none',
    req('eth_blockNumber', '[1]', '1'),
    200,
    fail(
      '1',
      '{"code":-32602,"message":"invalid params: expected 0 params, got 1","data":{"reason":"expected 0 params, got 1","min":0,"max":0,"got":1}}',
    ),
  ],
  [
    'optional params: range in the message',
    req('eth_getCode', '[]', '1'),
    200,
    fail(
      '1',
      '{"code":-32602,"message":"invalid params: expected 1..2 params, got 0","data":{"param":"address","reason":"expected 1..2 params, got 0","min":1,"max":2,"got":0}}',
    ),
  ],
  ['optional trailing param omitted', req('eth_getCode', `["${A}"]`, '1'), 200, ok('1', '"0x6001"')],

  // ---- params: contract (generated validator)
  [
    'param fails a pattern',
    req('eth_getBalance', '["0x12","latest"]', '1'),
    200,
    fail(
      '1',
      '{"code":-32602,"message":"invalid params: address must match pattern \\"^0x[0-9a-fA-F]{40}$\\"","data":{"param":"address","path":"/0","reason":"must match pattern \\"^0x[0-9a-fA-F]{40}$\\""}}',
    ),
  ],
  [
    'anyOf fails at the top: what each branch wanted',
    req('eth_getBalance', `["${A}","latestx"]`, '1'),
    200,
    fail(
      '1',
      '{"code":-32602,"message":"invalid params: block must match pattern \\"^0x(0|[1-9a-f][0-9a-f]*)$\\" or must be equal to one of the allowed values: [\\"earliest\\",\\"finalized\\",\\"safe\\",\\"latest\\",\\"pending\\"] or must be object","data":{"param":"block","path":"/1","reason":"must match pattern \\"^0x(0|[1-9a-f][0-9a-f]*)$\\" or must be equal to one of the allowed values: [\\"earliest\\",\\"finalized\\",\\"safe\\",\\"latest\\",\\"pending\\"] or must be object"}}',
    ),
  ],
  [
    'anyOf: the branch that got deeper is reported',
    req('eth_getBalance', `["${A}",{"blockHash":"0x12"}]`, '1'),
    200,
    fail(
      '1',
      '{"code":-32602,"message":"invalid params: block/blockHash must match pattern \\"^0x[0-9a-f]{64}$\\"","data":{"param":"block","path":"/1/blockHash","reason":"must match pattern \\"^0x[0-9a-f]{64}$\\""}}',
    ),
  ],
  [
    'param of the wrong type: every branch says why',
    req('eth_getBalance', `["${A}",1]`, '1'),
    200,
    fail(
      '1',
      '{"code":-32602,"message":"invalid params: block must be string or must be equal to one of the allowed values: [\\"earliest\\",\\"finalized\\",\\"safe\\",\\"latest\\",\\"pending\\"] or must be object","data":{"param":"block","path":"/1","reason":"must be string or must be equal to one of the allowed values: [\\"earliest\\",\\"finalized\\",\\"safe\\",\\"latest\\",\\"pending\\"] or must be object"}}',
    ),
  ],
  [
    'first param of the wrong type',
    req('eth_getBalance', '[1,"latest"]', '1'),
    200,
    fail(
      '1',
      '{"code":-32602,"message":"invalid params: address must be string","data":{"param":"address","path":"/0","reason":"must be string"}}',
    ),
  ],
  [
    'nested member of a param',
    req('filter', '[{"fromBlock":"1"}]', '1'),
    200,
    fail(
      '1',
      '{"code":-32602,"message":"invalid params: filter/fromBlock must match pattern \\"^0x(0|[1-9a-f][0-9a-f]*)$\\"","data":{"param":"filter","path":"/0/fromBlock","reason":"must match pattern \\"^0x(0|[1-9a-f][0-9a-f]*)$\\""}}',
    ),
  ],
  [
    'unknown member of a param',
    req('filter', '[{"fromBlock":"0x1","foo":1}]', '1'),
    200,
    fail(
      '1',
      '{"code":-32602,"message":"invalid params: filter must NOT have additional properties: \\"foo\\"","data":{"param":"filter","path":"/0","reason":"must NOT have additional properties: \\"foo\\""}}',
    ),
  ],
  [
    'by-name object for a by-position method',
    req('eth_getBalance', `{"address":"${A}","block":"latest"}`, '1'),
    200,
    fail(
      '1',
      '{"code":-32602,"message":"invalid params: eth_getBalance takes params by position (an array)","data":{"reason":"params must be an array"}}',
    ),
  ],
  [
    'empty object for a by-position method',
    req('eth_blockNumber', '{}', '1'),
    200,
    fail(
      '1',
      '{"code":-32602,"message":"invalid params: eth_blockNumber takes params by position (an array)","data":{"reason":"params must be an array"}}',
    ),
  ],
  [
    'array for a by-name method',
    req('named_only', '[1]', '1'),
    200,
    fail(
      '1',
      '{"code":-32602,"message":"invalid params: named_only takes params by name (an object)","data":{"reason":"params must be an object"}}',
    ),
  ],
  [
    'by-name: unknown name',
    req('eth_getCode', `{"address":"${A}","blok":"latest"}`, '1'),
    200,
    fail(
      '1',
      '{"code":-32602,"message":"invalid params: unknown param \\"blok\\"","data":{"param":"blok","reason":"unknown param"}}',
    ),
  ],
  [
    'by-name: missing required',
    req('eth_getCode', '{"block":"latest"}', '1'),
    200,
    fail(
      '1',
      '{"code":-32602,"message":"invalid params: address required param is missing","data":{"param":"address","path":"/0","reason":"required param is missing"}}',
    ),
  ],
  [
    'by-name: validator failure names the param',
    req('eth_getCode', '{"address":"0x1"}', '1'),
    200,
    fail(
      '1',
      '{"code":-32602,"message":"invalid params: address must match pattern \\"^0x[0-9a-fA-F]{40}$\\"","data":{"param":"address","path":"/0","reason":"must match pattern \\"^0x[0-9a-fA-F]{40}$\\""}}',
    ),
  ],

  // ---- batches
  ['empty batch: one error object, not an array', '[]', 400, invalid('null', 'empty batch')],
  ['empty batch with whitespace', ' [ \n ] ', 400, invalid('null', 'empty batch')],
  [
    'batch over maxBatchSize',
    `[${Array.from({ length: 9 }, (_, i) => BN(String(i))).join(',')}]`,
    413,
    fail(
      'null',
      '{"code":-32600,"message":"invalid request: batch of 9 requests exceeds the limit of 8","data":{"limit":8}}',
    ),
  ],
  [
    'batch at maxBatchSize',
    `[${Array.from({ length: 8 }, (_, i) => BN(String(i))).join(',')}]`,
    200,
    `[${Array.from({ length: 8 }, (_, i) => BN_OK(String(i))).join(',')}]`,
  ],
  [
    'batch of invalid items (spec example [1,2,3])',
    '[1,2,3]',
    200,
    `[${invalid('null', 'not a request object')},${invalid('null', 'not a request object')},${invalid('null', 'not a request object')}]`,
  ],
  ['batch of one invalid item', '[1]', 200, `[${invalid('null', 'not a request object')}]`],
  ['nested batch is an invalid item', `[[${BN('1')}]]`, 200, `[${invalid('null', 'not a request object')}]`],
  [
    'batch of notifications only',
    `[${req('eth_blockNumber', '[]')},${req('eth_foo')},${req('eth_getBalance', '["0x1"]')},${req('throws_plain')}]`,
    204,
    undefined,
  ],
  [
    'mixed batch, in request order',
    `[${BN('1')},1,${req('eth_blockNumber')},${req('eth_foo', '[]', '"u"')},${req('eth_getBalance', `["${A}","latest"]`, '"b"')},{"jsonrpc":"1.0","method":"eth_blockNumber","id":9},${req('eth_getBalance', '[]', '2')},${req('throws_plain', '[]', 'null')}]`,
    200,
    `[${BN_OK('1')},${invalid('null', 'not a request object')},${notFound('"u"', 'eth_foo')},${ok('"b"', '"0x234c8a3397aab58"')},${invalid('9', 'jsonrpc must be \\"2.0\\"')},` +
      `${fail('2', '{"code":-32602,"message":"invalid params: expected 2 params, got 0","data":{"param":"address","reason":"expected 2 params, got 0","min":2,"max":2,"got":0}}')},` +
      `${fail('null', '{"code":-32603,"message":"Internal error"}')}]`,
  ],
  ['batch with duplicate ids answers each', `[${BN('1')},${BN('1')}]`, 200, `[${BN_OK('1')},${BN_OK('1')}]`],

  // ---- deep nesting: no crash, a clean answer
  ['100k nested arrays as the body', deep(DEEP, '[', ']'), 200, `[${invalid('null', 'not a request object')}]`],
  ['100k nested objects as the body', deep(DEEP, '{"a":', '}', '1'), 400, invalid('null', 'jsonrpc must be \\"2.0\\"')],
  [
    '100k nested arrays in params, recursive schema (validator overflows)',
    req('tree', `[${deep(DEEP, '[', ']')}]`, '1'),
    200,
    fail(
      '1',
      '{"code":-32602,"message":"invalid params: params are nested too deeply to validate","data":{"reason":"nested too deeply"}}',
    ),
  ],
  [
    '100k nested arrays echoed back (serialiser overflows)',
    req('echo', `[${deep(DEEP, '[', ']')}]`, '1'),
    500,
    fail('1', '{"code":-32603,"message":"Internal error"}'),
  ],
  ['moderate nesting is fine', req('echo', `[${deep(50, '[', ']')}]`, '1'), 200, ok('1', deep(50, '[', ']'))],

  // ---- unicode
  ['unicode text round-trips', req('echo', '["héllo ✓ 𝄞 日本"]', '1'), 200, ok('1', '"héllo ✓ 𝄞 日本"')],
  [
    'escapes round-trip',
    req('echo', '["\\u0000\\u001f\\"\\\\\\/\\u00e9"]', '1'),
    200,
    ok('1', '"\\u0000\\u001f\\"\\\\/é"'),
  ],
  ['U+2028/2029 round-trip', req('echo', '["\\u2028\\u2029"]', '1'), 200, ok('1', '"\u2028\u2029"')],
  ['lone surrogates stay escaped', req('echo', '["\\ud800x\\udfff"]', '1'), 200, ok('1', '"\\ud800x\\udfff"')],
  ['raw lone surrogate in the body string', req('echo', '["\ud800"]', '1'), 200, ok('1', '"\\ud800"')],
  ['unicode member names', req('echo', '[{"ключ":"значение"}]', '1'), 200, ok('1', '{"ключ":"значение"}')],

  // ---- prototype keys
  [
    '__proto__ key inside params is plain data',
    req('echo', '[{"__proto__":{"polluted":1}}]', '1'),
    200,
    ok('1', '{"__proto__":{"polluted":1}}'),
  ],
  [
    'constructor/prototype keys inside params',
    req('echo', '[{"constructor":{"prototype":{"polluted":1}}}]', '1'),
    200,
    ok('1', '{"constructor":{"prototype":{"polluted":1}}}'),
  ],
  [
    '__proto__ in the request object does not supply members',
    '{"__proto__":{"jsonrpc":"2.0","method":"eth_blockNumber"},"id":1}',
    400,
    invalid('1', 'jsonrpc must be \\"2.0\\"'),
  ],
  [
    '__proto__ as a by-name param',
    req('eth_getCode', '{"__proto__":{"address":"x"}}', '1'),
    200,
    fail(
      '1',
      '{"code":-32602,"message":"invalid params: unknown param \\"__proto__\\"","data":{"param":"__proto__","reason":"unknown param"}}',
    ),
  ],
  [
    'constructor as a by-name param',
    req('eth_getCode', `{"address":"${A}","constructor":1}`, '1'),
    200,
    fail(
      '1',
      '{"code":-32602,"message":"invalid params: unknown param \\"constructor\\"","data":{"param":"constructor","reason":"unknown param"}}',
    ),
  ],
  [
    'toString as a by-name param',
    req('named_only', '{"a":1,"toString":2}', '1'),
    200,
    fail(
      '1',
      '{"code":-32602,"message":"invalid params: unknown param \\"toString\\"","data":{"param":"toString","reason":"unknown param"}}',
    ),
  ],

  // ---- numbers
  ['huge number overflows to Infinity, serialised as null', req('echo', '[1e400]', '1'), 200, ok('1', 'null')],
  [
    '30-digit integer loses precision',
    req('echo', '[123456789012345678901234567890]', '1'),
    200,
    ok('1', '1.2345678901234568e+29'),
  ],
  ['-0 serialises as 0', req('echo', '[-0]', '1'), 200, ok('1', '0')],
  ['tiny number underflows to 0', req('echo', '[1e-400]', '1'), 200, ok('1', '0')],
];

describe('JSON-RPC envelope: malformed and edge inputs', () => {
  it.each(cases)('%s', async (_name, body, status, expected) => {
    const res = await engine.handle(body, {});
    expect(res.status).toBe(status);
    expect(res.body).toBe(expected);
    expect(res.headers).toBeUndefined();
    // every answer is valid JSON
    if (res.body !== undefined) expect(() => JSON.parse(res.body!)).not.toThrow();
  });

  it('no request pollutes Object.prototype', async () => {
    const bodies = [
      req('echo', '[{"__proto__":{"polluted":1}}]', '1'),
      req('echo', '[{"constructor":{"prototype":{"polluted":1}}}]', '1'),
      req('eth_getCode', '{"__proto__":{"polluted":1}}', '1'),
      req('named_only', '{"a":1,"__proto__":{"polluted":1}}', '1'),
      '{"__proto__":{"polluted":1},"jsonrpc":"2.0","method":"eth_blockNumber","id":1}',
      `[{"__proto__":{"polluted":1}},${req('echo', '[{"__proto__":{"polluted":1}}]')}]`,
      req('__proto__', '{"polluted":1}', '1'),
    ];
    for (const b of bodies) await engine.handle(b, {});
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.prototype).not.toHaveProperty('polluted');
    expect(Object.getOwnPropertyNames(Object.prototype)).not.toContain('polluted');
  });
});
