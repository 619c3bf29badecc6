// The dashboard in a real browser (playwright-core driving Debian's /usr/bin/chromium; never a downloaded browser):
// sign up, create an app (chain found by searching), copy its URL, call it, an allowlist refusing a call, JWT keys,
// rotate, network keys up to the 4-key limit, the usage count, delete, docs, log out and in. A screenshot of every
// screen goes to test-output/screenshots/<nn>-<name>.png. Then the web route itself: caching, compression, paths.
//
// Counting: the API keys' usage for today (the limiter's count) after a call. Metrics (issue 5): known usage is fed
// through a real Meter bound to the service's store (known calls at known minutes), then the app's Metrics tab (totals,
// four charts, data tables, errors by code) and the key detail view's usage are checked against those numbers.
import { generateKeyPairSync } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it, onTestFailed } from 'vitest';
import { startService, type RunningService } from '../src/gateway/server/index.js';
import { Meter, type MeterEvent } from '../src/gateway/metering/meter.js';
import { unitsTable } from '../src/gateway/method-meaning.js';
import { methods as nodeMethods } from '../generated/node/methods.js';
import { ensureWebBuilt } from '../src/gateway/web/build.js';

const CHROMIUM = '/usr/bin/chromium';
// A fresh machine may lack Debian's chromium (`apt-get install chromium`; .ci/run installs it): the browser journey
// then says so and skips — under CI it must run.
const skipBrowser = !existsSync(CHROMIUM) && !process.env.CI;
if (skipBrowser)
  console.warn(
    `[dashboard] ${CHROMIUM} not found: browser journey SKIPPED (apt-get install chromium; required when CI is set)`,
  );
const SHOTS = resolve(import.meta.dirname, '..', 'test-output', 'screenshots');

let svc: RunningService;
let browser: Browser;
let context: BrowserContext;
let page: Page;
let dataDir: string;
let shotNo = 0;
const offOrigin: string[] = [];

async function shot(name: string, p: Page = page): Promise<void> {
  shotNo++;
  await p.screenshot({ path: join(SHOTS, `${String(shotNo).padStart(2, '0')}-${name}.png`), fullPage: true });
}

async function rpc(
  url: string,
  method: string,
  params: unknown[] = [],
  headers: Record<string, string> = {},
): Promise<{
  status: number;
  body: { result?: unknown; error?: { code: number; message: string; data?: { source?: string; reason?: string } } };
}> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
  return { status: res.status, body: (await res.json()) as never };
}

/** One call over a WebSocket (the ws package), bounded in time: its result, or the error it answered. */
function wsCall(url: string, method: string): Promise<unknown> {
  return new Promise((resolveCall, reject) => {
    const s = new WebSocket(url);
    const timer = setTimeout(() => {
      s.terminate();
      reject(new Error(`no answer to ${method} over ${url}`));
    }, 10_000);
    s.once('error', reject);
    s.once('open', () => s.send(JSON.stringify({ jsonrpc: '2.0', id: 1, method, params: [] })));
    s.on('message', (d) => {
      const m = JSON.parse(d.toString()) as { id?: number; result?: unknown; error?: unknown };
      if (m.id !== 1) return;
      clearTimeout(timer);
      s.close();
      if (m.error) reject(new Error(JSON.stringify(m.error)));
      else resolveCall(m.result);
    });
  });
}

/** A raw GET (fetch would normalise `..` away before sending). */
function rawGet(
  path: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; headers: Record<string, unknown>; body: Buffer }> {
  const u = new URL(svc.url);
  return new Promise((resolveGet, reject) => {
    const req = httpRequest({ host: u.hostname, port: u.port, path, method: 'GET', headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () =>
        resolveGet({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }),
      );
    });
    req.on('error', reject);
    req.end();
  });
}

beforeAll(async () => {
  await ensureWebBuilt((m) => console.log(m));
  rmSync(SHOTS, { recursive: true, force: true });
  mkdirSync(SHOTS, { recursive: true });
  dataDir = mkdtempSync(join(tmpdir(), 'rpcgate-dashboard-'));
  // A third network (closed port, never called) for network keys only: the New API key form lists the configured networks.
  svc = await startService({
    port: 0,
    logLevel: 'silent',
    devKey: false,
    dataDir,
    networks: { mainnet: {}, testnet: {}, holesky: { upstreams: ['http://127.0.0.1:9'], chainId: 17000 } },
    chains: { ethereum: ['mainnet', 'testnet'] },
  });
  if (skipBrowser) return;
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
      '--disable-quic',
    ],
  });
  context = await browser.newContext({ viewport: { width: 1280, height: 860 }, baseURL: svc.url });
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: svc.url });
  page = await context.newPage();
  // The dashboard loads nothing from anywhere but its own origin (no fonts, CDNs, analytics): checked at the end.
  context.on('request', (r) => {
    const u = new URL(r.url());
    if (u.protocol !== 'data:' && u.origin !== svc.url) offOrigin.push(r.url());
  });
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await svc?.stop();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

describe.skipIf(skipBrowser)('dashboard journey (Chromium)', () => {
  it('sign up → app → copy URL → call → allowlist → JWT → rotate → keys (5th refused) → delete → docs → log out/in', async () => {
    onTestFailed(async () => {
      await page.screenshot({ path: join(SHOTS, 'failure.png'), fullPage: true }).catch(() => undefined);
    });

    // Not signed in: the log-in screen, with the docs link in the header.
    await page.goto('/');
    await expect.poll(() => page.getByRole('heading', { name: 'Log in' }).isVisible()).toBe(true);
    expect(
      await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Docs' }).getAttribute('href'),
    ).toBe('/docs/');

    // Sign up: a too-short password is refused inline, then a good one signs in.
    await page.getByRole('link', { name: 'Sign up for free' }).click();
    await page.getByRole('heading', { name: 'Create your free account' }).waitFor();
    await page.getByLabel('Email').fill('dev@example.com');
    await page.getByLabel('Password').fill('short');
    await page.getByRole('button', { name: 'Sign up' }).click();
    await expect.poll(() => page.getByRole('alert').textContent()).toBe('Password must be at least 8 characters long.');
    await shot('sign-up-error');
    await page.getByLabel('Password').fill('correct horse battery');
    await shot('sign-up');
    await page.getByRole('button', { name: 'Sign up' }).click();
    await page.getByRole('heading', { name: 'Apps', exact: true }).waitFor();
    await page.getByRole('heading', { name: 'No apps yet' }).waitFor();
    await shot('apps-empty');

    // Create app: name, description, use case (typed: an open list), chain by searching, services.
    await page.getByRole('link', { name: 'Create app', exact: true }).click();
    await page.getByRole('heading', { name: 'Create app' }).waitFor();
    await page.getByLabel('Name').fill('Price dashboard');
    await page.getByLabel('Description').fill('Reads blocks for a price chart');
    await page.getByLabel('Use case').fill('Defi');
    await page.getByLabel('Search chains').fill('nosuchchain');
    await page.getByText('No chain matches').waitFor();
    await page.getByLabel('Search chains').fill('eth');
    const ethereum = page.getByRole('radio', { name: /Ethereum/ });
    await ethereum.check();
    expect(await page.getByRole('checkbox', { name: /Node API/ }).isChecked()).toBe(true);
    await shot('create-app');
    await page.getByRole('button', { name: 'Create app' }).click();

    // Set up: opens on the latest-block example in JavaScript with ethers, the app's URL filled in.
    await page.getByRole('heading', { name: 'Price dashboard' }).waitFor();
    expect(await page.getByRole('tab', { name: 'Set up' }).getAttribute('aria-selected')).toBe('true');
    expect(await page.getByRole('button', { name: 'JavaScript', exact: true }).getAttribute('aria-pressed')).toBe(
      'true',
    );
    expect(await page.getByRole('button', { name: 'ethers', exact: true }).getAttribute('aria-pressed')).toBe('true');
    const appKey = await page.getByTestId('app-key').inputValue();
    expect(appKey).toMatch(/^[1-9A-HJ-NP-Za-km-z]{20,}$/);
    const code = await page.getByTestId('example-code').textContent();
    expect(code).toContain(`new JsonRpcProvider('${svc.url}/mainnet/v2/${appKey}')`);
    expect(code).toContain("getBlock('latest', false)");
    await shot('app-setup');
    // Other languages and SDKs come from the generated examples.
    await page.getByRole('button', { name: 'Python', exact: true }).click();
    expect(await page.getByTestId('example-code').textContent()).toContain('w3.eth.get_block("latest"');
    // Beside web3.py: the generated, typed Python client (generated/python/rpcgate_node).
    await page.getByRole('button', { name: 'rpcgate client', exact: true }).click();
    expect(await page.getByTestId('example-code').textContent()).toContain(
      `client = Client("${svc.url}/mainnet/v2/${appKey}")`,
    );
    expect(await page.getByTestId('example-code').textContent()).toContain(
      'client.eth_get_block_by_number("latest", False)',
    );
    await page.getByRole('button', { name: 'TypeScript', exact: true }).click();
    await page.getByRole('button', { name: 'rpcgate client', exact: true }).click();
    expect(await page.getByTestId('example-code').textContent()).toContain(
      "client.request('eth_getBlockByNumber', ['latest', false])",
    );
    await page.getByLabel('Network', { exact: true }).selectOption('testnet');
    expect(await page.getByTestId('setup-url-testnet').inputValue()).toBe(`${svc.url}/testnet/v2/${appKey}`);
    expect(await page.getByTestId('example-code').textContent()).toContain(`${svc.url}/testnet/v2/${appKey}`);
    await page.getByLabel('Method').selectOption('eth_getBalance');
    expect(await page.getByTestId('example-code').textContent()).toContain('eth_getBalance');
    await page.getByRole('button', { name: 'CLI', exact: true }).click();
    await shot('app-setup-curl');

    // WebSocket: the same method on the ws:// form of the app's URL, for ethers, viem and wscat; the URL shown works.
    const wsUrl = `${svc.url.replace(/^http:/, 'ws:')}/testnet/v2/${appKey}`;
    await page.getByRole('button', { name: 'WebSocket', exact: true }).click();
    expect(await page.getByRole('button', { name: 'CLI', exact: true }).count()).toBe(0);
    expect(await page.getByTestId('setup-ws-url-testnet').inputValue()).toBe(wsUrl);
    expect(
      await page.getByRole('button', { name: 'ethers WebSocketProvider', exact: true }).getAttribute('aria-pressed'),
    ).toBe('true');
    let wsCode = (await page.getByTestId('example-code').textContent()) ?? '';
    expect(wsCode).toContain(`new WebSocketProvider('${wsUrl}')`);
    expect(wsCode).toContain("provider.send('eth_getBalance'");
    await page.getByRole('button', { name: 'viem webSocket', exact: true }).click();
    expect(await page.getByTestId('example-code').textContent()).toContain(`transport: webSocket('${wsUrl}')`);
    await page.getByRole('button', { name: 'wscat', exact: true }).click();
    expect(await page.getByTestId('example-code').textContent()).toContain(`wscat -c '${wsUrl}'`);
    await page.getByLabel('Method').selectOption('eth_subscribe');
    await page.getByRole('button', { name: 'ethers WebSocketProvider', exact: true }).click();
    wsCode = (await page.getByTestId('example-code').textContent()) ?? '';
    expect(wsCode).toContain("provider.on('block'");
    await shot('app-setup-websocket');
    expect(await wsCall(await page.getByTestId('setup-ws-url-testnet').inputValue(), 'eth_chainId')).toMatch(
      /^0x[0-9a-f]+$/,
    );
    await page.getByRole('button', { name: 'HTTP', exact: true }).click();
    expect(await page.getByTestId('example-code').textContent()).toContain(`${svc.url}/testnet/v2/${appKey}`);

    // Tabs are keyboard-usable: arrow keys move and select.
    await page.getByRole('tab', { name: 'Set up' }).focus();
    await page.keyboard.press('ArrowRight');
    await page.getByRole('heading', { name: 'No requests in this period' }).waitFor();
    expect(await page.getByRole('tab', { name: 'Metrics' }).evaluate((el) => el === document.activeElement)).toBe(true);
    await shot('app-metrics');

    // Networks: an RPC URL per network, each with Copy; the copied text is the URL.
    await page.keyboard.press('ArrowRight');
    await page.getByRole('heading', { name: 'Networks' }).waitFor();
    const mainnetUrl = await page.getByTestId('rpc-url-mainnet').inputValue();
    const testnetUrl = await page.getByTestId('rpc-url-testnet').inputValue();
    expect(mainnetUrl).toBe(`${svc.url}/mainnet/v2/${appKey}`);
    expect(testnetUrl).toBe(`${svc.url}/testnet/v2/${appKey}`);
    await page.getByRole('button', { name: 'Copy Mainnet RPC URL' }).click();
    await expect
      .poll(() => page.getByRole('button', { name: 'Copy Mainnet RPC URL' }).textContent())
      .toContain('Copied');
    const copied = await page.evaluate(() => navigator.clipboard.readText());
    expect(copied).toBe(mainnetUrl);
    await shot('app-networks');

    // Call the copied URL from the test.
    const first = await rpc(copied, 'eth_blockNumber');
    expect(first.status).toBe(200);
    expect(first.body.result).toMatch(/^0x[0-9a-f]+$/);
    expect((await rpc(testnetUrl, 'eth_chainId')).body.result).toBe('0x7a6a');

    // Settings: an allowlist of one method refuses the others (403), lets eth_chainId through.
    await page.getByRole('tab', { name: 'Settings' }).click();
    await page.getByRole('heading', { name: 'Allowlists' }).waitFor();
    await shot('app-settings');
    await page.getByLabel('Add method').fill('eth_chainId');
    await page.locator('[data-kind="method"]').getByRole('button', { name: 'Add' }).click();
    await page.getByRole('button', { name: 'Remove method eth_chainId' }).waitFor();
    const refused = await rpc(mainnetUrl, 'eth_blockNumber');
    expect([
      refused.status,
      refused.body.error?.code,
      refused.body.error?.data?.source,
      refused.body.error?.data?.reason,
    ]).toEqual([403, -32601, 'rpcgate', 'method']);
    expect((await rpc(mainnetUrl, 'eth_chainId')).status).toBe(200);
    // A bad entry is refused inline.
    await page.getByLabel('Add IP address').fill('not-an-ip');
    await page.locator('[data-kind="ip"]').getByRole('button', { name: 'Add' }).click();
    expect(await page.locator('[data-kind="ip"]').getByRole('alert').textContent()).toBe(
      '“not-an-ip” is not a valid IP address or CIDR.',
    );

    // JWT keys: paste a PEM, see its key id; require JWT → calls without a token are refused; then undo both.
    const { publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    await page.getByLabel('Algorithm').selectOption('ES256');
    await page.getByLabel('Public key (PEM)').fill(publicKey.export({ type: 'spki', format: 'pem' }).toString());
    await page.getByRole('button', { name: 'Add JWT key' }).click();
    await expect.poll(() => page.getByText(/its key id/i).textContent()).toMatch(/kid_[1-9A-HJ-NP-Za-km-z]+/);
    const kid = (await page.getByText(/its key id/i).textContent())!.match(/kid_[1-9A-HJ-NP-Za-km-z]+/)![0];
    await page.getByRole('button', { name: `Remove JWT key ${kid}` }).waitFor();
    await page.getByRole('switch', { name: 'Require JWT' }).check();
    await expect.poll(() => page.getByRole('switch', { name: 'Require JWT' }).isChecked()).toBe(true);
    expect((await rpc(mainnetUrl, 'eth_chainId')).status).toBe(401);
    await shot('app-settings-allowlist-jwt');
    // The longest token lifetime: 24 h by default; 1 h saved; out of range refused inline.
    expect(await page.getByLabel('Longest token lifetime (hours)').inputValue()).toBe('24');
    await page.getByLabel('Longest token lifetime (hours)').fill('0.001');
    await page.getByRole('button', { name: 'Save lifetime' }).click();
    await expect.poll(() => page.locator('.jwt-lifetime').getByRole('alert').textContent()).toMatch(/lifetime/i);
    await page.getByLabel('Longest token lifetime (hours)').fill('1');
    await page.getByRole('button', { name: 'Save lifetime' }).click();
    await page.locator('.jwt-lifetime').getByText('Saved.').waitFor();
    expect(
      (await svc.store.db.selectFrom('apps').select('jwt_max_lifetime_sec').execute()).map(
        (r) => r.jwt_max_lifetime_sec,
      ),
    ).toContain(3600);
    await page.getByRole('switch', { name: 'Require JWT' }).uncheck();
    await expect.poll(async () => (await rpc(mainnetUrl, 'eth_chainId')).status).toBe(200);
    await page.getByRole('button', { name: `Remove JWT key ${kid}` }).click();
    await page.getByText('No JWT keys.').waitFor();
    await page.getByRole('button', { name: 'Remove method eth_chainId' }).click();
    await expect.poll(async () => (await rpc(mainnetUrl, 'eth_blockNumber')).status).toBe(200);

    // Rotate (with a confirmation): the old URL is refused (401), the new one works.
    await page.getByRole('button', { name: 'Rotate key' }).click();
    await shot('app-rotate-confirm');
    await page.getByRole('button', { name: 'Rotate now' }).click();
    await page.getByText('Key rotated.').waitFor();
    expect((await rpc(mainnetUrl, 'eth_blockNumber')).status).toBe(401);
    await page.getByRole('tab', { name: 'Networks' }).click();
    const rotatedUrl = await page.getByTestId('rpc-url-mainnet').inputValue();
    expect(rotatedUrl).not.toBe(mainnetUrl);
    expect((await rpc(rotatedUrl, 'eth_blockNumber')).status).toBe(200);

    // The apps list, also at a phone's width (375 px) without horizontal scrolling.
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Apps' }).click();
    await page.getByRole('link', { name: 'Price dashboard' }).waitFor();
    // The account's quotas, shown once for all apps (they are the account's, issue 26): the calls above counted.
    expect(await page.getByTestId('app-quota-day').textContent()).toMatch(
      /^\d+ of 100,000 requests today, all your apps together/,
    );
    expect(Number(await page.getByTestId('app-quota-day-used').textContent())).toBeGreaterThan(0);
    expect(await page.getByTestId('app-quota-month').textContent()).toMatch(
      /^\d+ of 3,000,000 requests this month, all your apps together/,
    );
    expect(await page.getByTestId('app-quotas').textContent()).toContain(
      'more apps do not add quota. Each app has its own rate of 100 requests per second. 1 of 10 apps.',
    );
    await shot('apps-list');
    await page.setViewportSize({ width: 375, height: 812 });
    await page.reload();
    await page.getByRole('link', { name: 'Price dashboard' }).waitFor();
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(375);
    await shot('apps-list-375px');
    await page.getByRole('link', { name: 'Price dashboard' }).click();
    await page.getByRole('tab', { name: 'Networks' }).click();
    await page.getByTestId('rpc-url-testnet').waitFor();
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(375);
    await shot('app-networks-375px');
    await page.setViewportSize({ width: 1280, height: 860 });

    // API keys: list with today's usage against 25,000; New API key; the detail view; a call counted.
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'API keys' }).click();
    await page.getByRole('heading', { name: 'No API keys yet' }).waitFor();
    expect(await page.getByTestId('usage').textContent()).toMatch(/^0 of 25,000 requests today/);
    await shot('keys-empty');
    await page.getByRole('link', { name: 'New API key' }).click();
    await page.getByRole('heading', { name: 'New API key' }).waitFor();
    await page.getByLabel('Name').fill('indexer');
    await page.getByRole('radio', { name: 'Holesky' }).waitFor();
    expect(await page.getByRole('radio').evaluateAll((els) => els.map((e) => (e as HTMLInputElement).value))).toEqual([
      'mainnet',
      'testnet',
      'holesky',
    ]);
    expect(await page.getByRole('radio', { name: 'Testnet' }).isChecked()).toBe(true);
    await page.getByRole('radio', { name: 'Testnet' }).check();
    await page.getByLabel('Description').fill('backfills logs');
    await shot('new-key');
    await page.getByRole('button', { name: 'Create API key' }).click();
    await page.getByRole('heading', { name: 'indexer' }).waitFor();
    const keyUrl = await page.getByTestId('key-url').inputValue();
    const keyKey = await page.getByTestId('key-key').inputValue();
    expect(keyUrl).toBe(`${svc.url}/testnet/${keyKey}`);
    expect(await page.getByTestId('example-code').textContent()).toContain(keyUrl);
    // The key's WebSocket URL: the same path on ws://.
    await page.getByRole('button', { name: 'WebSocket', exact: true }).click();
    expect(await page.getByTestId('setup-ws-url-testnet').inputValue()).toBe(keyUrl.replace(/^http:/, 'ws:'));
    expect(await page.getByTestId('example-code').textContent()).toContain(
      `new WebSocketProvider('${keyUrl.replace(/^http:/, 'ws:')}')`,
    );
    await page.getByRole('button', { name: 'Copy RPC URL' }).click();
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(keyUrl);
    const viaKey = await rpc(keyUrl, 'eth_blockNumber');
    expect(viaKey.status).toBe(200);
    expect(viaKey.body.result).toMatch(/^0x[0-9a-f]+$/);
    await page.reload();
    await expect.poll(() => page.getByTestId('usage-used').textContent()).toBe('1');
    await shot('key-detail');

    for (const [name, network] of [
      ['backend', 'Mainnet'],
      ['wallet', 'Testnet'],
      ['analytics', 'Mainnet'],
    ] as const) {
      await page.goto('/#/keys/new');
      await page.getByRole('heading', { name: 'New API key' }).waitFor();
      await page.getByLabel('Name').fill(name);
      await page.getByRole('radio', { name: network }).check();
      await page.getByRole('button', { name: 'Create API key' }).click();
      await page.getByRole('heading', { name, exact: true }).waitFor();
    }
    await page.goto('/#/keys');
    await page.getByRole('link', { name: 'analytics' }).waitFor();
    expect(await page.getByTestId('key-count').textContent()).toBe('4 of 4 keys used.');
    expect(await page.getByTestId('usage-used').textContent()).toBe('1');
    await shot('keys-list');
    // The 5th is refused with the server's limit message.
    await page.getByRole('link', { name: 'New API key' }).click();
    await page.getByLabel('Name').fill('one too many');
    await page.getByRole('button', { name: 'Create API key' }).click();
    await expect
      .poll(() => page.getByRole('alert').textContent())
      .toBe('Limit reached: at most 4 network API keys per user; delete one first');
    await shot('new-key-5th-refused');

    // Delete a key (confirmed): it stops working.
    await page.goto('/#/keys');
    await page.getByRole('link', { name: 'indexer' }).click();
    await page.getByRole('button', { name: 'Delete API key' }).click();
    await page.getByRole('button', { name: 'Delete key permanently' }).click();
    await page.getByRole('heading', { name: 'API keys', exact: true }).waitFor();
    await expect.poll(() => page.getByTestId('key-count').textContent()).toBe('3 of 4 keys used.');
    expect((await rpc(keyUrl, 'eth_blockNumber')).status).toBe(401);

    // Delete the app (confirmed): its key stops working.
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Apps' }).click();
    await page.getByRole('link', { name: 'Price dashboard' }).click();
    await page.getByRole('tab', { name: 'Settings' }).click();
    await page.getByRole('button', { name: 'Delete app', exact: true }).click();
    await shot('app-delete-confirm');
    await page.getByRole('button', { name: 'Delete app permanently' }).click();
    await page.getByRole('heading', { name: 'No apps yet' }).waitFor();
    expect((await rpc(rotatedUrl, 'eth_blockNumber')).status).toBe(401);

    // Docs, from the header of every page.
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Docs' }).click();
    await page.waitForURL(/\/docs\//);
    expect(await page.title()).toMatch(/rpcgate|API/i);
    await shot('docs');
    await page.goBack();

    // Log out; a wrong password is refused inline; log in again.
    await page.getByRole('button', { name: 'Log out' }).click();
    await page.getByRole('heading', { name: 'Log in' }).waitFor();
    expect((await context.cookies()).find((c) => c.name === 'rpcgate_session')).toBeUndefined();
    await page.getByLabel('Email').fill('dev@example.com');
    await page.getByLabel('Password').fill('wrong password!');
    await page.getByRole('button', { name: 'Log in' }).click();
    await expect.poll(() => page.getByRole('alert').textContent()).toBe('Invalid email or password');
    await shot('log-in-error');
    await page.getByLabel('Password').fill('correct horse battery');
    await shot('log-in');
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.getByRole('heading', { name: 'Apps', exact: true }).waitFor();

    await metricsJourney();

    // A session that ended elsewhere (cookie gone): the next account API answer is -32016 and the page asks to log in.
    await context.clearCookies();
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Apps' }).click();
    await page.getByRole('heading', { name: 'Log in' }).waitFor();

    expect(offOrigin).toEqual([]);
  }, 300_000);
});

/** The account API from the page (same origin: the session cookie goes along). */
async function pageApi(
  method: string,
  params: unknown[] = [],
): Promise<{ result?: any; error?: { code: number; message: string } }> {
  // eslint-disable-line @typescript-eslint/no-explicit-any
  return page.evaluate(
    async ([m, p]) => {
      const r = await fetch('/api', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: m, params: p }),
      });
      return r.json();
    },
    [method, params] as const,
  );
}

const HOUR = 3_600_000;
const pad2 = (n: number) => String(n).padStart(2, '0');
/** How the dashboard writes an hour bucket (UTC). */
const hourLabel = (ms: number) => {
  const d = new Date(ms);
  return `${d.getUTCFullYear()}-${pad2(d.getUTCMonth() + 1)}-${pad2(d.getUTCDate())} ${pad2(d.getUTCHours())}:00 UTC`;
};

/**
 * A new app and key with known usage, recorded through a real Meter into the service's store at known minutes
 * (the request path is not involved: no real call is made with this app or key, so the numbers are exact).
 */
async function metricsJourney(): Promise<void> {
  const app = (
    await pageApi('apps_create', [
      { name: 'Metrics demo', useCase: 'Analytics', chain: 'ethereum', services: ['node-api'] },
    ])
  ).result;
  const key = (await pageApi('keys_create', [{ name: 'metered', network: 'Mainnet' }])).result;
  const userId = (await pageApi('account_me')).result.id as string;
  expect(app?.id).toMatch(/^app_/);
  expect(key?.id).toMatch(/^key_/);

  const now = Date.now();
  const H = Math.floor(now / HOUR) * HOUR;
  const todayStart = Math.floor(now / (24 * HOUR)) * 24 * HOUR;
  const appP = { kind: 'app' as const, appId: app.id, userId };
  const keyP = { kind: 'key' as const, keyId: key.id, userId };
  type Batch = { at: number; n: number; e: Omit<MeterEvent, 'latencyMs'>; ms: number };
  const batches: Batch[] = [
    // Three hours ago: 36 calls, all ok; 30 of them answered from the response cache.
    {
      at: H - 3 * HOUR + 10 * 60_000,
      n: 30,
      ms: 4,
      e: { principal: appP, network: 'mainnet', method: 'eth_blockNumber', outcome: 'ok', cacheHit: true },
    },
    {
      at: H - 3 * HOUR + 10 * 60_000,
      n: 6,
      ms: 20,
      e: { principal: appP, network: 'mainnet', method: 'eth_call', outcome: 'ok' },
    },
    // Two hours ago: 14 calls, 10 ok, 3 refused by the limit, 1 node error.
    {
      at: H - 2 * HOUR + 5 * 60_000,
      n: 10,
      ms: 6,
      e: { principal: appP, network: 'testnet', method: 'eth_blockNumber', outcome: 'ok' },
    },
    {
      at: H - 2 * HOUR + 5 * 60_000,
      n: 3,
      ms: 0.5,
      e: { principal: appP, network: 'testnet', method: 'eth_getBalance', outcome: 'limit', code: -32005 },
    },
    {
      at: H - 2 * HOUR + 5 * 60_000,
      n: 1,
      ms: 80,
      e: { principal: appP, network: 'mainnet', method: 'eth_call', outcome: 'node_error', code: 3 },
    },
    // The key: 12 calls two hours ago, 6 in the last minute (always today, never in the future).
    {
      at: H - 2 * HOUR + 5 * 60_000,
      n: 12,
      ms: 10,
      e: { principal: keyP, network: 'mainnet', method: 'eth_blockNumber', outcome: 'ok' },
    },
    {
      at: Math.max(todayStart, now - 60_000),
      n: 5,
      ms: 8,
      e: { principal: keyP, network: 'mainnet', method: 'eth_blockNumber', outcome: 'ok' },
    },
    {
      at: Math.max(todayStart, now - 60_000),
      n: 1,
      ms: 1,
      e: { principal: keyP, network: 'mainnet', method: 'eth_getLogs', outcome: 'validation', code: -32602 },
    },
  ];
  let clock = 0;
  const meter = new Meter({
    db: svc.store.db,
    methods: Object.keys(nodeMethods),
    units: unitsTable(nodeMethods),
    now: () => clock,
  });
  for (const b of [...batches].sort((x, y) => x.at - y.at)) {
    clock = b.at;
    meter.record({ ...b.e, latencyMs: b.ms, count: b.n });
  }
  await meter.stop();
  const keyToday = batches.filter((b) => b.e.principal === keyP && b.at >= todayStart);
  const keyTodayTotal = keyToday.reduce((s, b) => s + b.n, 0);

  // The Metrics tab opens on the last 24 hours, by hour.
  await page.goto(`/#/apps/${app.id}/metrics`);
  await page.getByRole('heading', { name: 'Metrics', exact: true }).waitFor();
  await page.getByTestId('metrics-summary').waitFor();
  expect(await page.getByRole('button', { name: 'Last 24 hours' }).getAttribute('aria-pressed')).toBe('true');
  expect(await page.getByTestId('metric-total').textContent()).toBe('50');
  expect(await page.getByTestId('metric-success-rate').textContent()).toBe('92.0%');
  expect(await page.getByTestId('metric-errors').textContent()).toBe('4');
  expect(await page.getByTestId('metric-cache-hits').textContent()).toBe('30 (60.0%)');
  // Compute units (x-gateway.units): 40 eth_blockNumber × 10 + 7 eth_call × 26 + 3 eth_getBalance × 20.
  expect(await page.getByTestId('metric-units').textContent()).toBe('642');
  expect(await page.getByTestId('metric-latency').textContent()).toMatch(/^[\d.]+ ms \/ [\d.]+ ms \/ [\d.]+ ms$/);
  // The same numbers as the API's (nothing computed or invented by the page).
  const api = (
    await pageApi('apps_metrics', [
      app.id,
      { from: new Date(H - 23 * HOUR).toISOString(), to: new Date(H + HOUR).toISOString(), granularity: 'hour' },
    ])
  ).result;
  expect(api.summary).toMatchObject({
    total: 50,
    success: 46,
    cacheHits: 30,
    units: 642,
    methods: { eth_blockNumber: 40, eth_call: 7, eth_getBalance: 3 },
    errorsByCode: { '-32005': 3, '3': 1 },
  });
  expect(await page.getByTestId('metric-latency').textContent()).toContain(
    `${api.summary.latencyMs.p50.toFixed(2)} ms`,
  );

  // Four charts, each an accessible image with a title and a description of its values.
  for (const [id, title] of [
    ['chart-success-rate', 'Success rate'],
    ['chart-totals', 'Total requests'],
    ['chart-latency', 'Latency (p50, p95, p99)'],
  ] as const) {
    const svg = page.getByTestId(id);
    expect(await svg.getAttribute('role')).toBe('img');
    expect(await svg.locator('title').first().textContent()).toBe(title);
    expect(await page.getByRole('img', { name: title }).count()).toBe(1);
  }
  expect(await page.getByTestId('chart-totals').locator('desc').textContent()).toMatch(
    /^50 requests in 24 hour buckets/,
  );
  expect(await page.getByTestId('chart-totals').locator('rect.chart-bar').count()).toBe(2);
  expect(await page.getByTestId('chart-latency').locator('circle').count()).toBe(6); // 3 percentiles × 2 hours with calls
  // Calls per method, most first, with exact counts.
  const methodRows = await page.getByTestId('chart-methods').locator('li').allTextContents();
  expect(methodRows.map((r) => r.replace(/\s*\(.*\)$/, ''))).toEqual([
    'eth_blockNumber40',
    'eth_call7',
    'eth_getBalance3',
  ]);
  // The totals chart's data table: the two hours with calls, exactly.
  const totals = page.locator('figure', { has: page.getByTestId('chart-totals') });
  await totals.getByText('Show data table').click();
  const rows = await totals.locator('tbody tr').allTextContents();
  expect(rows).toEqual([`${hourLabel(H - 3 * HOUR)}36`, `${hourLabel(H - 2 * HOUR)}14`]);
  const errs = await page.getByTestId('metrics-errors').locator('tbody tr').allTextContents();
  expect(errs).toEqual(['-32005limit exceeded3', '3from the node1']);
  await shot('app-metrics-charts');
  // At a phone's width the charts scale down without horizontal scrolling.
  await page.setViewportSize({ width: 375, height: 812 });
  expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(375);
  await page.setViewportSize({ width: 1280, height: 860 });

  // Last 30 days by day: the same 50; the last hour has none of them: the empty state.
  await page.getByRole('button', { name: 'Last 30 days' }).click();
  await expect
    .poll(() => page.getByTestId('chart-totals').locator('desc').textContent())
    .toMatch(/^50 requests in 30 day buckets/);
  expect(await page.getByTestId('metric-total').textContent()).toBe('50');

  // The key detail view: today's calls on this key (from the store), the limiter's daily count, the last 24 hours.
  await page.goto(`/#/keys/${key.id}`);
  await page.getByRole('heading', { name: 'metered' }).waitFor();
  await page.getByTestId('key-usage-chart').waitFor();
  expect(await page.getByTestId('key-today-total').textContent()).toBe(String(keyTodayTotal));
  expect(await page.getByTestId('key-today').textContent()).toMatch(
    new RegExp(`^Today: ${keyTodayTotal} calls on this key`),
  );
  expect(await page.getByTestId('usage').textContent()).toMatch(/^Your daily limit: used \d+ of 25,000 requests today/);
  expect(await page.getByTestId('chart-key-totals').locator('desc').textContent()).toMatch(
    /^18 requests in 24 hour buckets/,
  );
  await shot('key-usage');
  await page.goto('/#/keys');
  await expect.poll(() => page.getByTestId(`key-today-${key.id}`).textContent()).toBe(String(keyTodayTotal));

  await page.goto(`/#/apps/${app.id}/metrics`);
  await page.getByTestId('metrics-summary').waitFor();
  await page.getByRole('button', { name: 'Last hour' }).click();
  await page.getByRole('heading', { name: 'No requests in this period' }).waitFor();
  await shot('app-metrics-empty');
}

describe('web route', () => {
  it('serves index.html to browsers (no-cache) and the landing text to others', async () => {
    const html = await fetch(`${svc.url}/`, { headers: { accept: 'text/html' } });
    expect(html.status).toBe(200);
    expect(html.headers.get('content-type')).toContain('text/html');
    expect(html.headers.get('cache-control')).toBe('no-cache');
    expect(html.headers.get('content-security-policy')).toContain("default-src 'self'");
    const text = await html.text();
    expect(text).toContain('<div id="root">');
    const etag = html.headers.get('etag')!;
    expect((await rawGet('/', { accept: 'text/html', 'if-none-match': etag })).status).toBe(304);
    const plain = await fetch(`${svc.url}/`);
    expect(await plain.text()).toContain('/mainnet/v2/<API_KEY>');
    // The node API, /api, /docs/ and /healthz are not shadowed.
    expect((await fetch(`${svc.url}/healthz`)).status).toBe(200);
    expect((await fetch(`${svc.url}/docs/`)).status).toBe(200);
    expect((await fetch(`${svc.url}/`, { method: 'POST', body: '{}' })).status).toBe(404);
  });

  it('serves hashed assets immutable and precompressed by Accept-Encoding', async () => {
    const html = await (await fetch(`${svc.url}/`, { headers: { accept: 'text/html' } })).text();
    const js = html.match(/src="(\/assets\/[^"]+\.js)"/)![1];
    const identity = await rawGet(js, { 'accept-encoding': 'identity' });
    expect(identity.status).toBe(200);
    expect(identity.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(identity.headers['content-encoding']).toBeUndefined();
    expect(identity.headers.vary).toBe('Accept-Encoding');
    const br = await rawGet(js, { 'accept-encoding': 'gzip, deflate, br' });
    expect(br.headers['content-encoding']).toBe('br');
    expect(br.body.length).toBeLessThan(identity.body.length / 3);
    const { brotliDecompressSync, gunzipSync } = await import('node:zlib');
    expect(brotliDecompressSync(br.body).equals(identity.body)).toBe(true);
    const gz = await rawGet(js, { 'accept-encoding': 'gzip, br;q=0' });
    expect(gz.headers['content-encoding']).toBe('gzip');
    expect(gunzipSync(gz.body).equals(identity.body)).toBe(true);
  });

  it('never leaves the built folder', async () => {
    for (const path of [
      '/assets/../package.json',
      '/assets/..%2f..%2fpackage.json',
      '/assets/%2e%2e/%2e%2e/package.json',
      '/assets/',
      '/assets/nope.js',
      '/assets/.build-stamp',
    ]) {
      const r = await rawGet(path);
      expect(r.status, path).toBe(404);
      expect(r.body.toString()).not.toContain('"name": "rpcgate"');
    }
  });
});
