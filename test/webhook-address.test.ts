// Quota-alert webhooks go to public addresses only (issue 25 review: server-side request forgery) and their signing
// secrets are stored encrypted. Deliveries here go to a real receiver on 127.0.0.1: refused without
// `allowPrivateWebhooks` — an IP literal, `localhost` resolved by the system, and a made-up public-looking name an
// injected resolver points at 127.0.0.1 (DNS re-pointed after the URL was set) — and delivered with it; that last
// delivery also shows the connection goes to the address the check saw (the name exists in no real DNS).
// The set-time refusals through the account API are rows of test/account-api.test.ts.
import { createHmac, randomBytes } from 'node:crypto';
import type { LookupAddress } from 'node:dns';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { QuotaAlerts, SIGNATURE_HEADER, TIMESTAMP_HEADER } from '../src/gateway/alerts/quota-alerts.js';
import { type Lookup, nonPublicAddress, webhookUrlRefusal } from '../src/gateway/alerts/webhook-address.js';
import { createLimiter, userSubject } from '../src/gateway/limits/index.js';
import { decryptWebhookSecret } from '../src/gateway/secrets/keys.js';
import {
  encryptPlainWebhookSecrets,
  getAlertWebhook,
  openStore,
  setAlertWebhook,
  type Store,
} from '../src/gateway/store/index.js';

describe('nonPublicAddress', () => {
  it.each([
    ['127.0.0.1', 'loopback'],
    ['127.255.0.9', 'loopback'],
    ['::1', 'loopback'],
    ['10.20.30.40', 'RFC 1918'],
    ['172.16.0.1', 'RFC 1918'],
    ['172.31.255.255', 'RFC 1918'],
    ['192.168.0.1', 'RFC 1918'],
    ['fc00::1', 'fc00::/7'],
    ['fd12:3456::1', 'fc00::/7'],
    ['169.254.169.254', 'cloud metadata'],
    ['fe80::1', 'fe80::/10'],
    ['fe80::1%eth0', 'fe80::/10'],
    ['0.0.0.0', 'unspecified'],
    ['::', 'unspecified'],
    ['100.64.0.1', 'carrier-grade NAT'],
    ['100.127.255.254', 'carrier-grade NAT'],
    ['224.0.0.1', 'multicast'],
    ['255.255.255.255', 'broadcast'],
    ['::ffff:10.0.0.1', 'RFC 1918'], // IPv4-mapped
    ['::ffff:7f00:1', 'loopback'], // the same, in hex
    ['::ffff:169.254.169.254', 'cloud metadata'],
    ['64:ff9b::a9fe:a9fe', 'NAT64'],
  ])('%s is refused (%s)', (ip, why) => {
    expect(nonPublicAddress(ip)).toContain(why);
  });

  it.each(['8.8.8.8', '1.1.1.1', '172.32.0.1', '100.128.0.1', '2606:4700:4700::1111', '::ffff:8.8.8.8'])(
    '%s is public',
    (ip) => {
      expect(nonPublicAddress(ip)).toBeUndefined();
    },
  );
});

/** A resolver answering from a table (names absent from it: ENOTFOUND), counting lookups. */
function fakeDns(table: Record<string, string[]>): Lookup & { calls: string[] } {
  const calls: string[] = [];
  const fn = ((host: string, _opts: unknown, cb: (e: Error | null, a: LookupAddress[]) => void) => {
    calls.push(host);
    const addrs = table[host];
    setImmediate(() => {
      if (addrs === undefined) cb(Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' }), []);
      else
        cb(
          null,
          addrs.map((address) => ({ address, family: address.includes(':') ? 6 : 4 })),
        );
    });
  }) as unknown as Lookup & { calls: string[] };
  fn.calls = calls;
  return fn;
}

describe('webhookUrlRefusal (set time)', () => {
  const dns = fakeDns({
    'hooks.public.test': ['93.184.216.34'],
    'rebind.public.test': ['93.184.216.34', '10.0.0.7'],
    'metadata.public.test': ['169.254.169.254'],
  });
  const refusal = (url: string, allowPrivate = false) => webhookUrlRefusal(new URL(url), { allowPrivate, lookup: dns });

  it('refuses IP literals, localhost and names resolving to a non-public address, saying which', async () => {
    expect(await refusal('http://127.0.0.1:9/x')).toMatch(/^127\.0\.0\.1 is loopback/);
    expect(await refusal('http://2130706433/')).toMatch(/^127\.0\.0\.1 is loopback/); // URL normalises it
    expect(await refusal('http://[::1]/')).toMatch(/loopback/);
    expect(await refusal('https://[::ffff:192.168.1.1]/')).toMatch(/RFC 1918/);
    expect(await refusal('http://169.254.169.254/latest/meta-data/')).toMatch(/cloud metadata/);
    expect(await refusal('http://localhost:8080/')).toMatch(/loopback name/);
    expect(await refusal('http://api.localhost/')).toMatch(/loopback name/);
    expect(await refusal('https://metadata.public.test/')).toMatch(/resolves to 169\.254\.169\.254, link-local/);
    expect(await refusal('https://rebind.public.test/')).toMatch(/resolves to 10\.0\.0\.7, private \(RFC 1918\)/);
  });

  it('accepts a public address, a name resolving to public ones, and one that does not resolve yet', async () => {
    expect(await refusal('https://93.184.216.34/hook')).toBeUndefined();
    expect(await refusal('https://hooks.public.test/hook')).toBeUndefined();
    expect(await refusal('https://unknown.public.test/hook')).toBeUndefined(); // checked again at each delivery
  });

  it('allowPrivateWebhooks accepts them all', async () => {
    expect(await refusal('http://127.0.0.1:9/x', true)).toBeUndefined();
    expect(await refusal('http://localhost/', true)).toBeUndefined();
    expect(await refusal('https://metadata.public.test/', true)).toBeUndefined();
  });
});

describe('deliveries (send time) and the stored secret', () => {
  const SERVER_SECRET = randomBytes(32);
  let dataDir: string;
  let store: Store;
  let server: Server;
  let port: number;
  const got: { host: string; body: string; ts: string; sig: string }[] = [];

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'rpcgate-webhook-address-'));
    store = await openStore({ dataDir });
    server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        got.push({
          host: String(req.headers.host),
          body: Buffer.concat(chunks).toString('utf8'),
          ts: String(req.headers[TIMESTAMP_HEADER]),
          sig: String(req.headers[SIGNATURE_HEADER]),
        });
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
    port = (server.address() as AddressInfo).port;
  });

  afterAll(async () => {
    await new Promise((ok) => server?.close(ok));
    await store?.close();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  /** Crosses 75 % of a fresh user's daily quota with `url` as its webhook; returns what the watcher logged. */
  async function deliverOnce(url: string, opts: { allowPrivate: boolean; lookup?: Lookup; secret?: string }) {
    const userId = `usr_${randomBytes(6).toString('hex')}`;
    const secret = opts.secret ?? `whsec_${randomBytes(12).toString('hex')}`;
    await setAlertWebhook(store.db, SERVER_SECRET, userId, { url, secret }, Date.now());
    const limiter = createLimiter({ a: { perSecond: null }, b: { dailyPerUser: 4 } });
    const warnings: string[] = [];
    const alerts = new QuotaAlerts({
      db: store.db,
      secret: SERVER_SECRET,
      limiter,
      allowPrivateWebhooks: opts.allowPrivate,
      lookup: opts.lookup,
      retryBaseMs: 10,
      logger: { warn: (o, m) => warnings.push(`${m} ${JSON.stringify(o)}`), info: () => {} },
    });
    try {
      await limiter.consume(userSubject(userId), 3);
      alerts.observe([{ principalKind: 'key', principalId: 'key_x', userId }]);
      await alerts.idle();
    } finally {
      await alerts.stop();
      await limiter.close();
    }
    return { warnings, secret };
  }

  it('refuses an IP-literal loopback URL stored before (no connection made), delivers it with the option', async () => {
    const before = got.length;
    const refused = await deliverOnce(`http://127.0.0.1:${port}/hook`, { allowPrivate: false });
    expect(got.length).toBe(before);
    expect(refused.warnings.join('\n')).toMatch(/refused: not a public address.*127\.0\.0\.1 is loopback/);
    const allowed = await deliverOnce(`http://127.0.0.1:${port}/hook`, { allowPrivate: true });
    expect(got.length).toBe(before + 1);
    expect(allowed.warnings).toEqual([]);
  });

  it('refuses a name the system resolves to loopback (localhost), at delivery, without retrying', async () => {
    const before = got.length;
    const { warnings } = await deliverOnce(`http://localhost:${port}/hook`, { allowPrivate: false });
    expect(got.length).toBe(before);
    expect(warnings).toHaveLength(1); // one refusal, no retries, no "gave up"
    expect(warnings[0]).toMatch(/localhost resolves to (127\.0\.0\.1|::1), loopback/);
  });

  it('a public-looking name re-pointed to 127.0.0.1 is refused; with the option it connects to the address checked', async () => {
    const dns = fakeDns({ 'hooks.rebound.test': ['127.0.0.1'] });
    const url = `http://hooks.rebound.test:${port}/hook`;
    const before = got.length;
    const refused = await deliverOnce(url, { allowPrivate: false, lookup: dns });
    expect(got.length).toBe(before);
    expect(refused.warnings.join('\n')).toMatch(/hooks\.rebound\.test resolves to 127\.0\.0\.1, loopback/);
    expect(dns.calls).toEqual(['hooks.rebound.test']);
    // The name is in no real DNS: the delivery arriving means the socket used the injected resolver's answer.
    const allowed = await deliverOnce(url, { allowPrivate: true, lookup: dns });
    expect(got.length).toBe(before + 1);
    expect(got.at(-1)!.host).toBe(`hooks.rebound.test:${port}`);
    const { body, ts, sig } = got.at(-1)!;
    expect(sig).toBe(`sha256=${createHmac('sha256', allowed.secret).update(`${ts}.${body}`).digest('hex')}`);
  });

  it('a name resolving to a public and a private address is refused (every address is checked)', async () => {
    const dns = fakeDns({ 'mixed.public.test': ['93.184.216.34', '127.0.0.1'] });
    const before = got.length;
    const { warnings } = await deliverOnce(`http://mixed.public.test:${port}/hook`, {
      allowPrivate: false,
      lookup: dns,
    });
    expect(got.length).toBe(before);
    expect(warnings.join('\n')).toMatch(/resolves to 127\.0\.0\.1, loopback/);
  });

  it('a redirect is not followed (it could point anywhere): one attempt, not retried', async () => {
    let hits = 0;
    const redirector = createServer((req, res) => {
      hits++;
      req.resume();
      res.writeHead(307, { location: `http://127.0.0.1:${port}/hook` }).end();
    });
    await new Promise<void>((ok) => redirector.listen(0, '127.0.0.1', ok));
    try {
      const before = got.length;
      const { warnings } = await deliverOnce(`http://127.0.0.1:${(redirector.address() as AddressInfo).port}/moved`, {
        allowPrivate: true,
      });
      expect(hits).toBe(1);
      expect(got.length).toBe(before);
      expect(warnings.join('\n')).toMatch(/refused the delivery; not retried.*"status":307/);
    } finally {
      await new Promise((ok) => redirector.close(ok));
    }
  });

  it('stores the signing secret encrypted under the server secret; plain ones written before are encrypted', async () => {
    const userId = `usr_${randomBytes(6).toString('hex')}`;
    const plain = `whsec_${randomBytes(24).toString('base64url')}`;
    await setAlertWebhook(store.db, SERVER_SECRET, userId, { url: 'https://93.184.216.34/h', secret: plain }, 1);
    const row = await store.db
      .selectFrom('alert_webhooks')
      .select('secret')
      .where('user_id', '=', userId)
      .executeTakeFirstOrThrow();
    expect(row.secret).toMatch(/^v1\./);
    expect(row.secret).not.toContain(plain);
    expect(decryptWebhookSecret(SERVER_SECRET, row.secret)).toBe(plain);
    expect(() => decryptWebhookSecret(randomBytes(32), row.secret)).toThrow();
    expect(await getAlertWebhook(store.db, SERVER_SECRET, userId)).toEqual({
      url: 'https://93.184.216.34/h',
      secret: plain,
    });

    // A row from before the encryption (plain text): still read, then rewritten encrypted; deliveries sign alike.
    const legacyUser = `usr_${randomBytes(6).toString('hex')}`;
    const legacy = `whsec_${randomBytes(24).toString('base64url')}`;
    await store.db
      .insertInto('alert_webhooks')
      .values({ user_id: legacyUser, url: `http://127.0.0.1:${port}/legacy`, secret: legacy, updated_at: 1 })
      .execute();
    expect((await getAlertWebhook(store.db, SERVER_SECRET, legacyUser))?.secret).toBe(legacy);
    expect(await encryptPlainWebhookSecrets(store.db, SERVER_SECRET)).toBe(1);
    expect(await encryptPlainWebhookSecrets(store.db, SERVER_SECRET)).toBe(0);
    const after = await store.db
      .selectFrom('alert_webhooks')
      .select('secret')
      .where('user_id', '=', legacyUser)
      .executeTakeFirstOrThrow();
    expect(after.secret).toMatch(/^v1\./);
    expect(decryptWebhookSecret(SERVER_SECRET, after.secret)).toBe(legacy);
  });
});
