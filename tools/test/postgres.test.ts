import pg from 'pg';
import { afterEach, describe, expect, test } from 'vitest';
import {
  createTestDatabase,
  DEFAULT_TEST_DATABASE_URL,
  postgresUnreachable,
  testDatabaseUrl,
} from '../postgres.mjs';

const saved = { TEST_DATABASE_URL: process.env.TEST_DATABASE_URL, DATABASE_URL: process.env.DATABASE_URL };
afterEach(() => {
  for (const [key, value] of Object.entries(saved)) {
    if (value === undefined) delete process.env[key];
    else process.env[key] = value;
  }
});

describe('testDatabaseUrl', () => {
  test('reads TEST_DATABASE_URL and never DATABASE_URL', () => {
    delete process.env.TEST_DATABASE_URL;
    process.env.DATABASE_URL = 'postgres://shared.example/production';
    expect(testDatabaseUrl()).toBe(DEFAULT_TEST_DATABASE_URL);
    process.env.TEST_DATABASE_URL = 'postgres://u@127.0.0.1:1/admin';
    expect(testDatabaseUrl()).toBe('postgres://u@127.0.0.1:1/admin');
  });
});

test('createTestDatabase refuses a prefix that is not a plain identifier', async () => {
  await expect(createTestDatabase({ prefix: 'x; DROP DATABASE postgres' })).rejects.toThrow(
    /invalid database prefix/,
  );
});

const unreachable = await postgresUnreachable();
const ci = process.env.CI === 'true';

describe.skipIf(unreachable !== undefined && !ci)('createTestDatabase (PostgreSQL)', () => {
  test('creates an empty database of its own and drops it', async () => {
    const database = await createTestDatabase({ prefix: 'svc_tools' });
    expect(database.name).toMatch(new RegExp(`^svc_tools_${process.pid}_[0-9a-f]{12}$`));
    const client = new pg.Client({ connectionString: database.url });
    // The forced drop ends this connection; that is expected, not an error of the run.
    client.on('error', () => {});
    await client.connect();
    const { rows } = await client.query('SELECT current_database() AS name');
    // Left open on purpose: drop() must succeed over a live connection (WITH (FORCE)).
    expect(rows[0].name).toBe(database.name);
    await database.drop();
    await client.end().catch(() => {});
    const admin = new pg.Client({ connectionString: testDatabaseUrl() });
    await admin.connect();
    const left = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [database.name]);
    await admin.end();
    expect(left.rowCount).toBe(0);
  });
});
