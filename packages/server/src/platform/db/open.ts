import type { Database } from './database.js';
import { migrate, type RepeatableStep } from './migrate.js';
import { openPglite } from './pglite.js';
import { type ConnectionBounds, openPostgres } from './postgres.js';

export interface OpenDatabaseOptions {
  /** PostgreSQL when set (`DATABASE_URL`). */
  databaseUrl: string | undefined;
  /** PGlite files when PostgreSQL is not configured; `undefined` keeps PGlite in memory. */
  dataDir: string | undefined;
  /** Pool size on PostgreSQL. */
  poolSize?: number;
  /** The bounds on the database's waits on PostgreSQL (default: the bounds as shipped). */
  dbBounds?: Partial<ConnectionBounds>;
  /** Apply pending migrations (default true). */
  migrate?: boolean;
  /** What to install after the migrations when it changed (the event log's snapshot functions). */
  repeatable?: readonly RepeatableStep[];
}

/**
 * Opens the configured engine and migrates it: PostgreSQL when `databaseUrl` is set, otherwise
 * PGlite (files under `dataDir`, or in memory).
 *
 * @example
 * const config = loadConfig();
 * const db = await openDatabase(config);
 */
export async function openDatabase(options: OpenDatabaseOptions): Promise<Database> {
  const db = options.databaseUrl
    ? await openPostgres(options.databaseUrl, {
        ...(options.poolSize === undefined ? {} : { max: options.poolSize }),
        ...(options.dbBounds === undefined ? {} : { bounds: options.dbBounds }),
      })
    : await openPglite(options.dataDir);
  try {
    if (options.migrate !== false) await migrate(db, undefined, options.repeatable);
  } catch (error) {
    await db.close().catch(() => {});
    throw error;
  }
  return db;
}
