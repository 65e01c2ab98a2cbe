import { workspaceAccess } from '../identity/access.js';
import type { Principal } from '../identity/auth/authenticate.js';
import type { Queryable } from '../platform/db/database.js';
import { ApiError } from '../platform/errors.js';
import type { RateLimiter, RateLimitState } from '../platform/ratelimit.js';

/**
 * A mutation's place in its workspace's budget (design §11), taken before its transaction opens and
 * handed to the handler, which claims it where it used to count ({@link MutationTicket.use}).
 */
export interface MutationTicket {
  /** The handler's count: answers where the budget stands, for the workspace the ticket was taken in. */
  use(workspaceId: string): RateLimitState | undefined;
  /** Gives the place back when the handler never claimed it (refused earlier, or a replay). */
  settle(): Promise<void>;
}

/**
 * Counts a workspace mutation BEFORE the request's transaction begins, so that no request holds a
 * pooled connection and a row lock while it waits for another connection to count (ten locking
 * PATCHes once held a pool of ten and waited for an eleventh, for ever). The workspace is the one the
 * path names, resolved as the handler will resolve it (an id, else a name) among the caller's
 * memberships; a caller who is no member there is not counted (the handler answers 404). A place
 * the handler does not claim is given back, so what counts is unchanged: a mutation that got past
 * its permission check.
 *
 * @example
 * const ticket = await takeMutationTicket(limiter, db, principal, ctx.input.params.workspace);
 * try { await run({ countMutation: (id) => ticket.use(id) }); } finally { await ticket.settle(); }
 */
export async function takeMutationTicket(
  limiter: RateLimiter | undefined,
  db: Queryable,
  principal: Principal | undefined,
  ref: string | undefined,
): Promise<MutationTicket> {
  if (!limiter?.policies.workspace_mutations || !principal || ref === undefined) return UNLIMITED;
  const workspaceId = await memberWorkspace(db, principal, ref);
  if (workspaceId === undefined) return NOT_A_MEMBER;
  const state = await limiter.take('workspace_mutations', workspaceId);
  let used = false;
  return {
    use(id) {
      if (id !== workspaceId) throw changedMeanwhile();
      used = true;
      return state;
    },
    async settle() {
      // A give-back that fails (the database went away) leaves the budget a request smaller: harmless.
      if (!used) await limiter.giveBack('workspace_mutations', workspaceId).catch(() => {});
    },
  };
}

/**
 * Counts a mutation that holds no transaction (a read never counts) when its handler counts it: it
 * got past its permission check in `workspaceId`, and waiting for a connection holds none.
 */
export async function countMutationNow(
  limiter: RateLimiter | undefined,
  workspaceId: string,
): Promise<RateLimitState | undefined> {
  return limiter?.policies.workspace_mutations ? limiter.take('workspace_mutations', workspaceId) : undefined;
}

/** The limit is off (or the operation names no workspace): nothing to count. */
const UNLIMITED: MutationTicket = { use: () => undefined, settle: async () => {} };

/** The caller was no member of the workspace named, so nothing was counted. */
const NOT_A_MEMBER: MutationTicket = {
  use() {
    // The handler found a membership the ticket did not: it began in between. Counting now would
    // wait for a connection inside the transaction, so the request is answered "retry" instead.
    throw changedMeanwhile();
  },
  settle: async () => {},
};

/** The workspace `ref` names, when the caller is a member there (any role); else undefined. */
async function memberWorkspace(
  db: Queryable,
  principal: Principal,
  ref: string,
): Promise<string | undefined> {
  try {
    // Among the memberships the principal was authenticated with; one they do not list is looked up.
    return (await workspaceAccess(db, principal, ref, 'read')).workspace.id;
  } catch (error) {
    if (error instanceof ApiError && error.code === 'not_found') return undefined;
    throw error;
  }
}

function changedMeanwhile(): ApiError {
  return new ApiError(
    'unavailable',
    'your membership of this workspace changed while the request was counted; retry',
    {
      headers: { 'retry-after': '1' },
    },
  );
}
