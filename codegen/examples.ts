// generated/<api>/examples.ts: per method, ready-to-run code for curl, fetch, ethers v6, web3.js v4, viem,
// the generated rpcgate client and web3.py, built from the contract's first example params. `{{RPC_URL}}`
// stands for the full RPC URL (key included). SDK idioms are used where they map cleanly onto the method
// (ethers `getBalance`, viem `getBlock`, web3.py `w3.eth.block_number`, …), the raw request otherwise.
// JS/TS programs are complete ESM modules that print the result as JSON and exit 0 on success.
import { format } from 'prettier';
import {
  exampleParams,
  type ContractModel,
  type Json,
  type MethodModel,
} from '../packages/toolkit/src/contract/model.js';
import { clientImport, js, jsdoc, str, tsHeader } from '../packages/toolkit/src/codegen/schema.js';
import { PRETTIER } from '../packages/toolkit/src/codegen/types.js';
import { callArguments, namePython, pyValue, type PythonMethod } from '../packages/toolkit/src/codegen/python.js';

export type ExampleId = 'curl' | 'fetch' | 'ethers' | 'web3js' | 'viem' | 'rpcgate' | 'web3py' | 'rpcgatepy';
export interface ExampleSet {
  id: ExampleId;
  language: 'shell' | 'javascript' | 'typescript' | 'python';
  label: string;
  code: string;
}

export const RPC_URL = '{{RPC_URL}}';

/** Contracts that also get a typed Python client (`npm run generate` writes generated/python/<package>/), by package name. */
export const PYTHON_PACKAGES: Readonly<Record<string, string>> = { node: 'rpcgate_node' };

/** The generated Python client's example: the method called with the example params, the result printed as JSON (a
 *  method answered only over a WebSocket prints the error the HTTP endpoint answers instead). */
function pythonClientExample(pkg: string, pm: PythonMethod, p: Json[], socketOnly: boolean): ExampleSet {
  const call = `client.${pm.py}(${callArguments(
    pm,
    p.map((v) => pyValue(v)),
  )})`;
  const lines = [
    `# The typed client generated from this API's contract (Python 3.11+, standard library only): ${pkg}/ from`,
    `# \`rpcgate generate openrpc.json --lang python --out ${pkg}\` (rpcgate's repository has it in generated/python/).`,
    `import json`,
    ``,
    `from ${pkg} import Client${socketOnly ? ', RpcError' : ''}`,
    ``,
    `client = Client("${RPC_URL}")`,
    ...(socketOnly
      ? [
          `# The rpcgate client speaks HTTP, where ${pm.name} answers -32601: use a WebSocket (the web3.py example).`,
          `try:`,
          `    result: object = ${call}`,
          `except RpcError as e:`,
          `    result = {"code": e.code, "message": e.message}`,
        ]
      : pm.result === 'None'
        ? [call, `result = None`]
        : [`result = ${call}`]),
    `print(json.dumps(result, indent=2))`,
    ``,
  ];
  return { id: 'rpcgatepy', language: 'python', label: 'Python (rpcgate client)', code: lines.join('\n') };
}
const TAGS = new Set(['earliest', 'latest', 'pending', 'safe', 'finalized']);
const isQuantity = (v: Json) => typeof v === 'string' && /^0x(0|[1-9a-f][0-9a-f]*)$/i.test(v);
const isHash = (v: Json) => typeof v === 'string' && /^0x[0-9a-fA-F]{64}$/.test(v);
const isAddress = (v: Json) => typeof v === 'string' && /^0x[0-9a-fA-F]{40}$/.test(v);
type BlockKind = 'tag' | 'number' | 'hash' | 'other';
// A 32-byte hash also matches the quantity pattern: test it first.
const blockKind = (v: Json): BlockKind =>
  TAGS.has(v) ? 'tag' : isHash(v) ? 'hash' : isQuantity(v) ? 'number' : 'other';

/** Python literal of a JSON value; `addr` wraps 20-byte hex strings (web3.py wants checksummed addresses). */
function py(v: Json, addr = false, indent = ''): string {
  if (v === null) return 'None';
  if (v === true) return 'True';
  if (v === false) return 'False';
  if (typeof v === 'string')
    return addr && isAddress(v) ? `Web3.to_checksum_address(${JSON.stringify(v)})` : JSON.stringify(v);
  if (typeof v === 'number') return String(v);
  const inner = `${indent}    `;
  if (Array.isArray(v)) {
    if (!v.length) return '[]';
    const one = `[${v.map((x) => py(x, addr, inner)).join(', ')}]`;
    return one.length <= 72 ? one : `[\n${v.map((x) => inner + py(x, addr, inner)).join(',\n')},\n${indent}]`;
  }
  const entries = Object.entries(v);
  if (!entries.length) return '{}';
  const one = `{${entries.map(([k, x]) => `${JSON.stringify(k)}: ${py(x, addr, inner)}`).join(', ')}}`;
  return one.length <= 72
    ? one
    : `{\n${entries.map(([k, x]) => `${inner}${JSON.stringify(k)}: ${py(x, addr, inner)}`).join(',\n')},\n${indent}}`;
}

const print = (expr: string, ts = false) =>
  `console.log(JSON.stringify(${expr}, (_key${ts ? ': string' : ''}, value${ts ? ': unknown' : ''}) => (typeof value === 'bigint' ? value.toString() : value), 2));`;

/** viem block selector: `{ blockNumber: 1n }`, `{ blockTag: 'latest' }`, `{ blockHash }` (when allowed). */
function viemBlock(v: Json, allowHash: boolean): string | undefined {
  switch (blockKind(v)) {
    case 'tag':
      return `blockTag: ${js(v)}`;
    case 'number':
      return `blockNumber: ${BigInt(v).toString()}n`;
    case 'hash':
      return allowHash ? `blockHash: ${js(v)}` : undefined;
    default:
      return undefined;
  }
}

interface Idioms {
  ethers?: string;
  web3js?: string;
  viem?: string;
  web3py?: string;
}

/** Idiomatic SDK calls for the methods where one maps cleanly; `p` are the example params. */
function idioms(m: MethodModel, p: Json[]): Idioms {
  const q = js;
  const [a, b, c] = p;
  const pyBlock = (v: Json) => (blockKind(v) === 'number' ? String(BigInt(v)) : JSON.stringify(v));
  const simpleBlock = (v: Json) => v === undefined || blockKind(v) !== 'other';
  switch (m.name) {
    case 'eth_blockNumber':
      return {
        ethers: 'await provider.getBlockNumber()',
        web3js: 'await web3.eth.getBlockNumber()',
        viem: 'await client.getBlockNumber()',
        web3py: 'w3.eth.block_number',
      };
    case 'eth_chainId':
      return {
        ethers: '(await provider.getNetwork()).chainId',
        web3js: 'await web3.eth.getChainId()',
        viem: 'await client.getChainId()',
        web3py: 'w3.eth.chain_id',
      };
    case 'eth_gasPrice':
      return { web3js: 'await web3.eth.getGasPrice()', viem: 'await client.getGasPrice()', web3py: 'w3.eth.gas_price' };
    case 'eth_getBlockByNumber':
    case 'eth_getBlockByHash': {
      if (blockKind(a) === 'other' || typeof b !== 'boolean') return {};
      const vb = viemBlock(a, true);
      return {
        ethers: `await provider.getBlock(${q(a)}, ${b})`,
        web3js: `await web3.eth.getBlock(${q(a)}, ${b})`,
        viem: vb && `await client.getBlock({ ${vb}, includeTransactions: ${b} })`,
        web3py: `w3.eth.get_block(${pyBlock(a)}, full_transactions=${b ? 'True' : 'False'})`,
      };
    }
    case 'eth_getBalance':
    case 'eth_getTransactionCount':
    case 'eth_getCode': {
      if (!isAddress(a) || !simpleBlock(b)) return {};
      const [e, w, v, y] = {
        eth_getBalance: ['getBalance', 'getBalance', 'getBalance', 'get_balance'],
        eth_getTransactionCount: [
          'getTransactionCount',
          'getTransactionCount',
          'getTransactionCount',
          'get_transaction_count',
        ],
        eth_getCode: ['getCode', 'getCode', 'getCode', 'get_code'],
      }[m.name]!;
      const vb = b === undefined ? '' : viemBlock(b, false);
      return {
        ethers: `await provider.${e}(${[q(a), ...(b === undefined ? [] : [q(b)])].join(', ')})`,
        web3js:
          blockKind(b) === 'hash'
            ? undefined
            : `await web3.eth.${w}(${[q(a), ...(b === undefined ? [] : [q(b)])].join(', ')})`,
        viem: vb === undefined ? undefined : `await client.${v}({ address: ${q(a)}${vb ? `, ${vb}` : ''} })`,
        web3py: `w3.eth.${y}(${[py(a, true), ...(b === undefined ? [] : [pyBlock(b)])].join(', ')})`,
      };
    }
    case 'eth_getStorageAt': {
      if (!isAddress(a) || typeof b !== 'string' || !simpleBlock(c)) return {};
      return {
        ethers: `await provider.getStorage(${[q(a), q(b), ...(c === undefined ? [] : [q(c)])].join(', ')})`,
        web3py: `w3.eth.get_storage_at(${[py(a, true), q(b), ...(c === undefined ? [] : [pyBlock(c)])].join(', ')})`,
      };
    }
    case 'eth_getLogs': {
      if (!a || typeof a !== 'object' || Array.isArray(a)) return {};
      // viem's getLogs takes events/args, not raw topics: use it only when the filter has no topics.
      const viemOk =
        (!a.topics || a.topics.length === 0) &&
        [a.fromBlock, a.toBlock].every((x) => x === undefined || blockKind(x) === 'tag' || blockKind(x) === 'number');
      const vb = (k: string, x: Json) =>
        x === undefined ? [] : [`${k}: ${blockKind(x) === 'number' ? `${BigInt(x)}n` : q(x)}`];
      const viemArgs = [
        ...(a.address !== undefined && a.address !== null ? [`address: ${js(a.address)}`] : []),
        ...(a.blockHash ? [`blockHash: ${q(a.blockHash)}`] : []),
        ...vb('fromBlock', a.fromBlock),
        ...vb('toBlock', a.toBlock),
      ];
      return {
        ethers: `await provider.getLogs(${js(a)})`,
        web3js: `await web3.eth.getPastLogs(${js(a)})`,
        viem: viemOk ? `await client.getLogs({ ${viemArgs.join(', ')} })` : undefined,
        web3py: `w3.eth.get_logs(${py(a, true)})`,
      };
    }
    case 'eth_getTransactionByHash':
      return isHash(a)
        ? {
            ethers: `await provider.getTransaction(${q(a)})`,
            web3js: `await web3.eth.getTransaction(${q(a)})`,
            viem: `await client.getTransaction({ hash: ${q(a)} })`,
            web3py: `w3.eth.get_transaction(${q(a)})`,
          }
        : {};
    case 'eth_getTransactionReceipt':
      return isHash(a)
        ? {
            ethers: `await provider.getTransactionReceipt(${q(a)})`,
            web3js: `await web3.eth.getTransactionReceipt(${q(a)})`,
            viem: `await client.getTransactionReceipt({ hash: ${q(a)} })`,
            web3py: `w3.eth.get_transaction_receipt(${q(a)})`,
          }
        : {};
    default:
      return {};
  }
}

/** Methods that only work over a WebSocket (eth_subscribe / eth_unsubscribe): their examples open one on the same URL. */
const SOCKET_ONLY = new Set(['eth_subscribe', 'eth_unsubscribe']);
/** The WebSocket URL of the RPC URL, in code: the same path, ws(s) instead of http(s). */
const WS_URL = `'${RPC_URL}'.replace(/^http/, 'ws')`;

/** The examples of a socket-only method: wscat, ethers and viem from the one socket writer (wsCallExamples, also the
 *  dashboard's), plus the raw `ws` call, web3.js, web3.py and the rpcgate clients (which speak HTTP: -32601). */
function socketExamples(
  m: MethodModel,
  client: string,
  p: Json[],
  python?: { pkg: string; method: PythonMethod },
): ExampleSet[] {
  const M = js(m.name);
  const lines = (...l: string[]) => [...l, ''].join('\n');
  const ws = wsCallExamples(m, p, {
    js: WS_URL,
    shell: `"$(echo '${RPC_URL}' | sed 's/^http/ws/')"`,
    note: 'WebSocket only (over HTTP: -32601).',
  });
  // The shared socket examples under the ids and labels every method's example list uses.
  const LABELS: Record<WsExampleId, [ExampleSet['id'], string]> = {
    wscat: ['curl', 'wscat'],
    ethers: ['ethers', 'JavaScript (ethers v6)'],
    viem: ['viem', 'TypeScript (viem)'],
  };
  const shared = (id: WsExampleId): ExampleSet => {
    const x = ws.find((e) => e.id === id)!;
    return { id: LABELS[id][0], language: x.language, label: LABELS[id][1], code: x.code };
  };
  return [
    shared('wscat'),
    {
      id: 'fetch',
      language: 'javascript',
      label: 'JavaScript (ws)',
      code: lines(
        `// WebSocket only: the same URL with ws:// (wss:// for https://)`,
        `import WebSocket from 'ws';`,
        ``,
        `const socket = new WebSocket(${WS_URL});`,
        `socket.on('open', () => socket.send(JSON.stringify({ jsonrpc: '2.0', id: 1, method: ${M}, params: ${js(p)} })));`,
        `socket.on('message', (data) => {`,
        `  const msg = JSON.parse(data.toString());`,
        `  if (msg.id !== 1) return; // eth_subscription notifications`,
        `  if (msg.error) {`,
        `    console.error(\`error \${msg.error.code}: \${msg.error.message}\`);`,
        `    process.exit(1);`,
        `  }`,
        `  console.log(JSON.stringify(msg.result, null, 2));`,
        `  socket.close();`,
        `});`,
      ),
    },
    shared('ethers'),
    {
      id: 'web3js',
      language: 'javascript',
      label: 'JavaScript (web3.js v4)',
      code: lines(
        `import { Web3 } from 'web3';`,
        ``,
        `// Subscriptions are web3.js' own API, e.g. await web3.eth.subscribe('newBlockHeaders'); the raw call:`,
        `const web3 = new Web3(new Web3.providers.WebsocketProvider(${WS_URL}));`,
        `const result = await web3.requestManager.send({ method: ${M}, params: ${js(p)} });`,
        print('result'),
        `web3.currentProvider.disconnect();`,
      ),
    },
    shared('viem'),
    {
      id: 'rpcgate',
      language: 'typescript',
      label: 'TypeScript (rpcgate client)',
      code: lines(
        `import { createClient } from '${client}';`,
        ``,
        `// The rpcgate client speaks HTTP, where ${m.name} answers -32601: use a WebSocket (the viem or ethers example).`,
        `const client = createClient({ url: '${RPC_URL}' });`,
        `const result = await client.request(${M}${p.length ? `, ${js(p)}` : ''}).catch((e: { code?: number; message: string }) => ({ code: e.code, message: e.message }));`,
        `console.log(JSON.stringify(result, null, 2));`,
      ),
    },
    {
      id: 'web3py',
      language: 'python',
      label: 'Python (web3.py)',
      code: lines(
        `import asyncio`,
        `import json`,
        ``,
        `from web3 import AsyncWeb3, WebSocketProvider`,
        ``,
        ``,
        `async def main():`,
        `    async with AsyncWeb3(WebSocketProvider("${RPC_URL}".replace("http", "ws", 1))) as w3:`,
        `        response = await w3.provider.make_request(${JSON.stringify(m.name)}, ${py(p)})`,
        `        print(json.dumps(response.get("result", response.get("error")), indent=2))`,
        ``,
        ``,
        `asyncio.run(main())`,
      ),
    },
    ...(python ? [pythonClientExample(python.pkg, python.method, p, true)] : []),
  ];
}

export function methodExamples(
  m: MethodModel,
  client: string,
  python?: { pkg: string; method: PythonMethod },
): ExampleSet[] {
  const p = exampleParams(m);
  if (SOCKET_ONLY.has(m.name)) return socketExamples(m, client, p, python);
  const id = idioms(m, p);
  const M = js(m.name);
  // Raw calls name their params once: `const params = [...]`.
  const paramsDecl = p.length ? [`const params = ${js(p)};`] : [];
  const P = p.length ? 'params' : '[]';
  const PP = p.length ? 'params' : 'params: []'; // object member, shorthand when declared
  const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: m.name, params: p });
  const shellBody = body.replace(/'/g, `'\\''`);
  const lines = (...l: (string | string[] | false | undefined)[]) =>
    [...l.flatMap((x) => (x === false || x === undefined ? [] : x)), ''].join('\n');
  return [
    {
      id: 'curl',
      language: 'shell',
      label: 'curl',
      code: `curl -s -X POST '${RPC_URL}' \\\n  -H 'Content-Type: application/json' \\\n  --data '${shellBody}'\n`,
    },
    {
      id: 'fetch',
      language: 'javascript',
      label: 'JavaScript (fetch)',
      code: lines(
        `// Node.js 18+ or a browser: the global fetch`,
        paramsDecl,
        `const response = await fetch('${RPC_URL}', {`,
        `  method: 'POST',`,
        `  headers: { 'Content-Type': 'application/json' },`,
        `  body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: ${M}, ${PP} }),`,
        `});`,
        `const { result, error } = await response.json();`,
        `if (error) {`,
        `  console.error(\`error \${error.code}: \${error.message}\`);`,
        `  process.exit(1);`,
        `}`,
        `console.log(JSON.stringify(result, null, 2));`,
      ),
    },
    {
      id: 'ethers',
      language: 'javascript',
      label: 'JavaScript (ethers v6)',
      code: lines(
        `import { JsonRpcProvider } from 'ethers';`,
        ``,
        `const provider = new JsonRpcProvider('${RPC_URL}');`,
        !id.ethers && paramsDecl,
        `const result = ${id.ethers ?? `await provider.send(${M}, ${P})`};`,
        print('result'),
        `provider.destroy();`,
      ),
    },
    {
      id: 'web3js',
      language: 'javascript',
      label: 'JavaScript (web3.js v4)',
      code: lines(
        `import { Web3 } from 'web3';`,
        ``,
        `const web3 = new Web3('${RPC_URL}');`,
        !id.web3js && paramsDecl,
        `const result = ${id.web3js ?? `await web3.requestManager.send({ method: ${M}, ${PP} })`};`,
        print('result'),
      ),
    },
    {
      id: 'viem',
      language: 'typescript',
      label: 'TypeScript (viem)',
      code: lines(
        ...(id.viem
          ? [
              `import { createPublicClient, http } from 'viem';`,
              ``,
              `const client = createPublicClient({ transport: http('${RPC_URL}') });`,
            ]
          : [
              `import { createPublicClient, http, rpcSchema } from 'viem';`,
              ``,
              `const client = createPublicClient({`,
              `  transport: http('${RPC_URL}'),`,
              `  // declares the raw method for viem's typed request() (not every method has a viem action)`,
              `  rpcSchema: rpcSchema<[{ Method: ${M}; Parameters: unknown[]; ReturnType: unknown }]>(),`,
              `});`,
            ]),
        `const result = ${id.viem ?? `await client.request({ method: ${M}, params: ${js(p)} })`};`,
        print('result', true),
      ),
    },
    {
      id: 'rpcgate',
      language: 'typescript',
      label: 'TypeScript (rpcgate client)',
      code: lines(
        `import { createClient } from '${client}';`,
        ``,
        `const client = createClient({ url: '${RPC_URL}' });`,
        `const result = await client.request(${M}${p.length ? `, ${js(p)}` : ''});`,
        `console.log(JSON.stringify(result, null, 2));`,
      ),
    },
    {
      id: 'web3py',
      language: 'python',
      label: 'Python (web3.py)',
      code: id.web3py
        ? lines(
            `from web3 import Web3`,
            ``,
            `w3 = Web3(Web3.HTTPProvider("${RPC_URL}"))`,
            `result = ${id.web3py}`,
            `print(Web3.to_json(result))`,
          )
        : lines(
            `import json`,
            ``,
            `from web3 import Web3`,
            ``,
            `w3 = Web3(Web3.HTTPProvider("${RPC_URL}"))`,
            `response = w3.provider.make_request(${JSON.stringify(m.name)}, ${py(p)})`,
            `if "error" in response:`,
            `    raise SystemExit(f"error {response['error']['code']}: {response['error']['message']}")`,
            `print(json.dumps(response["result"], indent=2))`,
          ),
    },
    ...(python ? [pythonClientExample(python.pkg, python.method, p, false)] : []),
  ];
}

/** The dashboard's WebSocket examples (Set up tab, "WebSocket"): `{{WS_URL}}` stands for the ws:// (wss://) URL. */
export type WsExampleId = 'wscat' | 'ethers' | 'viem';
export interface WsExampleSet {
  id: WsExampleId;
  language: 'shell' | 'javascript' | 'typescript';
  label: string;
  code: string;
}
export const WS_URL_PLACEHOLDER = '{{WS_URL}}';

/** The dashboard's socket examples of a method, on the `{{WS_URL}}` placeholder. */
export function wsMethodExamples(m: MethodModel): WsExampleSet[] {
  const U = `'${WS_URL_PLACEHOLDER}'`;
  return wsCallExamples(m, exampleParams(m), { js: U, shell: U });
}

/** The one writer of a method called over a WebSocket — wscat, ethers WebSocketProvider, viem's webSocket transport —
 *  for the dashboard (url: the `{{WS_URL}}` placeholder) and for the socket-only methods' examples beside the HTTP ones
 *  (url: the RPC URL with ws). For eth_subscribe the SDKs' own subscription idioms (newHeads: ethers `on('block')`,
 *  viem `watchBlocks`); otherwise the raw call on the socket, printed, then the socket closed. */
function wsCallExamples(m: MethodModel, p: Json[], url: { js: string; shell: string; note?: string }): WsExampleSet[] {
  const M = js(m.name);
  const U = url.js;
  const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: m.name, params: p }).replace(/'/g, `'\\''`);
  const lines = (...l: string[]) => [...l, ''].join('\n');
  const subscribe = m.name === 'eth_subscribe';
  return [
    {
      id: 'wscat',
      language: 'shell',
      label: 'wscat',
      // -w: keep the socket open that many seconds after the call (notifications arrive meanwhile).
      code: `# ${url.note === undefined ? '' : `${url.note} `}npm i -g wscat\nwscat -c ${url.shell} \\\n  -x '${body}' -w ${subscribe ? 30 : 1}\n`,
    },
    {
      id: 'ethers',
      language: 'javascript',
      label: 'JavaScript (ethers v6 WebSocketProvider)',
      code: subscribe
        ? lines(
            `import { WebSocketProvider } from 'ethers';`,
            ``,
            `// ethers subscribes to newHeads for 'block' (eth_subscribe over the socket); logs: provider.on(filter, …).`,
            `const provider = new WebSocketProvider(${U});`,
            `let seen = 0;`,
            `await provider.on('block', async (blockNumber) => {`,
            `  console.log('new block', blockNumber);`,
            `  if (++seen === 3) await provider.destroy();`,
            `});`,
          )
        : lines(
            `import { WebSocketProvider } from 'ethers';`,
            ``,
            `const provider = new WebSocketProvider(${U});`,
            `const result = await provider.send(${M}, ${js(p)});`,
            print('result'),
            `await provider.destroy();`,
          ),
    },
    {
      id: 'viem',
      language: 'typescript',
      label: 'TypeScript (viem webSocket)',
      code: subscribe
        ? lines(
            `import { createPublicClient, webSocket } from 'viem';`,
            ``,
            `// viem's webSocket transport subscribes to newHeads for watchBlocks (eth_subscribe over the socket).`,
            `const client = createPublicClient({ transport: webSocket(${U}) });`,
            `let seen = 0;`,
            `const unwatch = client.watchBlocks({`,
            `  onBlock: async (block) => {`,
            `    console.log('new block', block.number);`,
            `    if (++seen < 3) return;`,
            `    unwatch();`,
            `    (await client.transport.getRpcClient()).close();`,
            `  },`,
            `});`,
          )
        : lines(
            `import { createPublicClient, rpcSchema, webSocket } from 'viem';`,
            ``,
            `const client = createPublicClient({`,
            `  transport: webSocket(${U}),`,
            `  rpcSchema: rpcSchema<[{ Method: ${M}; Parameters: unknown[]; ReturnType: unknown }]>(),`,
            `});`,
            `const result = await client.request({ method: ${M}, params: ${js(p)} });`,
            print('result', true),
            `(await client.transport.getRpcClient()).close();`,
          ),
    },
  ];
}

export function buildExamples(c: ContractModel): Map<string, ExampleSet[]> {
  const pkg = PYTHON_PACKAGES[c.spec.name];
  const python = pkg ? new Map(namePython(c).methods.map((pm) => [pm.name, pm])) : undefined;
  return new Map(
    c.methods.map((m) => [
      m.name,
      methodExamples(m, clientImport(c), pkg && python ? { pkg, method: python.get(m.name)! } : undefined),
    ]),
  );
}

export async function writeExamples(c: ContractModel): Promise<string> {
  const all = buildExamples(c);
  const out = [
    tsHeader(c.spec.file),
    `import type { MethodName } from './methods.js';\n\n`,
    jsdoc([
      'One ready-to-run example of a method for one language/SDK. `{{RPC_URL}}` stands for the full RPC URL (API key included).',
    ]),
    `export interface ExampleSet {\n  id: 'curl' | 'fetch' | 'ethers' | 'web3js' | 'viem' | 'rpcgate' | 'web3py' | 'rpcgatepy';\n  language: 'shell' | 'javascript' | 'typescript' | 'python';\n  label: string;\n  code: string;\n}\n\n`,
    `/** Placeholder for the RPC URL in every example. */\nexport const RPC_URL_PLACEHOLDER = ${str(RPC_URL)};\n`,
    `/** Import specifier of the generated client used by the 'rpcgate' examples. */\nexport const CLIENT_IMPORT = ${str(clientImport(c))};\n\n`,
    `export const examples: Record<MethodName, ExampleSet[]> = {\n`,
  ];
  for (const [name, sets] of all) {
    out.push(`  ${str(name)}: [\n`);
    for (const s of sets)
      out.push(
        `    { id: ${str(s.id)}, language: ${str(s.language)}, label: ${str(s.label)}, code: ${JSON.stringify(s.code)} },\n`,
      );
    out.push('  ],\n');
  }
  out.push('};\n');
  // The node API is also served over WebSocket: its methods get the dashboard's socket examples too.
  if (c.spec.name === 'node') {
    out.push(
      '\n',
      jsdoc([
        'The same methods over a WebSocket on the same URL (ws:// for http://, wss:// for https://): wscat, ethers WebSocketProvider, viem webSocket. `{{WS_URL}}` stands for that URL.',
      ]),
      `export interface WsExampleSet {\n  id: 'wscat' | 'ethers' | 'viem';\n  language: 'shell' | 'javascript' | 'typescript';\n  label: string;\n  code: string;\n}\n\n`,
      `/** Placeholder for the WebSocket URL in every WebSocket example. */\nexport const WS_URL_PLACEHOLDER = ${str(WS_URL_PLACEHOLDER)};\n\n`,
      `export const wsExamples: Partial<Record<MethodName, WsExampleSet[]>> = {\n`,
    );
    // rpc.discover is the gateway's own document, not a node method: no socket example.
    for (const m of c.methods) {
      if (m.name === 'rpc.discover') continue;
      out.push(`  ${str(m.name)}: [\n`);
      for (const s of wsMethodExamples(m))
        out.push(
          `    { id: ${str(s.id)}, language: ${str(s.language)}, label: ${str(s.label)}, code: ${JSON.stringify(s.code)} },\n`,
        );
      out.push('  ],\n');
    }
    out.push('};\n');
  }
  return format(out.join(''), PRETTIER);
}
