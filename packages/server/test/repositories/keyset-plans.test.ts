// A keyset page of a big owner must not scan other owners' rows. The pages are run as the repository
// sends them, under EXPLAIN ANALYZE, on a table where a big, older workspace is followed by a smaller
// workspace with newer ids: a plan by the primary key would skip every newer row first.
import { beforeAll, expect, test } from 'vitest';
import { listComputerRows } from '../../src/computers/repositories/computers.js';
import { listOperationRows } from '../../src/computers/repositories/operations.js';
import type { Database, Queryable, QueryResult } from '../../src/platform/db/database.js';
import { newId } from '../../src/platform/ids.js';
import { describeEngines } from '../support/databases.js';

interface PlanNode {
  'Node Type': string;
  'Index Name'?: string;
  'Rows Removed by Filter'?: number;
  Plans?: PlanNode[];
}

/** Runs every statement under EXPLAIN (ANALYZE, FORMAT JSON) and keeps the plans. */
function explaining(db: Database): { db: Queryable; plans: PlanNode[] } {
  const plans: PlanNode[] = [];
  const wrapper = {
    ...db,
    async query<Row>(sql: string, params: readonly unknown[] = []): Promise<QueryResult<Row>> {
      const { rows } = await db.query<{ 'QUERY PLAN': unknown }>(
        `EXPLAIN (ANALYZE, FORMAT JSON) ${sql}`,
        params,
      );
      const raw = rows[0]?.['QUERY PLAN'];
      const parsed = (typeof raw === 'string' ? JSON.parse(raw) : raw) as { Plan: PlanNode }[];
      plans.push(parsed[0]?.Plan as PlanNode);
      return { rows: [], rowCount: 0 };
    },
  };
  return { db: wrapper, plans };
}

const flatten = (node: PlanNode): PlanNode[] => [node, ...(node.Plans ?? []).flatMap(flatten)];

describeEngines('keyset pages of one owner', (engine) => {
  let db: Database;
  const ws = { big: '', newer: '' };
  let middle = '';
  beforeAll(async () => {
    db = await engine.open();
    const principal = newId();
    await db.query(`INSERT INTO principals (id, kind, name) VALUES ($1, 'user', 'keyset')`, [principal]);
    for (const [name, count] of [
      ['big', 3000],
      ['newer', 2000],
    ] as const) {
      const id = newId();
      ws[name] = id;
      await db.query(`INSERT INTO workspaces (id, name, display_name, created_by) VALUES ($1, $2, $2, $3)`, [
        id,
        `keyset-${name}`,
        principal,
      ]);
      // Ids sort in insertion order: a time prefix, then a counter (hex is inside the id alphabet).
      const prefix = newId().slice(0, 11);
      await db.query(
        `INSERT INTO computers (id, workspace_id, name, state, size, image, created_by)
         SELECT $1 || lpad(to_hex(g), 16, '0'), $2, 'c-' || g, 'running', 'small', 'ubuntu-2404', $3
           FROM generate_series(1, $4::int) AS g`,
        [prefix, id, principal, count],
      );
      await db.query(
        `INSERT INTO operations (id, workspace_id, type, state, target_type, target_id, created_by)
         SELECT $1 || lpad(to_hex(g), 16, '0'), $2, 'computer.create', 'succeeded', 'computer', 'x', $3
           FROM generate_series(1, $4::int) AS g`,
        [prefix, id, principal, count],
      );
      if (name === 'big') middle = `${prefix}${(1500).toString(16).padStart(16, '0')}`;
    }
    await db.query('ANALYZE computers');
    await db.query('ANALYZE operations');
  });

  const pages = () => [
    { name: 'first page', after: null },
    { name: 'a page from a cursor', after: middle },
  ];

  test('computers: the (workspace_id, id) index, no row of another workspace read', async () => {
    for (const { name, after } of pages()) {
      const run = explaining(db);
      await listComputerRows(run.db, {
        workspaceId: ws.big,
        state: null,
        selector: null,
        includeDeleted: false,
        after,
        limit: 51,
      });
      const nodes = run.plans.flatMap((plan) => flatten(plan));
      expect(nodes.map((node) => node['Index Name']).filter(Boolean), name).toEqual(['computers_workspace']);
      expect(Math.max(...nodes.map((node) => node['Rows Removed by Filter'] ?? 0)), name).toBe(0);
    }
  });

  test('operations: the (workspace_id, id) index, no row of another workspace read', async () => {
    for (const { name, after } of pages()) {
      const run = explaining(db);
      await listOperationRows(run.db, { workspaceId: ws.big, state: null, targetId: null, after, limit: 51 });
      const nodes = run.plans.flatMap((plan) => flatten(plan));
      expect(nodes.map((node) => node['Index Name']).filter(Boolean), name).toEqual(['operations_workspace']);
      expect(Math.max(...nodes.map((node) => node['Rows Removed by Filter'] ?? 0)), name).toBe(0);
    }
  });
});
