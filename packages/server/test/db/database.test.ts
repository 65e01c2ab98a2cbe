import pg from 'pg';
import { beforeAll, beforeEach, describe, expect, test } from 'vitest';
import { takeComputerPlace } from '../../src/computers/repositories/computers.js';
import type { Database } from '../../src/platform/db/database.js';
import { sqlLiteral } from '../../src/platform/db/database.js';
import { loadMigrations, MigrationError, migrate } from '../../src/platform/db/migrate.js';
import { newId } from '../../src/platform/ids.js';

import { describeEngines, describePostgres } from '../support/databases.js';

describeEngines('database', (engine) => {
  let db: Database;
  beforeAll(async () => {
    db = await engine.open();
  });

  test('engine name', () => {
    expect(db.engine).toBe(engine.name);
  });

  test('types come back the same on both engines', async () => {
    const { rows } = await db.query<Record<string, unknown>>(
      `SELECT 1::int4 AS i4, 9007199254740991::int8 AS i8, count(*) AS n, 'x'::text AS t, true AS b,
              '{"a":[1,"b"]}'::jsonb AS j, now() AS ts, NULL::text AS nothing
         FROM (SELECT 1) AS one`,
    );
    expect(rows).toHaveLength(1);
    const row = rows[0]!;
    expect(row).toMatchObject({
      i4: 1,
      i8: 9007199254740991,
      n: 1,
      t: 'x',
      b: true,
      j: { a: [1, 'b'] },
      nothing: null,
    });
    expect(row.ts).toBeInstanceOf(Date);
  });

  test.each([
    ['SELECT counts rows returned', `SELECT * FROM generate_series(1, 3)`, 3],
    [
      'UPDATE counts rows changed',
      `UPDATE schema_migrations SET name = name WHERE version > 0`,
      loadMigrations().length,
    ],
    ['DELETE of nothing', `DELETE FROM computers WHERE id = 'none'`, 0],
  ])('rowCount: %s', async (_name, sql, want) => {
    expect((await db.query(sql)).rowCount).toBe(want);
  });

  test('ids sort in byte order (COLLATE "C"), so ORDER BY id is creation order', async () => {
    const owner = newId();
    await db.query(`INSERT INTO principals (id, kind, name) VALUES ($1, 'user', $2)`, [owner, `u${owner}`]);
    const ids = ['0000000000zzzzzzzzzzzzzzzzz', '00000000010000000000000000a', '0000000000a0000000000000000'];
    for (const id of ids) {
      await db.query(`INSERT INTO workspaces (id, name, created_by) VALUES ($1, $2, $3)`, [
        id,
        `w-${id}`,
        owner,
      ]);
    }
    const { rows } = await db.query<{ id: string }>(
      `SELECT id FROM workspaces WHERE id = ANY($1) ORDER BY id`,
      [ids],
    );
    expect(rows.map((row) => row.id)).toEqual([...ids].sort());
  });

  test('a transaction commits when fn resolves and rolls back when it throws', async () => {
    const kept = newId();
    const dropped = newId();
    await db.transaction(async (tx) => {
      await tx.query(`INSERT INTO principals (id, kind, name) VALUES ($1, 'user', $1)`, [kept]);
    });
    const boom = new Error('boom');
    await expect(
      db.transaction(async (tx) => {
        await tx.query(`INSERT INTO principals (id, kind, name) VALUES ($1, 'user', $1)`, [dropped]);
        throw boom;
      }),
    ).rejects.toBe(boom);
    const { rows } = await db.query<{ id: string }>(`SELECT id FROM principals WHERE id = ANY($1)`, [
      [kept, dropped],
    ]);
    expect(rows.map((row) => row.id)).toEqual([kept]);
  });

  test('a failed statement rolls the whole transaction back and surfaces the SQLSTATE', async () => {
    const id = newId();
    const error = await db
      .transaction(async (tx) => {
        await tx.query(`INSERT INTO principals (id, kind, name) VALUES ($1, 'user', $1)`, [id]);
        await tx.query(`INSERT INTO principals (id, kind, name) VALUES ($1, 'user', $1)`, [id]);
      })
      .catch((caught: unknown) => caught);
    expect((error as { code?: string }).code).toBe('23505');
    expect((await db.query(`SELECT 1 FROM principals WHERE id = $1`, [id])).rowCount).toBe(0);
  });

  describe('commitWith: a final statement sent with the COMMIT', () => {
    class Refused extends Error {}
    const refusal = () => new Refused('no place');
    /** A principal and a workspace whose counter stands at `live`. */
    const workspaceWith = async (live: number) => {
      const owner = newId();
      const id = newId();
      await db.query(`INSERT INTO principals (id, kind, name) VALUES ($1, 'user', $1)`, [owner]);
      await db.query(
        `INSERT INTO workspaces (id, name, created_by, live_computers) VALUES ($1, $1, $2, $3)`,
        [id, owner, live],
      );
      return id;
    };
    const counter = async (id: string) =>
      (await db.query<{ n: number }>('SELECT live_computers AS n FROM workspaces WHERE id = $1', [id]))
        .rows[0]?.n;
    const principalExists = async (id: string) =>
      (await db.query('SELECT 1 FROM principals WHERE id = $1', [id])).rowCount === 1;

    test('runs after everything the transaction did, even what came after it was handed over', async () => {
      const id = newId();
      await db.transaction(async (tx) => {
        await tx.commitWith({ sql: `UPDATE principals SET name = 'last' WHERE id = ${sqlLiteral(id)}` });
        await tx.query(`INSERT INTO principals (id, kind, name) VALUES ($1, 'user', 'first')`, [id]);
      });
      const { rows } = await db.query<{ name: string }>('SELECT name FROM principals WHERE id = $1', [id]);
      expect(rows).toEqual([{ name: 'last' }]);
    });

    test('a place left: the counter moves and the transaction commits', async () => {
      const workspace = await workspaceWith(1);
      const written = newId();
      await db.transaction(async (tx) => {
        await tx.query(`INSERT INTO principals (id, kind, name) VALUES ($1, 'user', $1)`, [written]);
        await takeComputerPlace(tx, workspace, 2, refusal);
      });
      expect(await counter(workspace)).toBe(2);
      expect(await principalExists(written)).toBe(true);
    });

    test('a refusal rolls back everything the transaction wrote and throws the translated error', async () => {
      const workspace = await workspaceWith(2);
      const written = newId();
      const error = await db
        .transaction(async (tx) => {
          await tx.query(`INSERT INTO principals (id, kind, name) VALUES ($1, 'user', $1)`, [written]);
          await takeComputerPlace(tx, workspace, 2, refusal);
          await tx.query('UPDATE workspaces SET display_name = $2 WHERE id = $1', [workspace, 'changed']);
        })
        .catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(Refused);
      expect(await counter(workspace)).toBe(2);
      expect(await principalExists(written)).toBe(false);
      const { rows } = await db.query('SELECT display_name FROM workspaces WHERE id = $1', [workspace]);
      expect(rows).toEqual([{ display_name: '' }]);
      // The connection went back to the pool clean: the next transaction commits.
      await db.transaction((tx) => takeComputerPlace(tx, workspace, 3, refusal));
      expect(await counter(workspace)).toBe(3);
    });

    test('an error no statement translates is thrown as it is (the SQLSTATE kept)', async () => {
      const error = await db
        .transaction((tx) => tx.commitWith({ sql: 'SELECT 1/0', refused: () => undefined }))
        .catch((caught: unknown) => caught);
      expect((error as { code?: string }).code).toBe('22012');
    });

    test('outside a transaction it runs at once', async () => {
      const workspace = await workspaceWith(0);
      await takeComputerPlace(db, workspace, 1, refusal);
      expect(await counter(workspace)).toBe(1);
      await expect(takeComputerPlace(db, workspace, 1, refusal)).rejects.toBeInstanceOf(Refused);
      expect(await counter(workspace)).toBe(1);
    });

    test('values are checked, then inlined: text only as an escaped literal', async () => {
      const tricky = "it's a \\ 'quoted'); DROP TABLE workspaces; --";
      const { rows } = await db.query<{ t: string }>(`SELECT ${sqlLiteral(tricky)} AS t`);
      expect(rows).toEqual([{ t: tricky }]);
      const workspace = await workspaceWith(0);
      await expect(takeComputerPlace(db, "x'); DROP TABLE workspaces; --", 1, refusal)).rejects.toThrow(
        /by id/,
      );
      for (const limit of [1.5, -1, Number.NaN, 2 ** 31])
        await expect(takeComputerPlace(db, workspace, limit, refusal)).rejects.toThrow(/integer/);
      expect(await counter(workspace)).toBe(0);
    });
  });

  test('listen receives NOTIFY payloads sent at commit', async () => {
    const got: string[] = [];
    const unlisten = await db.listen('svc_test', (payload) => got.push(payload));
    await db.transaction(async (tx) => {
      await tx.query(`SELECT pg_notify('svc_test', 'hello')`);
    });
    await expect.poll(() => got, { timeout: 2000 }).toEqual(['hello']);
    await unlisten();
  });
});

describeEngines('migrate', (engine) => {
  // One database for the suite (PGlite start-up is slow); each test starts from an empty schema.
  let db: Database;
  beforeAll(async () => {
    db = await engine.open({ migrate: false });
  });
  beforeEach(async () => {
    await db.exec('DROP SCHEMA public CASCADE; CREATE SCHEMA public;');
  });

  test('applies every migration once, then nothing', async () => {
    const all = loadMigrations().map((migration) => migration.version);
    expect(await migrate(db)).toEqual(all);
    expect(await migrate(db)).toEqual([]);
    const { rows } = await db.query<{ version: number }>(
      'SELECT version FROM schema_migrations ORDER BY version',
    );
    expect(rows.map((row) => row.version)).toEqual(all);
  });

  test('the rate-limit counters skip the WAL (an upsert per request must not wait for a flush)', async () => {
    await migrate(db);
    const { rows } = await db.query<{ relpersistence: string }>(
      `SELECT relpersistence FROM pg_class WHERE relname = 'rate_limits'`,
    );
    expect(rows).toEqual([{ relpersistence: 'u' }]);
  });

  test('refuses a migration edited after it was applied', async () => {
    const migrations = loadMigrations();
    await migrate(db, migrations);
    const edited = migrations.map((m, i) => (i === 0 ? { ...m, checksum: 'changed' } : m));
    await expect(migrate(db, edited)).rejects.toBeInstanceOf(MigrationError);
  });

  test('refuses a database newer than this server', async () => {
    await migrate(db);
    await db.query(`INSERT INTO schema_migrations (version, name, checksum) VALUES (999, 'future', 'x')`);
    await expect(migrate(db)).rejects.toThrow(/newer than this server/);
  });

  test('a failing migration leaves nothing behind', async () => {
    const broken = [
      {
        version: 1,
        name: 'broken',
        checksum: 'x',
        sql: 'CREATE TABLE half (a int); SELECT no_such_function();',
      },
    ];
    await expect(migrate(db, broken)).rejects.toThrow();
    expect(
      (await db.query(`SELECT 1 FROM pg_tables WHERE tablename IN ('half', 'schema_migrations')`)).rowCount,
    ).toBe(0);
  });
});

describePostgres('migrate with several replicas', (engine) => {
  test('replicas starting at once migrate exactly once', async () => {
    const first = await engine.open({ migrate: false });
    const replicas = [first, ...(await Promise.all([1, 2, 3].map(() => engine.replica(first))))];
    const results = await Promise.all(replicas.map((db) => migrate(db)));
    const all = loadMigrations().map((migration) => migration.version);
    expect(results.filter((applied) => applied.length > 0)).toEqual([all]);
    expect(results.flat()).toEqual(all);
  });
});

// What travels to PostgreSQL, message by message: `pg` sends each `client.query` as one message (a
// simple query, or Parse/Bind/Execute/Sync for one with parameters) and waits for its answer.
describePostgres('commitWith on PostgreSQL: the final statement and the COMMIT in one message', (engine) => {
  test('BEGIN, the statements, then `<final>; COMMIT` as one parameterless query', async () => {
    const db = await engine.open();
    const owner = newId();
    const workspace = newId();
    await db.query(`INSERT INTO principals (id, kind, name) VALUES ($1, 'user', $1)`, [owner]);
    await db.query(`INSERT INTO workspaces (id, name, created_by) VALUES ($1, $1, $2)`, [workspace, owner]);
    const sent: unknown[][] = [];
    const original = pg.Client.prototype.query;
    pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
      sent.push(args);
      return (original as (...args: unknown[]) => unknown).apply(this, args);
    } as typeof original;
    try {
      await db.transaction(async (tx) => {
        await tx.query('UPDATE workspaces SET display_name = $2 WHERE id = $1', [workspace, 'x']);
        await takeComputerPlace(tx, workspace, 5, () => new Error('refused'));
      });
    } finally {
      pg.Client.prototype.query = original;
    }
    const texts = sent.map(([query]) => (typeof query === 'string' ? query : (query as pg.QueryConfig).text));
    expect(texts).toEqual([
      'BEGIN',
      'UPDATE workspaces SET display_name = $2 WHERE id = $1',
      `SELECT svc_take_computer_place('${workspace}', 5);\nCOMMIT`,
    ]);
    // The last one has no parameters (a simple query, which may hold several statements).
    expect(sent.at(-1)).toEqual([texts.at(-1)]);
    const { rows } = await db.query('SELECT live_computers, display_name FROM workspaces WHERE id = $1', [
      workspace,
    ]);
    expect(rows).toEqual([{ live_computers: 1, display_name: 'x' }]);
  });
});

describe('loadMigrations', () => {
  test('files are numbered 1, 2, 3… and non-empty', () => {
    const migrations = loadMigrations();
    expect(migrations.length).toBeGreaterThan(0);
    migrations.forEach((migration, index) => {
      expect(migration.version).toBe(index + 1);
      expect(migration.sql.trim()).not.toBe('');
    });
  });
});
