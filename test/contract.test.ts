// The node contract (openrpc.json): valid OpenRPC, complete, its examples agree with its schemas, and the
// recorded exchanges of the Ethereum execution-apis conformance suite agree with them too.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { Ajv, type ValidateFunction } from 'ajv';
import { parseOpenRPCDocument, validateOpenRPCDocument } from '@open-rpc/schema-utils-js';
import { readRecordedExchanges, type RecordedExchange } from './helpers/execution-apis.js';
import * as gw from '../src/gateway/errors.js';
import { tooManyFilters } from '../src/gateway/filters/index.js';
import { RpcError } from '../packages/toolkit/src/rpc/errors.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const contractPath = join(root, 'openrpc.json');

type Json = unknown;
type Schema = Record<string, unknown>;
interface ContentDescriptor {
  name: string;
  description?: string;
  required?: boolean;
  schema: Schema;
}
interface Example {
  name: string;
  params: { name: string; value: Json }[];
  result: { name: string; value: Json };
}
interface Method {
  name: string;
  summary?: string;
  description?: string;
  paramStructure?: string;
  params: ContentDescriptor[];
  result: ContentDescriptor;
  errors?: { $ref?: string; code?: number }[];
  examples?: Example[];
}
interface ErrorObject {
  code: number;
  message: string;
  data?: {
    description?: string;
    required?: string[];
    properties?: Record<string, { const?: string; enum?: string[] }>;
  };
}
interface ServerObject {
  name?: string;
  summary?: string;
  url: string;
  variables?: Record<string, { default: string; enum?: string[] }>;
}
interface Doc {
  openrpc: string;
  info: { title: string; version: string; description?: string; license?: unknown };
  servers: ServerObject[];
  methods: Method[];
  components: { schemas: Record<string, Schema>; errors: Record<string, ErrorObject> };
}

const REQUIRED_METHODS = [
  'eth_blockNumber',
  'eth_getBlockByNumber',
  'eth_getBlockByHash',
  'eth_chainId',
  'net_version',
  'web3_clientVersion',
  'eth_syncing',
  'eth_gasPrice',
  'eth_maxPriorityFeePerGas',
  'eth_feeHistory',
  'eth_getBalance',
  'eth_getTransactionCount',
  'eth_getCode',
  'eth_getStorageAt',
  'eth_call',
  'eth_estimateGas',
  'eth_getLogs',
  'eth_getTransactionByHash',
  'eth_getTransactionReceipt',
  'eth_getTransactionByBlockHashAndIndex',
  'eth_getTransactionByBlockNumberAndIndex',
  'eth_getBlockTransactionCountByHash',
  'eth_getBlockTransactionCountByNumber',
  'eth_getBlockReceipts',
  'eth_sendRawTransaction',
  'rpc.discover',
  // issue 12: the remaining standard reads
  'eth_accounts',
  'eth_getProof',
  'eth_createAccessList',
  'net_listening',
  'net_peerCount',
  'web3_sha3',
  'eth_protocolVersion',
  'eth_getUncleByBlockHashAndIndex',
  'eth_getUncleByBlockNumberAndIndex',
  'eth_getUncleCountByBlockHash',
  'eth_getUncleCountByBlockNumber',
  'eth_blobBaseFee',
];
// Code → HTTP status(es) the contract must document: the JSON-RPC envelope, then rpcgate's table (src/gateway/errors.ts).
const DOCUMENTED_STATUS: Record<number, string[]> = {
  [-32700]: ['400'],
  [-32600]: ['400', '413'],
  [-32601]: ['200'],
  [-32602]: ['200'],
  [-32603]: ['500'],
};
for (const r of gw.GATEWAY_ERRORS as readonly gw.GatewayErrorRow[])
  if (!r.accountOnly) DOCUMENTED_STATUS[r.code] = [...(DOCUMENTED_STATUS[r.code] ?? []), ...r.httpStatus.map(String)];
const G = gw.GatewayErrorCode;
const ENVELOPE_AUTH_LIMIT = [
  -32700,
  -32600,
  -32601,
  -32602,
  -32603,
  G.Unauthorized,
  G.Forbidden,
  G.LimitExceeded,
  G.LimitsBackendUnavailable,
];
const UPSTREAM = [G.UpstreamUnavailable, G.UpstreamTimeout];
const IDENT = /^[a-z][A-Za-z0-9]*$/;

const text = readFileSync(contractPath, 'utf8');
const raw = JSON.parse(text) as Doc;

let deref: Doc;
const ajvWarnings: unknown[] = [];
const ajv = new Ajv({
  allErrors: false,
  strictTuples: false, // optional trailing params: minItems < items.length by design
  logger: {
    log: () => {},
    warn: (...a: unknown[]) => ajvWarnings.push(a),
    error: (...a: unknown[]) => ajvWarnings.push(a),
  },
});
const validators = new Map<string, { params: ValidateFunction; result: ValidateFunction }>();

function tupleSchema(params: ContentDescriptor[]): Schema {
  let required = 0;
  params.forEach((p, i) => {
    if (p.required) required = i + 1;
  });
  if (params.length === 0) return { type: 'array', maxItems: 0 };
  return { type: 'array', items: params.map((p) => p.schema), minItems: required, maxItems: params.length };
}
function v(method: string) {
  const x = validators.get(method);
  if (!x) throw new Error(`no validators for ${method}`);
  return x;
}
function why(fn: ValidateFunction): string {
  return ajv.errorsText(fn.errors);
}

function walk(node: unknown, visit: (n: Record<string, unknown>, path: string) => void, path = ''): void {
  if (Array.isArray(node)) for (const [i, n] of node.entries()) walk(n, visit, `${path}/${i}`);
  else if (node && typeof node === 'object') {
    visit(node as Record<string, unknown>, path);
    for (const [k, c] of Object.entries(node)) walk(c, visit, `${path}/${k}`);
  }
}

beforeAll(async () => {
  deref = (await parseOpenRPCDocument(structuredClone(raw) as never)) as unknown as Doc;
  for (const m of deref.methods) {
    validators.set(m.name, { params: ajv.compile(tupleSchema(m.params)), result: ajv.compile(m.result.schema) });
  }
});

describe('openrpc.json document', () => {
  it('is pretty-printed, deterministic JSON (2 spaces, trailing newline)', () => {
    expect(text).toBe(`${JSON.stringify(raw, null, 2)}\n`);
  });

  it('passes validateOpenRPCDocument (OpenRPC 1.3.2 meta-schema)', () => {
    expect(raw.openrpc).toBe('1.3.2');
    const res = validateOpenRPCDocument(structuredClone(raw) as never);
    expect(res === true ? true : (res as { message: string }).message).toBe(true);
  });

  it('validation can fail: a broken copy is refused', () => {
    const broken = structuredClone(raw) as unknown as { servers: { url: string }[]; methods: { params?: unknown }[] };
    delete broken.methods[0].params;
    expect(validateOpenRPCDocument(broken as never)).not.toBe(true);
  });

  it('dereferences with parseOpenRPCDocument, leaving no $ref in methods', async () => {
    expect(deref.methods.length).toBe(raw.methods.length);
    const left: string[] = [];
    walk(
      deref.methods.map((m) => ({ params: m.params, result: m.result, errors: m.errors })),
      (n, p) => {
        if ('$ref' in n) left.push(p);
      },
    );
    expect(left).toEqual([]);
    await expect(parseOpenRPCDocument(structuredClone(raw) as never, { dereference: false })).resolves.toBeTruthy();
  });

  it('has info with title, version, description and license', () => {
    expect(raw.info.title).toBe('rpcgate node API');
    expect(raw.info.version).toBe('1.0.0');
    expect(raw.info.description?.length).toBeGreaterThan(100);
    expect(raw.info.license).toBeTruthy();
  });

  it('has the four access-point servers as URI templates with defaults', () => {
    expect(raw.servers.map((s) => s.name)).toEqual(['A-mainnet', 'A-testnet', 'B-mainnet', 'B-testnet']);
    for (const s of raw.servers) {
      const [ap, net] = s.name!.split('-');
      expect(s.url).toBe(ap === 'A' ? 'http://{host}/{network}/v2/{apiKey}' : 'http://{host}/{network}/{apiKey}');
      expect(s.summary).toBeTruthy();
      expect(s.variables?.network.default).toBe(net);
      expect(s.variables?.network.enum).toEqual(['mainnet', 'testnet']);
      expect(s.variables?.host.default).toBe('127.0.0.1:8080');
      expect(s.variables?.apiKey.default).toBe('YOUR_API_KEY');
      const url = s.url.replace(/\{(\w+)\}/g, (_, k: string) => s.variables![k].default);
      expect(new URL(url).pathname).toBe(ap === 'A' ? `/${net}/v2/YOUR_API_KEY` : `/${net}/YOUR_API_KEY`);
    }
  });
});

describe('schemas', () => {
  it('every component has a unique PascalCase title equal to its key', () => {
    for (const [k, s] of Object.entries(raw.components.schemas)) {
      expect(s.title, k).toBe(k);
      expect(k).toMatch(/^[A-Z][A-Za-z0-9]*$/);
    }
  });

  it('only components carry titles, and a $ref stands alone (no siblings to merge or rename types)', () => {
    const bad: string[] = [];
    const scan = (node: unknown, at: string) =>
      walk(node, (n, p) => {
        if ('$ref' in n && Object.keys(n).length !== 1) bad.push(`${at}${p}: $ref with siblings`);
        if ('title' in n && typeof n.title === 'string' && p !== '') bad.push(`${at}${p}: inline title`);
      });
    for (const [k, s] of Object.entries(raw.components.schemas)) scan(s, `#/components/schemas/${k}`);
    for (const m of raw.methods) for (const cd of [...m.params, m.result]) scan(cd.schema, `${m.name}/${cd.name}`);
    expect(bad).toEqual([]);
  });

  it('all $refs resolve', () => {
    const missing: string[] = [];
    walk(raw, (n, p) => {
      if (typeof n.$ref !== 'string') return;
      const [, kind, name] = /^#\/components\/(schemas|errors)\/(.+)$/.exec(n.$ref) ?? [];
      const table = kind === 'schemas' ? raw.components.schemas : kind === 'errors' ? raw.components.errors : undefined;
      if (!table || !(name in table)) missing.push(`${p} → ${n.$ref}`);
    });
    expect(missing).toEqual([]);
  });

  it('node result objects stay open (no additionalProperties: false); only the call object is closed', () => {
    const closed: string[] = [];
    for (const [k, s] of Object.entries(raw.components.schemas))
      walk(s, (n, p) => {
        if (n.additionalProperties === false) closed.push(k + p);
      });
    expect(closed).toEqual(['GenericTransaction']);
  });

  it('uses the spec patterns for quantities, hashes, addresses and bytes', () => {
    const pat = (k: string) => raw.components.schemas[k].pattern;
    expect(pat('Uint')).toBe('^0x(0|[1-9a-f][0-9a-f]*)$');
    expect(pat('Uint64')).toBe('^0x(0|[1-9a-f][0-9a-f]{0,15})$');
    expect(pat('Uint256')).toBe('^0x(0|[1-9a-f][0-9a-f]{0,63})$');
    expect(pat('Hash32')).toBe('^0x[0-9a-f]{64}$');
    expect(pat('Address')).toBe('^0x[0-9a-fA-F]{40}$');
    expect(pat('Bytes')).toBe('^0x[0-9a-f]*$');
    expect(pat('BytesMax32')).toBe('^0x[0-9a-f]{0,64}$');
    expect(raw.components.schemas.BlockTag.enum).toEqual(['earliest', 'finalized', 'safe', 'latest', 'pending']);
  });

  it('compiles under ajv strict mode without warnings', () => {
    expect(ajvWarnings).toEqual([]);
  });
});

describe('methods', () => {
  it('lists every required method exactly once', () => {
    const names = raw.methods.map((m) => m.name);
    expect(new Set(names).size).toBe(names.length);
    for (const n of REQUIRED_METHODS) expect(names, n).toContain(n);
  });

  it.each(REQUIRED_METHODS)(
    '%s has summary, description, by-position identifier params, examples and errors',
    (name) => {
      const m = raw.methods.find((x) => x.name === name)!;
      expect(m.summary?.length).toBeGreaterThan(10);
      expect(m.description?.length).toBeGreaterThan(80);
      expect(m.paramStructure).toBe('by-position');
      let optionalSeen = false;
      for (const p of m.params) {
        expect(p.name).toMatch(IDENT);
        expect(p.description).toBeTruthy();
        if (!p.required) optionalSeen = true;
        else expect(optionalSeen, `${name}: required ${p.name} after an optional param`).toBe(false);
      }
      expect(new Set(m.params.map((p) => p.name)).size).toBe(m.params.length);
      expect(m.result.name).toMatch(IDENT);
      expect(m.examples?.length).toBeGreaterThan(0);

      const codes = (m.errors ?? []).map((e) => {
        expect(e.$ref).toMatch(/^#\/components\/errors\/\w+$/);
        const target = raw.components.errors[e.$ref!.split('/').pop()!];
        expect(target, e.$ref).toBeTruthy();
        return target.code;
      });
      expect(new Set(codes).size).toBe(codes.length);
      for (const c of ENVELOPE_AUTH_LIMIT) expect(codes, `${name} lists ${c}`).toContain(c);
      if (name !== 'rpc.discover')
        for (const c of [...UPSTREAM, -32000]) expect(codes, `${name} lists ${c}`).toContain(c);
    },
  );

  it('eth_call and eth_estimateGas list execution reverted (3); eth_sendRawTransaction lists the node rejections', () => {
    const codes = (n: string) =>
      raw.methods.find((m) => m.name === n)!.errors!.map((e) => raw.components.errors[e.$ref!.split('/').pop()!].code);
    expect(codes('eth_call')).toContain(3);
    expect(codes('eth_estimateGas')).toContain(3);
    expect(codes('eth_sendRawTransaction')).toEqual(expect.arrayContaining([-32000, 1, 2, 802, 809, 1000]));
  });

  it('optional params follow the spec (block of state reads, eth_call and eth_estimateGas)', () => {
    const req = (n: string) =>
      raw.methods.find((m) => m.name === n)!.params.map((p) => `${p.name}${p.required ? '' : '?'}`);
    expect(req('eth_getBalance')).toEqual(['address', 'block?']);
    expect(req('eth_getStorageAt')).toEqual(['address', 'slot', 'block?']);
    expect(req('eth_call')).toEqual(['transaction', 'block?']);
    expect(req('eth_estimateGas')).toEqual(['transaction', 'block?']);
    expect(req('eth_getBlockByNumber')).toEqual(['block', 'hydratedTransactions']);
    expect(req('eth_feeHistory')).toEqual(['blockCount', 'newestBlock', 'rewardPercentiles']);
    expect(req('eth_getProof')).toEqual(['address', 'storageKeys', 'block?']);
    expect(req('eth_createAccessList')).toEqual(['transaction', 'block?']);
    expect(req('rpc.discover')).toEqual([]);
  });
});

describe('errors', () => {
  it('defines each code once, with the HTTP status of the envelope and of src/gateway/errors.ts documented', () => {
    const byCode = new Map<number, ErrorObject>();
    for (const [k, e] of Object.entries(raw.components.errors)) {
      expect(Number.isInteger(e.code), k).toBe(true);
      expect(e.message, k).toBeTruthy();
      expect(byCode.has(e.code), `duplicate code ${e.code}`).toBe(false);
      byCode.set(e.code, e);
      expect(e.data?.description, k).toMatch(/HTTP \d{3}/);
    }
    for (const [code, statuses] of Object.entries(DOCUMENTED_STATUS)) {
      const e = byCode.get(Number(code));
      expect(e, `error ${code}`).toBeTruthy();
      for (const s of statuses) expect(e!.data!.description, `${code} documents HTTP ${s}`).toContain(s);
    }
    expect(byCode.get(-32005)!.data).toMatchObject({ required: ['source', 'reason', 'limit'] }); // period, resetAt: rate and quota only
    // Errors only the account API answers are documented there, with their HTTP status.
    const account = JSON.parse(readFileSync(join(root, 'contracts/account.openrpc.json'), 'utf8')) as Doc;
    for (const r of (gw.GATEWAY_ERRORS as readonly gw.GatewayErrorRow[]).filter((x) => x.accountOnly)) {
      const e = Object.values(account.components.errors).find((x) => x.code === r.code);
      expect(e, `account error ${r.code}`).toBeTruthy();
      for (const s of r.httpStatus) expect(e!.data!.description, `${r.code} documents HTTP ${s}`).toContain(String(s));
    }
  });

  it('rpcgate\'s own errors in both contracts: data.source is the const "rpcgate", data.reason takes the table\'s words', () => {
    const account = JSON.parse(readFileSync(join(root, 'contracts/account.openrpc.json'), 'utf8')) as Doc;
    const words = new Map<number, Set<string>>();
    for (const doc of [raw, account]) {
      for (const e of Object.values(doc.components.errors)) {
        const row = gw.GATEWAY_ERRORS.find((r) => r.code === e.code);
        const props = e.data?.properties;
        if (row === undefined || props?.source === undefined) continue;
        expect(props.source.const, `${e.code}`).toBe(gw.SOURCE);
        const reasons = props.reason?.enum ?? (props.reason?.const === undefined ? [] : [props.reason.const]);
        expect(reasons.length, `${e.code} lists its reasons`).toBeGreaterThan(0);
        for (const w of reasons) words.set(e.code, (words.get(e.code) ?? new Set()).add(w));
      }
    }
    // Every row is documented, with exactly its reason words across the two APIs (rows sharing a code — -32000 too many
    // filters / filter not found, -32601 method / transport — share one error object).
    const rowWords = new Map<number, string[]>();
    for (const r of gw.GATEWAY_ERRORS) rowWords.set(r.code, [...(rowWords.get(r.code) ?? []), ...r.reasons]);
    for (const [code, reasons] of rowWords)
      expect([...(words.get(code) ?? [])].sort(), `${code}`).toEqual(reasons.sort());
    // Unauthorized, forbidden and the upstream/limiter failures always come from rpcgate: source is required (not for
    // the codes nodes answer too: -32601, -32000, -32603).
    for (const e of Object.values(raw.components.errors)) {
      if (gw.GATEWAY_ERRORS.some((r) => r.code === e.code) && ![-32601, -32000, -32603].includes(e.code))
        expect(e.data?.required, `${e.code}`).toContain('source');
    }
  });

  it("rpcgate's own codes stay clear of what nodes answer with: outside EIP-1474's -32000..-32006 (but -32005, same meaning, and -32000 for filters, as geth)", () => {
    const eip1474 = readFileSync(
      join(root, 'test/fixtures/execution-apis/src/error-groups/rpc-non-standard-errors.yaml'),
      'utf8',
    );
    const nodeCodes = [...eip1474.matchAll(/code: (-?\d+)/g)].map((m) => Number(m[1]));
    expect(nodeCodes).toEqual([-32000, -32001, -32002, -32003, -32004, -32005, -32006]);
    for (const r of gw.GATEWAY_ERRORS) {
      if (r.code === G.LimitExceeded || r.code === G.MethodNotAllowed || r.code === G.TooManyFilters) continue;
      expect(nodeCodes, `${r.name}`).not.toContain(r.code);
    }
  });

  it("README's error table is src/gateway/errors.ts's", () => {
    expect(readFileSync(join(root, 'README.md'), 'utf8')).toContain(gw.errorTableMarkdown());
  });

  it('the constructors of src/gateway/errors.ts follow the table and carry data.source', () => {
    const t = (e: RpcError) => [e.code, e.httpStatus, e.message, e.data, e.headers];
    const now = Date.parse('2030-01-01T00:00:00Z');
    expect(t(gw.unauthorized('invalid API key', { reason: 'key' }))).toStrictEqual([
      -32016,
      401,
      'invalid API key',
      { source: 'rpcgate', reason: 'key' },
      undefined,
    ]);
    expect(t(gw.forbidden('origin x', { reason: 'origin', origin: 'x' }))).toStrictEqual([
      -32041,
      403,
      'origin x',
      { source: 'rpcgate', reason: 'origin', origin: 'x' },
      undefined,
    ]);
    expect(t(gw.methodNotAllowed('eth_call'))).toStrictEqual([
      -32601,
      403,
      'method not allowed for this key: eth_call',
      { source: 'rpcgate', reason: 'method', method: 'eth_call' },
      undefined,
    ]);
    expect(
      t(gw.limitExceeded({ limit: 25_000, period: 'day', resetAt: new Date('2030-01-02T00:00:00Z') }, undefined, now)),
    ).toStrictEqual([
      -32005,
      402,
      'limit exceeded: 25000 requests per day',
      { source: 'rpcgate', reason: 'quota', limit: 25_000, period: 'day', resetAt: '2030-01-02T00:00:00.000Z' },
      undefined,
    ]);
    // Retry-After is at least 1 second, also when the window already reset; a per-second limit is `rate`.
    const rate = gw.limitExceeded({ limit: 1, period: 'second', resetAt: now - 5 }, undefined, now);
    expect([rate.headers, (rate.data as { reason: string }).reason]).toStrictEqual([{ 'Retry-After': '1' }, 'rate']);
    expect(t(gw.upstreamUnavailable('mainnet', 'connect refused'))).toStrictEqual([
      -32042,
      503,
      'upstream unavailable',
      { source: 'rpcgate', reason: 'upstream', network: 'mainnet', detail: 'connect refused' },
      undefined,
    ]);
    expect(gw.upstreamUnavailable('mainnet', 'x', 502).httpStatus).toBe(502);
    expect(t(gw.upstreamTimeout('mainnet', 'slow', 10_000))).toStrictEqual([
      -32043,
      504,
      'upstream timeout',
      { source: 'rpcgate', reason: 'timeout', network: 'mainnet', detail: 'slow', timeoutMs: 10_000 },
      undefined,
    ]);
    expect(t(gw.limitsBackendUnavailable())).toStrictEqual([
      -32044,
      503,
      'limits backend unavailable',
      { source: 'rpcgate', reason: 'limits-backend' },
      { 'Retry-After': '1' },
    ]);
    for (const e of [gw.unauthorized('x', { reason: 'jwt' }), gw.limitsBackendUnavailable()])
      expect(gw.isGatewayError(e)).toBe(true);
    expect(gw.isGatewayError(new RpcError(-32001, 'resource not found'))).toBe(false);
    // Each constructor's code and status are a row of the table.
    // The filters' cap answers -32000 with data (HTTP 200, as geth), a row too.
    expect(t(tooManyFilters(100)).slice(0, 2)).toStrictEqual([-32000, 200]);
    for (const e of [
      gw.unauthorized('x', { reason: 'key' }),
      gw.forbidden('x', { reason: 'ip' }),
      gw.methodNotAllowed('m'),
      rate,
      gw.upstreamUnavailable('n', 'd', 502),
      gw.upstreamTimeout('n', 'd'),
      gw.limitsBackendUnavailable(),
      tooManyFilters(100),
    ]) {
      const row = gw.GATEWAY_ERRORS.find(
        (r) => r.code === e.code && (r.httpStatus as readonly number[]).includes(e.httpStatus),
      );
      expect(row, `${e.code}/${e.httpStatus}`).toBeTruthy();
      expect(row!.reasons as readonly string[], `${e.code}`).toContain((e.data as { reason: string }).reason);
    }
  });
});

describe('examples', () => {
  const cases = raw.methods.flatMap((m) => (m.examples ?? []).map((ex) => [m.name, ex.name, m, ex] as const));

  it.each(cases)('%s: "%s" validates against the param and result schemas', (name, _exName, m, ex) => {
    for (const [i, p] of ex.params.entries()) expect(p.name, `${name} example param ${i}`).toBe(m.params[i]?.name);
    expect(ex.result.name).toBe(m.result.name);
    const { params, result } = v(name);
    const values = ex.params.map((p) => p.value);
    expect(params(values), why(params)).toBe(true);
    expect(result(ex.result.value), why(result)).toBe(true);
  });

  it('the validators refuse wrong values (the checks can fail)', () => {
    const bn = v('eth_blockNumber').result;
    for (const bad of ['0x01', '0x', '0XA', 'latest', 5, null, '0xG']) expect(bn(bad), String(bad)).toBe(false);
    expect(bn('0x0')).toBe(true);

    const bal = v('eth_getBalance').params;
    const addr = '0x7dcd17433742f4c0ca53122ab541d0ba67fc27df';
    expect(bal([addr])).toBe(true);
    expect(bal([addr, 'latest'])).toBe(true);
    expect(bal([])).toBe(false);
    expect(bal([addr, 'latest', 'extra'])).toBe(false);
    expect(bal([addr.slice(0, -1), 'latest'])).toBe(false);
    expect(bal([addr, 'newest'])).toBe(false);
    expect(bal([addr, '0x010'])).toBe(false);

    const logs = v('eth_getLogs').params;
    const hash = '0x80e911b62f552f563a2544dfef5eb39ec8863d9082c998ca6b657f76e19de38e';
    expect(logs([{ blockHash: hash }])).toBe(true);
    expect(logs([{ blockHash: hash, fromBlock: '0x1' }])).toBe(false);
    expect(logs([{ fromBlock: 'pending' }])).toBe(false); // pending is not a range tag

    const call = v('eth_call').params;
    expect(call([{ to: addr, data: '0x70a08231' }, 'latest'])).toBe(true);
    expect(call([{ to: addr, input: '0x70a08231' }])).toBe(true);
    expect(call([{ to: addr, gasLimit: '0x5208' }])).toBe(false);
    expect(call([{ to: addr, input: '0x7' }])).toBe(true); // bytes pattern of the spec allows odd length

    const blockM = raw.methods.find((m) => m.name === 'eth_getBlockByNumber')!;
    const block = structuredClone(blockM.examples![0].result.value) as Record<string, unknown>;
    const blockOk = v('eth_getBlockByNumber').result;
    expect(blockOk(block)).toBe(true);
    expect(blockOk({ ...block, l1BlockNumber: '0x1' }), 'extra node fields are allowed').toBe(true);
    expect(blockOk({ ...block, hash: String(block.hash).toUpperCase().replace('0X', '0x') })).toBe(false);
    const noHash = { ...block };
    delete noHash.hash;
    expect(blockOk(noHash)).toBe(false);
    expect(blockOk(null)).toBe(true);

    const receiptM = raw.methods.find((m) => m.name === 'eth_getTransactionReceipt')!;
    const receipt = structuredClone(receiptM.examples![0].result.value) as Record<string, unknown>;
    expect(v('eth_getTransactionReceipt').result({ ...receipt, status: '0x01' })).toBe(false);
    const txM = raw.methods.find((m) => m.name === 'eth_getTransactionByHash')!;
    const tx = structuredClone(txM.examples![0].result.value) as Record<string, unknown>;
    expect(v('eth_getTransactionByHash').result({ ...tx, type: '0x9' })).toBe(false);
    expect(v('eth_getTransactionByHash').result({ ...tx, yParity: '0x100' })).toBe(false);
  });

  it("rpc.discover's result schema accepts the contract itself", () => {
    expect(v('rpc.discover').result(raw), why(v('rpc.discover').result)).toBe(true);
    expect(v('rpc.discover').result({ methods: [] })).toBe(false);
  });
});

// ---------------------------------------------------------------- recorded fixtures
type Exchange = RecordedExchange;
const readFixtures = (): Exchange[] => readRecordedExchanges();

describe('execution-apis recorded fixtures', () => {
  const exchanges = readFixtures();

  it('are present', () => {
    expect(exchanges.length).toBeGreaterThan(90);
  });

  it('every fixture method is in the contract', () => {
    const names = new Set(raw.methods.map((m) => m.name));
    expect([...new Set(exchanges.map((e) => e.request.method))].filter((n) => !names.has(n))).toEqual([]);
  });

  it.each(exchanges.map((e, i) => [e.file, i, e] as const))(
    '%s #%i: params and result agree with the contract',
    (file, _i, e) => {
      const { params, result } = v(e.request.method);
      const ok = params(e.request.params ?? []);
      if (/error|invalid/.test(file)) {
        // Error cases: refused by the contract, or refused by the node (recorded as an error).
        expect(!ok || e.response.error !== undefined, `${file}: accepted and answered`).toBe(true);
      } else {
        expect(ok, `${file} params: ${why(params)}`).toBe(true);
      }
      if ('result' in e.response) expect(result(e.response.result), `${file} result: ${why(result)}`).toBe(true);
      else expect(e.response.error, `${file}: neither result nor error`).toBeTruthy();
    },
  );

  it('the malformed-param fixtures are refused by the contract itself', () => {
    const refused = exchanges
      .filter((e) => /invalid/.test(e.file))
      .map((e) => v(e.request.method).params(e.request.params ?? []));
    expect(refused.length).toBeGreaterThan(0);
    expect(refused.every((ok) => !ok)).toBe(true);
  });
});
