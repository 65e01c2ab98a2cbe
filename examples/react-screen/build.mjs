// Builds the page into dist/: the script bundled by esbuild (React, the client, the kit and its
// simulated screen), and index.html beside it.
import { copyFile, mkdir } from 'node:fs/promises';
import { build } from 'esbuild';

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
await copyFile('index.html', 'dist/index.html');
