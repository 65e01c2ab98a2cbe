// `pnpm start` as a person runs it, stopped as a terminal's Ctrl-C stops it: SIGINT to the whole
// process group (pnpm, the shell running the script, the server). The server drains and exits 0, and so
// must the rest: no `ELIFECYCLE Command failed` after a clean stop. (The script `exec`s the server, so
// the shell is not left to be killed by the signal and reported by pnpm as a failed command.)
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, test } from 'vitest';
import { childEnv } from '../child-process.mjs';

const root = fileURLToPath(new URL('../..', import.meta.url));

test('Ctrl-C of pnpm start exits 0 and quietly', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-start-'));
  try {
    const child = spawn('pnpm', ['start'], {
      cwd: root,
      // A group of its own, as a terminal's foreground job: the signal goes to every process in it.
      detached: true,
      env: childEnv({
        PORT: '0',
        HOST: '127.0.0.1',
        SVC_DATA_DIR: join(dir, 'data'),
        SVC_BOOTSTRAP_KEY_FILE: join(dir, 'bootstrap-key.json'),
      }),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const listening = new Promise<void>((resolve) =>
      child.stdout.on('data', (chunk: Buffer) => {
        stdout += chunk.toString();
        if (stdout.includes('svc-server listening on')) resolve();
      }),
    );
    const exited = new Promise<{ code: number | null; signal: string | null }>((resolve) =>
      child.on('exit', (code, signal) => resolve({ code, signal })),
    );
    await Promise.race([listening, exited]);
    expect(stdout, stderr).toContain('svc-server listening on');
    process.kill(-(child.pid as number), 'SIGINT');
    const { code, signal } = await exited;
    const output = `${stdout}\n--- stderr ---\n${stderr}`;
    expect({ code, signal }, output).toEqual({ code: 0, signal: null });
    expect(output).not.toContain('ELIFECYCLE');
    expect(stdout).toContain('"message":"stopped"');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}, 240_000);
