import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { type InstalledCli, installPacked, PACKAGE } from '../support/installed.js';

// `pnpm cli:install` = build, then scripts/install-global.mjs; here into a throw-away npm prefix.
describe('svc installed from the packed package (pnpm cli:install)', () => {
  let cli: InstalledCli;
  beforeAll(async () => {
    cli = await installPacked();
  }, 120_000);
  afterAll(() => cli?.remove());

  test('`svc` is on the prefix’s PATH and answers --version and --help', () => {
    const env = { ...process.env, PATH: `${join(cli.prefix, 'bin')}:${process.env.PATH}` };
    expect(execFileSync('svc', ['--version'], { env, encoding: 'utf8' }).trim()).toBe(
      JSON.parse(readFileSync(join(PACKAGE, 'package.json'), 'utf8')).version,
    );
    expect(execFileSync('svc', ['--help'], { env, encoding: 'utf8' })).toContain('Usage: svc');
  });

  test('run by pnpm (`pnpm cli:install --prefix DIR`): no npm warning about pnpm’s settings, and how to put DIR/bin on PATH', async () => {
    // The npm_config_* variables pnpm 10 gives the scripts it runs (seen with `pnpm run` printing its env).
    const pnpm = {
      npm_config_user_agent: 'pnpm/10.34.9 npm/? node/v24 linux x64',
      npm_config_verify_deps_before_run: 'false',
      npm_config__jsr_registry: 'https://npm.jsr.io/',
      npm_config_npm_globalconfig: '/usr/etc/npmrc',
      npm_config_globalconfig: join(cli.prefix, 'pnpm-rc'),
      npm_config_frozen_lockfile: '',
      npm_config_node_gyp: '/nowhere/node-gyp.js',
    };
    const other = await installPacked({ ...process.env, ...pnpm, SHELL: '/bin/bash' });
    try {
      expect(other.stderr).not.toMatch(/Unknown env config|npm warn/);
      const bin = join(other.prefix, 'bin');
      expect(other.stderr).toContain(`svc is installed in ${bin}, which is not on your PATH.`);
      expect(other.stderr).toContain(
        `  export PATH="${bin}:$PATH"\n  echo 'export PATH="${bin}:$PATH"' >> ~/.bashrc\n`,
      );
      // Installed again where PATH already looks: no advice.
      const again = await installPacked(
        { ...process.env, ...pnpm, PATH: `${bin}:${process.env.PATH}` },
        other.prefix,
      );
      expect(again.stderr).toContain('svc is installed: run `svc --help`');
      expect(again.stderr).not.toContain('not on your PATH');
    } finally {
      await other.remove();
    }
  }, 120_000);

  test('the published manifest has no workspace: or catalog: ranges and no dependencies to fetch', () => {
    const installed = join(cli.prefix, 'lib', 'node_modules', '@svc', 'cli');
    const manifest = readFileSync(join(installed, 'package.json'), 'utf8');
    expect(manifest).not.toMatch(/workspace:|catalog:/);
    expect(JSON.parse(manifest).dependencies ?? {}).toEqual({});
    // Everything is bundled: no chunk imports a workspace package at run time.
    for (const file of readdirSync(join(installed, 'dist')).filter((f) => f.endsWith('.js')))
      expect(readFileSync(join(installed, 'dist', file), 'utf8'), file).not.toMatch(/from\s*["']@svc\//);
  });
});
