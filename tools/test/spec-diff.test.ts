// Drives tools/spec-diff.mjs end to end in throwaway git repositories holding a small multi-file spec:
// which base it picks (merge base on a branch, the released snapshot on main), what passes, what
// fails, recorded breaking changes, and the report.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { release } from '../spec-release.mjs';

const gateScript = fileURLToPath(new URL('../spec-diff.mjs', import.meta.url));

const ROOT = `openapi: 3.1.0
info: { title: Fixture, version: 1.0.0 }
servers: [{ url: https://api.example.com/v1 }]
paths:
  /things:
    $ref: paths/things.yaml
  /things/{thing}:
    $ref: paths/thing.yaml
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
            type: array
            items:
              $ref: ../components/schemas/Thing.yaml
`;

const THING_PATH = `get:
  operationId: getThing
  summary: Get a thing
  parameters:
    - { name: thing, in: path, required: true, schema: { type: string } }
  responses:
    '200':
      description: The thing.
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
  state: { type: string, enum: [on, off] }
`;

type Files = Record<string, string>;

const baseSpec: Files = {
  'spec/openapi.yaml': ROOT,
  'spec/paths/things.yaml': THINGS,
  'spec/paths/thing.yaml': THING_PATH,
  'spec/components/schemas/Thing.yaml': THING,
};

const WITHOUT_NAME = {
  'spec/components/schemas/Thing.yaml': THING.replace('  name: { type: string }\n', ''),
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
  return result.stdout.trim();
}

/** A repository whose main branch holds `committed` (no `origin` remote, like a fresh CI clone). */
function repoWith(committed: Files, { released = false } = {}): string {
  const dir = mkdtempSync(join(tmpdir(), 'spec-diff-test-'));
  git(dir, 'init', '--quiet', '--initial-branch=main');
  write(dir, { 'README.md': 'fixture\n', ...committed });
  if (released) release(dir);
  git(dir, 'add', '.');
  git(dir, 'commit', '--quiet', '-m', 'base');
  return dir;
}

function commitAll(dir: string, message: string) {
  git(dir, 'add', '.');
  git(dir, 'commit', '--quiet', '-m', message);
}

function runGate(dir: string, ...args: string[]) {
  const result = spawnSync(process.execPath, [gateScript, ...args], { cwd: dir, encoding: 'utf8' });
  const reportFile = join(dir, 'reports', 'spec-diff.md');
  const report = existsSync(reportFile) ? readFileSync(reportFile, 'utf8') : '';
  return { status: result.status, output: result.stdout + result.stderr, report };
}

describe('spec-diff', { timeout: 60_000 }, () => {
  it('on a branch, fails a removed response field and lists it under every operation it reaches', () => {
    repo = repoWith(baseSpec);
    git(repo, 'checkout', '--quiet', '-b', 'feature');
    write(repo, WITHOUT_NAME);

    const { status, output, report } = runGate(repo);

    expect(status, output).toBe(1);
    expect(output).toContain('merge-base(HEAD, main)');
    expect(output).toContain(
      'spec/components/schemas/Thing.yaml:3:1 breaking response-field-removed GET /things: `[].name` removed (response 200 body)',
    );
    expect(output).toContain(
      'spec/components/schemas/Thing.yaml:3:1 breaking response-field-removed GET /things/{thing}: `name` removed (response 200 body)',
    );
    expect(output).toContain('2 breaking (0 recorded), 0 deprecations, 0 additive. FAIL');
    expect(report).toContain('**FAIL: 2 breaking changes not recorded in spec/breaking-changes.yaml**');
    expect(report).toContain('### `GET /things` (`listThings`)');
    expect(report).toContain('### `GET /things/{thing}` (`getThing`)');
    expect(report).toContain('`spec/components/schemas/Thing.yaml:3:1`');
  });

  it('passes a new response enum value, a new optional field and a new operation', () => {
    repo = repoWith(baseSpec);
    git(repo, 'checkout', '--quiet', '-b', 'feature');
    write(repo, {
      'spec/components/schemas/Thing.yaml': `${THING.replace('[on, off]', '[on, off, idle]')}  colour: { type: string }\n`,
      'spec/paths/widgets.yaml':
        "get:\n  operationId: listWidgets\n  responses:\n    '200': { description: The widgets. }\n",
      'spec/openapi.yaml': `${ROOT}  /widgets:\n    $ref: paths/widgets.yaml\n`,
    });

    const { status, output, report } = runGate(repo);

    expect(status, output).toBe(0);
    expect(output).toContain(
      'additive response-enum-value-added GET /things: `[].state`: new enum value "idle"',
    );
    expect(output).toContain('spec/paths/widgets.yaml:1:1 additive operation-added GET /widgets');
    expect(output).toMatch(
      /0 breaking \(0 recorded\), 0 deprecations, 5 additive\. PASS: no breaking change\./,
    );
    expect(report).toContain('## Additive changes');
    expect(report).not.toContain('## Breaking changes');
  });

  it('passes a breaking change recorded with its reason in spec/breaking-changes.yaml, and shows the reason', () => {
    repo = repoWith(baseSpec);
    git(repo, 'checkout', '--quiet', '-b', 'feature');
    write(repo, {
      ...WITHOUT_NAME,
      'spec/breaking-changes.yaml':
        'accepted:\n  - change: response-field-removed\n    where: name\n    reason: Never filled in by the server.\n',
    });

    const { status, output, report } = runGate(repo);

    expect(status, output).toBe(0);
    expect(report).toContain('**PASS: every breaking change is recorded with its reason**');
    expect(report).toContain('— **recorded**: Never filled in by the server.');
  });

  it('refuses a recorded breaking change without a reason', () => {
    repo = repoWith(baseSpec);
    git(repo, 'checkout', '--quiet', '-b', 'feature');
    write(repo, {
      ...WITHOUT_NAME,
      'spec/breaking-changes.yaml': 'accepted:\n  - change: response-field-removed\n',
    });

    const { status, output } = runGate(repo);

    expect(status).toBe(2);
    expect(output).toContain('entry 1 needs `change` (the kind) and a non-empty `reason`');
  });

  it('on main, checks committed changes against the released snapshot (no origin remote needed)', () => {
    repo = repoWith(baseSpec, { released: true });
    write(repo, WITHOUT_NAME);
    commitAll(repo, 'drop name');

    const { status, output, report } = runGate(repo);

    expect(status, output).toBe(1);
    expect(output).toContain('the last released contract (spec/released/v1.json), version 1.0.0');
    expect(report).toContain('response-field-removed');
  });

  it('on main checked out detached (as CI does), also uses the released snapshot', () => {
    repo = repoWith(baseSpec, { released: true });
    write(repo, WITHOUT_NAME);
    commitAll(repo, 'drop name');
    git(repo, 'checkout', '--quiet', '--detach', 'main');

    const { status, output } = runGate(repo);

    expect(status, output).toBe(1);
    expect(output).toContain('spec/released/v1.json');
  });

  it('passes main again once the release step records the new contract', () => {
    repo = repoWith(baseSpec, { released: true });
    write(repo, WITHOUT_NAME);
    release(repo);
    commitAll(repo, 'release without name');

    const { status, output } = runGate(repo);

    expect(status, output).toBe(0);
    expect(readFileSync(join(repo, 'spec/breaking-changes.yaml'), 'utf8')).toContain('accepted: []');
  });

  it('passes with a message on main when nothing was released yet', () => {
    repo = repoWith(baseSpec);

    const { status, output, report } = runGate(repo);

    expect(status, output).toBe(0);
    expect(output).toContain('nothing released to compare with');
    expect(report).toContain('pnpm spec:release');
  });

  it('passes with a message when the base ref has no spec', () => {
    repo = repoWith({});
    git(repo, 'checkout', '--quiet', '-b', 'feature');
    write(repo, baseSpec);

    const { status, output, report } = runGate(repo);

    expect(status, output).toBe(0);
    expect(output).toContain('No spec at the base');
    expect(report).toContain('nothing to compare');
  });

  it('uses the source root that spec/redocly.yaml names', () => {
    const moved = Object.fromEntries(
      Object.entries(baseSpec).map(([path, text]) => [
        path.replace('spec/openapi.yaml', 'spec/api.yaml'),
        text,
      ]),
    );
    repo = repoWith({ ...moved, 'spec/redocly.yaml': 'apis:\n  v1:\n    root: api.yaml\n' });
    git(repo, 'checkout', '--quiet', '-b', 'feature');
    write(repo, WITHOUT_NAME);

    const { status, output } = runGate(repo);

    expect(status, output).toBe(1);
    expect(output).toContain('spec/components/schemas/Thing.yaml:3:1 breaking response-field-removed');
  });
});
