import type { Schema } from '@svc/contract';
import type { Handler } from './types.js';

/**
 * `GET /me`: the caller and its workspaces with its current role in each. The app authenticates this
 * operation with `{ workspaces: true }`, so both come from ONE query (the hot path of every client).
 */
export const getMe: Handler<'getMe'> = async (ctx) => {
  const { principal } = ctx;
  const rows: Schema<'WorkspaceMembership'>[] =
    principal.workspaces ??
    (
      await ctx.db.query<Schema<'WorkspaceMembership'>>(
        `SELECT w.id, w.name, CASE WHEN w.display_name = '' THEN w.name ELSE w.display_name END AS display_name, m.role
           FROM members m JOIN workspaces w ON w.id = m.workspace_id
          WHERE m.principal_id = $1 ORDER BY w.id DESC LIMIT 1000`,
        [principal.id],
      )
    ).rows;
  return {
    status: 200,
    body: {
      identity: {
        principal: {
          id: principal.id,
          kind: principal.kind,
          name: principal.name,
          display_name: principal.display_name || principal.name,
          ...(principal.email ? { email: principal.email } : {}),
        },
        workspaces: rows,
      },
    },
  };
};

export const identityHandlers = { getMe };
