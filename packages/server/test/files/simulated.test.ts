import { describe } from 'vitest';
import { SimulatedFiles } from '../../src/files/simulated-files.js';
import { newId } from '../../src/ids.js';
import type { DriverComputer } from '../../src/operations/driver.js';
import { type FilesHarness, fileRules, MAX_ENTRIES, SMALL_QUOTA } from './file-rules.js';

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
