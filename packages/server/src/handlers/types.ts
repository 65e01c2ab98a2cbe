import type { OperationId, operations, Permission, PermissionOf } from '@svc/contract';
import type { IncomingBytes, OutgoingBytes } from '../http/byte-body.js';
import type { JsonBytes } from '../http/json-bytes.js';
import type { EventStreamBody } from '../http/sse.js';
import type { Access } from '../identity/access.js';
import type { Principal } from '../identity/auth/authenticate.js';
import type { WithoutAccessToken } from '../identity/auth/route-security.js';
import type { Queryable } from '../platform/db/database.js';
import type { RateLimitState } from '../platform/ratelimit.js';
import type { AppDeps } from './deps.js';

type Op<K extends OperationId> = operations[K];
type Params<K extends OperationId> = Op<K>['parameters'];
type Defined<T> = [Exclude<T, undefined>] extends [never] ? Record<string, never> : Exclude<T, undefined>;

/** The path parameters of operation `K`, as the spec types them. */
export type PathOf<K extends OperationId> =
  Params<K> extends { path: infer P } ? Defined<P> : Record<string, never>;
/** The query parameters of `K` (validated, with the spec's defaults filled in). */
export type QueryOf<K extends OperationId> =
  Params<K> extends { query?: infer Q } ? Defined<Q> : Record<string, never>;
/**
 * The JSON body of `K`: required, optional (`| undefined`) or none; a body of bytes (a file, an
 * archive) is the {@link IncomingBytes} to stream.
 */
export type BodyOf<K extends OperationId> =
  Op<K> extends { requestBody: { content: { 'application/json': infer B } } }
    ? B
    : Op<K> extends { requestBody?: { content: { 'application/json': infer B } } }
      ? B | undefined
      : Op<K> extends {
            requestBody: {
              content: { 'application/octet-stream': unknown } | { 'application/x-tar': unknown };
            };
          }
        ? IncomingBytes
        : undefined;

type Responses<K extends OperationId> = Op<K>['responses'];
type SuccessStatus<K extends OperationId> = Extract<keyof Responses<K>, 200 | 201 | 202 | 204>;
type JsonOf<R> = R extends { content: { 'application/json': infer B } }
  ? B | JsonBytes<B>
  : R extends { content: { 'text/event-stream': unknown } }
    ? EventStreamBody
    : R extends {
          content:
            | { 'application/octet-stream': unknown }
            | { 'application/x-tar': unknown }
            | { 'image/png': unknown };
        }
      ? OutgoingBytes
      : undefined;

/**
 * What a handler answers: one of the operation's documented success statuses with the body the spec
 * gives it, so a handler that returns another shape does not compile (a JSON body may come serialized
 * already, as {@link JsonBytes} of that shape); a `text/event-stream` response's body is the
 * {@link EventStreamBody} that writes it. Errors are thrown (`ApiError`).
 */
export type Reply<K extends OperationId> = {
  [S in SuccessStatus<K>]: { status: S; body: JsonOf<Responses<K>[S]>; headers?: Record<string, string> };
}[SuccessStatus<K>];

/** Operations that run without an access token (from the spec's `security`). */
export type Anonymous = WithoutAccessToken;

/** What a handler's context carries whatever its operation; `D` the services its module may reach. */
interface CtxCommon<D> {
  requestId: string;
  request: Request;
  /**
   * Where to read and write: for a mutating operation, the transaction that also records the
   * Idempotency-Key (design §10); otherwise the database. Never use `deps.db` inside a mutation.
   */
  db: Queryable;
  /** The app's services, as far as the handler's module may reach them (deps.ts). */
  deps: D;
  /** Counts a mutation against its workspace's rate limit (design §11); throws `RateLimitError`. */
  countMutation(workspaceId: string): Promise<RateLimitState | undefined>;
  /** The client's address when the adapter knows it (rate limits of anonymous calls). */
  clientAddress: string | undefined;
}

/**
 * One validated, authenticated request, as a handler of operation `K` sees it; `D` is what its module
 * may reach of the app's services (e.g. `Ctx<'sendComputerTerminalInput', TerminalDeps>`).
 */
export interface Ctx<K extends OperationId, D> extends CtxCommon<D> {
  operationId: K;
  /**
   * Who may call the operation, as the spec declares it (`x-svc.permission`): for a role in the
   * workspace, what `permittedWorkspace` (common.ts) checks. Typed from the spec, so a handler cannot
   * ask for another role than its operation declares.
   */
  permission: PermissionOf<K>;
  path: PathOf<K>;
  query: QueryOf<K>;
  body: BodyOf<K>;
  /** The caller, loaded from the database for this request (never taken from the token alone). */
  principal: K extends Anonymous ? undefined : Principal;
  /**
   * What `workspaceAccess` checks the caller's permissions with: on a read, the memberships the
   * principal was authenticated with (no query); on a mutation, its id alone (the current membership).
   */
  access: K extends Anonymous ? undefined : Access;
}

/**
 * A handler's context as the dispatcher makes it, before it is tied to its operation: {@link Ctx} with
 * what depends on the operation (its parameters, body, permission and caller) in the types the
 * pipeline read them with; the dispatcher ties it to `Ctx<K, AppDeps>` once it is made.
 */
export interface AnyCtx extends CtxCommon<AppDeps> {
  operationId: OperationId;
  permission: Permission;
  path: Record<string, unknown>;
  query: Record<string, unknown>;
  body: unknown;
  principal: Principal | undefined;
  access: Access | undefined;
}

/**
 * The handler of operation `K`, reaching `D` of the app's services (named by every handler, so none
 * reaches more by default): any `D` that `AppDeps` fits, so a handler of narrower deps takes its place
 * in {@link Handlers}.
 */
export type Handler<K extends OperationId, D> = (ctx: Ctx<K, D>) => Promise<Reply<K>>;

/** One handler per operation of the spec: a spec operation without a handler is a type error. */
export type Handlers = { [K in OperationId]: Handler<K, AppDeps> };
