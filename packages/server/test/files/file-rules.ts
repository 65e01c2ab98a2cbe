import { gzipSync } from 'node:zlib';
import tar from 'tar-stream';
import { expect, test } from 'vitest';
import type { DriverComputer } from '../../src/computers/driver.js';
import type { ComputerFiles, FileErrorReason, WriteOptions } from '../../src/computers/files/driver.js';
import { FileError } from '../../src/computers/files/driver.js';

/** What the shared rules need of a driver's files. */
export interface FilesHarness {
  /** Files with the default quota, on a running computer of their own. */
  files: ComputerFiles;
  computer: DriverComputer;
  /** Files with a quota of {@link SMALL_QUOTA} bytes, on another running computer. */
  small: { files: ComputerFiles; computer: DriverComputer };
  /** `ln -s target path` inside the computer. */
  symlink(computer: DriverComputer, path: string, target: string): Promise<void>;
  /** `mkfifo path` inside the computer. */
  mkfifo(computer: DriverComputer, path: string): Promise<void>;
  /** The owner uploaded entries get, where the driver keeps owners. */
  uid?: number;
}

/** The quota of the harness's `small` files. */
export const SMALL_QUOTA = 1024 * 1024;
/** The entry bound the harness's files are built with. */
export const MAX_ENTRIES = 50;
const MAX_BYTES = 8 * 1024 * 1024;

let counter = 0;
/** A directory of its own under /home/svc for one test. */
const fresh = () => `/home/svc/t${Date.now().toString(36)}-${counter++}`;
const signal = () => new AbortController().signal;
const options = (overrides: Partial<WriteOptions> = {}): WriteOptions => ({
  mode: 0o644,
  parents: true,
  maxBytes: MAX_BYTES,
  signal: signal(),
  ...overrides,
});

/** A web stream of `bytes`, in pieces of `piece` bytes. */
export function streamOf(bytes: Uint8Array, piece = 64 * 1024): ReadableStream<Uint8Array> {
  let at = 0;
  return new ReadableStream({
    pull(controller) {
      if (at >= bytes.length) return controller.close();
      controller.enqueue(bytes.slice(at, at + piece));
      at += piece;
    },
  });
}

/** All of a stream's bytes. */
export async function bytesOf(stream: ReadableStream<Uint8Array>): Promise<Uint8Array> {
  const chunks: Uint8Array[] = [];
  for await (const chunk of stream as unknown as AsyncIterable<Uint8Array>) chunks.push(chunk);
  return new Uint8Array(Buffer.concat(chunks));
}

/** A tar made with tar-stream's pack. */
export async function tarOf(entries: [tar.Headers, (string | Uint8Array)?][]): Promise<Uint8Array> {
  const pack = tar.pack();
  for (const [header, body] of entries)
    if (body === undefined) pack.entry(header);
    else pack.entry(header, typeof body === 'string' ? body : Buffer.from(body));
  pack.finalize();
  const chunks: Buffer[] = [];
  for await (const chunk of pack) chunks.push(chunk as Buffer);
  return new Uint8Array(Buffer.concat(chunks));
}

/** The entries of a tar: name, type, uid, size and body. */
export async function entriesOf(bytes: Uint8Array) {
  const extract = tar.extract();
  const out: {
    name: string;
    type: string;
    uid: number;
    gid: number;
    linkname?: string | null;
    body: Uint8Array;
  }[] = [];
  const done = (async () => {
    for await (const entry of extract) {
      const chunks: Buffer[] = [];
      for await (const chunk of entry) chunks.push(chunk as Buffer);
      out.push({
        name: entry.header.name,
        type: entry.header.type ?? 'file',
        uid: entry.header.uid ?? 0,
        gid: entry.header.gid ?? 0,
        linkname: entry.header.linkname,
        body: new Uint8Array(Buffer.concat(chunks)),
      });
    }
  })();
  extract.end(Buffer.from(bytes));
  await done;
  return out;
}

/** Rewrites the type flag of the first header of a tar (and its checksum). */
function withTypeFlag(bytes: Uint8Array, flag: string): Uint8Array {
  const copy = Buffer.from(bytes);
  copy[156] = flag.charCodeAt(0);
  copy.fill(0x20, 148, 156);
  let sum = 0;
  for (let at = 0; at < 512; at++) sum += copy[at] as number;
  copy.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148, 'ascii');
  return new Uint8Array(copy);
}

/** Expects `promise` to fail with a FileError of `reason` (and `details`, when given). */
export async function expectFileError(
  promise: Promise<unknown>,
  reason: FileErrorReason,
  details?: Record<string, unknown>,
): Promise<FileError> {
  const error = await promise.then(
    () => undefined,
    (failure: unknown) => failure,
  );
  expect(error, `expected a FileError ${reason}`).toBeInstanceOf(FileError);
  expect((error as FileError).reason).toBe(reason);
  if (details) expect((error as FileError).details).toMatchObject(details);
  return error as FileError;
}

const allBytes = () => new Uint8Array(Array.from({ length: 256 }, (_, at) => at));
function pattern(size: number): Uint8Array {
  const bytes = new Uint8Array(size);
  for (let at = 0; at < size; at++) bytes[at] = (at * 31 + (at >> 8)) & 0xff;
  return bytes;
}

/**
 * The rules every driver's files keep, as tests in the calling `describe`. `get` is called inside each
 * test (the harness is made in a `beforeAll`).
 */
export function fileRules(get: () => FilesHarness): void {
  const write = (path: string, bytes: Uint8Array, overrides: Partial<WriteOptions> = {}) =>
    get().files.write(get().computer, path, streamOf(bytes), options(overrides));
  const read = async (path: string) => {
    const { stat, body } = await get().files.read(get().computer, path, signal());
    return { stat, bytes: await bytesOf(body) };
  };
  const text = (value: string) => new TextEncoder().encode(value);

  test.each([
    ['empty', new Uint8Array()],
    ['all 256 byte values', allBytes()],
    ['64 KiB + 1', pattern(64 * 1024 + 1)],
    ['3 MB', pattern(3 * 1000 * 1000)],
  ])('write then read round trip: %s, with and without a known size', async (_name, bytes) => {
    const dir = fresh();
    for (const [file, size] of [
      ['known', bytes.length],
      ['unknown', undefined],
    ] as const) {
      const stat = await write(`${dir}/${file}.bin`, bytes, size === undefined ? {} : { size });
      expect(stat).toMatchObject({
        path: `${dir}/${file}.bin`,
        name: `${file}.bin`,
        type: 'file',
        size: bytes.length,
      });
      const back = await read(`${dir}/${file}.bin`);
      expect(back.stat.size).toBe(bytes.length);
      expect(Buffer.from(back.bytes).equals(Buffer.from(bytes))).toBe(true);
    }
  });

  test('the mode is applied, permission bits only', async () => {
    const dir = fresh();
    expect((await write(`${dir}/a`, text('a'), { mode: 0o600 })).mode).toBe(0o600);
    expect((await write(`${dir}/b`, text('b'), { mode: 0o4755 })).mode).toBe(0o755);
    expect((await get().files.stat(get().computer, `${dir}/a`, signal())).mode).toBe(0o600);
  });

  test('parents: false needs the parent; true makes it; a file as a parent is not_directory', async () => {
    const dir = fresh();
    await expectFileError(write(`${dir}/x/y.txt`, text('y'), { parents: false }), 'not_found');
    await write(`${dir}/x/y.txt`, text('y'), { parents: true });
    expect((await get().files.stat(get().computer, `${dir}/x`, signal())).type).toBe('directory');
    await write(`${dir}/x/z.txt`, text('z'), { parents: false });
    await expectFileError(write(`${dir}/x/y.txt/w`, text('w')), 'not_directory');
  });

  test('a write replaces a file', async () => {
    const dir = fresh();
    await write(`${dir}/a.txt`, text('first, longer'));
    await write(`${dir}/a.txt`, text('second'));
    expect(Buffer.from((await read(`${dir}/a.txt`)).bytes).toString()).toBe('second');
  });

  test('stat: files, directories, symlinks (as themselves), and not_found', async () => {
    const dir = fresh();
    await write(`${dir}/a.txt`, text('hello'));
    const { files, computer } = get();
    expect(await files.stat(computer, `${dir}/a.txt`, signal())).toMatchObject({
      path: `${dir}/a.txt`,
      name: 'a.txt',
      type: 'file',
      size: 5,
      mode: 0o644,
    });
    expect((await files.stat(computer, `${dir}/a.txt`, signal())).modifiedAt).toBeInstanceOf(Date);
    expect(await files.stat(computer, `${dir}/`, signal())).toMatchObject({ path: dir, type: 'directory' });
    await get().symlink(computer, `${dir}/link`, 'a.txt');
    expect(await files.stat(computer, `${dir}/link`, signal())).toMatchObject({
      type: 'symlink',
      linkTarget: 'a.txt',
    });
    expect(Buffer.from((await read(`${dir}/link`)).bytes).toString()).toBe('hello');
    await expectFileError(files.stat(computer, `${dir}/nope`, signal()), 'not_found');
    expect((await files.stat(computer, '/', signal())).type).toBe('directory');
  });

  test("long and non-ASCII names (a pax header in the write's tar) are written, read and made whole", async () => {
    const dir = `${fresh()}/${'d'.repeat(200)}`;
    for (const name of [`${'f'.repeat(150)}.txt`, 'fichier-é-日本.txt']) {
      await write(`${dir}/sub/${name}`, text(name));
      expect(Buffer.from((await read(`${dir}/sub/${name}`)).bytes).toString()).toBe(name);
    }
  });

  test('list: direct children sorted by name in byte order; a file is not_directory', async () => {
    const dir = fresh();
    for (const name of ['b', 'a', 'B', '_', 'é', 'a0']) await write(`${dir}/${name}`, text(name));
    await write(`${dir}/sub/deep.txt`, text('deep'));
    const { files, computer } = get();
    const listed = await files.list(computer, dir, signal());
    expect(listed.map((entry) => entry.name)).toEqual(['B', '_', 'a', 'a0', 'b', 'sub', 'é']);
    expect(listed.find((entry) => entry.name === 'sub')).toMatchObject({
      type: 'directory',
      path: `${dir}/sub`,
    });
    expect(listed.find((entry) => entry.name === 'a0')).toMatchObject({
      type: 'file',
      size: 2,
      path: `${dir}/a0`,
    });
    await expectFileError(files.list(computer, `${dir}/a`, signal()), 'not_directory');
    await expectFileError(files.list(computer, `${dir}/nope`, signal()), 'not_found');
    expect((await files.list(computer, '/home', signal())).map((entry) => entry.name)).toContain('svc');
  });

  test('delete: a file, an empty directory, a non-empty one only when recursive', async () => {
    const dir = fresh();
    const { files, computer } = get();
    const remove = (path: string, recursive = false) =>
      files.remove(computer, path, { recursive, signal: signal() });
    await write(`${dir}/a.txt`, text('a'));
    await write(`${dir}/full/b.txt`, text('b'));
    await remove(`${dir}/a.txt`);
    await expectFileError(files.stat(computer, `${dir}/a.txt`, signal()), 'not_found');
    await expectFileError(remove(`${dir}/a.txt`), 'not_found');
    await expectFileError(remove(`${dir}/full`), 'not_empty');
    await remove(`${dir}/full/b.txt`);
    await remove(`${dir}/full`);
    await write(`${dir}/full/c/d.txt`, text('d'));
    await remove(`${dir}/full`, true);
    await expectFileError(files.stat(computer, `${dir}/full`, signal()), 'not_found');
    await expectFileError(remove('/etc/hostname'), 'read_only');
    await expectFileError(remove('/home', true), 'read_only');
  });

  test('a missing parent (not_found) and a file as a parent (not_directory) name the path asked', async () => {
    const dir = fresh();
    const { files, computer } = get();
    await write(`${dir}/a.txt`, text('a'));
    const operations: [string, (path: string) => Promise<unknown>][] = [
      ['stat', (path) => files.stat(computer, path, signal())],
      ['list', (path) => files.list(computer, path, signal())],
      ['read', (path) => files.read(computer, path, signal())],
      ['readArchive', (path) => files.readArchive(computer, path, signal())],
      ['remove', (path) => files.remove(computer, path, { recursive: false, signal: signal() })],
    ];
    const missing = `${dir}/nope/x`;
    const under = `${dir}/a.txt/x`;
    for (const [name, operation] of operations) {
      const gone = await expectFileError(operation(missing), 'not_found', { path: missing });
      expect(gone.message, name).toBe(`${missing} does not exist`);
      const file = await expectFileError(operation(under), 'not_directory', { path: under });
      expect(file.message, name).toBe(`${under}: a parent is not a directory`);
    }
  });

  test('a directory is not read (is_directory), nor written over', async () => {
    const dir = fresh();
    await write(`${dir}/sub/a.txt`, text('a'));
    await expectFileError(read(`${dir}/sub`), 'is_directory');
    await expectFileError(write(`${dir}/sub`, text('x')), 'is_directory');
    await expectFileError(read(`${dir}/nope`), 'not_found');
  });

  test('only /home and below is written: elsewhere read_only, even where the root would allow', async () => {
    for (const path of ['/etc/evil', '/tmp/evil', '/evil', '/bin/sh', '/etc/hostname'])
      await expectFileError(write(path, text('x')), 'read_only', { path });
    expect(Buffer.from((await read('/etc/hostname')).bytes).toString()).toBe(`${get().computer.name}\n`);
  });

  test('symlinks resolve inside the computer: -> / and -> ../../.. never leave it, and never write outside /home', async () => {
    const dir = fresh();
    const { files, computer } = get();
    await write(`${dir}/keep.txt`, text('k'));
    await get().symlink(computer, `${dir}/slash`, '/');
    await get().symlink(computer, `${dir}/up`, '../../../../../..');
    const hostname = `${computer.name}\n`;
    for (const link of ['slash', 'up']) {
      expect(Buffer.from((await read(`${dir}/${link}/etc/hostname`)).bytes).toString()).toBe(hostname);
      expect((await files.list(computer, `${dir}/${link}`, signal())).map((entry) => entry.name)).toContain(
        'home',
      );
      await expectFileError(write(`${dir}/${link}/etc/evil`, text('x')), 'read_only');
      await expectFileError(write(`${dir}/${link}/tmp/evil`, text('x')), 'read_only');
      await expectFileError(
        files.remove(computer, `${dir}/${link}/etc/hostname`, { recursive: true, signal: signal() }),
        'read_only',
      );
      await expectFileError(
        files.writeArchive(
          computer,
          `${dir}/${link}/etc`,
          streamOf(await tarOf([[{ name: 'evil' }, 'x']])),
          options(),
        ),
        'read_only',
      );
    }
    // Through the link back into /home is a writable place.
    await write(`${dir}/slash${dir}/via-link.txt`, text('v'));
    expect(Buffer.from((await read(`${dir}/via-link.txt`)).bytes).toString()).toBe('v');
  });

  test('special files (a FIFO) are never read or written; stat and list report them as other', async () => {
    const dir = fresh();
    const { files, computer } = get();
    await write(`${dir}/plain`, text('p'));
    await get().mkfifo(computer, `${dir}/fifo`);
    expect((await files.stat(computer, `${dir}/fifo`, signal())).type).toBe('other');
    expect((await files.list(computer, dir, signal())).find((entry) => entry.name === 'fifo')?.type).toBe(
      'other',
    );
    await expectFileError(read(`${dir}/fifo`), 'special_file');
    await expectFileError(write(`${dir}/fifo`, text('x')), 'special_file');
  });

  test('too_large: refused early by the declared size, else cut off while counting; nothing is left', async () => {
    const dir = fresh();
    const { files, computer } = get();
    const untouched = new ReadableStream<Uint8Array>({
      pull() {
        throw new Error('the body was read although its declared size is over the limit');
      },
    });
    await expectFileError(
      files.write(computer, `${dir}/big`, untouched, options({ size: 2001, maxBytes: 2000 })),
      'too_large',
    );
    await expectFileError(write(`${dir}/big`, pattern(5000), { maxBytes: 2000 }), 'too_large');
    await expectFileError(files.stat(computer, `${dir}/big`, signal()), 'not_found');
  });

  test('quota: the files under /home are bounded per computer (quota_exceeded with its limit)', async () => {
    const { files, computer } = get().small;
    const dir = fresh();
    const put = (name: string, size?: number) =>
      files.write(
        computer,
        `${dir}/${name}`,
        streamOf(pattern(600_000)),
        options(size === undefined ? {} : { size }),
      );
    await put('first', 600_000);
    const details = { quota: 'files_bytes', limit: SMALL_QUOTA };
    await expectFileError(put('second', 600_000), 'quota_exceeded', details);
    await expectFileError(put('third'), 'quota_exceeded', details);
    const archive = await tarOf([[{ name: 'big.bin' }, pattern(600_000)]]);
    await expectFileError(
      files.writeArchive(computer, dir, streamOf(archive), options()),
      'quota_exceeded',
      details,
    );
    await files.remove(computer, dir, { recursive: true, signal: signal() }); // room for the next test
  });

  test('quota: a file removed through the API frees its room at once (a kept measure is forgotten)', async () => {
    const { files, computer } = get().small;
    const dir = fresh();
    const put = (name: string, size: number) =>
      files.write(computer, `${dir}/${name}`, streamOf(pattern(size)), options({ size }));
    await put('filler', 500_000);
    await put('first', 400_000);
    await files.remove(computer, `${dir}/first`, { recursive: false, signal: signal() });
    await put('second', 400_000); // 500 000 + 400 000 + 400 000 would be over the quota
    await files.remove(computer, dir, { recursive: true, signal: signal() });
  });

  test('archives: written, then read back with the same entries and bytes, owned by the computer user', async () => {
    const dir = fresh();
    const { files, computer } = get();
    const archive = await tarOf([
      [{ name: 'proj/', type: 'directory', mode: 0o750 }],
      [{ name: 'proj/a.txt', uid: 0, gid: 0, mode: 0o640 }, 'alpha'],
      [{ name: './proj/bin/data.bin', mode: 0o600 }, allBytes()],
      [{ name: 'proj/same.txt', type: 'link', linkname: 'proj/a.txt' }],
      [{ name: 'proj/rel', type: 'symlink', linkname: 'a.txt' }],
      [{ name: 'proj/abs', type: 'symlink', linkname: '/etc' }],
    ]);
    const summary = await files.writeArchive(
      computer,
      dir,
      streamOf(archive, 700),
      options({ size: archive.length }),
    );
    expect(summary).toEqual({ entries: 6, bytes: 5 + 256 });
    expect(await files.stat(computer, `${dir}/proj/a.txt`, signal())).toMatchObject({ mode: 0o640, size: 5 });
    expect(Buffer.from((await read(`${dir}/proj/same.txt`)).bytes).toString()).toBe('alpha');
    const listed = await files.list(computer, `${dir}/proj`, signal());
    expect(listed.map((entry) => [entry.name, entry.type, entry.size])).toEqual([
      ['a.txt', 'file', 5],
      ['abs', 'symlink', 4],
      ['bin', 'directory', 0],
      ['rel', 'symlink', 5],
      ['same.txt', 'file', 5],
    ]);
    expect(Buffer.from((await read(`${dir}/proj/rel`)).bytes).toString()).toBe('alpha');
    const out = await entriesOf(await bytesOf(await files.readArchive(computer, `${dir}/proj`, signal())));
    const byName = new Map(out.map((entry) => [entry.name.replace(/\/$/, ''), entry]));
    expect([...byName.keys()].sort()).toEqual(
      ['proj', 'proj/a.txt', 'proj/abs', 'proj/bin', 'proj/bin/data.bin', 'proj/rel', 'proj/same.txt'].sort(),
    );
    expect(Buffer.from(byName.get('proj/bin/data.bin')?.body ?? []).equals(Buffer.from(allBytes()))).toBe(
      true,
    );
    expect(byName.get('proj/abs')).toMatchObject({ type: 'symlink', linkname: '/etc' });
    const uid = get().uid;
    if (uid !== undefined) expect(byName.get('proj/a.txt')?.uid).toBe(uid);
    // Through a symlink, the entries are named after the path asked for.
    await get().symlink(computer, `${dir}/alias`, 'proj');
    const aliased = await entriesOf(
      await bytesOf(await files.readArchive(computer, `${dir}/alias`, signal())),
    );
    expect(aliased.map((entry) => entry.name.replace(/\/$/, '')).sort()).toEqual(
      [...byName.keys()].map((name) => name.replace(/^proj/, 'alias')).sort(),
    );
    expect(aliased.find((entry) => entry.name === 'alias/same.txt')?.linkname ?? 'alias/a.txt').toBe(
      'alias/a.txt',
    );
    const data = aliased.find((entry) => entry.name === 'alias/bin/data.bin');
    expect(Buffer.from(data?.body ?? []).equals(Buffer.from(allBytes()))).toBe(true);
    await expectFileError(files.readArchive(computer, `${dir}/proj/a.txt`, signal()), 'not_directory');
    await expectFileError(files.readArchive(computer, `${dir}/nope`, signal()), 'not_found');
    await expectFileError(
      files.writeArchive(computer, `${dir}/nope`, streamOf(archive), options({ parents: false })),
      'not_found',
    );
    await expectFileError(files.writeArchive(computer, '/etc', streamOf(archive), options()), 'read_only');
    // What was uploaded belongs to the computer's user, who can remove it.
    await files.remove(computer, `${dir}/proj`, { recursive: true, signal: signal() });
  });

  test("the computer's root as an archive: relative names, its own /etc/hostname", async () => {
    const { files, computer } = get();
    const entries = await entriesOf(await bytesOf(await files.readArchive(computer, '/', signal())));
    expect(
      entries.map((entry) => entry.name).filter((name) => name !== '.' && !name.startsWith('./')),
    ).toEqual([]);
    const hostname = entries.find((entry) => entry.name === './etc/hostname');
    expect(Buffer.from(hostname?.body ?? []).toString()).toBe(`${computer.name}\n`);
  });

  const attacks: [string, () => Promise<Uint8Array>, string, string?][] = [
    ['an absolute name', () => tarOf([[{ name: '/home/svc/abs.txt' }, 'x']]), 'absolute', 'abs.txt'],
    ['a .. segment', () => tarOf([[{ name: 'ok/../../escape.txt' }, 'x']]), 'dot_dot', 'escape.txt'],
    ['a FIFO', () => tarOf([[{ name: 'fifo', type: 'fifo' }]]), 'special_file', 'fifo'],
    [
      'a character device',
      () => tarOf([[{ name: 'null', type: 'character-device', devmajor: 1, devminor: 3 }]]),
      'special_file',
      'null',
    ],
    [
      'a block device',
      () => tarOf([[{ name: 'sda', type: 'block-device', devmajor: 8 }]]),
      'special_file',
      'sda',
    ],
    [
      'a hard link to a file outside the archive',
      () => tarOf([[{ name: 'passwd', type: 'link', linkname: '/etc/passwd' }]]),
      'hard_link',
      'passwd',
    ],
    [
      'a hard link to a later entry',
      () => tarOf([[{ name: 'early', type: 'link', linkname: 'late' }], [{ name: 'late' }, 'x']]),
      'hard_link',
      'early',
    ],
    [
      'an entry under a symlink of the same archive',
      () => tarOf([[{ name: 'etc', type: 'symlink', linkname: '/etc' }], [{ name: 'etc/evil' }, 'x']]),
      'under_symlink',
      'evil',
    ],
    [
      'a relative symlink above the archive root',
      () => tarOf([[{ name: 'up', type: 'symlink', linkname: '../../..' }]]),
      'symlink_escape',
      'up',
    ],
    [
      'a GNU sparse file (pax)',
      () =>
        tarOf([
          [{ name: 'sparse', pax: { 'GNU.sparse.major': '1', 'GNU.sparse.minor': '0' } } as tar.Headers, 'x'],
        ]),
      'sparse',
      'sparse',
    ],
    [
      'a GNU sparse file (type S)',
      async () => withTypeFlag(await tarOf([[{ name: 'sparse' }, 'x']]), 'S'),
      'unsupported_type',
      'sparse',
    ],
    [
      'an unknown type',
      async () => withTypeFlag(await tarOf([[{ name: 'odd' }, 'x']]), 'X'),
      'unsupported_type',
      'odd',
    ],
    [
      'gzip',
      async () => new Uint8Array(gzipSync(await tarOf([[{ name: 'gz.txt' }, 'x']]))),
      'compressed',
      'gz.txt',
    ],
    [
      'bzip2',
      async () => new Uint8Array([0x42, 0x5a, 0x68, 0x39, 0x31, 0x41, ...new Array(600).fill(0)]),
      'compressed',
    ],
    [
      'xz',
      async () => new Uint8Array([0xfd, 0x37, 0x7a, 0x58, 0x5a, 0x00, ...new Array(600).fill(0)]),
      'compressed',
    ],
    [
      'zstd',
      async () => new Uint8Array([0x28, 0xb5, 0x2f, 0xfd, 0, 0, ...new Array(600).fill(0)]),
      'compressed',
    ],
    [
      'too many entries',
      () =>
        tarOf(
          Array.from(
            { length: MAX_ENTRIES + 1 },
            (_, at) => [{ name: `many/${at}` }, ''] as [tar.Headers, string],
          ),
        ),
      'too_many_entries',
    ],
    [
      'not a tar',
      async () => new Uint8Array(Buffer.from('this is not a tar archive'.repeat(40))),
      'malformed',
    ],
  ];
  test.each(attacks)('a malicious archive is refused (bad_archive): %s', async (_name, make, rule, left) => {
    const dir = fresh();
    const { files, computer } = get();
    await write(`${dir}/keep.txt`, text('k'));
    const error = await expectFileError(
      files.writeArchive(computer, dir, streamOf(await make()), options()),
      'bad_archive',
      { rule },
    );
    expect(error.message).not.toMatch(/\/var\/lib|overlay/);
    if (left) {
      await expectFileError(files.stat(computer, `${dir}/${left}`, signal()), 'not_found');
      await expectFileError(files.stat(computer, `/home/svc/${left}`, signal()), 'not_found');
    }
  });

  test('an archive whose declared sizes exceed maxBytes is too_large', async () => {
    const dir = fresh();
    const { files, computer } = get();
    const archive = await tarOf([[{ name: 'a' }, pattern(3000)]]);
    await expectFileError(
      files.writeArchive(computer, dir, streamOf(archive), options({ maxBytes: 2048 })),
      'too_large',
    );
    await expectFileError(
      files.writeArchive(computer, dir, streamOf(archive), options({ size: archive.length, maxBytes: 4096 })),
      'too_large',
    );
  });

  test('delete of a symlink removes the link, not what it leads to', async () => {
    const dir = fresh();
    const { files, computer } = get();
    await write(`${dir}/sub/a.txt`, text('a'));
    await get().symlink(computer, `${dir}/link`, 'sub');
    await files.remove(computer, `${dir}/link`, { recursive: true, signal: signal() });
    await expectFileError(files.stat(computer, `${dir}/link`, signal()), 'not_found');
    expect(Buffer.from((await read(`${dir}/sub/a.txt`)).bytes).toString()).toBe('a');
  });

  test.each([
    ['unknown', false],
    ['known', true],
  ])('an aborted write (size %s) fails with the abort and leaves no file', async (_name, known) => {
    const dir = fresh();
    const { files, computer } = get();
    await write(`${dir}/keep.txt`, text('k'));
    const controller = new AbortController();
    let sent = 0;
    const body = new ReadableStream<Uint8Array>({
      async pull(stream) {
        if (sent > 200_000) {
          controller.abort(new Error('client went away'));
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
        sent += 65_536;
        stream.enqueue(pattern(65_536));
      },
    });
    await expect(
      files.write(
        computer,
        `${dir}/aborted`,
        body,
        options({ signal: controller.signal, ...(known ? { size: 4 * 1024 * 1024 } : {}) }),
      ),
    ).rejects.toThrow('client went away');
    await expectFileError(files.stat(computer, `${dir}/aborted`, signal()), 'not_found');
  });
}
