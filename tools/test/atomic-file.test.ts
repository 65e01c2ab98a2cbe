// Files another process reads are renamed into place: a reader in this process parses every version a
// writer in another process leaves, never a part of one, and a failed write leaves no temporary file.
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { temporaryName, writeFileAtomic, writeFileAtomicSync } from '../atomic-file.mjs';

const work = mkdtempSync(join(tmpdir(), 'atomic-file-'));
const module = fileURLToPath(new URL('../atomic-file.mjs', import.meta.url));

afterAll(() => rmSync(work, { recursive: true, force: true }));

describe('writeFileAtomic', () => {
  it('names its temporary file beside the target, hidden, with the same extension', () => {
    const name = temporaryName(join(work, 'dist', 'openapi.json'));
    expect(name.startsWith(join(work, 'dist', '.openapi.'))).toBe(true);
    expect(name.endsWith('.tmp.json')).toBe(true);
    expect(temporaryName(join(work, 'a.json'))).not.toBe(temporaryName(join(work, 'a.json')));
  });

  it('leaves the new content and no temporary file', async () => {
    const dir = join(work, 'plain');
    await writeFileAtomic(join(dir, 'a.json'), '{"a":1}');
    writeFileAtomicSync(join(dir, 'b.json'), '{"b":2}');
    await writeFileAtomic(join(dir, 'a.json'), '{"a":3}');
    expect(readdirSync(dir).sort()).toEqual(['a.json', 'b.json']);
    expect(readFileSync(join(dir, 'a.json'), 'utf8')).toBe('{"a":3}');
  });

  it('removes its temporary file when the rename fails, and says why', async () => {
    const dir = join(work, 'failing');
    mkdirSync(join(dir, 'taken'), { recursive: true });
    await expect(writeFileAtomic(join(dir, 'taken'), 'x')).rejects.toMatchObject({ code: 'EISDIR' });
    expect(() => writeFileAtomicSync(join(dir, 'taken'), 'x')).toThrow(
      expect.objectContaining({ code: 'EISDIR' }),
    );
    expect(readdirSync(dir)).toEqual(['taken']);
  });

  it('never lets a reader in another process see half a file', async () => {
    const target = join(work, 'race', 'bundle.json');
    writeFileAtomicSync(target, JSON.stringify({ version: 0 }));
    // About 1 MiB per version, written 150 times as fast as the writer can.
    const writer = spawn(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        `import { writeFileAtomicSync } from ${JSON.stringify(module)};
         const padding = 'x'.repeat(1 << 20);
         for (let version = 1; version <= 150; version++)
           writeFileAtomicSync(${JSON.stringify(target)}, JSON.stringify({ version, padding }));`,
      ],
      { stdio: 'ignore' },
    );
    const exited = new Promise<number | null>((resolve) => writer.once('exit', resolve));
    let done = false;
    void exited.then(() => {
      done = true;
    });
    const versions = new Set<number>();
    let reads = 0;
    while (!done) {
      versions.add(JSON.parse(readFileSync(target, 'utf8')).version);
      reads += 1;
      await new Promise((resolve) => setImmediate(resolve));
    }
    expect(await exited).toBe(0);
    expect(reads).toBeGreaterThan(10);
    expect(versions.size).toBeGreaterThan(1);
    expect(JSON.parse(readFileSync(target, 'utf8')).version).toBe(150);
    expect(readdirSync(join(work, 'race'))).toEqual(['bundle.json']);
  }, 60_000);
});
