// The node API's route table (src/gateway/server/route-table.ts) and what the two transports register from it: the
// HTTP router (node-route.ts) and the WebSocket upgrade router (ws-route.ts) must serve the same routes in the same
// order, so a route added to one cannot be missing from the other.
import { createServer } from 'node:http';
import { pino } from 'pino';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { Router } from '../packages/toolkit/src/http/router.js';
import { createEngine, type Engine } from '../packages/toolkit/src/rpc/engine.js';
import { UpgradeRouter } from '../packages/toolkit/src/ws/router.js';
import { ConfigKeyStore } from '../src/gateway/access/keys.js';
import type { AccessContext } from '../src/gateway/access/index.js';
import { addNodeRoutes } from '../src/gateway/server/node-route.js';
import { nodeRouteTable } from '../src/gateway/server/route-table.js';
import { attachNodeWebSockets } from '../src/gateway/server/ws-route.js';

const networks = ['mainnet', 'sepolia'];
const hostMap = { 'eth.example.test': 'mainnet', 'sep.example.test': 'sepolia' };

afterEach(() => vi.restoreAllMocks());

describe('node API route table', () => {
  it('puts /v2/{key} (A) before /{key} (B) on every host and network', () => {
    const flat = nodeRouteTable(networks, hostMap).flatMap((g) =>
      g.routes.map((r) => `${g.host ?? '*'} ${r.path} ${r.route.network} ${r.route.ap}`),
    );
    expect(flat).toEqual([
      'eth.example.test /v2/:key? mainnet A',
      'eth.example.test /:key? mainnet B',
      'sep.example.test /v2/:key? sepolia A',
      'sep.example.test /:key? sepolia B',
      '* /mainnet/v2/:key? mainnet A',
      '* /mainnet/:key? mainnet B',
      '* /sepolia/v2/:key? sepolia A',
      '* /sepolia/:key? sepolia B',
    ]);
  });

  it('HTTP POST and WebSocket upgrades register the same routes in the same order', async () => {
    const engine = createEngine({
      methods: {},
      validators: {},
      handlers: {},
      options: { maxBatchSize: 10, strictResults: true },
    }) as unknown as Engine<AccessContext>;
    const keys = new ConfigKeyStore(['k'.repeat(32)]);
    const logger = pino({ level: 'silent' });

    const httpAdd = vi.spyOn(Router.prototype, 'add');
    addNodeRoutes(new Router(), { engine, keys, networks, hostMap, maxBodyBytes: 1024, logger });
    const http = httpAdd.mock.calls
      .filter(([methods, path]) => methods === 'POST' && !path.endsWith('/*'))
      .map(([, path, , o]) => `${o?.host ?? '*'} ${path}`);

    const wsAdd = vi.spyOn(UpgradeRouter.prototype, 'add');
    const server = createServer();
    const sockets = attachNodeWebSockets(server, {
      engine,
      keys,
      networks,
      hostMap,
      logger,
      maxPayloadBytes: 1024,
      maxInFlight: 1,
      maxBufferedBytes: 1024,
      pingIntervalMs: 60_000,
      maxConnectionsPerKey: 1,
    });
    const ws = wsAdd.mock.calls.map(([path, , o]) => `${o?.host ?? '*'} ${path}`);
    await sockets.close();

    const table = nodeRouteTable(networks, hostMap).flatMap((g) => g.routes.map((r) => `${g.host ?? '*'} ${r.path}`));
    expect(http).toEqual(table);
    expect(ws).toEqual(table);
  });
});
