// JSON-RPC 2.0 over WebSocket: the transport (./jsonrpc.ts) and the upgrade route table (./router.ts).
export {
  CLOSE,
  WsConnection,
  closeReason,
  createJsonRpcWs,
  refusalCloseCode,
  refuseUpgrade,
  type JsonRpcWs,
  type JsonRpcWsOptions,
} from './jsonrpc.js';
export { UpgradeRouter, type UpgradeHandler } from './router.js';
