import { describe, expect, test } from 'vitest';
import type { DriverComputer } from '../../src/computers/driver.js';
import { SimulatedFiles } from '../../src/computers/files/simulated-files.js';
import { SimulatedDriver } from '../../src/computers/simulated-driver.js';
import { newId } from '../../src/platform/ids.js';
import {
  bytesOf,
  expectFileError,
  type FilesHarness,
  fileRules,
  MAX_ENTRIES,
  SMALL_QUOTA,
  streamOf,
} from './file-rules.js';

const computer = (): DriverComputer => ({
  id: newId(),
  workspace_id: newId(),
  name: `box-${newId().slice(-6).toLowerCase()}`,
  size: 'small',
  image: 'busybox',
  labels: {},
});

describe('files: the simulated driver', () => {
  const files = new SimulatedFiles({ maxArchiveEntries: MAX_ENTRIES });
  const small = new SimulatedFiles({ quotaBytes: SMALL_QUOTA, maxArchiveEntries: MAX_ENTRIES });
  const harness: FilesHarness = {
    files,
    computer: computer(),
    small: { files: small, computer: computer() },
    symlink: async (target, path, to) =>
      (target === harness.computer ? files : small).symlink(target, path, to),
    mkfifo: async (target, path) => (target === harness.computer ? files : small).mkfifo(target, path),
  };
  fileRules(() => harness);
});

test('the simulated driver keeps a tree per computer, starting with its hostname, and forgets it on delete', async () => {
  const driver = new SimulatedDriver({ stepMs: 1, steps: 1 });
  const signal = new AbortController().signal;
  const [one, two] = [computer(), computer()];
  const { body } = await driver.files.read(one, '/etc/hostname', signal);
  expect(Buffer.from(await bytesOf(body)).toString()).toBe(`${one.name}\n`);
  expect((await driver.files.list(one, '/', signal)).map((entry) => entry.name)).toEqual([
    'bin',
    'etc',
    'home',
    'tmp',
  ]);
  const options = { mode: 0o644, parents: false, maxBytes: 1024, signal };
  await driver.files.write(one, '/home/svc/a.txt', streamOf(new TextEncoder().encode('a')), options);
  await expectFileError(driver.files.stat(two, '/home/svc/a.txt', signal), 'not_found');
  await driver.run('delete', one, { signal, progress: async () => {} });
  await expectFileError(driver.files.stat(one, '/home/svc/a.txt', signal), 'not_found');
});
