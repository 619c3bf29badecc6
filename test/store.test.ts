// The store on both dialects: SQLite in a temp dir, PostgreSQL in a fresh database per run.
// PostgreSQL cases skip (with a message) when the server is unreachable and CI is unset; under CI they must run.
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { storeTargets } from './helpers/store-targets.js';
import { hashKey, hashSessionToken } from '../src/gateway/secrets/index.js';
import {
  ConflictError,
  KeyEventFeed,
  LimitError,
  NotFoundError,
  addAllowlistEntry,
  addJwtKey,
  countNetworkKeys,
  createApp,
  createNetworkKey,
  createSession,
  createUser,
  deleteApp,
  deleteNetworkKey,
  deleteSession,
  deleteUser,
  findUserByEmail,
  getApp,
  getNetworkKey,
  getSession,
  getUser,
  listAllowlist,
  listApps,
  listJwtKeys,
  listNetworkKeys,
  loadAccessEntry,
  loadAllActiveKeys,
  migrateToLatest,
  openStore,
  pruneKeyEvents,
  removeAllowlistEntry,
  removeJwtKey,
  rotateAppKey,
  setAllowlist,
  sweepExpiredSessions,
  updateApp,
  updateNetworkKey,
  type AccessEntry,
  type Store,
} from '../src/gateway/store/index.js';

const repoRoot = resolve(fileURLToPath(new URL('..', import.meta.url)));
const secret = randomBytes(32);

// ---- targets ------------------------------------------------------------------------------------------------------

// ---- helpers ------------------------------------------------------------------------------------------------------

const rnd = () => randomBytes(4).toString('hex');
const newUser = (s: Store) => createUser(s.db, { email: `u-${rnd()}@example.com`, passwordHash: '$argon2id$test' });
const appInput = { name: 'My app', description: 'd', useCase: 'Defi', chain: 'ethereum', services: ['node-api'] };

/** What a replica's access index does with the feed: revoke → drop, upsert → reload from the store. */
async function applyEvents(s: Store, feed: KeyEventFeed, index: Map<string, AccessEntry>): Promise<number> {
  const events = await feed.poll();
  for (const e of events) {
    const entry = e.kind === 'revoke' ? undefined : await loadAccessEntry(s.db, e.keyHash);
    if (entry === undefined) index.delete(e.keyHash);
    else index.set(e.keyHash, entry);
  }
  return events.length;
}

const sortEntries = (xs: Iterable<AccessEntry>) => [...xs].sort((a, b) => a.keyHash.localeCompare(b.keyHash));

// ---- the suite, per dialect ---------------------------------------------------------------------------------------

for (const target of await storeTargets('store')) {
  describe.skipIf(target.skip)(`store on ${target.dialect}`, () => {
    let store: Store;
    beforeAll(async () => {
      await target.setup();
      store = await target.open();
    });
    afterAll(async () => {
      await store?.close();
      await target.teardown();
    });

    it('applies migrations at open; opening again is a no-op', async () => {
      expect(store.dialect).toBe(target.dialect);
      const again = await target.open();
      try {
        expect(await migrateToLatest(again.db, again.dialect)).toEqual([]);
        const tables = (await again.db.introspection.getTables()).map((t) => t.name);
        for (const t of ['users', 'sessions', 'apps', 'app_allowlists', 'app_jwt_keys', 'network_keys', 'key_events'])
          expect(tables).toContain(t);
      } finally {
        await again.close();
      }
    });

    it('users: email unique case-insensitively, stored lower-cased', async () => {
      const email = `Alice.${rnd()}@Example.COM`;
      const u = await createUser(store.db, { email: `  ${email} `, passwordHash: 'h1' });
      expect(u.id).toMatch(/^usr_/);
      expect(u.email).toBe(email.toLowerCase());
      await expect(createUser(store.db, { email: email.toUpperCase(), passwordHash: 'h2' })).rejects.toBeInstanceOf(
        ConflictError,
      );
      const found = await findUserByEmail(store.db, email.toLowerCase());
      expect(found).toMatchObject({ id: u.id, passwordHash: 'h1' });
      expect(await getUser(store.db, u.id)).toEqual({
        emailVerifiedAt: 0,
        role: 'user',
        id: u.id,
        email: u.email,
        createdAt: u.createdAt,
      });
      expect(await findUserByEmail(store.db, `nobody-${rnd()}@example.com`)).toBeUndefined();
    });

    it('sessions: stored hashed, expire on lookup, swept', async () => {
      const u = await newUser(store);
      const t0 = Date.now();
      const { token, expiresAt } = await createSession(store.db, u.id, { ttlMs: 60_000, now: t0 });
      expect(expiresAt).toBe(t0 + 60_000);
      const rows = await store.db.selectFrom('sessions').selectAll().where('user_id', '=', u.id).execute();
      expect(rows).toHaveLength(1);
      expect(rows[0].token_hash).toBe(hashSessionToken(token));
      expect(JSON.stringify(rows)).not.toContain(token);

      expect(await getSession(store.db, token, t0 + 59_999)).toMatchObject({ userId: u.id, expiresAt });
      expect(await getSession(store.db, token, t0 + 60_000)).toBeUndefined(); // expired → deleted
      expect(await getSession(store.db, token, t0)).toBeUndefined();
      expect(await getSession(store.db, 'not-a-token')).toBeUndefined();

      const live = await createSession(store.db, u.id, { ttlMs: 60_000, now: t0 });
      await createSession(store.db, u.id, { ttlMs: 1, now: t0 - 10_000 });
      await createSession(store.db, u.id, { ttlMs: 1, now: t0 - 10_000 });
      expect(await sweepExpiredSessions(store.db, t0)).toBeGreaterThanOrEqual(2);
      expect(await getSession(store.db, live.token, t0)).toBeDefined();
      expect(await deleteSession(store.db, live.token)).toBe(true);
      expect(await getSession(store.db, live.token, t0)).toBeUndefined();
    });

    it('apps: CRUD scoped to the owner; another user gets not-found and changes nothing', async () => {
      const alice = await newUser(store);
      const mallory = await newUser(store);
      const app = await createApp(store.db, secret, alice.id, appInput);
      expect(app).toMatchObject({
        userId: alice.id,
        name: 'My app',
        useCase: 'Defi',
        chain: 'ethereum',
        services: ['node-api'],
        requireJwt: false,
        keyRotatedAt: null,
      });
      expect(app.id).toMatch(/^app_/);
      expect(app.key.length).toBeGreaterThanOrEqual(30);
      const row = await store.db.selectFrom('apps').selectAll().where('id', '=', app.id).executeTakeFirstOrThrow();
      expect(row.key_hash).toBe(hashKey(secret, app.key));
      expect(row.key_enc).not.toContain(app.key);

      // the owner
      expect(await getApp(store.db, secret, alice.id, app.id)).toEqual(app);
      expect((await listApps(store.db, secret, alice.id)).map((a) => a.id)).toEqual([app.id]);

      // another user: every operation misses
      expect(await getApp(store.db, secret, mallory.id, app.id)).toBeUndefined();
      expect(await listApps(store.db, secret, mallory.id)).toEqual([]);
      expect(
        await updateApp(store.db, secret, mallory.id, app.id, { name: 'pwned', requireJwt: true }),
      ).toBeUndefined();
      expect(await rotateAppKey(store.db, secret, mallory.id, app.id)).toBeUndefined();
      expect(await deleteApp(store.db, mallory.id, app.id)).toBe(false);
      expect(await getApp(store.db, secret, alice.id, app.id)).toEqual(app); // untouched

      // update
      const upd = await updateApp(store.db, secret, alice.id, app.id, {
        name: 'Renamed',
        services: ['node-api', 'x'],
        requireJwt: true,
      });
      expect(upd).toMatchObject({
        name: 'Renamed',
        services: ['node-api', 'x'],
        requireJwt: true,
        description: 'd',
        key: app.key,
      });

      // rotate: new key works, old key is gone
      const rot = (await rotateAppKey(store.db, secret, alice.id, app.id))!;
      expect(rot.key).not.toBe(app.key);
      expect(rot.keyRotatedAt).not.toBeNull();
      expect(await loadAccessEntry(store.db, hashKey(secret, app.key))).toBeUndefined();
      expect(await loadAccessEntry(store.db, hashKey(secret, rot.key))).toMatchObject({
        accessPoint: 'A',
        appId: app.id,
        userId: alice.id,
      });

      // delete
      expect(await deleteApp(store.db, alice.id, app.id)).toBe(true);
      expect(await getApp(store.db, secret, alice.id, app.id)).toBeUndefined();
      expect(await deleteApp(store.db, alice.id, app.id)).toBe(false);
      expect(await loadAccessEntry(store.db, hashKey(secret, rot.key))).toBeUndefined();
    });

    it('allowlists and JWT keys: CRUD scoped to the app owner; removed with the app', async () => {
      const alice = await newUser(store);
      const mallory = await newUser(store);
      const app = await createApp(store.db, secret, alice.id, appInput);
      const mine = await createApp(store.db, secret, mallory.id, appInput); // mallory's own app

      const o = (await addAllowlistEntry(store.db, alice.id, app.id, 'origin', 'https://*.example.com'))!;
      expect(o).toMatchObject({ appId: app.id, kind: 'origin', value: 'https://*.example.com' });
      expect(await addAllowlistEntry(store.db, alice.id, app.id, 'origin', 'https://*.example.com')).toEqual(o); // idempotent
      await addAllowlistEntry(store.db, alice.id, app.id, 'method', 'eth_call');
      expect(
        await setAllowlist(store.db, alice.id, app.id, 'ip', ['10.0.0.0/8', '127.0.0.1', '127.0.0.1']),
      ).toHaveLength(2);
      expect((await listAllowlist(store.db, alice.id, app.id))!.map((e) => `${e.kind}:${e.value}`).sort()).toEqual(
        ['ip:10.0.0.0/8', 'ip:127.0.0.1', 'method:eth_call', 'origin:https://*.example.com'].sort(),
      );
      expect(await listAllowlist(store.db, alice.id, mine.id)).toBeUndefined(); // not hers
      expect(await listAllowlist(store.db, mallory.id, mine.id)).toEqual([]); // his, empty

      // mallory: on alice's app, and with alice's entry id through his own app
      expect(await addAllowlistEntry(store.db, mallory.id, app.id, 'origin', 'https://evil.test')).toBeUndefined();
      expect(await setAllowlist(store.db, mallory.id, app.id, 'ip', [])).toBeUndefined();
      expect(await listAllowlist(store.db, mallory.id, app.id)).toBeUndefined();
      expect(await removeAllowlistEntry(store.db, mallory.id, app.id, o.id)).toBe(false);
      expect(await removeAllowlistEntry(store.db, mallory.id, mine.id, o.id)).toBe(false);
      expect(await listAllowlist(store.db, alice.id, app.id)).toHaveLength(4);

      expect(await removeAllowlistEntry(store.db, alice.id, app.id, o.id)).toBe(true);
      expect(await setAllowlist(store.db, alice.id, app.id, 'ip', [])).toEqual([]);
      expect((await listAllowlist(store.db, alice.id, app.id))!.map((e) => e.value)).toEqual(['eth_call']);

      // JWT keys
      const pem = '-----BEGIN PUBLIC KEY-----\nMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE\n-----END PUBLIC KEY-----\n';
      const jk = (await addJwtKey(store.db, alice.id, app.id, { alg: 'ES256', publicKeyPem: pem }))!;
      expect(jk).toMatchObject({ appId: app.id, alg: 'ES256', publicKeyPem: pem });
      expect(jk.id).toMatch(/^kid_/);
      expect(await addJwtKey(store.db, mallory.id, app.id, { alg: 'RS256', publicKeyPem: pem })).toBeUndefined();
      expect(await listJwtKeys(store.db, mallory.id, app.id)).toBeUndefined();
      expect(await removeJwtKey(store.db, mallory.id, app.id, jk.id)).toBe(false);
      expect(await removeJwtKey(store.db, mallory.id, mine.id, jk.id)).toBe(false);
      expect(await listJwtKeys(store.db, alice.id, app.id)).toEqual([jk]);
      expect(await listJwtKeys(store.db, mallory.id, mine.id)).toEqual([]);

      // the access principal carries them
      expect(await loadAccessEntry(store.db, hashKey(secret, app.key))).toMatchObject({
        accessPoint: 'A',
        allowlists: { origin: [], ip: [], address: [], method: ['eth_call'] },
        jwtKeys: [{ kid: jk.id, alg: 'ES256', publicKeyPem: pem }],
      });

      expect(await removeJwtKey(store.db, alice.id, app.id, jk.id)).toBe(true);
      expect(await listJwtKeys(store.db, alice.id, app.id)).toEqual([]);

      // cascade: deleting the app removes its rows
      await addJwtKey(store.db, alice.id, app.id, { alg: 'RS256', publicKeyPem: pem });
      expect(await deleteApp(store.db, alice.id, app.id)).toBe(true);
      expect(await store.db.selectFrom('app_allowlists').select('id').where('app_id', '=', app.id).execute()).toEqual(
        [],
      );
      expect(await store.db.selectFrom('app_jwt_keys').select('id').where('app_id', '=', app.id).execute()).toEqual([]);
    });

    it('network keys: CRUD scoped to the owner, lookup by hash', async () => {
      const alice = await newUser(store);
      const mallory = await newUser(store);
      const k = await createNetworkKey(store.db, secret, alice.id, { name: 'main', network: 'mainnet' });
      expect(k).toMatchObject({ userId: alice.id, name: 'main', network: 'mainnet', description: '' });
      expect(k.id).toMatch(/^key_/);
      expect(await getNetworkKey(store.db, secret, alice.id, k.id)).toEqual(k);
      expect(await getNetworkKey(store.db, secret, mallory.id, k.id)).toBeUndefined();
      expect(await listNetworkKeys(store.db, secret, mallory.id)).toEqual([]);
      expect(await updateNetworkKey(store.db, secret, mallory.id, k.id, { name: 'pwned' })).toBeUndefined();
      expect(await deleteNetworkKey(store.db, mallory.id, k.id)).toBe(false);
      expect(await updateNetworkKey(store.db, secret, alice.id, k.id, { description: 'prod' })).toMatchObject({
        name: 'main',
        description: 'prod',
        key: k.key,
      });

      expect(await loadAccessEntry(store.db, hashKey(secret, k.key))).toEqual({
        accessPoint: 'B',
        keyHash: hashKey(secret, k.key),
        keyId: k.id,
        userId: alice.id,
        name: 'main',
        network: 'mainnet',
        account: { suspended: false, plan: null, planOverride: null },
      });
      expect(await loadAccessEntry(store.db, hashKey(secret, 'not-a-key'))).toBeUndefined();
      const all = await loadAllActiveKeys(store.db);
      expect(all.find((e) => e.keyHash === hashKey(secret, k.key))).toMatchObject({ accessPoint: 'B', keyId: k.id });

      await expect(
        createNetworkKey(store.db, secret, 'usr_nobody', { name: 'x', network: 'testnet' }),
      ).rejects.toBeInstanceOf(NotFoundError);
      expect(await deleteNetworkKey(store.db, alice.id, k.id)).toBe(true);
      expect(await loadAccessEntry(store.db, hashKey(secret, k.key))).toBeUndefined();
    });

    it('ten concurrent network-key creates leave exactly 4; the rest get LimitError {limit: 4}', async () => {
      const u = await newUser(store);
      const other = await newUser(store);
      // On PostgreSQL: two pools (two "replicas"), 5 concurrent creates each, on separate connections.
      const second = target.dialect === 'postgres' ? await target.open() : store;
      try {
        const results = await Promise.allSettled(
          Array.from({ length: 10 }, (_, i) =>
            createNetworkKey((i % 2 ? second : store).db, secret, u.id, {
              name: `k${i}`,
              network: i % 3 ? 'testnet' : 'mainnet',
            }),
          ),
        );
        const ok = results.filter((r) => r.status === 'fulfilled');
        const refused = results.flatMap((r) => (r.status === 'rejected' ? [r.reason] : []));
        expect(ok).toHaveLength(4);
        expect(refused).toHaveLength(6);
        for (const e of refused) {
          expect(e).toBeInstanceOf(LimitError);
          expect((e as LimitError).limit).toBe(4);
          expect((e as Error).message).toMatch(/at most 4/);
        }
        expect(await countNetworkKeys(store.db, u.id)).toBe(4);
        expect(await listNetworkKeys(store.db, secret, u.id)).toHaveLength(4);
        // other users are not affected; deleting one frees a slot
        expect((await createNetworkKey(store.db, secret, other.id, { name: 'o', network: 'testnet' })).userId).toBe(
          other.id,
        );
        const [first] = await listNetworkKeys(store.db, secret, u.id);
        expect(await deleteNetworkKey(store.db, u.id, first.id)).toBe(true);
        await createNetworkKey(store.db, secret, u.id, { name: 'again', network: 'testnet' });
        await expect(
          createNetworkKey(store.db, secret, u.id, { name: 'fifth', network: 'testnet' }),
        ).rejects.toBeInstanceOf(LimitError);
      } finally {
        if (second !== store) await second.close();
      }
    });

    it('60 concurrent app creates with a cap of 10 leave exactly 10; the rest get LimitError {what: apps, limit: 10}', async () => {
      const u = await newUser(store);
      // On PostgreSQL: two pools (two "replicas"), 30 concurrent creates each.
      const second = target.dialect === 'postgres' ? await target.open() : store;
      try {
        const app = (i: number) => ({ name: `a${i}`, useCase: 'Defi', chain: 'ethereum', services: ['node-api'] });
        const results = await Promise.allSettled(
          Array.from({ length: 60 }, (_, i) =>
            createApp((i % 2 ? second : store).db, secret, u.id, app(i), { maxPerUser: 10 }),
          ),
        );
        expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(10);
        const refused = results.flatMap((r) => (r.status === 'rejected' ? [r.reason] : []));
        expect(refused).toHaveLength(50);
        for (const e of refused) expect(e).toMatchObject({ name: 'LimitError', what: 'apps', limit: 10 });
        expect(await listApps(store.db, secret, u.id)).toHaveLength(10);
        await expect(createApp(store.db, secret, 'usr_nobody', app(0))).rejects.toBeInstanceOf(NotFoundError);
      } finally {
        if (second !== store) await second.close();
      }
    });

    if (target.dialect === 'sqlite')
      it('SQLite: two processes creating concurrently on one file leave exactly 4 (no SQLITE_BUSY)', async () => {
        const u = await newUser(store);
        const script = join(target.dataDir!, `create-keys-${rnd()}.mts`);
        writeFileSync(
          script,
          `import { openStore, createNetworkKey } from ${JSON.stringify(join(repoRoot, 'src/gateway/store/index.ts'))};
const [dataDir, userId, secretHex] = process.argv.slice(2);
const store = await openStore({ dataDir });
const rs = await Promise.allSettled(Array.from({ length: 5 }, (_, i) =>
  createNetworkKey(store.db, Buffer.from(secretHex, 'hex'), userId, { name: 'p' + i, network: 'testnet' })));
await store.close();
console.log(JSON.stringify(rs.map((r) => (r.status === 'fulfilled' ? 'ok' : r.reason.name + ': ' + r.reason.message))));
`,
        );
        const run = () =>
          promisify(execFile)(
            process.execPath,
            ['--import', 'tsx', script, target.dataDir!, u.id, secret.toString('hex')],
            {
              cwd: repoRoot,
            },
          );
        const outs = await Promise.all([run(), run()]);
        const results = outs.flatMap((o) => JSON.parse(o.stdout.trim().split('\n').pop()!) as string[]);
        expect(results).toHaveLength(10);
        expect(results.filter((r) => r === 'ok')).toHaveLength(4);
        for (const r of results.filter((r) => r !== 'ok')) expect(r).toMatch(/^LimitError: limit reached: at most 4/);
        expect(await countNetworkKeys(store.db, u.id)).toBe(4);
      });

    it("key events keep a second replica's index in sync (create, settings, rotate, delete, user delete)", async () => {
      const replica = await target.open(); // another process/pool reading the same store
      try {
        const feed = new KeyEventFeed(replica.db);
        await feed.start();
        const index = new Map((await loadAllActiveKeys(replica.db)).map((e) => [e.keyHash, e] as const));
        const inSync = async () => {
          await applyEvents(replica, feed, index);
          expect(sortEntries(index.values())).toEqual(sortEntries(await loadAllActiveKeys(store.db)));
        };
        await inSync();
        expect(await feed.poll()).toEqual([]);

        const u = await newUser(store);
        const app = await createApp(store.db, secret, u.id, appInput);
        const nk = await createNetworkKey(store.db, secret, u.id, { name: 'n', network: 'testnet' });
        const evs = await feed.poll();
        expect(evs.map((e) => [e.kind, e.keyHash])).toEqual([
          ['upsert', hashKey(secret, app.key)],
          ['upsert', hashKey(secret, nk.key)],
        ]);
        expect(evs[1].id).toBeGreaterThan(evs[0].id);
        for (const e of evs) index.set(e.keyHash, (await loadAccessEntry(replica.db, e.keyHash))!);
        await inSync();

        await addAllowlistEntry(store.db, u.id, app.id, 'origin', 'https://a.example');
        await updateApp(store.db, secret, u.id, app.id, { requireJwt: true, chain: 'rootstock' });
        await inSync();
        expect(index.get(hashKey(secret, app.key))).toMatchObject({
          requireJwt: true,
          chain: 'rootstock',
          allowlists: { origin: ['https://a.example'] },
        });

        const rot = (await rotateAppKey(store.db, secret, u.id, app.id))!;
        const rotEvents = await feed.poll();
        expect(rotEvents.map((e) => [e.kind, e.keyHash])).toEqual([
          ['revoke', hashKey(secret, app.key)],
          ['upsert', hashKey(secret, rot.key)],
        ]);
        for (const e of rotEvents) {
          if (e.kind === 'revoke') index.delete(e.keyHash);
          else index.set(e.keyHash, (await loadAccessEntry(replica.db, e.keyHash))!);
        }
        expect(index.has(hashKey(secret, app.key))).toBe(false);
        await inSync();

        await deleteNetworkKey(store.db, u.id, nk.id);
        await inSync();
        expect(index.has(hashKey(secret, nk.key))).toBe(false);

        // deleting the user revokes everything they had
        const nk2 = await createNetworkKey(store.db, secret, u.id, { name: 'n2', network: 'mainnet' });
        await inSync();
        expect(await deleteUser(store.db, u.id)).toBe(true);
        await inSync();
        expect(index.has(hashKey(secret, rot.key))).toBe(false);
        expect(index.has(hashKey(secret, nk2.key))).toBe(false);
        expect(await getUser(store.db, u.id)).toBeUndefined();

        // a feed started now sees none of the past
        const late = new KeyEventFeed(replica.db);
        await late.start();
        expect(await late.poll()).toEqual([]);
      } finally {
        await replica.close();
      }
    });

    it('key events: pruning deletes only old events', async () => {
      const now = Date.now();
      await store.db
        .insertInto('key_events')
        .values({ key_hash: 'old', kind: 'revoke', at: now - 2 * 86_400_000 })
        .execute();
      await store.db.insertInto('key_events').values({ key_hash: 'new', kind: 'revoke', at: now }).execute();
      expect(await pruneKeyEvents(store.db, 86_400_000, now)).toBeGreaterThanOrEqual(1);
      const left = await store.db
        .selectFrom('key_events')
        .select('key_hash')
        .where('key_hash', 'in', ['old', 'new'])
        .execute();
      expect(left.map((r) => r.key_hash)).toEqual(['new']);
    });

    if (target.dialect === 'postgres')
      it('PostgreSQL: the server ending idle pooled connections is reported, not a crash; the next query reconnects', async () => {
        const errors: Error[] = [];
        const own = await openStore({
          dataDir: '/nonexistent-unused',
          databaseUrl: target.url!,
          onError: (e) => errors.push(e),
        });
        try {
          const pid = (await sql<{ pid: number }>`SELECT pg_backend_pid() AS pid`.execute(own.db)).rows[0].pid;
          // Ended from another session, as a restart or an operator would: the idle client gets an error.
          await sql`SELECT pg_terminate_backend(${pid})`.execute(store.db);
          for (let i = 0; i < 50 && errors.length === 0; i++) await new Promise((r) => setTimeout(r, 20));
          expect(errors.length).toBeGreaterThan(0);
          const again = await sql<{ one: number }>`SELECT 1 AS one`.execute(own.db);
          expect(again.rows[0].one).toBe(1);
        } finally {
          await own.close();
        }
      });

    if (target.dialect === 'postgres')
      it('PostgreSQL: an event that commits after a later id is still delivered; a rolled-back id is given up after the timeout', async () => {
        let clock = Date.now();
        const feed = new KeyEventFeed(store.db, { gapTimeoutMs: 10_000, now: () => clock });
        await feed.start();
        const start = feed.position;
        const newGaps = () => feed.pendingGaps.filter((id) => id > start); // (older gaps: e.g. the pruned ids above)
        const slow = await store.db.startTransaction().execute();
        const rolled = await store.db.startTransaction().execute();
        try {
          await slow.insertInto('key_events').values({ key_hash: 'slow', kind: 'upsert', at: clock }).execute(); // takes id n
          await rolled.insertInto('key_events').values({ key_hash: 'rolled', kind: 'upsert', at: clock }).execute(); // n+1
          await store.db.insertInto('key_events').values({ key_hash: 'fast', kind: 'upsert', at: clock }).execute(); // n+2, committed first
          const first = await feed.poll();
          expect(first.map((e) => e.keyHash)).toEqual(['fast']);
          expect(newGaps()).toHaveLength(2);

          await slow.commit().execute();
          await rolled.rollback().execute();
          clock += 1000;
          const second = await feed.poll();
          expect(second.map((e) => e.keyHash)).toEqual(['slow']);
          expect(second[0].id).toBeLessThan(first[0].id);
          expect(newGaps()).toHaveLength(1);
          expect(await feed.poll()).toEqual([]); // nothing delivered twice
          clock += 10_001;
          await feed.poll();
          expect(feed.pendingGaps).toEqual([]);
        } finally {
          // leave no open transaction behind if an assertion failed midway
          if (!slow.isCommitted && !slow.isRolledBack) await slow.rollback().execute();
          if (!rolled.isCommitted && !rolled.isRolledBack) await rolled.rollback().execute();
        }
      });

    it('stores no plaintext key anywhere', async () => {
      const u = await newUser(store);
      const app = await createApp(store.db, secret, u.id, appInput);
      const nk = await createNetworkKey(store.db, secret, u.id, { name: 'n', network: 'testnet' });
      const dump = JSON.stringify([
        await store.db.selectFrom('apps').selectAll().execute(),
        await store.db.selectFrom('network_keys').selectAll().execute(),
        await store.db.selectFrom('key_events').selectAll().execute(),
      ]);
      expect(dump).not.toContain(app.key);
      expect(dump).not.toContain(nk.key);
      // the raw SQL view agrees with the typed one (timestamps come back as numbers on both dialects)
      const r = await sql<{ created_at: unknown }>`select created_at from apps where id = ${app.id}`.execute(store.db);
      expect(typeof r.rows[0].created_at).toBe('number');
    });
  });
}
