// Drives tools/spec-diff.mjs end to end in a throwaway git repository holding a small multi-file spec.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';

const gateScript = fileURLToPath(new URL('../spec-diff.mjs', import.meta.url));

const ROOT = `openapi: 3.1.0
info: { title: Fixture, version: 1.0.0 }
servers: [{ url: https://api.example.com }]
paths:
  /v1/things:
    $ref: paths/things.yaml
`;

const THINGS = `get:
  operationId: listThings
  summary: List things
  parameters:
    - { name: page_size, in: query, required: false, schema: { type: integer } }
  responses:
    '200':
      description: The things.
      content:
        application/json:
          schema:
            $ref: ../components/schemas/Thing.yaml
`;

const THING = `type: object
required: [id]
properties:
  id: { type: string }
  name: { type: string }
`;

const WIDGETS = `get:
  operationId: listWidgets
  summary: List widgets
  responses:
    '200': { description: The widgets. }
`;

type Files = Record<string, string>;

const baseSpec: Files = {
  'spec/openapi.yaml': ROOT,
  'spec/paths/things.yaml': THINGS,
  'spec/components/schemas/Thing.yaml': THING,
};

let repo: string | undefined;
afterEach(() => {
  if (repo) rmSync(repo, { recursive: true, force: true });
  repo = undefined;
});

function write(dir: string, files: Files) {
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
}

function git(dir: string, ...args: string[]) {
  const result = spawnSync('git', ['-c', 'user.name=Test', '-c', 'user.email=test@example.com', ...args], {
    cwd: dir,
    encoding: 'utf8',
  });
  if (result.status !== 0) throw new Error(`git ${args.join(' ')}: ${result.stderr}`);
}

/** A repository whose main branch holds `committed`, checked out on a feature branch. */
function repoWith(committed: Files): string {
  const dir = mkdtempSync(join(tmpdir(), 'spec-diff-test-'));
  git(dir, 'init', '--quiet', '--initial-branch=main');
  write(dir, { 'README.md': 'fixture\n', ...committed });
  git(dir, 'add', '.');
  git(dir, 'commit', '--quiet', '-m', 'base');
  git(dir, 'checkout', '--quiet', '-b', 'feature');
  return dir;
}

function runGate(dir: string) {
  const result = spawnSync(process.execPath, [gateScript], { cwd: dir, encoding: 'utf8' });
  const report = readFileSync(join(dir, 'reports', 'spec-diff.md'), 'utf8');
  return { status: result.status, output: result.stdout + result.stderr, report };
}

describe('spec-diff', { timeout: 30_000 }, () => {
  it.each<[string, { given: Files; want: { status: number; summary: string; mentions: string[] } }]>([
    [
      'fails when a response field is removed',
      {
        given: { 'spec/components/schemas/Thing.yaml': THING.replace('  name: { type: string }\n', '') },
        want: {
          status: 1,
          summary: '1 major, 0 minor, 0 patch',
          mentions: ['property-removed', 'properties/name', 'FAIL'],
        },
      },
    ],
    [
      'fails when a required query parameter is added',
      {
        given: {
          'spec/paths/things.yaml': THINGS.replace(
            'parameters:\n',
            'parameters:\n    - { name: filter, in: query, required: true, schema: { type: string } }\n',
          ),
        },
        want: {
          status: 1,
          summary: '1 major, 0 minor, 0 patch',
          mentions: ['parameter-became-required', 'filter\\` query parameter was added', 'FAIL'],
        },
      },
    ],
    [
      'passes an optional field and a new endpoint',
      {
        given: {
          'spec/components/schemas/Thing.yaml': `${THING}  colour: { type: string }\n`,
          'spec/paths/widgets.yaml': WIDGETS,
          'spec/openapi.yaml': `${ROOT}  /v1/widgets:\n    $ref: paths/widgets.yaml\n`,
        },
        want: {
          status: 0,
          summary: '0 major, 2 minor, 0 patch',
          mentions: ['properties/colour', '~1v1~1widgets', 'PASS'],
        },
      },
    ],
  ])('%s', (_name, { given, want }) => {
    repo = repoWith(baseSpec);
    write(repo, given);

    const { status, output, report } = runGate(repo);

    expect(status, output).toBe(want.status);
    for (const text of want.mentions) expect(report).toContain(text);
    expect(output).toContain(want.summary);
  });

  it('checks uncommitted edits against HEAD when run on main itself', () => {
    repo = repoWith(baseSpec);
    git(repo, 'checkout', '--quiet', 'main');
    write(repo, { 'spec/components/schemas/Thing.yaml': THING.replace('  name: { type: string }\n', '') });

    const { status, report } = runGate(repo);

    expect(status).toBe(1);
    expect(report).toContain('property-removed');
  });

  it('passes with a message when the base ref has no spec', () => {
    repo = repoWith({});
    write(repo, baseSpec);

    const { status, output, report } = runGate(repo);

    expect(status, output).toBe(0);
    expect(output).toContain('No spec/openapi.yaml at the base ref');
    expect(report).toContain('nothing to compare');
  });
});
