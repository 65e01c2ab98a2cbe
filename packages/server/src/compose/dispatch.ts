import { createHash } from 'node:crypto';
import type { OperationId } from '@svc/contract';
import type { AppDeps } from '../handlers/deps.js';
import type { AnyCtx, Ctx } from '../handlers/types.js';
import { IncomingBytes, isOutgoingBytes } from '../http/byte-body.js';
import type { HandlerContext } from '../http/context.js';
import { runIdempotentBytes } from '../http/idempotency-bytes.js';
import { isEventStream } from '../http/sse.js';
import type { Validator } from '../http/validation.js';
import type { Access } from '../identity/access.js';
import type { Principal } from '../identity/auth/authenticate.js';
import { AuthError } from '../identity/auth/errors.js';
import type { PrincipalCache } from '../identity/auth/principal-cache.js';
import type { StoredResponse } from '../platform/idempotency.js';
import { forgetIdempotencyKey, requestFingerprint, runIdempotent } from '../platform/idempotency.js';
import { rateLimitHeaders } from '../platform/ratelimit.js';
import { handlers } from './handlers.js';
import { countMutationNow, takeMutationTicket } from './mutation-budget.js';
import { clientAddress } from './rate-limits.js';

/**
 * The pipeline's `handle`: builds the handler's context and runs the handler of `ctx.operationId`. A
 * mutating operation (one with an `Idempotency-Key` parameter) runs in one transaction with its key's
 * record (design §10), unless the spec declares `x-svc.transaction: none` (a mutation that writes
 * nothing but that record and waits on something slow, like `execComputer`, holds no connection); a
 * replay answers the stored response with `Idempotent-Replayed: true`. The handler gets the permission
 * the spec declares for its operation (`x-svc.permission`).
 *
 * @example
 * const handle = dispatcher({ deps, validator, principals });
 */
export function dispatcher(options: {
  deps: AppDeps;
  validator: Validator;
  principals: PrincipalCache;
}): (ctx: HandlerContext) => Promise<Response> {
  const { deps, validator, principals } = options;
  const { db, limiter } = deps;

  const run = async (ctx: HandlerContext, principal: Principal | undefined): Promise<Response> => {
    const operationId = ctx.operationId;
    const counted = ctx.get('rateLimit');
    const read = ctx.request.method === 'GET' || ctx.request.method === 'HEAD';
    const shape = validator.shape(operationId);
    // A mutation in a transaction takes its place in its workspace's budget now, before the
    // transaction opens: counting waits for a pooled connection, which a request must never do while
    // it holds one. One outside a transaction holds none: it counts when its handler does.
    const outside = read || shape.idempotencyKey === 'none' || shape.policy.transaction === 'none';
    const ticket = outside
      ? undefined
      : await takeMutationTicket(
          limiter,
          db,
          principal,
          (ctx.input.params as { workspace?: string }).workspace,
        );
    // The context less where the handler reads and writes, and the access it checks with (respond's).
    const base: Omit<AnyCtx, 'db' | 'access'> = {
      operationId,
      permission: shape.policy.permission,
      requestId: ctx.requestId,
      request: ctx.request,
      path: ctx.input.params,
      query: ctx.input.query,
      body: ctx.input.body,
      principal,
      deps,
      clientAddress: clientAddress(ctx.env),
      async countMutation(workspaceId: string) {
        const state = ticket ? ticket.use(workspaceId) : await countMutationNow(limiter, workspaceId);
        Object.assign(ctx.headers, rateLimitHeaders([counted, state]));
        return state;
      },
    };
    try {
      return await respond(ctx, principal, outside, base);
    } finally {
      await ticket?.settle();
    }
  };

  const respond = async (
    ctx: HandlerContext,
    principal: Principal | undefined,
    outside: boolean,
    base: Omit<AnyCtx, 'db' | 'access'>,
  ): Promise<Response> => {
    const operationId = ctx.operationId;
    if (validator.shape(operationId).idempotencyKey === 'none') {
      // A read, or a mutation outside a transaction: the memberships it was authenticated with.
      const reply = await invoke(operationId, {
        ...base,
        db,
        access: outside ? principal : currentAccess(principal),
      });
      if (isOutgoingBytes(reply.body)) return ctx.bytes(reply.status, reply.body, reply.headers);
      if (isEventStream(reply.body))
        return ctx.eventStream(
          reply.body,
          (error) =>
            deps.streams.log('stream failed', {
              request_id: ctx.requestId,
              operation_id: operationId,
              error: error instanceof Error ? (error.stack ?? error.message) : String(error),
            }),
          reply.headers,
        );
      return ctx.json(reply.status, reply.body, reply.headers);
    }
    // Checked once, by request validation against the spec's `Idempotency-Key` parameter: present when
    // required (else 400 `idempotency_key_required`), 1–255 printable ASCII (else 400 `invalid_argument`).
    const key = ctx.input.headers['Idempotency-Key'];
    const url = new URL(ctx.request.url);
    // A body of bytes (an upload) is fingerprinted by its SHA-256 as it streams (idempotency-bytes.ts).
    const bytes = ctx.input.body instanceof IncomingBytes ? ctx.input.body : undefined;
    // The exchange of a credential (the spec's `x-svc.permission: credential`, `POST /auth/token`).
    const exchange = validator.shape(operationId).policy.permission === 'credential';
    const credential = exchange ? credentialScope(ctx.request) : undefined;
    const scope =
      key === undefined
        ? undefined
        : {
            // Keys are per principal (design §10); a token exchange has none yet, so its key space is
            // the credential's: only its holder can replay the answer.
            principalId: credential ?? (principal?.id as string),
            key,
            fingerprint: requestFingerprint({
              method: ctx.request.method,
              path: url.pathname,
              query: url.search,
              body: bytes ? null : ctx.input.body,
            }),
            requestId: ctx.requestId,
          };
    if (bytes && scope) {
      const outcome = await runIdempotentBytes(db, scope, bytes, () =>
        invoke(operationId, { ...base, db, access: outside ? principal : currentAccess(principal) }),
      );
      let body = outcome.body;
      if (outcome.replayed && outcome.status >= 400) body = withRequestId(body, ctx.requestId);
      return ctx.json(outcome.status, body, {
        ...outcome.headers,
        ...(outcome.replayed ? { 'idempotent-replayed': 'true' } : {}),
      });
    }
    const outcome = await runIdempotent(
      db,
      scope,
      async (tx) => {
        try {
          return await invoke(operationId, {
            ...base,
            db: tx,
            access: outside ? principal : currentAccess(principal),
          });
        } catch (error) {
          // A refused credential still commits what the refusal did (a replayed refresh token revokes
          // its family), so it is answered, not thrown; its idempotency record is dropped below.
          if (exchange && error instanceof AuthError)
            return { status: 401, headers: error.headers, body: error.toEnvelope(ctx.requestId) };
          throw error;
        }
      },
      { transaction: validator.shape(operationId).policy.transaction === 'single' },
    );
    if (outcome.status === 401 && scope && !outcome.replayed) await forgetIdempotencyKey(db, scope);
    let body = outcome.body;
    if (outcome.replayed && outcome.status >= 400) body = withRequestId(body, ctx.requestId);
    return ctx.json(outcome.status, body, {
      ...outcome.headers,
      ...(outcome.replayed ? { 'idempotent-replayed': 'true' } : {}),
    });
  };

  return async (ctx) => {
    const principal = ctx.get('principal');
    if (ctx.request.method === 'GET' || ctx.request.method === 'HEAD') return run(ctx, principal);
    // What a mutation changed in principals, keys or memberships reaches this replica's cache before
    // the answer leaves, so the caller's next request here sees it (other replicas: within a second).
    try {
      return await run(ctx, principal);
    } finally {
      await db.notificationBarrier().catch(() => principals.clear());
    }
  };
}

/**
 * Runs the handler of `op` with the context made for it. The table is keyed by operation, so
 * `handlers[op]` is `Handler<K, AppDeps>`, which takes the context as `Ctx<K, AppDeps>`
 * ({@link assertContextOf}).
 */
function invoke<K extends OperationId>(op: K, ctx: AnyCtx): Promise<StoredResponse> {
  assertContextOf(op, ctx);
  return handlers[op](ctx);
}

/**
 * Ties a context to its operation: the one correlation of the dispatch path the compiler cannot see.
 * The pipeline checked the request against `op` at run time (path, query and body against its
 * schemas; a principal exactly when it takes an access token; the permission read from its `x-svc`),
 * from the same bundle `Ctx<K, D>` is generated from, so a context made for `op` is
 * `Ctx<op, AppDeps>`; what is left to check here is that it was made for `op`.
 */
function assertContextOf<K extends OperationId>(op: K, ctx: AnyCtx): asserts ctx is AnyCtx & Ctx<K, AppDeps> {
  if (ctx.operationId !== op) throw new TypeError(`a context of ${ctx.operationId} sent to ${op}`);
}

/**
 * What a mutation's permission checks are for in a transaction: the caller's id alone, so
 * `workspaceAccess` reads the current membership (in the transaction, under its locks), never the one
 * cached at authentication. A mutation outside a transaction has no locks to read it under: it checks
 * the memberships the caller was authenticated with, as a read does, which are as fresh as the
 * credential itself (this replica's at once after a change here, every replica's within a second).
 */
function currentAccess(principal: Principal | undefined): Access | undefined {
  return principal && { id: principal.id };
}

/** The idempotency scope of a token exchange: a hash of the presented credential. */
function credentialScope(request: Request): string {
  const authorization = request.headers.get('authorization') ?? '';
  return `credential:${createHash('sha256').update(authorization).digest('hex')}`;
}

/** A replayed error keeps its stored answer, but names this request (`request_id` = `Request-Id`). */
function withRequestId(body: unknown, requestId: string): unknown {
  const error = (body as { error?: Record<string, unknown> } | undefined)?.error;
  return error ? { error: { ...error, request_id: requestId } } : body;
}
