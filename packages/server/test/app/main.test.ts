import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { childEnv } from '@svc/tools/child-process';
import { decodeJwt } from 'jose';
import { afterAll, describe, expect, test } from 'vitest';
import { signAssertion } from '../../src/auth/assertion.js';

const MAIN = fileURLToPath(new URL('../../dist/main.js', import.meta.url));

/** Starts the built server and resolves with its API base URL from the "listening" line. */
function start(env: Record<string, string>): Promise<{ child: ChildProcess; output: () => string }> {
  const child = spawn(process.execPath, [MAIN], {
    env: childEnv(env),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (chunk) => (output += chunk));
  child.stderr?.on('data', (chunk) => (output += chunk));
  return new Promise((resolve, reject) => {
    const timer = setInterval(() => {
      if (/listening on/.test(output)) {
        clearInterval(timer);
        resolve({ child, output: () => output });
      }
    }, 50);
    child.once('exit', (code) => {
      clearInterval(timer);
      reject(new Error(`svc-server exited with ${code}: ${output}`));
    });
  });
}

describe('svc-server (dist/main.js), PGlite on disk', () => {
  const children: ChildProcess[] = [];
  afterAll(() => {
    for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
  });

  test.runIf(existsSync(MAIN))(
    'PORT=0: bootstraps; tokens and the key file name the real bound address; SIGTERM stops cleanly',
    async () => {
      const dir = await mkdtemp(join(tmpdir(), 'svc-main-'));
      const keyFilePath = join(dir, 'bootstrap-key.json');
      const { child, output } = await start({
        PORT: '0',
        SVC_DATA_DIR: join(dir, 'data'),
        SVC_BOOTSTRAP_KEY_FILE: keyFilePath,
        SVC_BASE_URL: '',
        DATABASE_URL: '',
      });
      children.push(child);
      const base = /API (http:\/\/127\.0\.0\.1:\d+\/v1)/.exec(output())?.[1];
      expect(base).toMatch(/:\d+\/v1$/);
      expect(base).not.toContain(':0/');
      expect(output()).toContain(`SVC_KEY_FILE=${keyFilePath} pnpm svc token`);
      const file = JSON.parse(await readFile(keyFilePath, 'utf8'));
      expect(file.base_url).toBe(base);
      const assertion = await signAssertion(file, { tokenUrl: `${file.base_url}/auth/token` });
      const answer = await fetch(`${base}/auth/token`, {
        method: 'POST',
        headers: { authorization: `Bearer ${assertion}` },
      });
      expect(answer.status).toBe(200);
      const { token } = (await answer.json()) as { token: { access_token: string } };
      expect(decodeJwt(token.access_token)).toMatchObject({ iss: base, aud: base });
      const me = await fetch(`${base}/me`, { headers: { authorization: `Bearer ${token.access_token}` } });
      expect(me.status).toBe(200);
      expect(me.headers.get('ratelimit-policy')).toContain('"principal"');
      const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
    },
    90_000,
  );
});
