import type { TestProject } from 'vitest/node';
import { startPrism } from '../src/prism.js';
import { type Engine, startServerTarget, unexpectedViolations } from '../src/server-target.js';

/**
 * Against the mock (the default): one Prism on a free port for the whole run. Against a server with
 * no CONTRACT_BASE_URL: the real server (CONTRACT_ENGINE=pglite|postgres, a fresh database) behind
 * `prism proxy`; the run fails at the end if Prism reported a violation the suite did not provoke on
 * purpose (see `unexpectedViolations`). Everything is stopped by its pid.
 */
export default async function setup(project: TestProject): Promise<(() => Promise<void>) | undefined> {
  const target = process.env.CONTRACT_TARGET ?? 'mock';
  if (process.env.CONTRACT_BASE_URL) {
    project.provide('contractBaseUrl', process.env.CONTRACT_BASE_URL);
    project.provide('contractKeyFile', process.env.CONTRACT_KEY_FILE ?? '');
    return undefined;
  }
  if (target === 'mock') {
    const prism = await startPrism();
    project.provide('contractBaseUrl', prism.baseUrl);
    project.provide('contractKeyFile', '');
    return () => prism.stop();
  }
  const engine = (process.env.CONTRACT_ENGINE ?? 'pglite') as Engine;
  if (engine !== 'pglite' && engine !== 'postgres')
    throw new Error(`CONTRACT_ENGINE must be pglite or postgres, not ${engine}`);
  const server = await startServerTarget({ engine });
  process.stdout.write(`contract target: server on ${engine} behind prism proxy, ${server.baseUrl}\n`);
  project.provide('contractBaseUrl', server.baseUrl);
  project.provide('contractKeyFile', server.keyFile);
  return async () => {
    const exchanges = [...server.exchanges];
    await server.stop();
    const provoked = exchanges.filter(
      (e) => e.status >= 400 && e.status < 500 && e.violations.some((v) => v.location[0] === 'request'),
    );
    const bad = exchanges.flatMap((e) =>
      unexpectedViolations(e.status, e.violations).map(
        (v) => `${e.method} ${e.path} -> ${e.status}: ${v.location.join('.')} ${v.message}`,
      ),
    );
    process.stdout.write(
      `\nprism proxy (${engine}): ${exchanges.length} requests; ${provoked.length} invalid on purpose and ` +
        `refused by the server (request violations on a 4xx); ${bad.length} contract violations\n`,
    );
    if (bad.length > 0) {
      // A global teardown that throws does not fail a vitest 4 run (verified): set the exit code instead.
      process.stdout.write(
        `FAIL: Prism reported contract violations:\n${bad.map((b) => `  ${b}`).join('\n')}\n`,
      );
      process.exitCode = 1;
    }
  };
}
