// The dashboard's quota-alert banner in a real browser (playwright-core driving /usr/bin/chromium, never a downloaded
// browser): a user's network keys reach 75 % of the daily quota, the meter flushes, and the signed-in page shows the
// banner (alerts_list); another account's page shows none. Screenshot: test-output/screenshots/dashboard-alert-banner.png.
import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startService, type RunningService } from '../src/gateway/server/index.js';
import { ensureWebBuilt } from '../src/gateway/web/build.js';
import { account, signUpAndLogIn } from './helpers/account.js';
import { startStubNode, type StubNode } from './helpers/stub-node.js';

const CHROMIUM = '/usr/bin/chromium';
const skipBrowser = !existsSync(CHROMIUM) && !process.env.CI;
if (skipBrowser) console.warn(`[dashboard-alerts] ${CHROMIUM} not found: SKIPPED (required when CI is set)`);
const SHOTS = resolve(import.meta.dirname, '..', 'test-output', 'screenshots');

let svc: RunningService;
let stub: StubNode;
let browser: Browser;
let dataDir: string;

beforeAll(async () => {
  if (skipBrowser) return;
  await ensureWebBuilt((m) => console.log(m));
  mkdirSync(SHOTS, { recursive: true });
  stub = await startStubNode();
  dataDir = mkdtempSync(join(tmpdir(), 'rpcgate-dashboard-alerts-'));
  svc = await startService(
    {
      port: 0,
      logLevel: 'silent',
      devKey: false,
      dataDir,
      limits: { b: { dailyPerUser: 8 } },
      networks: { mainnet: { upstreams: [stub.url] } },
    },
    { meter: { flushIntervalMs: 3_600_000 } }, // explicit flushes only
  );
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

async function logIn(email: string, password: string) {
  const context = await browser.newContext({ viewport: { width: 1280, height: 720 }, baseURL: svc.url });
  const page = await context.newPage();
  await page.goto('/');
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Log in' }).click();
  await page.getByRole('heading', { name: /apps/i }).first().waitFor();
  return page;
}

describe.skipIf(skipBrowser)('dashboard quota-alert banner (Chromium)', () => {
  it('shows 75 % of the daily key quota to its account, nothing to another; the webhook is set in Settings', async () => {
    const password = 'dashboard alerts password';
    const email = `${randomUUID()}@example.com`;
    const other = `${randomUUID()}@example.com`;
    const api = account(svc);
    await signUpAndLogIn(api, { email, password });
    await signUpAndLogIn(account(svc), { email: other, password });
    const key = await api.request('keys_create', [{ name: 'Backend key', network: 'mainnet' }]);
    for (let i = 0; i < 6; i++) {
      const r = await fetch(key.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ jsonrpc: '2.0', id: i, method: 'eth_blockNumber', params: [] }),
      });
      expect(r.status).toBe(200);
      await r.arrayBuffer();
    }
    await svc.meter!.flush();
    await svc.alerts!.idle();

    const page = await logIn(email, password);
    const banner = page.getByTestId('alert-banner');
    await banner.waitFor({ timeout: 5000 });
    expect(await banner.textContent()).toContain('API keys: daily quota 75 % used (6 of 8)');
    await page.screenshot({ path: join(SHOTS, 'dashboard-alert-banner.png'), fullPage: true });

    // Settings: a URL into the deployment's own network is refused with the reason; a public one is saved, its signing
    // secret shown once.
    await page.goto('/#/settings');
    await page.getByLabel('Webhook URL').fill('http://127.0.0.1:9/rpcgate-hook');
    await page.getByRole('button', { name: 'Save webhook' }).click();
    await page.getByText(/127\.0\.0\.1 is loopback: webhooks go to public addresses only/).waitFor({ timeout: 5000 });
    await page.screenshot({ path: join(SHOTS, 'dashboard-alert-webhook-refused.png'), fullPage: true });
    expect(await api.request('account_alertWebhook', [])).toEqual({ url: null });
    await page.getByLabel('Webhook URL').fill('https://93.184.216.34/rpcgate-hook');
    await page.getByRole('button', { name: 'Save webhook' }).click();
    const shown = page.getByTestId('webhook-secret');
    await shown.waitFor({ timeout: 5000 });
    expect(await shown.textContent()).toMatch(/whsec_[\w-]{32}/);
    expect(await api.request('account_alertWebhook', [])).toEqual({ url: 'https://93.184.216.34/rpcgate-hook' });
    await page.screenshot({ path: join(SHOTS, 'dashboard-alert-webhook-settings.png'), fullPage: true });

    const otherPage = await logIn(other, password);
    await otherPage.waitForLoadState('networkidle');
    expect(await otherPage.getByTestId('alert-banner').count()).toBe(0);
  });
});
