import { chmod, mkdtemp, readdir, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { KeyFileError, unwrap } from '../src/index.js';
import { createClientFromEnv, readKeyFile } from '../src/node.js';
import { fakeFetch, json, makeKeyFile, tokenBody } from './helpers.js';

async function writeTemp(content: string): Promise<string> {
  const path = join(await mkdtemp(join(tmpdir(), 'svc-client-')), 'key.json');
  await writeFile(path, content);
  await chmod(path, 0o600);
  return path;
}

describe('readKeyFile', () => {
  it('reads a valid key file', async () => {
    const { keyFile } = await makeKeyFile();
    await expect(readKeyFile(await writeTemp(JSON.stringify(keyFile)))).resolves.toEqual(keyFile);
  });

  it.each([
    ['a missing file', null, 'key_file_unreadable'],
    ['not JSON', 'nope', 'key_file_unreadable'],
    ['the wrong type', JSON.stringify({ type: 'user_key' }), 'invalid_key_file'],
    ['an unsupported algorithm', 'ALG', 'invalid_key_file'],
  ])('rejects %s', async (_name, content, code) => {
    const { keyFile } = await makeKeyFile();
    const text = content === 'ALG' ? JSON.stringify({ ...keyFile, algorithm: 'HS256' }) : content;
    const path = text === null ? '/nonexistent/key.json' : await writeTemp(text);
    const err = await readKeyFile(path).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(KeyFileError);
    expect(err).toMatchObject({ code });
  });
});

describe('createClientFromEnv', () => {
  it('uses SVC_KEY_FILE and lets SVC_BASE_URL override the base URL', async () => {
    const { keyFile } = await makeKeyFile();
    const path = await writeTemp(JSON.stringify(keyFile));
    const server = fakeFetch((_r, seen) =>
      seen.path.endsWith('/auth/token') ? json(200, tokenBody('tok')) : json(200, { identity: {} }),
    );
    const client = await createClientFromEnv({
      env: { SVC_KEY_FILE: path, SVC_BASE_URL: 'http://127.0.0.1:4010' },
      fetch: server.fetch,
    });
    await unwrap(client.GET('/me'));
    expect(server.seen.map((s) => s.path)).toEqual(['/auth/token', '/me']);
    expect(client.baseUrl).toBe('http://127.0.0.1:4010');
  });

  it('fails clearly without SVC_KEY_FILE', async () => {
    await expect(createClientFromEnv({ env: {} })).rejects.toMatchObject({ code: 'key_file_not_configured' });
  });
});

describe('the browser entry', () => {
  it('imports no Node built-in in any module but node.ts', async () => {
    const dir = new URL('../src/', import.meta.url);
    const files = (await readdir(dir, { recursive: true })).filter(
      (f) => f.endsWith('.ts') && f !== 'node.ts',
    );
    expect(files).toContain('index.ts');
    for (const file of files) {
      const text = await readFile(new URL(file, dir), 'utf8');
      expect(text, file).not.toMatch(/from '(node:|fs|path|os|crypto)/);
      expect(text, file).not.toMatch(/\bprocess\./);
    }
  });
});
