// In-code migration provider (no file-system scanning: works the same from tsx, a bundle or dist/).
// Names sort in apply order; append new migrations here.
import type { Migration, MigrationProvider } from 'kysely';
import type { Dialect } from '../db.js';
import { initial } from './0001_initial.js';

export function migrations(dialect: Dialect): Record<string, Migration> {
  return {
    '0001_initial': initial(dialect),
  };
}

export function migrationProvider(dialect: Dialect): MigrationProvider {
  return { getMigrations: async () => migrations(dialect) };
}
