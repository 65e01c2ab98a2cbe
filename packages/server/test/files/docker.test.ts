import { afterAll, beforeAll, expect, test } from 'vitest';
import type { DockerCatalog } from '../../src/computers/docker/catalog.js';
import { DockerDriver } from '../../src/computers/docker/docker-driver.js';
import type { DriverComputer, DriverContext } from '../../src/computers/driver.js';
import { DockerFiles, WHOLE_BYTES } from '../../src/computers/files/docker-files.js';
import type { ComputerFiles } from '../../src/computers/files/driver.js';
import { newId } from '../../src/platform/ids.js';
import { describeDocker } from '../support/docker.js';
import { TEST_IMAGE } from '../support/docker-probe.js';
import {
  bytesOf,
  entriesOf,
  expectFileError,
  type FilesHarness,
  fileRules,
  MAX_ENTRIES,
  SMALL_QUOTA,
  streamOf,
  tarOf,
} from './file-rules.js';

const catalog: DockerCatalog = {
  size: async (name) => ({ small: { vcpus: 1, memory_mib: 256 } })[name],
  image: async (name) => ({ busybox: { reference: TEST_IMAGE } })[name],
};
const context = (): DriverContext => ({ signal: new AbortController().signal, progress: async () => {} });
const computer = (): DriverComputer => ({
  id: newId(),
  workspace_id: newId(),
  name: `box-${newId().slice(-6).toLowerCase()}`,
  size: 'small',
  image: 'busybox',
  labels: {},
});

/**
 * No upload's temporary part (`.svc-upload-…`) is left in `dir`: at once after a write that succeeded;
 * with `settle`, within 10 s after one that failed (a list takes a second on a loaded machine, and the
 * second removal comes 2 s after a failure).
 */
async function expectNoTemporaryFiles(
  files: ComputerFiles,
  box: DriverComputer,
  dir: string,
  { settle = false } = {},
): Promise<void> {
  const signal = new AbortController().signal;
  const temporary = async () =>
    (await files.list(box, dir, signal))
      .map((entry) => entry.name)
      .filter((name) => name.startsWith('.svc-upload-'));
  if (settle) await expect.poll(temporary, { timeout: 10_000, interval: 250 }).toEqual([]);
  else expect(await temporary()).toEqual([]);
}

describeDocker('files: the Docker driver', (engine) => {
  const options = { docker: engine.docker, catalog, instance: engine.instance, hostCpus: 1 };
  const driver = new DockerDriver({ ...options, filesMaxArchiveEntries: MAX_ENTRIES });
  const small = new DockerDriver({
    ...options,
    filesQuotaBytes: SMALL_QUOTA,
    filesMaxArchiveEntries: MAX_ENTRIES,
  });
  const boxes = [computer(), computer()] as const;
  const run = async (argv: string[], box: DriverComputer) => {
    const result = await driver.exec(box, {
      argv,
      timeoutMs: 10_000,
      maxOutputBytes: 4096,
      signal: new AbortController().signal,
    });
    if (result.exitCode !== 0) throw new Error(`${argv.join(' ')}: ${Buffer.from(result.stderr).toString()}`);
  };
  const harness: FilesHarness = {
    files: driver.files,
    computer: boxes[0],
    small: { files: small.files, computer: boxes[1] },
    symlink: (box, path, target) => run(['ln', '-s', target, path], box),
    mkfifo: (box, path) => run(['mkfifo', path], box),
    uid: 1000,
  };
  beforeAll(async () => {
    for (const box of boxes) {
      await driver.run('create', box, context());
      await driver.run('start', box, context());
    }
  });
  afterAll(async () => {
    for (const box of boxes) await driver.run('delete', box, context()).catch(() => {});
  });
  fileRules(() => harness);

  test.each([
    ['svc', 1000, 1000],
    ['svc:root', 1000, 0],
    ['1000:65534', 1000, 65534],
    ['nobody-here', 65534, 65534],
  ])(
    'uploads are owned by the container user %s, names looked up in its /etc/passwd',
    async (user, uid, gid) => {
      const files = new DockerFiles({
        docker: engine.docker,
        container: async (box, signal) => {
          const found = await driver.filesContainer(box, signal);
          return found && { ...found, user };
        },
      });
      const signal = new AbortController().signal;
      const dir = `/home/svc/owner-${user.replace(/\W/g, '')}`;
      const archive = await tarOf([[{ name: 'a.txt' }, 'a']]);
      const options = { mode: 0o644, parents: true, maxBytes: 4096, signal };
      await files.writeArchive(boxes[0], dir, streamOf(archive), options);
      const [entry] = (await entriesOf(await bytesOf(await files.readArchive(boxes[0], dir, signal)))).filter(
        (found) => found.name.endsWith('a.txt'),
      );
      expect(entry).toMatchObject({ uid, gid });
    },
  );

  test.each([
    ['shorter', 'small', 100_000, 200_000, 'unavailable'],
    ['longer', 'small', 300_000, 200_000, 'too_large'],
    ['shorter', 'large', 1_500_000, 3_000_000, 'unavailable'],
    ['longer', 'large', 3_500_000, 3_000_000, 'too_large'],
  ] as const)(
    'a body %s than its declared size (%s) is refused; no file of bytes it was not sent is left',
    async (_, kind, actual, declared, reason) => {
      const signal = new AbortController().signal;
      const path = `/home/svc/declared-${kind}-${reason}.bin`;
      const options = { mode: 0o644, parents: false, size: declared, maxBytes: 1 << 24, signal };
      await expectFileError(
        driver.files.write(boxes[0], path, streamOf(new Uint8Array(actual).fill(7)), options),
        reason,
      );
      // Small: read whole before anything is sent. Large: sent to a temporary name, which the failure
      // removes; the file itself is never touched.
      await expectFileError(driver.files.stat(boxes[0], path, signal), 'not_found');
      await expectNoTemporaryFiles(driver.files, boxes[0], '/home/svc', { settle: true });
      // The next write of the same path is whole.
      const bytes = new Uint8Array(declared).fill(9);
      await driver.files.write(boxes[0], path, streamOf(bytes), options);
      const back = await driver.files.read(boxes[0], path, signal);
      expect(Buffer.from(await bytesOf(back.body)).equals(Buffer.from(bytes))).toBe(true);
    },
  );

  test.each([
    ['/home/svc', 'the user'],
    ['/home', 'root'],
  ])(
    'a large file in %s (a directory of %s) is streamed to a temporary name and renamed into place',
    async (parent) => {
      const signal = new AbortController().signal;
      const path = `${parent}/large-${newId().slice(-6).toLowerCase()}.bin`;
      const bytes = new Uint8Array(WHOLE_BYTES + 4096).map((_, at) => at % 249);
      const options = { mode: 0o640, parents: false, size: bytes.length, maxBytes: 1 << 24, signal };
      const stat = await driver.files.write(boxes[0], path, streamOf(bytes), options);
      expect(stat).toMatchObject({ size: bytes.length, mode: 0o640, type: 'file' });
      const back = await driver.files.read(boxes[0], path, signal);
      expect(Buffer.from(await bytesOf(back.body)).equals(Buffer.from(bytes))).toBe(true);
      await expectNoTemporaryFiles(driver.files, boxes[0], parent);
    },
  );

  test.each([
    ['takes them', true, ['du', 'mv']],
    ['cannot take them', false, ['du', 'mv']],
  ] as const)(
    "the files' commands go to the container's quick runner first; when it %s, the file is whole",
    async (_, takes, asked) => {
      const seen: string[] = [];
      const files = new DockerFiles({
        docker: engine.docker,
        container: (box, signal) => driver.filesContainer(box, signal),
        quickRunner: (containerId) => async (request) => {
          const found = await driver.filesContainer(boxes[0], request.signal);
          expect(containerId).toBe(found?.container.id);
          seen.push(request.argv[0] ?? '');
          // Taken: run by the driver (its exec agent); not taken: the files fall back to an Engine exec.
          return takes ? driver.exec(boxes[0], request) : undefined;
        },
      });
      const signal = new AbortController().signal;
      const path = `/home/svc/quick-${takes}.bin`;
      const bytes = new Uint8Array(WHOLE_BYTES + 512).map((_, at) => at % 251);
      const options = { mode: 0o600, parents: false, size: bytes.length, maxBytes: 1 << 24, signal };
      expect(await files.write(boxes[0], path, streamOf(bytes), options)).toMatchObject({
        size: bytes.length,
      });
      expect(seen).toEqual(asked);
      const back = await files.read(boxes[0], path, signal);
      expect(Buffer.from(await bytesOf(back.body)).equals(Buffer.from(bytes))).toBe(true);
      await expectNoTemporaryFiles(files, boxes[0], '/home/svc');
    },
  );

  test('a large write cut short leaves the file it replaces as it was, and no temporary file', async () => {
    const signal = new AbortController().signal;
    const path = '/home/svc/kept-on-failure.bin';
    const before = new Uint8Array(2 * WHOLE_BYTES).fill(1);
    const options = { mode: 0o644, parents: false, maxBytes: 1 << 24, signal };
    await driver.files.write(boxes[0], path, streamOf(before), { ...options, size: before.length });
    await expectFileError(
      driver.files.write(boxes[0], path, streamOf(new Uint8Array(WHOLE_BYTES * 2).fill(2)), {
        ...options,
        size: 3 * WHOLE_BYTES,
      }),
      'unavailable',
    );
    const back = await driver.files.read(boxes[0], path, signal);
    expect(Buffer.from(await bytesOf(back.body)).equals(Buffer.from(before))).toBe(true);
    await expectNoTemporaryFiles(driver.files, boxes[0], '/home/svc', { settle: true });
  });

  test("a computer's /home is a volume of its own, removed with its container", async () => {
    const box = computer();
    await driver.run('create', box, context());
    const [container] = await engine.containers(box.id);
    const info = await engine.docker.getContainer(container?.Id ?? '').inspect();
    const volume = info.Mounts.find((mount) => mount.Destination === '/home');
    expect(volume).toMatchObject({ Type: 'volume', RW: true });
    expect(info.HostConfig.ReadonlyRootfs).toBe(true);
    await driver.run('delete', box, context());
    await expect(engine.docker.getVolume(volume?.Name ?? '').inspect()).rejects.toMatchObject({
      statusCode: 404,
    });
  });
});
