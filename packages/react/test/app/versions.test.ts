// examples/react-app pins its dependencies as a team's app would, outside the workspace; the versions it
// shares with the workspace must be the catalog's, so the app tests what the packages are built with.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { REPO } from './harness.js';

const catalog = (
  parse(readFileSync(join(REPO, 'pnpm-workspace.yaml'), 'utf8')) as { catalog: Record<string, string> }
).catalog;
const app = JSON.parse(readFileSync(join(REPO, 'examples', 'react-app', 'package.json'), 'utf8')) as {
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
};

/** Packages the catalog pins under another name: the app's `playwright` is `playwright-core` plus its CLI. */
const SAME_AS: Record<string, string> = {
  playwright: 'playwright-core',
  '@vitest/browser-playwright': 'vitest',
};

describe('examples/react-app', () => {
  it('pins the catalog’s versions of what it shares with the workspace', () => {
    const pinned = { ...app.dependencies, ...app.devDependencies };
    const shared = Object.entries(pinned).filter(([name]) => (SAME_AS[name] ?? name) in catalog);
    expect(shared.length).toBeGreaterThanOrEqual(10);
    for (const [name, version] of shared)
      expect(`${name}@${version}`).toBe(`${name}@${catalog[SAME_AS[name] ?? name]}`);
  });

  it('installs the three packed packages from vendor/, at their current versions', () => {
    const tarball = (name: string) => {
      const { version } = JSON.parse(readFileSync(join(REPO, 'packages', name, 'package.json'), 'utf8'));
      return [`@svc/${name}`, `file:vendor/svc-${name}-${version}.tgz`];
    };
    expect(Object.entries(app.dependencies).filter(([name]) => name.startsWith('@svc/'))).toEqual(
      ['client', 'contract', 'react'].map(tarball),
    );
  });
});
