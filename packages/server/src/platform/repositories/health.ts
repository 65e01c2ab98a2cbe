import type { Queryable } from '../db/database.js';

/** Whether the database answers: `SELECT 1` (rejects when it does not). */
export async function ping(db: Queryable): Promise<void> {
  await db.query('SELECT 1');
}
