// The store suites run once per dialect: SQLite in a temp folder, and PostgreSQL in a scratch database of this run
// (skipped with a message where PostgreSQL is unreachable and CI is unset).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openStore, type Store } from '../../src/gateway/store/index.js';
import { pgReachable, scratchDatabase, skipUnless } from './services.js';

export interface StoreTarget {
  dialect: 'sqlite' | 'postgres';
  skip: boolean;
  setup(): Promise<void>;
  /** Opens a store on the run's database (each call = another "replica" / connection pool). */
  open(): Promise<Store>;
  teardown(): Promise<void>;
  /** SQLite only: the data dir (set by setup). */
  dataDir?: string;
  /** PostgreSQL only: the run's database URL. */
  url?: string;
}

/** One SQLite and one PostgreSQL target; `label` names the suite in the skip message. */
export async function storeTargets(label: string): Promise<StoreTarget[]> {
  const pgSkip = skipUnless(await pgReachable(), label, 'PostgreSQL');
  const sqlite: StoreTarget = {
    dialect: 'sqlite',
    skip: false,
    async setup() {
      sqlite.dataDir = mkdtempSync(join(tmpdir(), `rpcgate-${label}-`));
    },
    open: () => openStore({ dataDir: sqlite.dataDir! }),
    async teardown() {
      if (sqlite.dataDir) rmSync(sqlite.dataDir, { recursive: true, force: true });
    },
  };
  const db = scratchDatabase();
  const pg: StoreTarget = {
    dialect: 'postgres',
    skip: pgSkip,
    url: db.url,
    setup: () => db.create(),
    open: () => openStore({ dataDir: '/nonexistent-unused', databaseUrl: db.url }),
    teardown: () => db.drop(),
  };
  return [sqlite, pg];
}
