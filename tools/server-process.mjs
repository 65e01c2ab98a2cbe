// The built server (`packages/server/dist/main.js`) as a child process for tests: a free port, its
// bootstrap key file in a temp dir, the API address read from its "listening" line, stopped by its pid.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { childEnv, stopChild } from './child-process.mjs';

/** The built server entry, reached by path (packages that the server depends on cannot depend back). */
export const SERVER_MAIN = fileURLToPath(new URL('../packages/server/dist/main.js', import.meta.url));

/** Whether the server is built. */
export const serverBuilt = () => existsSync(SERVER_MAIN);

/**
 * Starts `svc-server` (by default `--sandbox`: in memory, simulated computers) on 127.0.0.1 and a free port.
 *
 * @example
 * const server = await spawnServer({ env: { SVC_SIM_STEP_MS: '50' } });
 * console.log(server.baseUrl, server.keyFilePath);
 * await server.close();
 */
export async function spawnServer({ args = ['--sandbox'], env = {}, startTimeoutMs = 60_000 } = {}) {
  const keyFilePath = join(mkdtempSync(join(tmpdir(), 'svc-server-')), 'bootstrap-key.json');
  const child = spawn(process.execPath, [SERVER_MAIN, ...args], {
    // Only what the server needs: a parent's DATABASE_URL must never reach a sandbox server.
    env: childEnv({
      PORT: '0',
      HOST: '127.0.0.1',
      SVC_BASE_URL: '',
      SVC_BOOTSTRAP_KEY_FILE: keyFilePath,
      SVC_RATE_LIMITS: 'off',
      ...env,
    }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const close = () => stopChild(child);
  const baseUrl = await new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`svc-server did not start in ${startTimeoutMs / 1000} s:\n${output}`)),
      startTimeoutMs,
    );
    const read = (chunk) => {
      output += chunk.toString();
      const match = /\(API (http:\S+\/v1)\)/.exec(output);
      if (match?.[1]) {
        clearTimeout(timer);
        resolve(match[1]);
      }
    };
    child.stdout.on('data', read);
    child.stderr.on('data', read);
    child.once('exit', (code) => reject(new Error(`svc-server exited with ${code}:\n${output}`)));
  }).catch(async (error) => {
    await close();
    throw error;
  });
  return { baseUrl, keyFilePath, close };
}
