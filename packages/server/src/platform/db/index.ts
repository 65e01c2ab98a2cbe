export type { Database, NotificationListener, Queryable, QueryResult } from './database.js';
export type { Migration, RepeatableStep } from './migrate.js';
export { loadMigrations, MigrationError, migrate } from './migrate.js';
export type { OpenDatabaseOptions } from './open.js';
export { openDatabase } from './open.js';
export { openPglite } from './pglite.js';
export { openPostgres } from './postgres.js';
