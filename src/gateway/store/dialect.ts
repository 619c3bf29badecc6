// The store's SQL dialect, in a file of its own: db.ts runs the migrations and every migration branches on the
// dialect, so keeping the type in db.ts made db.ts ↔ migrations an import circle (issue 22).

/** SQLite (a file in dataDir) or PostgreSQL (databaseUrl). */
export type Dialect = 'sqlite' | 'postgres';
