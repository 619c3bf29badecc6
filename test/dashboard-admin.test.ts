// The Admin page and the sign-up modes in a real browser (playwright-core driving /usr/bin/chromium, never a downloaded
// browser): a non-admin sees no Admin nav and its admin_ call is refused; an admin searches the accounts, suspends one
// (its key is refused on the node API) and unsuspends it, sets its plan, sees its usage by day and audit trail, creates
// an invite whose link a new user signs up with in a second browser context; a closed deployment's sign-up page says
// so. Screenshots: test-output/screenshots/dashboard-admin-*.png.
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
import { startStubNode, type StubNode } from './helpers/stub-node.js';

const CHROMIUM = '/usr/bin/chromium';
const skipBrowser = !existsSync(CHROMIUM) && !process.env.CI;
if (skipBrowser) console.warn(`[dashboard-admin] ${CHROMIUM} not found: SKIPPED (required when CI is set)`);
const SHOTS = resolve(import.meta.dirname, '..', 'test-output', 'screenshots');
const PW = 'correct horse battery staple';
const ADMIN = `ops-${randomUUID()}@example.com`;

let svc: RunningService;
let stub: StubNode;
let browser: Browser;
const dirs: string[] = [];

const freePort = () =>
  new Promise<number>((ok) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => ok(port));
    });
  });

async function serve(signup: 'invite' | 'closed'): Promise<RunningService> {
  const dataDir = mkdtempSync(join(tmpdir(), 'rpcgate-dashboard-admin-'));
  dirs.push(dataDir);
  const port = await freePort();
  return startService({
    port,
    host: '127.0.0.1',
    logLevel: 'silent',
    devKey: false,
    dataDir,
    publicBaseUrl: `http://127.0.0.1:${port}`,
    accounts: { signup, admins: [ADMIN] },
    plans: { gold: { daily: 1_000_000, maxApps: 50 } },
    durability: { usageFlushIntervalMs: 200 },
    networks: { mainnet: { upstreams: [stub.url] } },
  });
}

beforeAll(async () => {
  if (skipBrowser) return;
  await ensureWebBuilt((m) => console.log(m));
  mkdirSync(SHOTS, { recursive: true });
  stub = await startStubNode();
  svc = await serve('invite');
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--no-first-run'],
  });
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await svc?.stop();
  await stub?.close();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

async function logIn(page: Page, email: string) {
  await page.goto('/#/login');
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(PW);
  await page.getByRole('button', { name: 'Log in' }).click();
  await page.getByRole('heading', { name: /apps/i }).first().waitFor();
}

const call = (url: string) =>
  fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_blockNumber', params: [] }),
  }).then(async (r) => ({ status: r.status, body: (await r.json()) as { error?: { data?: { reason?: string } } } }));

describe.skipIf(skipBrowser)('dashboard Admin page (Chromium)', () => {
  it('non-admin: no Admin nav, admin_ refused; admin: suspend / unsuspend, plan, usage, trail, invite used in a second context', async () => {
    // The first operator (an email of accounts.admins signs up without an invite), and a user it invites.
    const admin = account(svc);
    await admin.request('account_signUp', [{ email: ADMIN, password: PW }]);
    await admin.request('account_logIn', [{ email: ADMIN, password: PW }]);
    const user = `user-${randomUUID()}@example.com`;
    const inv = await admin.request('admin_createInvite', [{ email: user }]);
    const api = account(svc);
    await api.request('account_signUp', [
      { email: user, password: PW, invite: new URL(inv.url).searchParams.get('invite')! },
    ]);
    await api.request('account_logIn', [{ email: user, password: PW }]);
    const key = await api.request('keys_create', [{ name: 'customer', network: 'mainnet' }]);
    const userId = (await api.request('account_me')).id;
    for (let i = 0; i < 3; i++) expect((await call(key.url)).status).toBe(200);

    // A non-admin: no Admin in the nav; #/admin shows no admin page; the API refuses it.
    const plain = await browser.newContext({ viewport: { width: 1280, height: 900 }, baseURL: svc.url });
    const p1 = await plain.newPage();
    await logIn(p1, user);
    expect(await p1.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Admin' }).count()).toBe(0);
    await p1.goto('/#/admin');
    await p1.getByRole('heading', { name: /apps/i }).first().waitFor();
    expect(await p1.getByRole('heading', { name: 'Admin' }).count()).toBe(0);
    const refused = await p1.evaluate(async () => {
      const r = await fetch('/api', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'admin_listAccounts', params: [{}] }),
      });
      return { status: r.status, body: await r.json() };
    });
    expect(refused.status).toBe(403);
    expect(refused.body.error).toMatchObject({ code: -32041, data: { reason: 'admin-only' } });
    await p1.screenshot({ path: join(SHOTS, 'dashboard-admin-01-non-admin.png'), fullPage: true });
    await plain.close();

    // The admin.
    const ops = await browser.newContext({ viewport: { width: 1280, height: 1000 }, baseURL: svc.url });
    const page = await ops.newPage();
    onTestFailed(async () => {
      await page
        .screenshot({ path: join(SHOTS, 'dashboard-admin-failure.png'), fullPage: true })
        .catch(() => undefined);
    });
    await logIn(page, ADMIN);
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Admin' }).click();
    await page.getByRole('heading', { name: 'Admin', exact: true }).waitFor();
    await page.getByTestId(`account-${ADMIN}`).waitFor();
    await page.getByTestId(`account-${user}`).waitFor();
    await page.screenshot({ path: join(SHOTS, 'dashboard-admin-02-accounts.png'), fullPage: true });
    await page.getByLabel('Search accounts').fill(user.slice(0, 13));
    await page.getByRole('button', { name: 'Search', exact: true }).click();
    await expect.poll(() => page.getByTestId('admin-accounts').locator('tbody tr').count()).toBe(1);
    // Today's three calls, once the meter has flushed them.
    await expect
      .poll(async () => (await admin.request('admin_listAccounts', [{ search: user }])).accounts[0]?.usage.today ?? 0, {
        timeout: 10_000,
      })
      .toBe(3);

    // Suspend with a reason: the key is refused; unsuspend: it works again.
    await page.getByRole('button', { name: `Manage ${user}` }).click();
    await page.getByRole('heading', { name: user }).waitFor();
    await page.getByTestId('admin-usage').waitFor();
    expect(await page.getByTestId('admin-usage').locator('tbody tr').first().textContent()).toContain(
      new Date().toISOString().slice(0, 10),
    );
    await page.getByLabel('Reason for suspending').fill('abuse: scraping');
    await page.getByRole('button', { name: 'Suspend account' }).click();
    await expect.poll(() => page.getByTestId('admin-account-status').textContent()).toBe('Suspended: abuse: scraping');
    const off = await call(key.url);
    expect(off.status).toBe(403);
    expect(off.body.error?.data?.reason).toBe('suspended');
    await page.getByTestId('admin-account-trail').getByText('Account suspended by an operator').waitFor();
    await page.screenshot({ path: join(SHOTS, 'dashboard-admin-03-suspended.png'), fullPage: true });
    await page.getByRole('button', { name: 'Unsuspend account' }).click();
    await expect.poll(() => page.getByTestId('admin-account-status').textContent()).toBe('Active');
    expect((await call(key.url)).status).toBe(200);
    await page.getByTestId('admin-account-trail').getByText('Suspension lifted by an operator').waitFor();

    // A plan, and a per-account override over it.
    await page.getByLabel('Plan', { exact: true }).selectOption('gold');
    await page.getByLabel('Per-account override (JSON, empty for none)').fill('{"maxKeys": 7}');
    await page.getByRole('button', { name: 'Save plan' }).click();
    await page.getByText('Plan saved.').waitFor();
    await expect.poll(() => page.getByTestId('admin-account-limits').textContent()).toContain('1,000,000 a day');
    expect(await page.getByTestId('admin-account-limits').textContent()).toContain('7 keys');
    // (The user's own session ended with the suspension.)
    const after = await admin.request('admin_getAccount', [{ userId }]);
    expect(after).toMatchObject({ plan: 'gold', planOverride: { maxKeys: 7 }, suspended: null });
    await page.screenshot({ path: join(SHOTS, 'dashboard-admin-04-plan.png'), fullPage: true });

    // An invite: created, its link copied out, used by a new user in a second browser context.
    await page.getByRole('button', { name: 'Create invite' }).click();
    const link = await page.getByTestId('invite-url').inputValue();
    expect(link.startsWith(`${svc.url}/signup?invite=`)).toBe(true);
    await page.screenshot({ path: join(SHOTS, 'dashboard-admin-05-invite.png'), fullPage: true });
    const fresh = await browser.newContext({ viewport: { width: 1280, height: 860 }, baseURL: svc.url });
    const p2 = await fresh.newPage();
    // Without the link: the page says sign-up is by invite and asks for it.
    await p2.goto('/#/signup');
    await expect.poll(() => p2.getByTestId('signup-mode').textContent()).toMatch(/by invite only/);
    await p2.goto(link);
    await expect.poll(() => p2.getByTestId('signup-mode').textContent()).toMatch(/invite link is filled in/);
    expect(await p2.getByLabel('Invite link').inputValue()).toBe(new URL(link).searchParams.get('invite'));
    const invitee = `invitee-${randomUUID()}@example.com`;
    await p2.getByLabel('Email').fill(invitee);
    await p2.getByLabel('Password').fill(PW);
    await p2.screenshot({ path: join(SHOTS, 'dashboard-admin-06-invited-signup.png'), fullPage: true });
    await p2.getByRole('button', { name: 'Sign up' }).click();
    await p2.getByRole('heading', { name: /apps/i }).first().waitFor();
    expect(await p2.locator('.user-email').textContent()).toBe(invitee);
    await fresh.close();
    // The link works once: a second sign-up with it is refused, the page says why.
    const third = await browser.newContext({ baseURL: svc.url });
    const p3 = await third.newPage();
    await p3.goto(link);
    await p3.getByLabel('Email').fill(`late-${randomUUID()}@example.com`);
    await p3.getByLabel('Password').fill(PW);
    await p3.getByRole('button', { name: 'Sign up' }).click();
    await expect.poll(() => p3.getByRole('alert').first().textContent()).toMatch(/invite is not valid/);
    await third.close();

    // Back on the Admin page: the invite is used, and the trail names the sign-up.
    await page.reload();
    await page.getByTestId('admin-invites').getByText('used').first().waitFor();
    await page.getByTestId('admin-trail').getByText(invitee).first().waitFor();
    await page.screenshot({ path: join(SHOTS, 'dashboard-admin-07-trail.png'), fullPage: true });
    await ops.close();
  }, 180_000);

  it('a closed deployment: the sign-up page says so and shows no form', async () => {
    const closed = await serve('closed');
    try {
      const ctx = await browser.newContext({ baseURL: closed.url });
      const page = await ctx.newPage();
      await page.goto('/#/signup');
      await page.getByRole('heading', { name: 'Sign-up is closed' }).waitFor();
      expect(await page.getByRole('button', { name: 'Sign up' }).count()).toBe(0);
      expect(await page.getByLabel('Password').count()).toBe(0);
      await page.screenshot({ path: join(SHOTS, 'dashboard-admin-08-signup-closed.png'), fullPage: true });
      await ctx.close();
    } finally {
      await closed.stop();
    }
  }, 60_000);
});
