// Retention runs inside the service: at start (and every 15 minutes) minute rows older than the configured
// retention are rolled up into hour rows — same totals, fewer rows.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { HISTOGRAM_BUCKETS } from '../src/gateway/usage/histogram.js';
import { startService, type RunningService } from '../src/gateway/server/index.js';
import { openStore, upsertUsage, type UsageRow } from '../src/gateway/store/index.js';

const HOUR = 3_600_000;
const dataDir = mkdtempSync(join(tmpdir(), 'rpcgate-retention-'));
let svc: RunningService | undefined;

afterAll(async () => {
  await svc?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

it('the service rolls minutes older than minuteRetentionMs into hours at start; totals are kept', async () => {
  const threeHoursAgo = Math.floor((Date.now() - 3 * HOUR) / HOUR) * HOUR;
  const row = (minute: number, count: number): UsageRow => ({
    ts: threeHoursAgo + minute * 60_000,
    principalKind: 'key',
    principalId: 'key_retention',
    userId: 'usr_retention',
    network: 'mainnet',
    method: 'eth_blockNumber',
    outcome: 'ok',
    code: 0,
    count,
    latencySumMs: count * 2,
    buckets: Array.from({ length: HISTOGRAM_BUCKETS }, (_, i) => (i === 10 ? count : 0)),
  });
  const seed = await openStore({ dataDir });
  await upsertUsage(seed.db, [row(1, 5), row(2, 7), row(59, 1)]);
  await seed.close();

  svc = await startService({
    port: 0,
    logLevel: 'silent',
    dataDir,
    networks: { mainnet: { upstreams: ['http://127.0.0.1:9/'] } },
    usageRetention: { minuteRetentionMs: HOUR },
  });
  const db = svc.store.db;
  let minutes = -1;
  for (let i = 0; i < 100 && minutes !== 0; i++) {
    minutes = (
      await db
        .selectFrom('usage_minute' as never)
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .executeTakeFirstOrThrow()
    ).n;
    if (minutes !== 0) await new Promise((r) => setTimeout(r, 50));
  }
  expect(minutes).toBe(0);
  const hours = await db
    .selectFrom('usage_hour' as never)
    .selectAll()
    .execute();
  expect(hours).toHaveLength(1);
  expect(Number((hours[0] as { count: number }).count)).toBe(13);
  expect(Number((hours[0] as { ts: number }).ts)).toBe(threeHoursAgo);
});
