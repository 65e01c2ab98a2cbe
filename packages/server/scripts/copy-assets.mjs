// Copies what tsc does not: the SQL migrations, read at run time from beside dist/platform/db/migrate.js,
// and the rendered API reference (`pnpm spec:docs`, which turbo runs before this build), served at /docs.
import { cpSync, existsSync, mkdirSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const from = join(root, 'src/platform/db/migrations');
const to = join(root, 'dist/platform/db/migrations');
mkdirSync(to, { recursive: true });
cpSync(from, to, { recursive: true, filter: (path) => path === from || basename(path).endsWith('.sql') });
console.log(`copied migrations to ${to}`);

const page = join(root, '../../spec/dist/docs/index.html');
if (!existsSync(page)) {
  console.error(`${page} is missing: run pnpm spec:docs (turbo runs it before this build)`);
  process.exit(1);
}
mkdirSync(join(root, 'dist/docs'), { recursive: true });
cpSync(page, join(root, 'dist/docs/index.html'));
console.log(`copied the API reference to ${join(root, 'dist/docs/index.html')}`);
