// Runs the Redocly CLI that this package pins, with its phone-home switched off.
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

/**
 * Environment every Redocly call gets. `REDOCLY_TELEMETRY=off` stops the usage report that
 * Redocly CLI 2 sends after each command (the other switch is `telemetry: off` in redocly.yaml);
 * `REDOCLY_SUPPRESS_NOTIFICATIONS=true` stops the npm registry update check.
 *
 * @example
 * spawnSync('redocly', ['lint'], { env: { ...process.env, ...REDOCLY_ENV } });
 */
export const REDOCLY_ENV = Object.freeze({
  REDOCLY_TELEMETRY: 'off',
  REDOCLY_SUPPRESS_NOTIFICATIONS: 'true',
});

const require = createRequire(import.meta.url);
const cliEntry = join(dirname(require.resolve('@redocly/cli/package.json')), 'bin', 'cli.js');

/**
 * Runs `redocly <args>` synchronously and captures its output.
 *
 * @param {string[]} args command line after `redocly`
 * @param {{ cwd: string }} options working directory (Redocly picks up `redocly.yaml` from it)
 * @returns {{ status: number, stdout: string, stderr: string }}
 * @example
 * const { status, stdout } = runRedocly(['score', 'dist/openapi.json', '--format', 'json'], { cwd: 'spec' });
 */
export function runRedocly(args, { cwd }) {
  const result = spawnSync(process.execPath, [cliEntry, ...args], {
    cwd,
    env: { ...process.env, ...REDOCLY_ENV },
    encoding: 'utf8',
    maxBuffer: 256 * 1024 * 1024,
  });
  if (result.error) throw result.error;
  return { status: result.status ?? 1, stdout: result.stdout, stderr: withoutBanner(result.stderr) };
}

/** Drops the boxed "Node.js 20 support is ending" banner that Redocly prints on every run. */
function withoutBanner(text) {
  return text
    .split('\n')
    .filter((line) => !/[╔║╚]/.test(line))
    .join('\n')
    .trim();
}
