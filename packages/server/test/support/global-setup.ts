import { postgresUnreachable, testDatabaseUrl } from '@svc/tools/postgres';
import type { TestProject } from 'vitest/node';
import { type DockerProbe, probeDocker } from './docker-probe.js';

/** What the test files learn about PostgreSQL, probed once per run. */
export interface PostgresProbe {
  url: string;
  reachable: boolean;
  reason: string;
}

declare module 'vitest' {
  export interface ProvidedContext {
    postgres: PostgresProbe;
    docker: DockerProbe;
  }
}

/** Probes `TEST_DATABASE_URL` once, so a missing server costs one timeout, not one per file. */
export default async function setup(project: TestProject): Promise<void> {
  const url = testDatabaseUrl();
  const reason = await postgresUnreachable(url);
  const probe: PostgresProbe = { url, reachable: reason === undefined, reason: reason ?? '' };
  project.provide('postgres', probe);
  // Global setup runs in the main process, like reporters: tell the skip reporter.
  if (!probe.reachable) process.env.SVC_TEST_POSTGRES_UNREACHABLE = probe.reason || 'unreachable';
  project.provide('docker', await probeDocker());
}
