// `svc computers cp` and the byte operations' own commands against an in-memory files API (the
// files routes as the spec writes them, through the injected fetch): files and directories in and
// out, stdin and stdout, modes, progress only on a terminal, the error envelope, and the archive rules
// an extraction holds to.
import {
  chmodSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readlinkSync,
  statSync,
  symlinkSync,
  truncateSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { extractArchive } from '../../src/files/tar-extract.js';
import type { CliIo } from '../../src/io.js';
import { run } from '../../src/program.js';
import { entriesOf, filesApi, type Node, tarOf } from '../support/files-api.js';

const ENV = { SVC_BASE_URL: 'http://api.test/v1', SVC_ACCESS_TOKEN: 'token' };

/** `svc` in process with bytes on stdin and stdout kept as bytes. */
async function svc(argv: string[], fetch: CliIo['fetch'], io: Partial<CliIo> = {}) {
  const out: Buffer[] = [];
  let stderr = '';
  const code = await run(argv, {
    env: ENV,
    isTTY: false,
    fetch,
    ...io,
    stdout: { write: (chunk: string | Uint8Array) => out.push(Buffer.from(chunk)) },
    stderr: { write: (text: string | Uint8Array) => (stderr += text.toString()) },
  });
  return { code, stdout: Buffer.concat(out), stderr };
}

const scratch = () => mkdtempSync(join(tmpdir(), 'svc-cp-'));
const home = (): Record<string, Node> => ({ '/home/svc': { type: 'directory', mode: '0755' } });

describe('svc computers cp: a file in', () => {
  it('uploads a local file with its permission bits, and -o json prints the FileInfo', async () => {
    const dir = scratch();
    writeFileSync(join(dir, 'run.sh'), 'echo hi\n');
    chmodSync(join(dir, 'run.sh'), 0o750);
    const api = filesApi(home());
    const result = await svc(
      ['computers', 'cp', join(dir, 'run.sh'), 'dev/box:/home/svc/run.sh', '-o', 'json'],
      api.fetch,
    );
    expect(result.stderr).toMatch(/^svc: copied run\.sh: 8 B in \d+\.\d s \(\d.* B\/s\)\n$/);
    expect(result.code).toBe(0);
    expect(api.tree['/home/svc/run.sh']).toMatchObject({ mode: '0750', content: Buffer.from('echo hi\n') });
    const put = api.requests.find((r) => r.method === 'PUT');
    expect(put?.headers.get('content-type')).toBe('application/octet-stream');
    expect(put?.headers.get('content-length')).toBe('8');
    expect(JSON.parse(result.stdout.toString())).toMatchObject({
      file: { path: '/home/svc/run.sh', size: 8 },
    });
  });

  it.each([
    ['into an existing directory', 'dev/box:/home/svc'],
    ['into a path ending in /', 'dev/box:/home/svc/new/'],
  ])('names the file as the local one %s, with --mode and --parents', async (_, target) => {
    const dir = scratch();
    writeFileSync(join(dir, 'notes.txt'), 'n');
    const api = filesApi(home());
    const result = await svc(
      ['computers', 'cp', '--mode', '600', '--parents', join(dir, 'notes.txt'), target],
      api.fetch,
    );
    expect(result.code).toBe(0);
    const put = api.requests.find((r) => r.method === 'PUT');
    expect(put?.url.searchParams.get('path')).toBe(
      `${target.slice('dev/box:'.length).replace(/\/$/, '')}/notes.txt`,
    );
    expect(put?.url.searchParams.get('mode')).toBe('600');
    expect(put?.url.searchParams.get('parents')).toBe('true');
    expect(result.stdout.toString()).toBe('');
  });

  it('uploads stdin as a file with -', async () => {
    const api = filesApi(home());
    const stdin = Readable.from([Buffer.from('from '), Buffer.from('stdin')]);
    const result = await svc(['computers', 'cp', '-', 'dev/box:/home/svc/in.txt'], api.fetch, { stdin });
    expect(result.code).toBe(0);
    expect(api.tree['/home/svc/in.txt']?.content?.toString()).toBe('from stdin');
  });
});

describe('svc computers cp: a directory in', () => {
  it('packs a local directory as tar into a new path, links kept as links', async () => {
    const dir = scratch();
    mkdirSync(join(dir, 'src', 'lib'), { recursive: true });
    writeFileSync(join(dir, 'src', 'main.c'), 'int main;');
    writeFileSync(join(dir, 'src', 'lib', 'a.h'), '#pragma once');
    symlinkSync('main.c', join(dir, 'src', 'link.c'));
    const api = filesApi(home());
    const result = await svc(['computers', 'cp', join(dir, 'src'), 'dev/box:/home/svc/src'], api.fetch);
    expect(result.stderr).toMatch(/^svc: copied src: [\d.]+ KiB in /);
    expect(result.code).toBe(0);
    const put = api.requests.find((r) => r.method === 'PUT');
    expect(put?.url.pathname).toBe('/v1/workspaces/dev/computers/box/files/archive');
    expect(put?.url.searchParams.get('path')).toBe('/home/svc/src');
    expect(put?.headers.get('content-type')).toBe('application/x-tar');
    const entries = await entriesOf(put?.body ?? Buffer.alloc(0));
    expect(entries.map((e) => [e.name, e.type])).toEqual([
      ['lib/', 'directory'],
      ['lib/a.h', 'file'],
      ['link.c', 'symlink'],
      ['main.c', 'file'],
    ]);
    expect(api.tree['/home/svc/src/main.c']?.content?.toString()).toBe('int main;');
  });

  it('goes into a directory of its own name when the target exists', async () => {
    const dir = scratch();
    mkdirSync(join(dir, 'src'));
    writeFileSync(join(dir, 'src', 'a'), 'a');
    const api = filesApi(home());
    expect((await svc(['computers', 'cp', join(dir, 'src'), 'dev/box:/home/svc'], api.fetch)).code).toBe(0);
    expect(api.tree['/home/svc/src/a']?.content?.toString()).toBe('a');
  });

  it('refuses a target whose parent is missing unless --parents', async () => {
    const dir = scratch();
    mkdirSync(join(dir, 'src'));
    const api = filesApi(home());
    const refused = await svc(['computers', 'cp', join(dir, 'src'), 'dev/box:/home/svc/x/y'], api.fetch);
    expect(refused.code).toBe(4);
    expect(refused.stderr).toMatch(/--parents creates it/);
    expect(api.requests.some((r) => r.method === 'PUT')).toBe(false);
    expect(
      (await svc(['computers', 'cp', '--parents', join(dir, 'src'), 'dev/box:/home/svc/x/y'], api.fetch))
        .code,
    ).toBe(0);
  });
});

describe('svc computers cp: out', () => {
  const tree = (): Record<string, Node> => ({
    ...home(),
    '/home/svc/out': { type: 'directory', mode: '0755' },
    '/home/svc/out/report.csv': { type: 'file', content: Buffer.from('a,b\n'), mode: '0640' },
    '/home/svc/out/sub': { type: 'directory', mode: '0755' },
    '/home/svc/out/sub/x.txt': { type: 'file', content: Buffer.from('x'), mode: '0644' },
    '/home/svc/out/latest': { type: 'symlink', mode: '0777', link: 'report.csv' },
  });

  it('downloads a file to a local path with its mode, and into a local directory by its name', async () => {
    const dir = scratch();
    const api = filesApi(tree());
    expect(
      (await svc(['computers', 'cp', 'dev/box:/home/svc/out/report.csv', join(dir, 'r.csv')], api.fetch))
        .code,
    ).toBe(0);
    expect(readFileSync(join(dir, 'r.csv'), 'utf8')).toBe('a,b\n');
    expect(statSync(join(dir, 'r.csv')).mode & 0o777).toBe(0o640);
    expect((await svc(['computers', 'cp', 'dev/box:/home/svc/out/report.csv', dir], api.fetch)).code).toBe(0);
    expect(readFileSync(join(dir, 'report.csv'), 'utf8')).toBe('a,b\n');
  });

  it('writes a file to stdout with -', async () => {
    const api = filesApi(tree());
    const result = await svc(['computers', 'cp', 'dev/box:/home/svc/out/report.csv', '-'], api.fetch);
    expect(result.code).toBe(0);
    expect(result.stdout.toString()).toBe('a,b\n');
  });

  it('extracts a directory into a new local path, or into one of its name inside an existing one', async () => {
    const dir = scratch();
    const api = filesApi(tree());
    expect((await svc(['computers', 'cp', 'dev/box:/home/svc/out', join(dir, 'copy')], api.fetch)).code).toBe(
      0,
    );
    expect(readFileSync(join(dir, 'copy', 'sub', 'x.txt'), 'utf8')).toBe('x');
    expect(readlinkSync(join(dir, 'copy', 'latest'))).toBe('report.csv');
    expect((await svc(['computers', 'cp', 'dev/box:/home/svc/out', dir], api.fetch)).code).toBe(0);
    expect(readFileSync(join(dir, 'out', 'report.csv'), 'utf8')).toBe('a,b\n');
  });

  it('writes a directory to stdout as tar with --archive, and refuses it without', async () => {
    const api = filesApi(tree());
    const result = await svc(['computers', 'cp', '--archive', 'dev/box:/home/svc/out', '-'], api.fetch);
    expect(result.code).toBe(0);
    expect((await entriesOf(result.stdout)).map((e) => e.name)).toContain('out/sub/x.txt');
    const refused = await svc(['computers', 'cp', 'dev/box:/home/svc/out', '-'], api.fetch);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/add --archive/);
  });
});

describe('svc computers cp: failures, usage and progress', () => {
  it('exits with the error envelope’s class and says its code and request id', async () => {
    const dir = scratch();
    writeFileSync(join(dir, 'a'), 'a');
    const api = filesApi(home(), { refuse: [409, 'invalid_state', 'the computer is stopped'] });
    const result = await svc(['computers', 'cp', join(dir, 'a'), 'dev/box:/home/svc/a'], api.fetch);
    expect(result.code).toBe(5);
    expect(result.stderr).toContain('error: the computer is stopped');
    expect(result.stderr).toContain('code: invalid_state (HTTP 409)');
    expect(result.stderr).toContain('request id: req-files');
  });

  it.each([
    [['a', 'b'], /One side is/],
    [['dev/a:/x', 'dev/b:/y'], /two steps/],
    [['--archive', 'a', 'dev/box:/home/svc'], /--archive is for -/],
    [['--mode', '9', 'a', 'dev/box:/home/svc'], /octal/],
  ])('refuses %j as a usage error', async (args, message) => {
    const api = filesApi(home());
    const result = await svc(['computers', 'cp', ...args], api.fetch);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(message);
    expect(api.requests).toHaveLength(0);
  });

  /** Erases the terminal's line (progress is redrawn in place). */
  const erase = '\r\u001b[2K';
  it.each<[boolean, number, string]>([
    [
      true,
      2 * 1024 * 1024,
      `${erase}big  1.0 MiB / 2.0 MiB  50%  1.0 MiB/s${erase}big  2.0 MiB / 2.0 MiB  100%  1.0 MiB/s${erase}svc: copied big: 2.0 MiB in 3.0 s (682.7 KiB/s)\n`,
    ],
    [false, 2 * 1024 * 1024, 'svc: copied big: 2.0 MiB in 1.0 s (2.0 MiB/s)\n'],
    [true, 1024, 'svc: copied big: 1.0 KiB in 1.0 s (1.0 KiB/s)\n'],
  ])('on a terminal %s, %i bytes: progress, then what moved', async (isTTY, size, expected) => {
    const dir = scratch();
    writeFileSync(join(dir, 'big'), Buffer.alloc(size, 1));
    const api = filesApi(home());
    // A clock that moves a second each time it is read: the start, then each line drawn, then the end.
    let clock = 0;
    const result = await svc(['computers', 'cp', join(dir, 'big'), 'dev/box:/home/svc/big'], api.fetch, {
      isTTY,
      now: () => (clock += 1000),
    });
    expect(result.code).toBe(0);
    expect(result.stderr).toBe(expected);
    expect(api.tree['/home/svc/big']?.content?.length).toBe(size);
  });

  it('shows the remote form and examples in its help', async () => {
    const result = await svc(['computers', 'cp', '--help'], filesApi(home()).fetch);
    expect(result.stdout.toString()).toContain('<workspace>/<computer>:<absolute path>');
    expect(result.stdout.toString()).toContain('--archive');
    // The spec's x-svc-max-bytes, not a number typed here.
    expect(result.stdout.toString()).toContain('Uploads take at most 1.0 GiB each');
  });

  it('refuses a local file over the spec’s upload limit before sending anything', async () => {
    const dir = scratch();
    writeFileSync(join(dir, 'huge'), '');
    truncateSync(join(dir, 'huge'), 1024 ** 3 + 1); // sparse: no gigabyte is written
    const api = filesApi(home());
    const result = await svc(['computers', 'cp', join(dir, 'huge'), 'dev/box:/home/svc/huge'], api.fetch);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/an upload takes at most 1.0 GiB/);
    expect(api.requests.filter((r) => r.method === 'PUT')).toHaveLength(0);
  });
});

describe('the byte operations’ own commands', () => {
  it('upload-file sends stdin; download-file writes stdout', async () => {
    const api = filesApi(home());
    const up = await svc(
      ['computers', 'upload-file', 'dev', 'box', '--path', '/home/svc/s.txt', '--mode', '0600', '-o', 'json'],
      api.fetch,
      { stdin: Readable.from([Buffer.from('bytes')]) },
    );
    expect(up.code).toBe(0);
    expect(JSON.parse(up.stdout.toString())).toMatchObject({ file: { size: 5, mode: '0600' } });
    const down = await svc(
      ['computers', 'download-file', 'dev', 'box', '--path', '/home/svc/s.txt'],
      api.fetch,
    );
    expect(down.stdout.toString()).toBe('bytes');
  });

  it('upload-archive sends a tar from stdin; its help says the body is stdin', async () => {
    const api = filesApi(home());
    const stdin = Readable.from([await tarOf([{ name: 'a.txt', content: 'A' }])]);
    const up = await svc(['computers', 'upload-archive', 'dev', 'box', '--path', '/home/svc/t'], api.fetch, {
      stdin,
    });
    expect(up.code).toBe(0);
    expect(api.tree['/home/svc/t/a.txt']?.content?.toString()).toBe('A');
    const help = await svc(['computers', 'upload-archive', '--help'], api.fetch);
    expect(help.stdout.toString()).toMatch(/The body is svc's stdin: an uncompressed tar archive/);
  });
});

describe('extractArchive holds an archive to the server’s rules', () => {
  it.each([
    ['an absolute name', [{ name: '/etc/passwd', content: 'x' }], 'absolute'],
    ['a .. segment', [{ name: 'a/../../evil', content: 'x' }], 'dot_dot'],
    ['a device', [{ name: 'dev', type: 'character-device' as const }], 'special_file'],
    ['a FIFO', [{ name: 'pipe', type: 'fifo' as const }], 'special_file'],
    [
      'a symlink out of the target',
      [{ name: 'up', type: 'symlink' as const, linkname: '../../etc' }],
      'symlink_escape',
    ],
    ['an absolute symlink', [{ name: 'abs', type: 'symlink' as const, linkname: '/etc' }], 'symlink_escape'],
    [
      'an entry under a symlink of the archive',
      [
        { name: 'l', type: 'symlink' as const, linkname: '.' },
        { name: 'l/x', content: 'x' },
      ],
      'under_symlink',
    ],
    [
      'a hard link to nothing earlier',
      [{ name: 'h', type: 'link' as const, linkname: 'nothing' }],
      'hard_link',
    ],
  ])('refuses %s', async (_, entries, rule) => {
    const root = join(scratch(), 'target');
    const error = await extractArchive(Readable.from([await tarOf(entries)]), root).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'bad_archive' });
    expect((error as Error).message).toContain(`rule ${rule}`);
  });

  it('never writes through a symlink already on disk', async () => {
    const dir = scratch();
    const outside = join(dir, 'outside');
    mkdirSync(outside);
    mkdirSync(join(dir, 'target'));
    symlinkSync(outside, join(dir, 'target', 'link'));
    const tarball = await tarOf([{ name: 'link/x', content: 'x' }]);
    await expect(extractArchive(Readable.from([tarball]), join(dir, 'target'))).rejects.toThrow(
      /under_symlink/,
    );
    expect(() => lstatSync(join(outside, 'x'))).toThrow();
  });

  it('extracts files, directories, relative links and hard links to earlier files', async () => {
    const root = join(scratch(), 'target');
    const tarball = await tarOf([
      { name: 'd/', type: 'directory', mode: 0o755 },
      { name: 'd/f', content: 'F', mode: 0o600 },
      { name: 'd/l', type: 'symlink', linkname: 'f' },
      { name: 'h', type: 'link', linkname: 'd/f' },
    ]);
    expect(await extractArchive(Readable.from([tarball]), root)).toEqual({ entries: 4, bytes: 1 });
    expect(readFileSync(join(root, 'h'), 'utf8')).toBe('F');
    expect(statSync(join(root, 'd', 'f')).mode & 0o777).toBe(0o600);
    expect(readlinkSync(join(root, 'd', 'l'))).toBe('f');
  });
});
