import type { Schema } from '@svc/contract';
import { membershipsOf } from '../identity/repositories/principals.js';
import type { NoDeps } from './deps.js';
import type { Handler } from './types.js';

/**
 * `GET /me`: the caller and its workspaces with its current role in each. The app authenticates this
 * operation with `{ workspaces: true }`, so both come from ONE query (the hot path of every client).
 */
export const getMe: Handler<'getMe', NoDeps> = async (ctx) => {
  const { principal } = ctx;
  const rows: Schema<'WorkspaceMembership'>[] =
    principal.workspaces ?? (await membershipsOf(ctx.db, principal.id));
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
