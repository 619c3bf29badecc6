// Account self-service in a real browser (playwright-core driving /usr/bin/chromium, never a downloaded browser), with
// a real SMTP server (test/helpers/mailbox.ts): the Settings page changes the password (the other browser's session
// ends); "Forgot your password?" mails a link, which the browser opens and sets a new password with; the account is
// deleted from Settings (its key is refused at once). Screenshots: test-output/screenshots/account-*.png.
import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it, onTestFailed } from 'vitest';
import { startService, type RunningService } from '../src/gateway/server/index.js';
import { ensureWebBuilt } from '../src/gateway/web/build.js';
import { account } from './helpers/account.js';
import { startMailbox, tokenIn, type Mailbox } from './helpers/mailbox.js';
import { startStubNode, type StubNode } from './helpers/stub-node.js';

const CHROMIUM = '/usr/bin/chromium';
const skipBrowser = !existsSync(CHROMIUM) && !process.env.CI;
if (skipBrowser) console.warn(`[dashboard-account] ${CHROMIUM} not found: SKIPPED (required when CI is set)`);
const SHOTS = resolve(import.meta.dirname, '..', 'test-output', 'screenshots');

let svc: RunningService;
let stub: StubNode;
let mailbox: Mailbox;
let browser: Browser;
let dataDir: string;

/** A free port now, so publicBaseUrl (the base of mailed links and the accepted Origin) can name it before start. */
const freePort = () =>
  new Promise<number>((ok) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => ok(port));
    });
  });

beforeAll(async () => {
  if (skipBrowser) return;
  await ensureWebBuilt((m) => console.log(m));
  mkdirSync(SHOTS, { recursive: true });
  stub = await startStubNode();
  mailbox = await startMailbox();
  dataDir = mkdtempSync(join(tmpdir(), 'rpcgate-dashboard-account-'));
  const port = await freePort();
  svc = await startService({
    port,
    host: '127.0.0.1',
    logLevel: 'silent',
    devKey: false,
    dataDir,
    publicBaseUrl: `http://127.0.0.1:${port}`,
    smtp: { url: mailbox.url, from: 'rpcgate <no-reply@example.test>' },
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
  await mailbox?.close();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

async function logIn(page: Page, email: string, password: string) {
  await page.goto('/#/login');
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Log in' }).click();
  await page.getByRole('heading', { name: /apps/i }).first().waitFor();
}

describe.skipIf(skipBrowser)('dashboard account self-service (Chromium)', () => {
  it('changes the password in Settings, resets a forgotten one by mail, deletes the account', async () => {
    const email = `${randomUUID()}@example.com`;
    const first = 'dashboard first password';
    const second = 'purple otter umbrella lantern';
    const third = 'quiet harbour violin sunrise';
    const elsewhere = account(svc);
    await elsewhere.request('account_signUp', [{ email, password: first }]);
    await elsewhere.request('account_logIn', [{ email, password: first }]);

    const context = await browser.newContext({ viewport: { width: 1280, height: 860 }, baseURL: svc.url });
    const page = await context.newPage();
    onTestFailed(async () => {
      await page.screenshot({ path: join(SHOTS, 'account-failure.png'), fullPage: true }).catch(() => undefined);
    });
    await logIn(page, email, first);

    // Settings: a wrong current password is named at its field; the right one changes it and ends the other session.
    await page.getByRole('link', { name: 'Settings' }).click();
    await page.getByRole('heading', { name: 'Account settings' }).waitFor();
    expect(await page.getByTestId('settings-email').textContent()).toBe(email);
    await page.getByLabel('Current password', { exact: true }).fill('not the password');
    await page.getByLabel('New password', { exact: true }).fill(second);
    await page.getByRole('button', { name: 'Change password' }).click();
    await expect.poll(() => page.getByRole('alert').first().textContent()).toMatch(/current password/i);
    await page.getByLabel('Current password', { exact: true }).fill(first);
    await page.getByRole('button', { name: 'Change password' }).click();
    await page.getByText('1 other session was signed out.').waitFor();
    await page.screenshot({ path: join(SHOTS, 'account-01-password-changed.png'), fullPage: true });
    await expect(elsewhere.request('account_me')).rejects.toMatchObject({ code: -32016 });

    // Forgot password: the mailed link, opened in the browser, sets a new one.
    await page.getByRole('button', { name: 'Log out' }).click();
    await page.getByRole('link', { name: 'Forgot your password?' }).click();
    // The route follows the hashchange event: until the page is there, 'Email' is still the log-in form's field.
    await page.getByRole('heading', { name: 'Reset your password' }).waitFor();
    await page.getByLabel('Email').fill(email);
    await page.getByRole('button', { name: 'Send reset link' }).click();
    await page.getByText(`If an account exists for ${email}`).waitFor();
    await page.screenshot({ path: join(SHOTS, 'account-02-reset-requested.png'), fullPage: true });
    const { link } = tokenIn(await mailbox.next(email), 'reset');
    expect(link.startsWith(`${svc.url}/#/reset/`)).toBe(true);
    await page.goto(link);
    await page.getByLabel('New password', { exact: true }).fill('password');
    await page.getByRole('button', { name: 'Set new password' }).click();
    await expect.poll(() => page.getByRole('alert').first().textContent()).toMatch(/password/i);
    await page.getByLabel('New password', { exact: true }).fill(third);
    await page.getByRole('button', { name: 'Set new password' }).click();
    await page.getByText('Your password was changed').waitFor();
    await page.screenshot({ path: join(SHOTS, 'account-03-password-reset.png'), fullPage: true });
    await page.getByRole('link', { name: 'Log in with your new password' }).click();
    await logIn(page, email, third);

    // Delete the account from Settings: its key is refused at once, the browser is signed out.
    const api = account(svc);
    await api.request('account_logIn', [{ email, password: third }]);
    const key = await api.request('keys_create', [{ name: 'doomed', network: 'mainnet' }]);
    await page.getByRole('link', { name: 'Settings' }).click();
    await page.getByLabel('Your password, to confirm').fill(third);
    await page.screenshot({ path: join(SHOTS, 'account-04-delete.png'), fullPage: true });
    await page.getByRole('button', { name: 'Delete my account permanently' }).click();
    await page.getByRole('heading', { name: 'Create your free account' }).waitFor();
    const r = await fetch(key.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_blockNumber', params: [] }),
    });
    expect(r.status).toBe(401);
    await context.close();
  }, 120_000);
});
