// The spec-dev loop bundles in-process (tools/spec-dev/bundle.mjs) instead of starting `redocly bundle`;
// the files it writes to spec/dist/ must still be the CLI's, byte for byte, in both formats. Against the
// repository's spec and a save that does not bundle.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { bundleSpec } from '../spec-bundle.mjs';
import { bundleJson, bundleYaml } from '../spec-dev/bundle.mjs';

const specDir = fileURLToPath(new URL('../../spec', import.meta.url));
const work = mkdtempSync(join(tmpdir(), 'spec-dev-bundle-'));

afterAll(() => rmSync(work, { recursive: true, force: true }));

describe('the spec-dev bundle', () => {
  it.each(['json', 'yaml'] as const)(
    'is the bytes of redocly bundle --ext %s',
    async (ext) => {
      const json = await bundleJson({ specDir });
      if (!json.ok) throw new Error(json.error);
      const cli = join(work, `openapi.${ext}`);
      bundleSpec(specDir, cli, ext);
      expect(ext === 'json' ? json.text : bundleYaml(json.doc)).toBe(readFileSync(cli, 'utf8'));
    },
    120_000,
  );

  it.each([
    ['a source that does not parse', 'openapi: 3.1.0\npaths: [\n', /openapi\.yaml/],
    [
      'a $ref to no file',
      "openapi: 3.1.0\ninfo: { $ref: './gone.yaml' }\n",
      /^openapi\.yaml:\d+:\d+ .*gone\.yaml/,
    ],
  ])('reports %s with its file, and never throws', async (name, source, want) => {
    const dir = join(work, name.replaceAll(' ', '-'));
    mkdirSync(dir);
    writeFileSync(join(dir, 'redocly.yaml'), 'extends: [minimal]\n');
    writeFileSync(join(dir, 'openapi.yaml'), source);
    const result = await bundleJson({ specDir: dir });
    expect(result.ok ? '' : result.error).toMatch(want);
  });
});
