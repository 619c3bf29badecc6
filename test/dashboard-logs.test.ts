// The dashboard's Logs tab in a real browser (playwright-core driving /usr/bin/chromium, never a downloaded browser):
// an app's calls (one succeeds, one fails at the node, one is refused by the app's method allowlist) appear in the
// app's Logs tab; the failed-only filter and the method filter narrow the table; the detail drawer shows the entry's
// upstream, request id and codes; a network key's page shows its own log. Screenshots go to
// test-output/screenshots/logs-*.png.
import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it, onTestFailed } from 'vitest';
import { startService, type RunningService } from '../src/gateway/server/index.js';
import { ensureWebBuilt } from '../src/gateway/web/build.js';
import { account, signUpAndLogIn } from './helpers/account.js';
import { startStubNode, type StubNode } from './helpers/stub-node.js';

const CHROMIUM = '/usr/bin/chromium';
const skipBrowser = !existsSync(CHROMIUM) && !process.env.CI;
if (skipBrowser) console.warn(`[dashboard-logs] ${CHROMIUM} not found: SKIPPED (required when CI is set)`);
const SHOTS = resolve(import.meta.dirname, '..', 'test-output', 'screenshots');

let svc: RunningService;
let stub: StubNode;
let browser: Browser;
let page: Page;
let dataDir: string;

const call = (url: string, method: string, params: unknown[] = []) =>
  fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });

beforeAll(async () => {
  if (skipBrowser) return;
  await ensureWebBuilt((m) => console.log(m));
  mkdirSync(SHOTS, { recursive: true });
  stub = await startStubNode();
  dataDir = mkdtempSync(join(tmpdir(), 'rpcgate-dashboard-logs-'));
  svc = await startService({
    port: 0,
    logLevel: 'silent',
    devKey: false,
    dataDir,
    networks: { mainnet: { upstreams: [stub.url] } },
  });
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--no-first-run'],
  });
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await svc?.stop();
  await stub?.close();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

describe.skipIf(skipBrowser)('dashboard Logs tab (Chromium)', () => {
  it('shows the calls, filters them, opens the detail drawer; the key page has its log', async () => {
    const api = account(svc);
    const email = `${randomUUID()}@example.com`;
    const password = 'dashboard logs password';
    await signUpAndLogIn(api, { email, password });
    const app = await api.request('apps_create', [
      { name: 'Logged dApp', useCase: 'Defi', chain: 'ethereum', services: ['node-api'] },
    ]);
    await api.request('apps_addAllowlistEntry', [app.id, { kind: 'method', value: 'eth_blockNumber' }]);
    await api.request('apps_addAllowlistEntry', [app.id, { kind: 'method', value: 'eth_call' }]);
    const key = await api.request('keys_create', [{ name: 'Backend key', network: 'mainnet' }]);
    const url = app.urls.mainnet as string;
    const ok = await call(url, 'eth_blockNumber');
    const okRid = ok.headers.get('x-request-id');
    await call(url, 'eth_call', [{ to: `0x${'11'.repeat(20)}`, data: '0x' }, 'latest']);
    const refused = await call(url, 'eth_chainId');
    expect(refused.status).toBe(403);
    await call(key.url, 'eth_blockNumber');

    const context = await browser.newContext({ viewport: { width: 1280, height: 860 }, baseURL: svc.url });
    page = await context.newPage();
    onTestFailed(async () => {
      await page.screenshot({ path: join(SHOTS, 'logs-failure.png'), fullPage: true }).catch(() => undefined);
    });
    // Log in through the UI (the session cookie is HttpOnly, set by the server).
    await page.goto('/');
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill(password);
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.getByRole('heading', { name: /apps/i }).first().waitFor();

    await page.goto(`/#/apps/${app.id}/logs`);
    const table = page.getByTestId('logs-table');
    // Within 5 s of the calls (flush every second), the three calls are listed, newest first.
    await expect
      .poll(
        async () => {
          if (!(await table.isVisible())) await page.getByRole('button', { name: 'Refresh' }).click();
          return table.locator('tbody tr').count();
        },
        { timeout: 5000, interval: 500 },
      )
      .toBe(3);
    const methods = await table.locator('tbody tr td:nth-child(3)').allTextContents();
    expect(methods).toEqual(['eth_chainId', 'eth_call', 'eth_blockNumber']);
    await page.screenshot({ path: join(SHOTS, 'logs-01-app-logs.png'), fullPage: true });

    // Failed only: the node error (-32000, HTTP 200) and the allowlist refusal (HTTP 403).
    await page.getByLabel('Outcome').selectOption('error');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await expect.poll(() => table.locator('tbody tr').count()).toBe(2);
    const codes = await table.locator('tbody tr td:nth-child(5)').allTextContents();
    const https = await table.locator('tbody tr td:nth-child(4)').allTextContents();
    expect(https).toEqual(['403', '200']);
    expect(codes[1]).toBe('-32000');
    await page.screenshot({ path: join(SHOTS, 'logs-02-failed-only.png'), fullPage: true });

    // Method filter + drawer.
    await page.getByLabel('Outcome').selectOption('');
    await page.getByLabel('Method').fill('eth_blockNumber');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await expect.poll(() => table.locator('tbody tr').count()).toBe(1);
    await table.locator('tbody tr button').first().click();
    const drawer = page.getByRole('dialog');
    await drawer.waitFor();
    const text = await drawer.textContent();
    expect(text).toContain(okRid!);
    expect(text).toContain(new URL(stub.url).host);
    expect(text).toContain('none (success)');
    await page.screenshot({ path: join(SHOTS, 'logs-03-detail-drawer.png'), fullPage: true });
    await page.getByRole('button', { name: 'Close details' }).click();
    await expect.poll(() => drawer.isVisible()).toBe(false);

    // The network key's page: its own log only.
    await page.goto(`/#/keys/${key.id}`);
    await expect.poll(() => page.getByTestId('logs-table').locator('tbody tr').count(), { timeout: 5000 }).toBe(1);
    expect(await page.getByTestId('logs-table').locator('tbody tr td:nth-child(3)').textContent()).toBe(
      'eth_blockNumber',
    );
    await page.screenshot({ path: join(SHOTS, 'logs-04-key-logs.png'), fullPage: true });
    await context.close();
  }, 120_000);
});
