// Proves that tools/spec-lint.mjs reports every linter's findings at the source line a designer edits,
// for both layouts of the path map (Operation files and Path Item files), using small fixture trees.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bundleSpec } from '../spec-bundle.mjs';
import { formatFinding, type Linter, lintSpec } from '../spec-lint.mjs';

const fixtures = fileURLToPath(new URL('./fixtures/lint/', import.meta.url));
const ruleset = fileURLToPath(new URL('../../spec/rules/spectral.yaml', import.meta.url));
const lintScript = fileURLToPath(new URL('../spec-lint.mjs', import.meta.url));

const work = mkdtempSync(join(tmpdir(), 'spec-lint-test-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

function bundles(layout: string) {
  return { json: join(work, `${layout}.json`), yaml: join(work, `${layout}.yaml`) };
}

beforeAll(() => {
  for (const layout of ['path-items', 'operation-files']) {
    bundleSpec(join(fixtures, layout), bundles(layout).json);
    bundleSpec(join(fixtures, layout), bundles(layout).yaml, 'yaml');
  }
});

async function lines(layout: string, only: Linter[]) {
  const { json, yaml } = bundles(layout);
  const specDir = join(fixtures, layout);
  const { findings, failures } = await lintSpec({ specDir, bundle: json, bundleYaml: yaml, ruleset, only });
  expect(failures).toEqual([]);
  return findings.map((f) => formatFinding(f, fixtures));
}

describe('spec-lint maps findings to the sources', { timeout: 60_000 }, () => {
  // The operation file of each layout: the Path Item file holds `get:` on line 1, the Operation file
  // holds the operation's fields from line 1, so everything inside the operation is one line higher.
  it.each<[string, Linter, string]>([
    [
      'path-items',
      'spectral',
      'path-items/components/schemas/Thing.yaml:6:3 error svc-snake-case-properties',
    ],
    ['path-items', 'spectral', 'path-items/paths/things.yaml:7:7 error owasp:api4:2023-string-limit'],
    ['path-items', 'redocly-bundle', 'path-items/paths/things.yaml:5:7 error parameter-description'],
    ['path-items', 'redocly-sources', 'path-items/paths/things.yaml:5:7 error parameter-description'],
    [
      'operation-files',
      'spectral',
      'operation-files/components/schemas/Thing.yaml:6:3 error svc-snake-case-properties',
    ],
    [
      'operation-files',
      'spectral',
      'operation-files/paths/things/listThings.yaml:6:5 error owasp:api4:2023-string-limit',
    ],
    [
      'operation-files',
      'redocly-bundle',
      'operation-files/paths/things/listThings.yaml:4:5 error parameter-description',
    ],
    [
      'operation-files',
      'redocly-sources',
      'operation-files/paths/things/listThings.yaml:4:5 error parameter-description',
    ],
  ])('%s: %s reports %s', async (layout, linter, want) => {
    const found = await lines(layout, [linter]);
    expect(
      found.some((line) => line.startsWith(want)),
      found.join('\n'),
    ).toBe(true);
    // Nothing points into the bundle.
    for (const line of found) expect(line).toMatch(new RegExp(`^${layout}/(openapi|paths/|components/)`));
  });

  // A finding on a value written as a `$ref` is at that `$ref`, in the file that holds it (line and
  // column of the `$ref` key), not at line 1 of the referenced file: path-items/ writes a camelCase
  // property, a list response's schema, a 404 response and a parameter as `$ref`s.
  it.each<[Linter, string]>([
    ['spectral', 'path-items/components/schemas/Thing.yaml:9:5 error svc-snake-case-properties'],
    ['spectral', 'path-items/paths/things.yaml:17:13 error svc-list-envelope'],
    ['spectral', 'path-items/paths/things.yaml:19:7 error owasp:api4:2023-rate-limit'],
    ['redocly-sources', 'path-items/paths/things.yaml:9:7 error parameter-description'],
    ['redocly-bundle', 'path-items/paths/things.yaml:9:7 error parameter-description'],
  ])('%s reports a finding on a `$ref` at the `$ref`: %s', async (linter, want) => {
    const found = await lines('path-items', [linter]);
    expect(
      found.some((line) => line.startsWith(want)),
      found.join('\n'),
    ).toBe(true);
    const rule = want.split(' ')[2];
    const targets = /(Stamp|Limit|NotFound)\.yaml:1:1|Thing\.yaml:1:1/;
    expect(found.filter((line) => line.includes(` ${rule} `) && targets.test(line))).toEqual([]);
  });

  it('keeps a Redocly finding on a node several `$ref`s share where the node is written', async () => {
    // Verbose.yaml (no description) is the parameter of two operations; Limit.yaml of one.
    const found = await lines('path-items', ['redocly-sources', 'redocly-bundle']);
    const descriptions = found.filter((line) => line.includes(' parameter-description '));
    expect(descriptions.map((line) => line.split(' ')[0])).toEqual([
      'path-items/components/parameters/Verbose.yaml:1:1',
      'path-items/paths/things.yaml:5:7',
      'path-items/paths/things.yaml:9:7',
    ]);
  });

  it('shows a fault of the referenced node once, where it is written, not at each `$ref` to it', async () => {
    // Stamp.yaml (`type: string`, no maxLength) is checked as #/components/schemas/Stamp of the bundle
    // and again through the property `madeAt: {$ref: ./Stamp.yaml}`.
    const found = await lines('path-items', ['spectral']);
    const limits = found.filter((line) => line.includes(' owasp:api4:2023-string-limit '));
    expect(limits.filter((line) => !line.startsWith('path-items/paths/things.yaml:7:7 '))).toEqual([
      'path-items/components/schemas/Stamp.yaml:1:1 error owasp:api4:2023-string-limit Schema of type string must specify maxLength, enum, or const.',
    ]);
  });

  it('reports a finding once when Redocly sees it on the sources and on the bundle', async () => {
    const found = await lines('path-items', ['redocly-sources', 'redocly-bundle']);
    // Three parameters lack a description (one inline, one `$ref` and one shared `$ref`): both runs
    // place each at the same line and column.
    expect(found.filter((line) => line.includes('parameter-description'))).toHaveLength(3);
  });

  it('runs every linter, prints one line per finding and a summary, and exits 1 on errors', () => {
    const { json, yaml } = bundles('path-items');
    const specDir = join(fixtures, 'path-items');
    const args = ['--spec', specDir, '--bundle', json, '--bundle-yaml', yaml, '--ruleset', ruleset];
    const result = spawnSync(process.execPath, [lintScript, ...args], { encoding: 'utf8' });

    const out = result.stdout.trim().split('\n');
    expect(result.status, result.stderr).toBe(1);
    // Paths print from the spec directory's parent, like spec/paths/… in the repository.
    expect(out).toContain(
      'path-items/paths/things.yaml:5:7 error parameter-description Parameter object description must be present.',
    );
    expect(out).toContain(
      'path-items/components/schemas/Thing.yaml:6:3 error svc-snake-case-properties Property `fooBar` must be snake_case (lowercase words joined by _).',
    );
    for (const line of out.slice(0, -1))
      expect(line).toMatch(/^path-items\/\S+:\d+:\d+ (error|warning|info|hint) \S+ \S/);
    expect(out.at(-1)).toMatch(/^spec-lint: \d+ errors, \d+ warnings, 0 notes \(redocly 6, spectral \d+\)$/);
  });

  it('exits 2 and says so when a linter cannot run', () => {
    const specDir = join(fixtures, 'path-items');
    const args = ['--spec', specDir, '--bundle', join(work, 'missing.json'), '--ruleset', ruleset];
    const result = spawnSync(process.execPath, [lintScript, ...args], { encoding: 'utf8' });
    expect(result.status).toBe(2);
    expect(result.stdout).toContain('missing.json is missing');
  });
});
