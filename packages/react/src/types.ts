// Every type the hooks name, derived from the generated `paths` (through @svc/client's callable view of
// them), so a path, a parameter, a body or an error body is never re-typed here.
import type {
  ApiError,
  ApiPaths,
  ApiResponse,
  NetworkError,
  Unwrapped,
  WithOptionalIdempotencyKey,
} from '@svc/client';
import type { MaybeOptionalInit } from 'openapi-fetch';
import type { ErrorStatus, HttpMethod, MediaType, PathsWithMethod } from 'openapi-typescript-helpers';

/** The paths as the client takes them: a required `Idempotency-Key` header is optional (the hooks add one). */
export type Callable<Paths> = WithOptionalIdempotencyKey<Paths>;

/** The methods that change something: every one but GET, HEAD, OPTIONS and TRACE. */
export type MutationMethod = Exclude<HttpMethod, 'get' | 'head' | 'options' | 'trace'>;

/**
 * The paths that have `Method`.
 *
 * @example
 * import type { PathsOf } from '@svc/react';
 * const path: PathsOf<'get'> = '/workspaces/{workspace}/computers';
 */
export type PathsOf<Method extends HttpMethod, Paths extends {} = ApiPaths> = PathsWithMethod<
  Callable<Paths>,
  Method
>;

/** The operation object of `Method Path`. */
export type OperationOf<
  Paths extends {},
  Method extends HttpMethod,
  Path extends PathsOf<Method, Paths>,
> = Callable<Paths>[Path][Method & keyof Callable<Paths>[Path]];

/**
 * What a call of `Method Path` takes: `params` (path, query, header) and `body`, as openapi-fetch does.
 *
 * @example
 * import type { InitOf } from '@svc/react';
 * const init: InitOf<'get', '/workspaces/{workspace}/computers'> = { params: { path: { workspace: 'dev' } } };
 */
export type InitOf<
  Method extends HttpMethod,
  Path extends PathsOf<Method, Paths>,
  Paths extends {} = ApiPaths,
> = MaybeOptionalInit<Callable<Paths>[Path], Method & keyof Callable<Paths>[Path]>;

/**
 * The success body of `Method Path` (`undefined` for a 204).
 *
 * @example
 * import type { DataOf } from '@svc/react';
 * type Page = DataOf<'get', '/workspaces/{workspace}/computers'>; // { computers, next_cursor, has_more }
 */
export type DataOf<
  Method extends HttpMethod,
  Path extends PathsOf<Method, Paths>,
  Paths extends {} = ApiPaths,
> = Unwrapped<ApiResponse<OperationOf<Paths, Method, Path>, unknown, MediaType>>;

type ResponsesOf<Op> = Op extends { responses: infer Responses } ? Responses : never;
type JsonOf<Response> = Response extends { content: { 'application/json': infer Body } } ? Body : undefined;

/** The error statuses an operation documents (`400 | 401 | 404 | …`). */
export type ErrorStatusOf<Op> = Extract<keyof ResponsesOf<Op>, ErrorStatus>;

/**
 * An {@link ApiError} of one documented status: `status` is that status and `body` the spec's error
 * body for it, so `if (error.status === 409)` narrows both.
 */
export type StatusError<Op, Status extends ErrorStatusOf<Op>> = ApiError & {
  readonly status: Status;
  readonly body: JsonOf<ResponsesOf<Op>[Status]>;
};

/**
 * What a hook of `Method Path` fails with: an {@link ApiError} per documented error status (a union
 * that `status` discriminates), or a {@link NetworkError} (no response: `status` 0).
 *
 * @example
 * import type { ErrorOf } from '@svc/react';
 * function describe(error: ErrorOf<'post', '/workspaces/{workspace}/computers'>) {
 *   if (error.status === 409) return `taken: ${error.body.error.message}`;
 *   return error.message;
 * }
 */
export type ErrorOf<
  Method extends HttpMethod,
  Path extends PathsOf<Method, Paths>,
  Paths extends {} = ApiPaths,
> =
  | {
      [Status in ErrorStatusOf<OperationOf<Paths, Method, Path>>]: StatusError<
        OperationOf<Paths, Method, Path>,
        Status
      >;
    }[ErrorStatusOf<OperationOf<Paths, Method, Path>>]
  | NetworkError;
