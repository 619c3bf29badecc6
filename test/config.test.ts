// Configuration from one schema (contracts/config.schema.json → generated/config/types.ts): every leaf settable by
// file, environment (RPCGATE_A_B_C, plus the schema's x-env aliases) and `--set a.b.c=value`, in that order of
// precedence over the schema's defaults; values parsed per the schema type; errors naming the path and the source.
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { configSchema } from '../generated/config/types.js';
import { ConfigError, defaults, loadConfig, settings } from '../src/gateway/config/config.js';
import { DEFAULT_APP_PLAN, DEFAULT_B_DAILY_PER_USER } from '../src/gateway/limits/plans.js';

const root = resolve(import.meta.dirname, '..');

function configFile(body: unknown): string {
  const file = join(mkdtempSync(join(tmpdir(), 'rpcgate-config-')), 'c.json');
  writeFileSync(file, JSON.stringify(body));
  return file;
}

/** A text for a leaf that its schema accepts (a JSON value where the leaf is an array or a map). */
function sample(s: any): { text: string; value: unknown } {
  const node = s.$ref
    ? s.$ref
        .split('/')
        .slice(1)
        .reduce((o: any, k: string) => o[k], configSchema)
    : s;
  const types = new Set([node.type ?? [], ...(node.anyOf ?? []).map((a: any) => a.type)].flat());
  if (node.enum) return { text: String(node.enum[1] ?? node.enum[0]), value: node.enum[1] ?? node.enum[0] };
  if (types.has('boolean')) return { text: 'true', value: true };
  if (types.has('integer') || types.has('number')) {
    const n = Math.max(node.minimum ?? 0, Math.min(77, node.maximum ?? 77));
    return { text: String(n), value: n };
  }
  if (node.pattern === '^postgres(ql)?://')
    return { text: 'postgres://db.example/x', value: 'postgres://db.example/x' };
  if (node.pattern === '^rediss?://') return { text: 'redis://cache.example', value: 'redis://cache.example' };
  if (node.pattern === '^smtps?://') return { text: 'smtps://mail.example', value: 'smtps://mail.example' };
  if (node.pattern?.startsWith('^https?://'))
    return { text: 'https://rpc.example.com', value: 'https://rpc.example.com' };
  if (types.has('string')) {
    const t = 'some-value-123'.padEnd(node.minLength ?? 0, 'x');
    return { text: t, value: t };
  }
  if (types.has('array')) {
    const item =
      node.items?.type === 'integer'
        ? -32005
        : node.items?.pattern?.includes('@')
          ? 'ops@example.com'
          : node.items?.pattern?.startsWith('^https?://') || node.items?.$ref === '#/definitions/UpstreamSpec'
            ? 'https://a.example'
            : node.items?.anyOf
              ? 'key-abcdefgh'
              : 'mainnet';
    return { text: JSON.stringify([item]), value: [item] };
  }
  return { text: '{"mainnet":[]}', value: { mainnet: [] } };
}

describe('config schema', () => {
  it('the schema file is what the generated module carries (npm run generate keeps them one)', () => {
    expect(configSchema).toEqual(JSON.parse(readFileSync(join(root, 'contracts/config.schema.json'), 'utf8')));
  });

  it('defaults are the schema defaults: mainnet and testnet on embedded anvils, the plan limits', () => {
    expect(Object.keys(defaults.networks)).toEqual(['mainnet', 'testnet']);
    expect(defaults.networks.testnet).toEqual({ upstreams: [], chainId: 31338, blockTime: 2 });
    expect(defaults.upstream.requestTimeoutMs).toBe(10_000);
    expect(DEFAULT_APP_PLAN).toEqual({ perSecond: 100, daily: 100_000, monthly: 3_000_000 });
    expect(DEFAULT_B_DAILY_PER_USER).toBe(25_000);
    expect(loadConfig({ env: {} }).docsDir).toBe(join(root, 'docs'));
  });

  it('every leaf has an environment name derived from its path, and both it and --set set it', () => {
    const all = settings();
    const envs = all.map((s) => s.env);
    expect(new Set(envs).size).toBe(envs.length);
    expect(envs).toEqual(
      expect.arrayContaining([
        'RPCGATE_PORT',
        'RPCGATE_DATA_DIR',
        'RPCGATE_UPSTREAM_REQUEST_TIMEOUT_MS',
        'RPCGATE_LIMITS_A_PER_SECOND',
        'RPCGATE_LIMITS_B_DAILY_PER_USER',
        'RPCGATE_NETWORKS_{*}_CHAIN_ID',
        'RPCGATE_PUBLIC_BASE_URL',
        'RPCGATE_ALLOWED_ORIGINS',
        'RPCGATE_USAGE_RETENTION_DAY_RETENTION_MS',
      ]),
    );
    // Settings that are refused alone (a cross-field rule of validate()): set with what they need.
    const NEEDS: Record<string, { env: Record<string, string>; set: string[] }> = {
      smtp: {
        env: { RPCGATE_SMTP_URL: 'smtp://127.0.0.1:25', RPCGATE_PUBLIC_BASE_URL: 'https://rpc.example.test' },
        set: ['smtp.url=smtp://127.0.0.1:25', 'publicBaseUrl=https://rpc.example.test'],
      },
      // accounts.defaultPlan must name a plan of `plans`.
      accounts: {
        env: { RPCGATE_PLANS: '{"some-value-123":{}}' },
        set: ['plans={"some-value-123":{}}'],
      },
    };
    let checked = 0;
    for (const st of all) {
      const path = st.path.map((p) => (p === '*' ? 'testnet' : p));
      const needs = NEEDS[path[0]] ?? { env: {}, set: [] };
      if (['hostMap', 'networks', 'chains', 'keys', 'cache.networks', 'plans'].includes(path.join('.'))) continue; // maps and key lists: the next test
      const { text, value } = sample(st.schema);
      const get = (c: any) => path.reduce((o, k) => o?.[k], c);
      const env = st.env.replace('{*}', 'TESTNET');
      // Paths are resolved against the working directory.
      const v = ['dataDir', 'docsDir', 'openrpcPath'].includes(path[0]) ? resolve(String(value)) : value;
      expect(get(loadConfig({ env: { ...needs.env, [env]: text } })), env).toEqual(v);
      expect(
        get(loadConfig({ env: {}, assignments: [...needs.set, `${path.join('.')}=${text}`] })),
        path.join('.'),
      ).toEqual(v);
      checked++;
    }
    expect(checked).toBeGreaterThan(35);
  });

  it('a list of numbers may be comma-separated (upstream.retry.nodeErrorCodes)', () => {
    expect(
      loadConfig({ env: { RPCGATE_UPSTREAM_RETRY_NODE_ERROR_CODES: '-32005, -32000' } }).upstream.retry.nodeErrorCodes,
    ).toEqual([-32005, -32000]);
    expect(() => loadConfig({ env: { RPCGATE_UPSTREAM_RETRY_NODE_ERROR_CODES: '-32005,x' } })).toThrow(
      /nodeErrorCodes\/1: must be integer/,
    );
  });

  it('maps and lists: JSON, comma lists, host=network pairs; a whole network map as JSON', () => {
    const c = loadConfig({
      env: {
        RPCGATE_KEYS: 'key-aaaaaaaa, key-bbbbbbbb',
        RPCGATE_HOST_MAP: 'A.example=mainnet,b.example=testnet',
        RPCGATE_CHAINS: '{"eth":["mainnet"],"poly":[]}',
      },
    });
    expect(c.keys).toEqual(['key-aaaaaaaa', 'key-bbbbbbbb']);
    expect(c.hostMap).toEqual({ 'a.example': 'mainnet', 'b.example': 'testnet' });
    // chains replace (x-merge): the default `ethereum` is gone.
    expect(c.chains).toEqual({ eth: ['mainnet'], poly: [] });
    const n = loadConfig({
      env: {},
      assignments: ['networks={"holesky":{"upstreams":["http://h.example"],"chainId":17000,"blockTime":12}}'],
    });
    expect(Object.keys(n.networks)).toEqual(['mainnet', 'testnet', 'holesky']);
    expect(n.networks.holesky).toEqual({ upstreams: ['http://h.example'], chainId: 17000, blockTime: 12 });
  });

  it('the older names keep working (x-env) and lose to the canonical ones', () => {
    const c = loadConfig({
      env: {
        DATABASE_URL: 'postgres://old.example/db',
        REDIS_URL: 'redis://old.example',
        RPCGATE_REDIS_URL: 'redis://new.example',
        RPCGATE_COALESCE: 'false',
        RPCGATE_METRICS: 'off',
        RPCGATE_UPSTREAM_TIMEOUT_MS: '1234',
        RPCGATE_MAINNET_UPSTREAMS: 'http://a.example, http://b.example',
        RPCGATE_TESTNET_CHAIN_ID: '5',
      },
    });
    expect(c.databaseUrl).toBe('postgres://old.example/db');
    expect(c.redisUrl).toBe('redis://new.example');
    expect([c.upstream.coalesce, c.metrics.enabled, c.upstream.requestTimeoutMs]).toEqual([false, false, 1234]);
    expect(c.networks.mainnet.upstreams).toEqual(['http://a.example', 'http://b.example']);
    expect(c.networks.testnet.chainId).toBe(5);
  });

  it('a network can be added by the environment alone, and by --set', () => {
    const c = loadConfig({
      env: { RPCGATE_NETWORKS_HOLESKY_UPSTREAMS: 'http://h.example', RPCGATE_NETWORKS_HOLESKY_CHAIN_ID: '17000' },
    });
    expect(c.networks.holesky).toEqual({ upstreams: ['http://h.example'], chainId: 17000, blockTime: 2 });
    const f = loadConfig({
      env: {},
      assignments: [
        'networks.sepolia.chainId=11155111',
        'networks.sepolia.label=Sepolia testnet',
        'networks.testnet=null',
      ],
    });
    expect(Object.keys(f.networks)).toEqual(['mainnet', 'sepolia']);
    expect(f.networks.sepolia).toEqual({ upstreams: [], chainId: 11155111, blockTime: 2, label: 'Sepolia testnet' });
  });

  it('precedence: defaults < file < env < overrides (flags) < --set', () => {
    const file = configFile({
      port: 9000,
      host: '0.0.0.0',
      slowRequestMs: 50,
      upstream: { maxBatch: 7 },
      networks: { testnet: { upstreams: ['http://file.example'] } },
    });
    const c = loadConfig({
      configFile: file,
      env: { RPCGATE_PORT: '9100', RPCGATE_HOST: '10.0.0.1', RPCGATE_UPSTREAM_CONNECTIONS: '3' },
      overrides: { port: 9200 },
      assignments: ['port=9300', 'upstream.pipelining=4'],
    });
    expect([c.port, c.host, c.slowRequestMs]).toEqual([9300, '10.0.0.1', 50]);
    expect(c.upstream).toEqual({ ...defaults.upstream, maxBatch: 7, connections: 3, pipelining: 4 });
    expect(c.networks.testnet).toEqual({ upstreams: ['http://file.example'], chainId: 31338, blockTime: 2 });
  });

  it('a config file that lists networks lists all of them: the default embedded mainnet/testnet are not added (issue 21)', () => {
    const own = configFile({ networks: { holesky: { upstreams: ['http://h.example'], chainId: 17000 } } });
    expect(Object.keys(loadConfig({ configFile: own, env: {} }).networks)).toEqual(['holesky']);
    // A default network the file names keeps its defaults; env and --set still add to the file's set.
    const named = configFile({
      networks: { testnet: { upstreams: ['http://t.example'] }, holesky: { upstreams: ['http://h.example'] } },
    });
    const c = loadConfig({ configFile: named, env: { RPCGATE_NETWORKS_SEPOLIA_UPSTREAMS: 'http://s.example' } });
    expect(Object.keys(c.networks)).toEqual(['testnet', 'holesky', 'sepolia']);
    expect(c.networks.testnet.chainId).toBe(31338);
    // A file without networks keeps the embedded defaults.
    expect(Object.keys(loadConfig({ configFile: configFile({ port: 9000 }), env: {} }).networks)).toEqual([
      'mainnet',
      'testnet',
    ]);
  });

  it('publicBaseUrl and allowedOrigins are settings (typed, validated)', () => {
    const c = loadConfig({
      env: {
        RPCGATE_PUBLIC_BASE_URL: 'https://rpc.example.com',
        RPCGATE_ALLOWED_ORIGINS: 'https://app.example.com,https://admin.example.com',
      },
    });
    expect(c.publicBaseUrl).toBe('https://rpc.example.com');
    expect(c.allowedOrigins).toEqual(['https://app.example.com', 'https://admin.example.com']);
    expect(() => loadConfig({ env: { RPCGATE_PUBLIC_BASE_URL: 'rpc.example.com' } })).toThrow(
      /\/publicBaseUrl: must match pattern .* \(from env RPCGATE_PUBLIC_BASE_URL\)/,
    );
  });

  it('errors name the path and where the value came from', () => {
    const file = configFile({ maxBatchSize: 0, networks: { mainnet: { upstreams: ['ftp://x'] } }, bogus: 1 });
    let message = '';
    try {
      loadConfig({ configFile: file, env: { RPCGATE_UPSTREAM_MAX_BATCH: '0' }, assignments: ['slowRequestMs=0'] });
    } catch (e) {
      expect(e).toBeInstanceOf(ConfigError);
      message = (e as Error).message;
    }
    expect(message).toContain(`/maxBatchSize: must be >= 1 (from config file ${file})`);
    expect(message).toContain(
      `/networks/mainnet/upstreams/0: must match pattern "^(https?|wss?)://" (from config file ${file})`,
    );
    expect(message).toContain(`(root): must NOT have additional properties: "bogus" (from config file ${file})`);
    expect(message).toContain('/upstream/maxBatch: must be >= 1 (from env RPCGATE_UPSTREAM_MAX_BATCH)');
    expect(message).toContain('/slowRequestMs: must be >= 1 (from --set slowRequestMs)');
    expect(() => loadConfig({ env: { RPCGATE_PORT: 'eighty' } })).toThrow(
      'env RPCGATE_PORT: expected an integer, got "eighty"',
    );
    expect(() => loadConfig({ env: { RPCGATE_STRICT_RESULTS: 'maybe' } })).toThrow(
      'env RPCGATE_STRICT_RESULTS: expected boolean, got "maybe"',
    );
    expect(() => loadConfig({ env: { RPCGATE_CHAINS: '{"eth":' } })).toThrow(/^env RPCGATE_CHAINS: not valid JSON/);
    expect(() => loadConfig({ env: {}, assignments: ['upstream.nope=1'] })).toThrow(
      '--set upstream.nope=1: unknown setting "upstream.nope"',
    );
    expect(() => loadConfig({ env: {}, assignments: ['port'] })).toThrow('--set port: expected path=value');
    expect(() => loadConfig({ env: {}, assignments: ['chains={"eth":["holesky"]}'] })).toThrow(
      '/chains/eth: unknown network "holesky" (known: mainnet, testnet)',
    );
  });

  // The CLI's sources under tsx, as test/cli.test.ts runs them (bin/rpcgate.js runs dist/, which test/package.test.ts builds).
  it('the CLI: `rpcgate config --json` lists the settings; `rpcgate start --set` reports a bad one and exits 1', async () => {
    const run = (args: string[]) =>
      new Promise<{ code: number; stdout: string; stderr: string }>((done) =>
        execFile(
          process.execPath,
          ['--import', 'tsx', join(root, 'src', 'cli', 'main.ts'), ...args],
          { cwd: root, env: { ...process.env, RPCGATE_CONFIG: '' }, timeout: 30_000 },
          (err, stdout, stderr) =>
            done({ code: err ? Number((err as { code?: number }).code ?? -1) : 0, stdout, stderr }),
        ),
      );
    const listed = await run(['config', '--json']);
    expect(listed.code).toBe(0);
    const rows = JSON.parse(listed.stdout).settings as { path: string; env: string; type: string; default: string }[];
    expect(rows.map((r) => r.path)).toEqual(settings().map((st) => st.path.join('.')));
    expect(rows.find((r) => r.path === 'upstream.coalesce')).toEqual({
      path: 'upstream.coalesce',
      env: 'RPCGATE_UPSTREAM_COALESCE RPCGATE_COALESCE',
      type: 'boolean',
      default: 'true',
    });
    expect(rows.find((r) => r.path === 'limits.b.dailyPerUser')?.default).toBe('25000');
    const bad = await run(['start', '--set', 'upstream.nope=1']);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('rpcgate: --set upstream.nope=1: unknown setting "upstream.nope"');
  }, 60_000);
});
