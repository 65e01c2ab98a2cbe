import { readdirSync, readFileSync } from 'node:fs';
import { expect, test } from 'vitest';

const dir = new URL('../../src/handlers/', import.meta.url);

// Handlers reach the database through the repositories in src/repositories/ (and the policy in
// access.ts, the records in operations/records.ts): they pass `ctx.db` along, never query it.
test.each(readdirSync(dir).filter((name) => name.endsWith('.ts')))('%s runs no SQL of its own', (name) => {
  const source = readFileSync(new URL(name, dir), 'utf8');
  expect(source.match(/\.(query|transaction)\s*[<(]/g) ?? []).toEqual([]);
  expect(source.match(/\b(SELECT|INSERT INTO|UPDATE \w+ SET|DELETE FROM)\b/g) ?? []).toEqual([]);
});
