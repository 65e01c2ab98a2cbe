// Builds the page into dist/: the script bundled by esbuild (React, xterm.js, the client, the kit and
// its simulated terminals), xterm.js's stylesheet and index.html beside it.
import { copyFile, mkdir } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { build } from 'esbuild';

const require = createRequire(import.meta.url);
await mkdir('dist', { recursive: true });
await build({
  entryPoints: ['src/main.tsx'],
  outfile: 'dist/app.js',
  bundle: true,
  format: 'esm',
  platform: 'browser',
  target: 'es2022',
  jsx: 'automatic',
  define: { 'process.env.NODE_ENV': '"production"' },
  minify: true,
  sourcemap: true,
  logLevel: 'warning',
});
await copyFile(require.resolve('@xterm/xterm/css/xterm.css'), 'dist/xterm.css');
await copyFile('index.html', 'dist/index.html');
