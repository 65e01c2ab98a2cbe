// Seeds the list benchmark straight in SQL (generate_series), bypassing the API and its quotas: a
// workspace per size, owned by the bootstrap service account, with `count` running computers each.
import { newId } from '../dist/platform/ids.js';

/**
 * @param {{ query: (sql: string, params?: unknown[]) => Promise<{ rows: any[] }> }} db the server's own
 *   Database (dist/db/open.js), so one code path seeds PGlite and PostgreSQL alike
 * @param {string} principalId the bootstrap service account (it must see the workspaces)
 * @param {Record<string, number>} sizes workspace name → number of computers
 * @returns {Promise<Record<string, { id: string, computer: string }>>} each workspace's id and one computer id
 */
export async function seedWorkspaces(db, principalId, sizes) {
  const seeded = {};
  let marker = 0;
  for (const [name, count] of Object.entries(sizes)) {
    const workspaceId = newId();
    await db.query(`INSERT INTO workspaces (id, name, display_name, created_by) VALUES ($1, $2, $2, $3)`, [
      workspaceId,
      name,
      principalId,
    ]);
    await db.query(
      `INSERT INTO members (id, workspace_id, principal_id, role) VALUES ($1, $2, $3, 'owner')`,
      [newId(), workspaceId, principalId],
    );
    // Ids: a fresh 10-char time prefix, one marker char per workspace, then 16 hex digits (hex is inside
    // the id alphabet), so every id is a valid 27-char id and they sort in insertion order.
    const prefix = `${newId().slice(0, 10)}${(marker++).toString(16)}`;
    await db.query(
      `INSERT INTO computers (id, workspace_id, name, state, size, image, labels, created_by, started_at)
       SELECT $1 || lpad(to_hex(g), 16, '0'), $2, 'c-' || g, 'running', 'small', 'ubuntu-2404',
              jsonb_build_object('tier', CASE WHEN g % 2 = 0 THEN 'even' ELSE 'odd' END), $3, now()
         FROM generate_series(1, $4::int) AS g`,
      [prefix, workspaceId, principalId, count],
    );
    // The live-computers counter the quota reads (migration 009), as the API would have left it.
    await db.query('UPDATE workspaces SET live_computers = $2 WHERE id = $1', [workspaceId, count]);
    seeded[name] = { id: workspaceId, computer: `${prefix}${(1).toString(16).padStart(16, '0')}` };
  }
  await db.query('ANALYZE computers');
  return seeded;
}
