// Generators that frontend teams point at the bundle: each one generates from spec/dist/openapi.json and
// its output type-checks under strict TypeScript. Versions are pinned in the workspace catalog. Runs in the
// default (mock) run only; a few seconds per generator.
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';

const run = promisify(execFile);
const require = createRequire(import.meta.url);
const pkg = fileURLToPath(new URL('../../', import.meta.url));
const bin = (name: string) => join(pkg, 'node_modules', '.bin', name);
const bundle = require.resolve('@svc/contract/openapi.json');
// Inside node_modules so the generated code resolves zod and friends, and git never sees it.
const cache = join(pkg, 'node_modules', '.cache');
mkdirSync(cache, { recursive: true });
const root = mkdtempSync(join(cache, 'generators-'));

const TSCONFIG = {
  compilerOptions: {
    target: 'ES2022',
    module: 'ESNext',
    moduleResolution: 'bundler',
    lib: ['ES2022', 'DOM', 'DOM.Iterable'],
    strict: true,
    noEmit: true,
    skipLibCheck: true,
    types: [],
  },
  include: ['**/*.ts'],
};

const schemasOnly = join(
  dirname(require.resolve('openapi-zod-client/package.json')),
  'src/templates/schemas-only.hbs',
);

const GENERATORS: [string, (out: string) => [string, string[]]][] = [
  // The default template needs @zodios/core; the schemas are what a team validates with.
  [
    'openapi-zod-client (zod schemas)',
    (out) => [bin('openapi-zod-client'), [bundle, '-o', join(out, 'api.ts'), '-t', schemasOnly]],
  ],
  [
    'orval (zod)',
    (out) => [bin('orval'), ['--input', bundle, '--output', join(out, 'api.ts'), '--client', 'zod']],
  ],
  [
    'orval (fetch)',
    (out) => [bin('orval'), ['--input', bundle, '--output', join(out, 'api.ts'), '--client', 'fetch']],
  ],
  ['@hey-api/openapi-ts', (out) => [bin('openapi-ts'), ['-i', bundle, '-o', out]]],
  [
    'swagger-typescript-api',
    (out) => [bin('swagger-typescript-api'), ['generate', '-p', bundle, '-o', out, '-n', 'api.ts']],
  ],
];

afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('code generators on the bundle', () => {
  it.each(GENERATORS)(
    '%s generates code that type-checks (strict)',
    async (name, command) => {
      const out = join(root, name.replace(/[^a-z0-9]+/gi, '-'));
      mkdirSync(out, { recursive: true });
      const [file, args] = command(out);
      await run(file, args, { cwd: pkg, timeout: 120_000 });
      writeFileSync(join(out, 'tsconfig.json'), JSON.stringify(TSCONFIG));
      const checked = await run(bin('tsc'), ['-p', join(out, 'tsconfig.json')], { cwd: pkg }).then(
        () => '',
        (error: { stdout?: string }) => error.stdout ?? String(error),
      );
      expect(checked, `${name}: tsc errors`).toBe('');
    },
    180_000,
  );
});
