// The Set up tab's examples: the generated per-method, per-SDK code (generated/node/examples.ts) grouped the way the
// spec's table groups them (CLI; JavaScript: two libraries and Fetch; TypeScript; Python), URL filled in; and the same
// methods over a WebSocket (wscat, ethers WebSocketProvider, viem webSocket) on the ws(s):// form of that URL.
import {
  examples,
  wsExamples,
  RPC_URL_PLACEHOLDER,
  WS_URL_PLACEHOLDER,
  type ExampleSet,
  type WsExampleSet,
} from '../../../generated/node/examples.js';

export type ExampleId = ExampleSet['id'];

export interface Language {
  id: 'cli' | 'javascript' | 'typescript' | 'python';
  label: string;
  /** SDK options, the first is the default. */
  sdks: { id: ExampleId; label: string }[];
}

export const LANGUAGES: Language[] = [
  { id: 'cli', label: 'CLI', sdks: [{ id: 'curl', label: 'curl' }] },
  {
    id: 'javascript',
    label: 'JavaScript',
    sdks: [
      { id: 'ethers', label: 'ethers' },
      { id: 'web3js', label: 'web3.js' },
      { id: 'fetch', label: 'Fetch' },
    ],
  },
  {
    id: 'typescript',
    label: 'TypeScript',
    sdks: [
      { id: 'viem', label: 'viem' },
      { id: 'rpcgate', label: 'rpcgate client' },
    ],
  },
  {
    id: 'python',
    label: 'Python',
    sdks: [
      { id: 'web3py', label: 'web3.py' },
      { id: 'rpcgatepy', label: 'rpcgate client' },
    ],
  },
];

/** The method the tab opens on: a latest-block read (spec 4.1: "defaults to a latest-block example"). */
export const LATEST_BLOCK = 'latest-block';
export const DEFAULT_LANGUAGE: Language['id'] = 'javascript';

export interface MethodOption {
  id: string;
  label: string;
}

export const METHODS: MethodOption[] = [
  { id: LATEST_BLOCK, label: 'Latest block (eth_getBlockByNumber "latest")' },
  ...Object.keys(examples)
    .filter((m) => m !== 'rpc.discover')
    .sort()
    .map((m) => ({ id: m, label: m })),
];

/** The code of one method in one SDK with the URL filled in, or undefined when the generator has none. */
export function exampleCode(method: string, sdk: ExampleId, url: string): string | undefined {
  const m = method === LATEST_BLOCK ? 'eth_getBlockByNumber' : method;
  // The contract's first eth_getBlockByNumber example is the latest block, so its code is the latest-block example.
  const set = (examples as Record<string, ExampleSet[] | undefined>)[m]?.find((x) => x.id === sdk);
  return set?.code.split(RPC_URL_PLACEHOLDER).join(url);
}

/** Over HTTP (the SDK table above) or over a WebSocket on the same URL. */
export type Transport = 'http' | 'websocket';
export type WsExampleId = WsExampleSet['id'];

/** The WebSocket clients, the first is the default. */
export const WS_SDKS: { id: WsExampleId; label: string }[] = [
  { id: 'ethers', label: 'ethers WebSocketProvider' },
  { id: 'viem', label: 'viem webSocket' },
  { id: 'wscat', label: 'wscat' },
];

/** The WebSocket URL of an RPC URL: the same URL, ws:// for http://, wss:// for https:// (behind a TLS proxy). */
export function toWsUrl(url: string): string {
  return url.replace(/^http(s?):\/\//i, (_m, s: string) => `ws${s.toLowerCase()}://`);
}

/** The code of one method over a WebSocket with the ws(s):// URL filled in, or undefined when there is none. */
export function wsExampleCode(method: string, sdk: WsExampleId, wsUrl: string): string | undefined {
  const m = method === LATEST_BLOCK ? 'eth_getBlockByNumber' : method;
  const set = (wsExamples as Record<string, WsExampleSet[] | undefined>)[m]?.find((x) => x.id === sdk);
  return set?.code.split(WS_URL_PLACEHOLDER).join(wsUrl);
}
