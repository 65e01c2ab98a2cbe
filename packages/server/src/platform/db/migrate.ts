import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import type { Database, Queryable } from './database.js';

/** One versioned SQL file, `NNN_name.sql`. */
export interface Migration {
  version: number;
  name: string;
  sql: string;
  checksum: string;
}

/**
 * SQL the server makes rather than keeps in a file (the event log's snapshot functions): installed
 * after the numbered migrations, in their transaction and under their lock, whenever it differs from
 * what the database last installed under `name`. Its SQL must be re-runnable (`CREATE OR REPLACE`).
 */
export interface RepeatableStep {
  name: string;
  sql: string;
}

/** The migrations directory did not hold what it should, or the database disagrees with it. */
export class MigrationError extends Error {
  override name = 'MigrationError';
}

const FILE = /^(\d{3})_([a-z0-9_]+)\.sql$/;

/**
 * Reads `NNN_name.sql` files from `dir` (default: `migrations/` beside this module, copied into
 * `dist/` at build time), in version order. Versions must be unique and start at 1 without gaps, so
 * two branches adding the same number fail loudly instead of skipping one.
 *
 * @example
 * const migrations = loadMigrations();
 * console.log(migrations.map((m) => m.version)); // [1, ...]
 */
export function loadMigrations(dir: URL = new URL('./migrations/', import.meta.url)): Migration[] {
  const migrations = readdirSync(dir)
    .filter((file) => file.endsWith('.sql'))
    .map((file) => {
      const match = FILE.exec(file);
      if (!match) throw new MigrationError(`migration file ${file} is not named NNN_name.sql`);
      const sql = readFileSync(new URL(file, dir), 'utf8');
      return {
        version: Number(match[1]),
        name: match[2] as string,
        sql,
        checksum: createHash('sha256').update(sql).digest('hex'),
      };
    })
    .sort((a, b) => a.version - b.version);
  migrations.forEach((migration, index) => {
    if (migration.version !== index + 1)
      throw new MigrationError(
        `migration versions must run 1, 2, 3…: found ${migration.version} at position ${index + 1}`,
      );
  });
  return migrations;
}

/**
 * Brings the schema up to date, in one transaction, under `pg_advisory_xact_lock`: when several
 * replicas start at once, one migrates and the others wait, then find nothing to do. An applied
 * migration whose file changed since is an error (edit by adding a new migration, never in place).
 * Then installs each of `repeatable` whose SQL differs from what the database last installed under
 * its name (see {@link RepeatableStep}). Returns the versions it applied.
 *
 * @example
 * const applied = await migrate(db); // [1] on an empty database, [] afterwards
 */
export async function migrate(
  db: Database,
  migrations: Migration[] = loadMigrations(),
  repeatable: readonly RepeatableStep[] = [],
): Promise<number[]> {
  return db.transaction(async (tx) => {
    // A migration may rewrite a large table, and a replica starting beside another waits here for
    // the other's migrations: neither is a request, so the connection's bounds are lifted for it.
    await tx.exec(
      'SET LOCAL statement_timeout = 0; SET LOCAL lock_timeout = 0; SET LOCAL idle_in_transaction_session_timeout = 0',
    );
    await tx.query(`SELECT pg_advisory_xact_lock(hashtext('svc.schema_migrations'))`);
    await tx.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
      version integer PRIMARY KEY,
      name text NOT NULL,
      checksum text NOT NULL,
      applied_at timestamptz NOT NULL DEFAULT now()
    )`);
    const { rows } = await tx.query<{ version: number; checksum: string }>(
      'SELECT version, checksum FROM schema_migrations',
    );
    const done = new Map(rows.map((row) => [row.version, row.checksum]));
    const latest = migrations.at(-1)?.version ?? 0;
    for (const version of done.keys()) {
      if (version > latest)
        throw new MigrationError(
          `the database has migration ${version}, newer than this server knows (${latest})`,
        );
    }
    const applied: number[] = [];
    for (const migration of migrations) {
      const checksum = done.get(migration.version);
      if (checksum !== undefined) {
        if (checksum !== migration.checksum)
          throw new MigrationError(
            `migration ${migration.version}_${migration.name} changed after it was applied`,
          );
        continue;
      }
      await tx.exec(migration.sql);
      await tx.query('INSERT INTO schema_migrations (version, name, checksum) VALUES ($1, $2, $3)', [
        migration.version,
        migration.name,
        migration.checksum,
      ]);
      applied.push(migration.version);
    }
    await installRepeatable(tx, repeatable);
    return applied;
  });
}

/** Installs each step whose checksum differs from the one recorded in `schema_repeatables`. */
async function installRepeatable(tx: Queryable, steps: readonly RepeatableStep[]): Promise<void> {
  if (steps.length === 0) return;
  await tx.exec(`CREATE TABLE IF NOT EXISTS schema_repeatables (
    name text PRIMARY KEY,
    checksum text NOT NULL,
    applied_at timestamptz NOT NULL DEFAULT now()
  )`);
  const { rows } = await tx.query<{ name: string; checksum: string }>(
    'SELECT name, checksum FROM schema_repeatables',
  );
  const installed = new Map(rows.map((row) => [row.name, row.checksum]));
  for (const step of steps) {
    const checksum = createHash('sha256').update(step.sql).digest('hex');
    if (installed.get(step.name) === checksum) continue;
    await tx.exec(step.sql);
    await tx.query(
      `INSERT INTO schema_repeatables (name, checksum) VALUES ($1, $2)
       ON CONFLICT (name) DO UPDATE SET checksum = EXCLUDED.checksum, applied_at = now()`,
      [step.name, checksum],
    );
  }
}
