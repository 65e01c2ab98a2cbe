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
