// Copies what tsc does not: the SQL migrations, read at run time from beside dist/platform/db/migrate.js.
import { cpSync, mkdirSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const from = join(root, 'src/platform/db/migrations');
const to = join(root, 'dist/platform/db/migrations');
mkdirSync(to, { recursive: true });
cpSync(from, to, { recursive: true, filter: (path) => path === from || basename(path).endsWith('.sql') });
console.log(`copied migrations to ${to}`);
