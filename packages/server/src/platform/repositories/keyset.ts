/**
 * The condition and order of a keyset page of one owner's rows, newest first (a workspace's
 * computers, operations, members or service accounts; a service account's keys), for an index on
 * `(owner, id)`.
 *
 * The owner is bounded by a range, `owner >= $n AND owner <= $n`, instead of `owner = $n`, and the page
 * is ordered by `owner DESC, id DESC`. With `=`, PostgreSQL treats the owner as a constant, so `ORDER BY
 * id DESC` alone remains, and the primary key on `id` can deliver that order too: for an owner with most
 * of the table's rows the planner takes it and filters by owner, skipping every newer row of every other
 * owner first (a page of a workspace of 100,000 computers ran 20× slower once another workspace had
 * 4,000 newer ones; ids are time-ordered, so in production the workspaces' rows interleave). Written
 * as a range, only the `(owner, id)` index gives the order, and a cursor (`id < $m`) positions its scan.
 * The answer is the same.
 *
 * @example
 * const page = ownerPage('workspace_id', '$1');
 * await db.query(`SELECT … FROM computers WHERE ${page.where} AND … ORDER BY ${page.order} LIMIT $6`, […]);
 */
export function ownerPage(owner: string, parameter: string, id = 'id'): { where: string; order: string } {
  return {
    where: `${owner} >= ${parameter} AND ${owner} <= ${parameter}`,
    order: `${owner} DESC, ${id} DESC`,
  };
}
