import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, test } from 'vitest';

// `pnpm install` on a fresh clone links the `bin` of every workspace package another one depends on,
// before anything is built: a bin that points into `dist/` is missing then, and pnpm warns `Failed to
// create bin` for each dependent. So such a bin must be a file of the repository (a few lines that load
// `dist/`, as packages/server/bin/svc-server.js does).
const root = fileURLToPath(new URL('../..', import.meta.url));
const tracked = new Set(
  execFileSync('git', ['ls-files', '-z'], { cwd: root, encoding: 'utf8' }).split('\0').filter(Boolean),
);

interface Manifest {
  name?: string;
  bin?: string | Record<string, string>;
  dependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
}

const manifests = [...tracked]
  .filter((file) => file === 'package.json' || file.endsWith('/package.json'))
  .map((file) => ({ file, manifest: JSON.parse(readFileSync(join(root, file), 'utf8')) as Manifest }));

test('every bin a workspace package links is in the repository before a build', () => {
  const dependedOn = new Set(
    manifests.flatMap(({ manifest }) =>
      Object.keys({
        ...manifest.dependencies,
        ...manifest.devDependencies,
        ...manifest.optionalDependencies,
      }),
    ),
  );
  const linked = manifests.filter(
    ({ manifest }) => manifest.name && dependedOn.has(manifest.name) && manifest.bin,
  );
  expect(linked.map(({ manifest }) => manifest.name)).toContain('@svc/server');
  const missing = linked.flatMap(({ file, manifest }) => {
    const dir = file.slice(0, -'package.json'.length);
    const targets = typeof manifest.bin === 'string' ? [manifest.bin] : Object.values(manifest.bin ?? {});
    return targets
      .map((target) => join(dir, target).replace(/^\.\//, ''))
      .filter((path) => !tracked.has(path))
      .map((path) => `${manifest.name}: ${path}`);
  });
  expect(missing).toEqual([]);
});
