// `pnpm cli:install`: packs the built CLI as it would be published (pnpm pack turns workspace: and
// catalog: ranges into versions; everything svc runs is bundled into dist/, so it has no dependencies)
// and installs that tarball with `npm install -g`, which puts `svc` on PATH. Extra arguments go to npm
// (e.g. `--prefix ~/.local`). Run after building @svc/cli (the root script does both).
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const args = process.argv.slice(2);

// pnpm hands the scripts it runs its own settings as lowercase npm_config_* variables (its global rc as
// `globalconfig`, and keys npm does not know: `verify-deps-before-run`, `npm-globalconfig`,
// `_jsr-registry`, each an `Unknown env config` warning from npm). npm would read them as its own, so
// they are left out of npm's environment; npm still reads ~/.npmrc, a shell's NPM_CONFIG_* and the
// arguments given here.
const underPnpm = (process.env.npm_config_user_agent ?? '').startsWith('pnpm/');
const npmEnv = Object.fromEntries(
  Object.entries(process.env).filter(([name]) => !(underPnpm && name.startsWith('npm_config_'))),
);

const out = mkdtempSync(join(tmpdir(), 'svc-pack-'));
try {
  execFileSync('pnpm', ['pack', '--pack-destination', out], {
    cwd: root,
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const tarball = join(out, readdirSync(out).find((name) => name.endsWith('.tgz')) ?? '');
  execFileSync('npm', ['install', '--global', '--no-audit', '--no-fund', ...args, tarball], {
    stdio: 'inherit',
    env: npmEnv,
  });
} finally {
  rmSync(out, { recursive: true, force: true });
}

// Where npm put the `svc` link: <prefix>/bin (the prefix itself on Windows), the prefix as the same
// arguments and environment make it.
const prefix = execFileSync('npm', ['prefix', '--global', ...args], { env: npmEnv, encoding: 'utf8' }).trim();
const bin = process.platform === 'win32' ? prefix : join(prefix, 'bin');
const onPath = (process.env.PATH ?? '')
  .split(delimiter)
  .filter(Boolean)
  .some((entry) => resolve(entry) === resolve(bin));
if (onPath) process.stderr.write('svc is installed: run `svc --help` (a new shell may need `hash -r`).\n');
else {
  const shell = (process.env.SHELL ?? '').split('/').at(-1);
  const line = shell === 'fish' ? `fish_add_path ${bin}` : `export PATH="${bin}:$PATH"`;
  const rc =
    shell === 'zsh'
      ? '~/.zshrc'
      : shell === 'bash'
        ? '~/.bashrc'
        : shell === 'fish'
          ? '~/.config/fish/config.fish'
          : '~/.profile';
  process.stderr.write(
    `svc is installed in ${bin}, which is not on your PATH. Put it there for this shell and the next ones:\n` +
      `  ${line}\n` +
      `  echo '${line}' >> ${rc}\n` +
      `or run it as ${join(bin, 'svc')}.\n`,
  );
}
