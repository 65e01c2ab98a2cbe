// Drives tools/spec-score.mjs against a one-operation bundle whose Agent Readiness is about 60.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const scoreScript = fileURLToPath(new URL('../spec-score.mjs', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'spec-score-test-'));
const bundle = join(dir, 'dist', 'openapi.json');
mkdirSync(join(dir, 'dist'));
writeFileSync(
  bundle,
  JSON.stringify({
    openapi: '3.1.0',
    info: { title: 'Fixture', version: '1.0.0' },
    servers: [{ url: 'https://api.example.com' }],
    paths: {
      '/v1/things': {
        get: {
          operationId: 'listThings',
          summary: 'List things',
          responses: { '200': { description: 'The things.' } },
        },
      },
    },
  }),
);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function score(...args: string[]) {
  const result = spawnSync(process.execPath, [scoreScript, ...args], { encoding: 'utf8' });
  return { status: result.status, output: result.stdout + result.stderr };
}

describe('spec-score', { timeout: 30_000 }, () => {
  it.each<[string, { given: string[]; want: { status: number; output: RegExp } }]>([
    [
      'fails below the default minimum of 95',
      { given: [bundle], want: { status: 1, output: /is below 95/ } },
    ],
    [
      'passes at or above --min',
      { given: [bundle, '--min', '10'], want: { status: 0, output: /\(minimum 10\)/ } },
    ],
    [
      'names the operations that pull the score down',
      { given: [bundle], want: { status: 1, output: /GET \/v1\/things \(listThings\)\n\s+- Missing/ } },
    ],
    [
      'reports a missing bundle as an error',
      { given: [join(dir, 'nope.json')], want: { status: 2, output: /missing: bundle the spec first/ } },
    ],
  ])('%s', (_name, { given, want }) => {
    const { status, output } = score(...given);

    expect(status, output).toBe(want.status);
    expect(output).toMatch(want.output);
    if (want.status !== 2) expect(output).toMatch(/^Agent Readiness: \d+(\.\d+)?\/100/m);
  });
});
