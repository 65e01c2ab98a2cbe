// `svc computers cp` end to end against the real server app (in process, port 0, the simulated
// driver's files): a file in and out byte for byte, a directory in and out as tar, the JSON file
// commands on what was written, and a stopped computer's refusal.
import { mkdirSync, mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { CliIo } from '../../src/io.js';
import { run } from '../../src/program.js';
import { type RunningService, startApp } from '../support/server.js';

let service: RunningService;
let dir: string;
let env: Record<string, string>;

async function svc(argv: string[], io: Partial<CliIo> = {}) {
  const out: Buffer[] = [];
  let stderr = '';
  const code = await run(argv, {
    env,
    isTTY: false,
    ...io,
    stdout: { write: (chunk: string | Uint8Array) => out.push(Buffer.from(chunk)) },
    stderr: { write: (text: string | Uint8Array) => (stderr += text.toString()) },
  });
  return { code, stdout: Buffer.concat(out), stderr };
}

async function ok(argv: string[], io: Partial<CliIo> = {}) {
  const result = await svc(argv, io);
  // cp says what it moved; nothing else is written.
  expect(result.stderr.replace(/^svc: copied .+ in .+ s \(.+\/s\)\n/m, '')).toBe('');
  expect(result.code).toBe(0);
  return result;
}

describe('svc computers cp against the server', () => {
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'svc-cp-e2e-'));
    service = await startApp(dir);
    env = { SVC_KEY_FILE: service.keyFilePath, SVC_CONFIG_DIR: join(dir, 'config') };
    await ok(['workspaces', 'create', '--name', 'files']);
    await ok([
      'computers',
      'create',
      'files',
      '--name',
      'box',
      '--size',
      'small',
      '--image',
      'ubuntu-2404',
      '--wait',
    ]);
  });
  afterAll(async () => {
    await service?.close();
  });

  test('a file goes in and comes out byte for byte, with its mode', async () => {
    const bytes = Buffer.from(Array.from({ length: 3 * 1024 * 1024 }, (_, i) => (i * 7) % 256));
    writeFileSync(join(dir, 'data.bin'), bytes, { mode: 0o640 });
    await ok(['computers', 'cp', join(dir, 'data.bin'), 'files/box:/home/svc/']);
    const home = await ok([
      '--json',
      'computers',
      'get-file',
      'files',
      'box',
      '--path',
      '/home/svc/data.bin',
    ]);
    expect(JSON.parse(home.stdout.toString())).toMatchObject({ file: { size: bytes.length } });
    const back = join(dir, 'back.bin');
    const refused = await svc([
      'computers',
      'cp',
      join(dir, 'data.bin'),
      'files/box:/home/svc/deep/er/data.bin',
    ]);
    expect(refused.code).toBe(4);
    await ok(['computers', 'cp', '--parents', join(dir, 'data.bin'), 'files/box:/home/svc/deep/er/data.bin']);
    await ok(['computers', 'cp', 'files/box:/home/svc/deep/er/data.bin', back]);
    expect(readFileSync(back).equals(bytes)).toBe(true);
    expect(statSync(back).mode & 0o777).toBe(0o640);
    const stat = await ok([
      '--json',
      'computers',
      'get-file',
      'files',
      'box',
      '--path',
      '/home/svc/deep/er/data.bin',
    ]);
    expect(JSON.parse(stat.stdout.toString())).toMatchObject({
      file: { type: 'file', size: bytes.length, mode: '0640' },
    });
  });

  test('a directory goes in as tar and comes out extracted', async () => {
    mkdirSync(join(dir, 'src', 'lib'), { recursive: true });
    writeFileSync(join(dir, 'src', 'main.c'), 'int main(void) { return 0; }\n');
    writeFileSync(join(dir, 'src', 'lib', 'util.h'), '#pragma once\n');
    await ok(['computers', 'cp', join(dir, 'src'), 'files/box:/home/svc/src']);
    const listed = await ok(['--json', 'computers', 'list-files', 'files', 'box', '--path', '/home/svc/src']);
    const names = (JSON.parse(listed.stdout.toString()) as { files: { name: string }[] }).files.map(
      (f) => f.name,
    );
    expect(names.sort()).toEqual(['lib', 'main.c']);
    await ok(['computers', 'cp', 'files/box:/home/svc/src', join(dir, 'copy')]);
    expect(readFileSync(join(dir, 'copy', 'lib', 'util.h'), 'utf8')).toBe('#pragma once\n');
    expect(readFileSync(join(dir, 'copy', 'main.c'), 'utf8')).toBe('int main(void) { return 0; }\n');
  });

  test('stdout, delete, and a stopped computer refused with 409', async () => {
    await ok(['computers', 'cp', '-', 'files/box:/home/svc/note.txt'], {
      stdin: (async function* () {
        yield Buffer.from('hello\n');
      })(),
    });
    expect((await ok(['computers', 'cp', 'files/box:/home/svc/note.txt', '-'])).stdout.toString()).toBe(
      'hello\n',
    );
    await ok(['computers', 'delete-file', 'files', 'box', '--path', '/home/svc/note.txt']);
    expect((await svc(['computers', 'cp', 'files/box:/home/svc/note.txt', '-'])).code).toBe(4);
    await ok(['computers', 'stop', 'files', 'box', '--wait']);
    const refused = await svc(['computers', 'cp', 'files/box:/home/svc/src/main.c', '-']);
    expect(refused.code).toBe(5);
    expect(refused.stderr).toContain('code: invalid_state (HTTP 409)');
  });
});
