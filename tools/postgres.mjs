// Throwaway PostgreSQL databases for tests and benchmarks: one of its own per run, created on the
// server of TEST_DATABASE_URL (never DATABASE_URL, which may name a shared database) and dropped
// WITH (FORCE) so a connection a crashed child left open cannot keep it alive.
import { randomBytes } from 'node:crypto';
import pg from 'pg';

/** The admin connection when TEST_DATABASE_URL is unset: local trust, as in the repository's setup. */
export const DEFAULT_TEST_DATABASE_URL = 'postgres://postgres@127.0.0.1:5432/postgres';

/** The admin URL: TEST_DATABASE_URL or local trust. */
export function testDatabaseUrl() {
  return process.env.TEST_DATABASE_URL || DEFAULT_TEST_DATABASE_URL;
}

/** Runs one statement on its own short-lived connection (CREATE/DROP DATABASE cannot run in a pool's transaction). */
async function admin(adminUrl, sql) {
  const client = new pg.Client({ connectionString: adminUrl, connectionTimeoutMillis: 5000 });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

/** Answers why PostgreSQL cannot be reached at `adminUrl`, or `undefined` when it can. */
export async function postgresUnreachable(adminUrl = testDatabaseUrl()) {
  const client = new pg.Client({ connectionString: adminUrl, connectionTimeoutMillis: 2000 });
  try {
    await client.connect();
    await client.query('SELECT 1');
    return undefined;
  } catch (error) {
    return error?.message || String(error);
  } finally {
    await client.end().catch(() => {});
  }
}

/**
 * Creates an empty database named `<prefix>_<pid>_<random>` on the server of `adminUrl` and answers
 * its name, URL and a `drop`.
 *
 * @example
 * const db = await createTestDatabase({ prefix: 'svc_test' });
 * // ... connect to db.url ...
 * await db.drop();
 */
export async function createTestDatabase({ prefix = 'svc_test', adminUrl = testDatabaseUrl() } = {}) {
  if (!/^[a-z_][a-z0-9_]*$/.test(prefix)) throw new Error(`invalid database prefix: ${prefix}`);
  const name = `${prefix}_${process.pid}_${randomBytes(6).toString('hex')}`;
  await admin(adminUrl, `CREATE DATABASE ${name}`);
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return {
    name,
    url: url.href,
    drop: () => admin(adminUrl, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`),
  };
}
