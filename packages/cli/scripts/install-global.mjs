// `pnpm cli:install`: packs the built CLI as it would be published (pnpm pack turns workspace: and
// catalog: ranges into versions; everything svc runs is bundled into dist/, so it has no dependencies)
// and installs that tarball with `npm install -g`, which puts `svc` on PATH. Extra arguments go to npm
// (e.g. `--prefix ~/.local`). Run after building @svc/cli (the root script does both).
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const out = mkdtempSync(join(tmpdir(), 'svc-pack-'));
try {
  execFileSync('pnpm', ['pack', '--pack-destination', out], {
    cwd: root,
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const tarball = join(out, readdirSync(out).find((name) => name.endsWith('.tgz')) ?? '');
  execFileSync('npm', ['install', '--global', '--no-audit', '--no-fund', ...process.argv.slice(2), tarball], {
    stdio: 'inherit',
  });
  process.stderr.write('svc is installed: run `svc --help` (a new shell may need `hash -r`).\n');
} finally {
  rmSync(out, { recursive: true, force: true });
}
