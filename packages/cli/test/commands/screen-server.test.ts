// `svc computers screenshot` and `svc computers input` through the built CLI (dist/main.js) against
// the real server app (in process, port 0, the simulated driver, whose screen is a PNG drawn in code):
// the PNG to a file and to stdout, scaled, the pointer after clicks and a drag, a refusal's exit code.
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { type RunningService, startApp } from '../support/server.js';

const MAIN = fileURLToPath(new URL('../../dist/main.js', import.meta.url));
const PNG_SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];

let service: RunningService;
let dir: string;
let env: Record<string, string>;

function svc(argv: string[]): Promise<{ code: number; stdout: Buffer; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [MAIN, ...argv],
      { env: { PATH: process.env.PATH ?? '', ...env }, encoding: 'buffer' },
      (error, stdout, stderr) =>
        resolve({
          code: error ? Number((error as { code?: number }).code ?? 1) : 0,
          stdout,
          stderr: stderr.toString(),
        }),
    );
  });
}
async function ok(argv: string[]) {
  const result = await svc(argv);
  expect(result.code, result.stderr).toBe(0);
  return result;
}
const size = (png: Buffer) => [png.readUInt32BE(16), png.readUInt32BE(20)];

describe('svc computers screenshot and input against the server', () => {
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'svc-screen-e2e-'));
    service = await startApp(dir);
    env = { SVC_KEY_FILE: service.keyFilePath, SVC_CONFIG_DIR: join(dir, 'config') };
    await ok(['workspaces', 'create', '--name', 'screens']);
    for (const [name, image] of [
      ['desk', 'debian-13-desktop'],
      ['plain', 'debian-13'],
    ] as const)
      await ok([
        'computers',
        'create',
        'screens',
        '--name',
        name,
        '--size',
        'small',
        '--image',
        image,
        '--wait',
      ]);
  }, 120_000);
  afterAll(async () => {
    await service?.close();
  });

  test('writes the PNG to a file and says its size and the pointer', async () => {
    const file = join(dir, 'shot.png');
    const { stdout } = await ok(['computers', 'screenshot', 'screens', 'desk', '-o', file]);
    const png = readFileSync(file);
    expect([...png.subarray(0, 8)]).toEqual(PNG_SIGNATURE);
    expect(size(png)).toEqual([1280, 800]);
    expect(stdout.toString()).toMatch(
      new RegExp(`^${file}: ${png.length} bytes; screen 1280x800; pointer at [0-9]+,[0-9]+\\n$`),
    );
  });

  test('-o - writes the picture to stdout, scaled with --width, and the line to stderr', async () => {
    const { stdout, stderr } = await ok([
      'computers',
      'screenshot',
      'screens',
      'desk',
      '-o',
      '-',
      '--width',
      '640',
    ]);
    expect([...stdout.subarray(0, 8)]).toEqual(PNG_SIGNATURE);
    expect(size(stdout)).toEqual([640, 400]);
    expect(stderr).toMatch(/bytes; screen 1280x800; pointer at/);
  });

  test('input: clicks, types, keys and drags in one invocation; the pointer where it was sent', async () => {
    const { stdout } = await ok([
      'computers',
      'input',
      'screens',
      'desk',
      'click',
      '640',
      '400',
      'then',
      'type',
      'hello',
      'then',
      'key',
      'ctrl+s',
      'drag',
      '10',
      '10',
      '300',
      '200',
      'scroll',
      'down',
      '3',
      'wait',
      '50',
    ]);
    expect(stdout.toString()).toBe('pointer at 300,200 (simulated)\n');
    const shot = await ok(['--json', 'computers', 'screenshot', 'screens', 'desk', '-o', join(dir, 'b.png')]);
    expect(JSON.parse(shot.stdout.toString())).toMatchObject({ cursor: { x: 300, y: 200 } });
    const json = await ok(['--json', 'computers', 'input', 'screens', 'desk', 'double-click', '5', '6']);
    expect(JSON.parse(json.stdout.toString())).toMatchObject({
      input: { applied: 1, cursor: { x: 5, y: 6 } },
    });
  });

  test('refusals: a point off the screen (1), no display (5), a word that is no action (2)', async () => {
    const off = await svc(['computers', 'input', 'screens', 'desk', 'click', '2000', '10']);
    expect(off.code).toBe(1);
    expect(off.stderr).toMatch(/code: invalid_argument/);
    const plain = await svc(['computers', 'screenshot', 'screens', 'plain', '-o', join(dir, 'p.png')]);
    expect(plain.code).toBe(5);
    expect(plain.stderr).toMatch(/code: invalid_state/);
    const word = await svc(['computers', 'input', 'screens', 'desk', 'jump']);
    expect(word.code).toBe(2);
    expect(word.stderr).toMatch(/"jump" is no action/);
    const none = await svc(['computers', 'screenshot', 'screens', 'desk']);
    expect(none.code).toBe(2);
    expect(none.stderr).toMatch(/needs -o/);
  });
});
