// `rpcgate apps …`: apps of access point A (one key, a node API URL per network of the app's chain), their
// allowlists, JWT keys and the "require JWT" switch — everything the dashboard does, through the account API.
//
// Defaults where the deployment leaves one choice: `--chain` is the deployment's only chain (chains_list), and
// `--services` the contract's only service (node-api). `--use-case` is required (the list is open: the dashboard
// makes the user pick too); a value matching an offered use case in another case is sent as offered (`defi` → Defi).
import { addLogsCommand } from './logs.js';
import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import type {
  AllowlistEntry,
  App,
  AppPatch,
  AppSummary,
  JwtAlg,
  JwtKey,
  NewAllowlistEntry,
} from '../../../generated/account/client.js';
import {
  addApiOptions,
  ALL_SERVICES,
  need,
  parseOnOff,
  parseServices,
  runApi,
  usage,
  type ApiContext,
  type ApiFlags,
  type Output,
} from '../account.js';
import { keyValues, table } from '../output.js';

interface AppFlags extends ApiFlags {
  name?: string;
  description?: string;
  useCase?: string;
  chain?: string;
  services?: string;
}

export function appText(app: App): string {
  return keyValues([
    ['id', app.id],
    ['name', app.name],
    ['description', app.description],
    ['use case', app.useCase],
    ['chain', app.chain],
    ['services', app.services],
    ['require JWT', app.requireJwt ? 'on' : 'off'],
    ['created', app.createdAt],
    ['updated', app.updatedAt],
    ['key rotated', app.keyRotatedAt],
    ['key', app.key],
    ...Object.entries(app.urls).map(([network, url]): [string, unknown] => [`url (${network})`, url]),
  ]);
}

const appOutput = (app: App): Output => ({ json: app, text: appText(app) });

async function defaultChain(ctx: ApiContext): Promise<string> {
  const chains = await ctx.api.request('chains_list');
  if (chains.length === 1) return chains[0].id;
  const ids = chains.map((c) => c.id);
  throw usage(ids.length ? `--chain is required: one of ${ids.join(', ')}` : 'this deployment lists no chains', {
    flag: '--chain',
    choices: ids,
  });
}

function defaultServices(): App['services'] {
  if (ALL_SERVICES.length === 1) return ALL_SERVICES;
  throw usage(`--services is required: a comma list of ${ALL_SERVICES.join(', ')}`, {
    flag: '--services',
    choices: ALL_SERVICES,
  });
}

/** An offered use case matching in another case is sent as offered; any other text as given (the list is open). */
async function useCase(ctx: ApiContext, given: string | undefined): Promise<string> {
  const offered = await ctx.api.request('useCases_list');
  if (given === undefined)
    throw usage(`--use-case is required: one of ${offered.join(', ')}, or any short text`, {
      flag: '--use-case',
      choices: offered,
    });
  return offered.find((u) => u.toLowerCase() === given.trim().toLowerCase()) ?? given;
}

function readPem(v: string): string {
  if (v.includes('-----BEGIN')) return v;
  try {
    return readFileSync(v === '-' ? 0 : v, 'utf8');
  } catch (e) {
    throw usage(`--public-key-pem: cannot read ${v === '-' ? 'stdin' : v}: ${(e as Error).message}`, {
      flag: '--public-key-pem',
    });
  }
}

const appFields = (cmd: Command, creating: boolean) =>
  cmd
    .option('--name <name>', creating ? 'app name (required)' : 'new name')
    .option('--description <text>', 'description')
    .option(
      '--use-case <useCase>',
      creating ? 'Defi, Analytics, Gaming, Wallet, … or any short text (required)' : 'use case',
    )
    .option('--chain <chain>', creating ? 'chain id from `rpcgate chains` (default: the only chain)' : 'chain')
    .option('--services <list>', creating ? 'comma list of services (default: node-api)' : 'comma list of services');

export function register(program: Command): void {
  const apps = program.command('apps').description('apps (access point A): one key, a node API URL per network');

  addApiOptions(
    appFields(apps.command('create').description('create an app; prints its key and URL per network'), true),
  ).action((flags: AppFlags) =>
    runApi(flags, async (ctx) => {
      const app = await ctx.api.request('apps_create', [
        {
          name: need(flags.name, '--name'),
          ...(flags.description !== undefined && { description: flags.description }),
          useCase: await useCase(ctx, flags.useCase),
          chain: flags.chain ?? (await defaultChain(ctx)),
          services: flags.services !== undefined ? parseServices(flags.services) : defaultServices(),
        },
      ]);
      return appOutput(app);
    }),
  );

  addApiOptions(apps.command('list').description('list your apps (without keys)')).action((flags: ApiFlags) =>
    runApi(flags, async (ctx) => {
      const list = await ctx.api.request('apps_list');
      return {
        json: { apps: list },
        text: table<AppSummary>(
          list,
          {
            ID: 'id',
            NAME: 'name',
            'USE CASE': 'useCase',
            CHAIN: 'chain',
            NETWORKS: 'networks',
            JWT: (a) => (a.requireJwt ? 'on' : 'off'),
            CREATED: 'createdAt',
          },
          '(no apps)',
        ),
      };
    }),
  );

  addApiOptions(
    apps
      .command('usage')
      .description("your account's app quotas (all your apps count together), each app's rate, and your app count"),
  ).action((flags: ApiFlags) =>
    runApi(flags, async (ctx) => {
      const u = await ctx.api.request('apps_usage');
      const rate = u.perSecond === null ? 'no per-second rate' : `${u.perSecond} requests per second each`;
      const quotas = u.quotas.map(
        (q) =>
          `requests ${q.period === 'day' ? 'today' : 'this month'}, all apps: ${q.used} of ${q.limit} (${q.remaining} left, resets ${q.resetAt})`,
      );
      return { json: u, text: [`apps: ${u.apps} of ${u.maxApps}; ${rate}`, ...quotas].join('\n') };
    }),
  );

  addApiOptions(
    apps.command('get').description('show an app with its key and URL per network').argument('<appId>'),
  ).action((appId: string, flags: ApiFlags) =>
    runApi(flags, async (ctx) => appOutput(await ctx.api.request('apps_get', [appId]))),
  );

  addApiOptions(
    appFields(apps.command('update').description('change an app (only the fields given)').argument('<appId>'), false),
  ).action((appId: string, flags: AppFlags) =>
    runApi(flags, async (ctx) => {
      const patch: AppPatch = {};
      if (flags.name !== undefined) patch.name = flags.name;
      if (flags.description !== undefined) patch.description = flags.description;
      if (flags.useCase !== undefined) patch.useCase = await useCase(ctx, flags.useCase);
      if (flags.chain !== undefined) patch.chain = flags.chain;
      if (flags.services !== undefined) patch.services = parseServices(flags.services);
      if (Object.keys(patch).length === 0)
        throw usage('nothing to change: give --name, --description, --use-case, --chain or --services');
      return appOutput(await ctx.api.request('apps_update', [appId, patch]));
    }),
  );

  addApiOptions(
    apps.command('rotate-key').description('replace the app key (the old one stops working)').argument('<appId>'),
  ).action((appId: string, flags: ApiFlags) =>
    runApi(flags, async (ctx) => appOutput(await ctx.api.request('apps_rotateKey', [appId]))),
  );

  addApiOptions(apps.command('delete').description('delete an app (its key stops working)').argument('<appId>')).action(
    (appId: string, flags: ApiFlags) =>
      runApi(flags, async (ctx) => {
        const r = await ctx.api.request('apps_delete', [appId]);
        return { json: r, text: `deleted ${r.id}` };
      }),
  );

  addApiOptions(
    apps
      .command('require-jwt')
      .description(
        'on: node API requests must carry a valid JWT (Authorization: Bearer) — the app needs a JWT key first',
      )
      .argument('<appId>')
      .argument('<on|off>', 'on or off'),
  ).action((appId: string, on: string, flags: ApiFlags) =>
    runApi(flags, async (ctx) => appOutput(await ctx.api.request('apps_setRequireJwt', [appId, parseOnOff(on)]))),
  );

  // ---- allowlists ----
  const allow = apps
    .command('allowlist')
    .description(
      'allowlist entries: origin (with *. wildcards), ip (addresses, CIDRs), address (contracts), method; kinds AND, entries OR',
    );

  addApiOptions(
    allow
      .command('add')
      .description('add an allowlist entry')
      .argument('<appId>')
      .option('--kind <kind>', 'origin | ip | address | method')
      .option('--value <value>', 'e.g. https://*.example.com, 10.0.0.0/8, 0x… or eth_call'),
  ).action((appId: string, flags: ApiFlags & { kind?: string; value?: string }) =>
    runApi(flags, async (ctx) => {
      // The server validates kind and value against the contract (-32602 with data).
      const kind = need(flags.kind, '--kind', 'origin, ip, address or method').trim().toLowerCase();
      const entry = { kind, value: need(flags.value, '--value') } as NewAllowlistEntry;
      const e = await ctx.api.request('apps_addAllowlistEntry', [appId, entry]);
      return {
        json: e,
        text: keyValues([
          ['id', e.id],
          ['kind', e.kind],
          ['value', e.value],
          ['created', e.createdAt],
        ]),
      };
    }),
  );

  addApiOptions(allow.command('list').description("list an app's allowlist entries").argument('<appId>')).action(
    (appId: string, flags: ApiFlags) =>
      runApi(flags, async (ctx) => {
        const list = await ctx.api.request('apps_listAllowlist', [appId]);
        return {
          json: { entries: list },
          text: table<AllowlistEntry>(
            list,
            { ID: 'id', KIND: 'kind', VALUE: 'value', CREATED: 'createdAt' },
            '(no entries: everything allowed)',
          ),
        };
      }),
  );

  addApiOptions(
    allow.command('remove').description('remove an allowlist entry').argument('<appId>').argument('<entryId>'),
  ).action((appId: string, entryId: string, flags: ApiFlags) =>
    runApi(flags, async (ctx) => {
      const r = await ctx.api.request('apps_removeAllowlistEntry', [appId, entryId]);
      return { json: r, text: `removed ${r.id}` };
    }),
  );

  // ---- JWT public keys ----
  const jwt = apps
    .command('jwt')
    .description('JWT public keys (SPKI PEM) that verify Bearer tokens; the key id is the token `kid`');

  addApiOptions(
    jwt
      .command('add')
      .description('add a public key; prints its key id (kid)')
      .argument('<appId>')
      .option('--alg <alg>', 'RS256 | RS384 | RS512 | ES256 | ES384')
      .option(
        '--public-key-pem <file|->',
        'SPKI PEM file (`-----BEGIN PUBLIC KEY-----`), - for stdin, or the PEM text',
      ),
  ).action((appId: string, flags: ApiFlags & { alg?: string; publicKeyPem?: string }) =>
    runApi(flags, async (ctx) => {
      const k = await ctx.api.request('apps_addJwtKey', [
        appId,
        {
          alg: need(flags.alg, '--alg', 'RS256, RS384, RS512, ES256 or ES384').trim().toUpperCase() as JwtAlg,
          publicKeyPem: readPem(need(flags.publicKeyPem, '--public-key-pem')),
        },
      ]);
      return {
        json: k,
        text: keyValues([
          ['kid', k.id],
          ['alg', k.alg],
          ['created', k.createdAt],
        ]),
      };
    }),
  );

  addApiOptions(jwt.command('list').description("list an app's JWT public keys").argument('<appId>')).action(
    (appId: string, flags: ApiFlags) =>
      runApi(flags, async (ctx) => {
        const list = await ctx.api.request('apps_listJwtKeys', [appId]);
        return {
          json: { jwtKeys: list },
          text: table<JwtKey>(list, { KID: 'id', ALG: 'alg', CREATED: 'createdAt' }, '(no JWT keys)'),
        };
      }),
  );

  addApiOptions(
    jwt.command('remove').description('remove a JWT public key').argument('<appId>').argument('<keyId>'),
  ).action((appId: string, keyId: string, flags: ApiFlags) =>
    runApi(flags, async (ctx) => {
      const r = await ctx.api.request('apps_removeJwtKey', [appId, keyId]);
      return { json: r, text: `removed ${r.id}` };
    }),
  );
  addLogsCommand(apps, 'apps');
}
