// Builds the published `svc`: src/main.ts and everything it imports (the workspace packages and the
// libraries) bundled by esbuild into dist/, one chunk per lazily imported part, so the package has no
// workspace: ranges and a command loads only the code it runs. The bundled spec document is copied
// beside the chunks, where @svc/contract's loadDocument looks for it (./generated/openapi.json).
// A lazily imported CommonJS library (yaml) keeps its named exports there, as under Node
// (commonjs-named-exports.mjs); test/installed runs the packed and installed result.
import { copyFile, mkdir, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { commonJsNamedExports } from './commonjs-named-exports.mjs';

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const dist = join(root, 'dist');
const require = createRequire(import.meta.url);

await rm(dist, { recursive: true, force: true });
await build({
  absWorkingDir: root,
  entryPoints: { main: 'src/main.ts' },
  outdir: 'dist',
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node24',
  chunkNames: 'chunk-[hash]',
  minifySyntax: true,
  legalComments: 'linked',
  logLevel: 'warning',
  plugins: [commonJsNamedExports],
  // Bundled CommonJS dependencies (commander, ajv…) call require() for Node built-ins.
  banner: {
    js: "import { createRequire as __svcCreateRequire } from 'node:module'; const require = __svcCreateRequire(import.meta.url);",
  },
});
await mkdir(join(dist, 'generated'), { recursive: true });
await copyFile(require.resolve('@svc/contract/openapi.json'), join(dist, 'generated', 'openapi.json'));
