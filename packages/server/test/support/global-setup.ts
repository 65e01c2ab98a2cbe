import pg from 'pg';
import type { TestProject } from 'vitest/node';

/** What the test files learn about PostgreSQL, probed once per run. */
export interface PostgresProbe {
  url: string;
  reachable: boolean;
  reason: string;
}

declare module 'vitest' {
  export interface ProvidedContext {
    postgres: PostgresProbe;
  }
}

/** Probes `TEST_DATABASE_URL` once, so a missing server costs one timeout, not one per file. */
export default async function setup(project: TestProject): Promise<void> {
  const url = process.env.TEST_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/postgres';
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2000 });
  let probe: PostgresProbe;
  try {
    await client.connect();
    await client.query('SELECT 1');
    probe = { url, reachable: true, reason: '' };
  } catch (error) {
    probe = { url, reachable: false, reason: (error as Error).message || String(error) };
  } finally {
    await client.end().catch(() => {});
  }
  project.provide('postgres', probe);
  // Global setup runs in the main process, like reporters: tell the skip reporter.
  if (!probe.reachable) process.env.SVC_TEST_POSTGRES_UNREACHABLE = probe.reason || 'unreachable';
}
