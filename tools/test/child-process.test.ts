import { spawn } from 'node:child_process';
import { afterEach, describe, expect, test } from 'vitest';
import { childEnv, stopChild } from '../child-process.mjs';

const saved = { DATABASE_URL: process.env.DATABASE_URL, SVC_SECRET_KEY: process.env.SVC_SECRET_KEY };
afterEach(() => {
  for (const [key, value] of Object.entries(saved)) {
    if (value === undefined) delete process.env[key];
    else process.env[key] = value;
  }
});

/** Runs a child Node with `env` and answers the environment it saw. */
function environmentOfChild(env: Record<string, string>): Promise<Record<string, string>> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['-e', 'process.stdout.write(JSON.stringify(process.env))'], {
      env,
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk));
    child.once('error', reject);
    child.once('close', () => resolve(JSON.parse(out)));
  });
}

describe('childEnv', () => {
  test('a child does not see the parent’s DATABASE_URL or other variables', async () => {
    process.env.DATABASE_URL = 'postgres://shared@127.0.0.1:5432/production';
    process.env.SVC_SECRET_KEY = 'parent-secret';
    const seen = await environmentOfChild(childEnv({ PORT: '0' }));
    expect(seen.DATABASE_URL).toBeUndefined();
    expect(seen.SVC_SECRET_KEY).toBeUndefined();
    expect(seen.PORT).toBe('0');
    expect(seen.PATH).toBe(process.env.PATH);
  });

  test('passes the variables the test sets explicitly, and leaves out undefined ones', () => {
    process.env.DATABASE_URL = 'postgres://shared@127.0.0.1:5432/production';
    expect(childEnv({ DATABASE_URL: 'postgres://own/db' }).DATABASE_URL).toBe('postgres://own/db');
    expect(childEnv({ PATH: undefined })).not.toHaveProperty('PATH');
  });
});

describe('stopChild', () => {
  test('SIGTERM stops a child and waits for its exit', async () => {
    const child = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { env: childEnv() });
    await new Promise((resolve) => child.once('spawn', resolve));
    await stopChild(child);
    expect(child.signalCode).toBe('SIGTERM');
  });

  test('SIGKILL after killAfterMs when the child ignores SIGTERM', async () => {
    const child = spawn(
      process.execPath,
      ['-e', "process.on('SIGTERM', () => {}); console.log('ready'); setInterval(() => {}, 1000)"],
      { env: childEnv(), stdio: ['ignore', 'pipe', 'ignore'] },
    );
    await new Promise((resolve) => child.stdout.once('data', resolve));
    await stopChild(child, { killAfterMs: 200 });
    expect(child.signalCode).toBe('SIGKILL');
  });

  test('does nothing for a child that has already exited', async () => {
    const child = spawn(process.execPath, ['-e', ''], { env: childEnv() });
    await new Promise((resolve) => child.once('exit', resolve));
    await expect(stopChild(child)).resolves.toBeUndefined();
  });
});
