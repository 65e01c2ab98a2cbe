import { eventSnapshotStep } from '../computers/repositories/event-snapshot.js';
import type { Database } from '../platform/db/database.js';
import { migrate } from '../platform/db/migrate.js';
import { type OpenDatabaseOptions, openDatabase } from '../platform/db/open.js';

// The server's schema is its numbered migrations and, after them, what it makes from its own code:
// the event log's snapshot functions, from the wire shapes
// (computers/repositories/event-snapshot.ts). Every way the server opens or migrates its database
// goes through here, so none can leave them out.

/**
 * Opens the configured database and brings its schema up to date: the migrations, then the event
 * log's snapshot functions when they changed.
 *
 * @example
 * const db = await openServerDatabase(loadConfig());
 */
export function openServerDatabase(options: Omit<OpenDatabaseOptions, 'repeatable'>): Promise<Database> {
  return openDatabase({ ...options, repeatable: [eventSnapshotStep()] });
}

/**
 * Brings an open database's schema up to date, as {@link openServerDatabase} does. Returns the
 * versions of the migrations it applied.
 *
 * @example
 * const applied = await migrateServerDatabase(db); // [1, 2, …] on an empty database, [] afterwards
 */
export function migrateServerDatabase(db: Database): Promise<number[]> {
  return migrate(db, undefined, [eventSnapshotStep()]);
}
