import type { OpenApiDocument, OperationId } from '@svc/contract';
import { noteRequest } from '../observe/requests.js';
import { createCors } from './cors.js';
import { apiPath, pathOf } from './path.js';
import { newRequestId } from './request-id.js';
import { type ErrorResponder, responders } from './respond.js';
import type { Router } from './router.js';
import { compileRouter } from './router.js';
import type {
  FieldViolation,
  InvalidRequest,
  RequestFailureKind,
  Validator,
  ValidRequest,
} from './validation.js';
import { compileValidator } from './validation.js';

/**
 * The server core: web-standard, so tests call it without a socket (docs/style.md). `env` is what the
 * Node adapter passes along (`{ incoming, outgoing }` of node:http), e.g. for the client address.
 */
export type FetchHandler = (request: Request, env?: unknown) => Promise<Response>;

/** What `onRequest` sees: the request's id, its shared response headers and per-request state. */
export interface RequestStart {
  request: Request;
  requestId: string;
  env: unknown;
  /** Headers added to every response of this request, early errors included (e.g. `RateLimit`). */
  headers: Record<string, string>;
  /** Carried into {@link HandlerContext.state}: what the hook learned (e.g. verified token claims). */
  state: Record<string, unknown>;
  /** Builds an error response in the envelope, with `headers`, `Request-Id` and CORS. */
  error: HandlerContext['error'];
}

/** What `authenticate` sees: a routed request whose parameters and body are not read yet. */
export interface RouteStart extends RequestStart {
  operationId: OperationId;
}

/** What a handler gets for one validated request. */
export interface HandlerContext {
  operationId: OperationId;
  request: Request;
  /** The id sent back as `Request-Id` (and as `error.request_id`). */
  requestId: string;
  /** Validated, coerced parameters and body. */
  input: ValidRequest;
  /**
   * Headers added to whatever this request answers, success or error, e.g. `RateLimit`. Plain
   * lower-case keys: building the `Response` once with all headers keeps the adapter's fast path.
   */
  headers: Record<string, string>;
  /** The adapter's `env` (see {@link FetchHandler}). */
  env: unknown;
  /** Per-request state, filled by `onRequest`. */
  state: Record<string, unknown>;
  /** A JSON response carrying `headers`, `Request-Id` and CORS. `body` undefined sends no body (204). */
  json(status: number, body?: unknown, headers?: Record<string, string>): Response;
  /** The error envelope of design §2, same headers; the status is the code's (design §9). */
  error: ErrorResponder;
}

export interface HttpCoreOptions {
  document: OpenApiDocument;
  /**
   * Runs first, before routing, for every request (preflights and early errors included), so what it
   * puts in `start.headers` is on every response. Answers instead of the pipeline when it returns a
   * response (e.g. a 429).
   */
  onRequest?(start: RequestStart): Promise<Response | undefined> | Response | undefined;
  /**
   * Runs once the route is known and BEFORE anything of the request is validated (path, query,
   * headers, body): a protected route answers an anonymous or badly authenticated caller `401`, never
   * a validation error that describes the schema. Answers instead of the pipeline when it returns a
   * response; what it learns goes into `start.state`.
   */
  authenticate?(start: RouteStart): Promise<Response | undefined> | Response | undefined;
  /**
   * Re-labels a validation failure of one operation, where the spec gives it another code than the
   * generic one (POST /auth/token: an unknown `grant_type` is `invalid_request`, not `invalid_argument`).
   */
  refineFailure?(
    operationId: OperationId,
    failure: InvalidRequest,
  ): { kind: RequestFailureKind; message: string } | undefined;
  /** Dispatches one validated request (by `ctx.operationId`) to its handler. */
  handle(ctx: HandlerContext): Promise<Response> | Response;
  /** Turns an error thrown by `handle` into a response; by default a 500 `internal` without detail. */
  onError?(error: unknown, ctx: HandlerContext): Promise<Response> | Response;
  /** Dev and test mode: called when a JSON response breaks the spec (costs a body copy per response). */
  onResponseViolation?(ctx: HandlerContext, status: number, violations: FieldViolation[]): void;
  /** Reuse compiled parts (tests compile once per file). */
  router?: Router;
  validator?: Validator;
}

const FAILURES: Record<RequestFailureKind, string> = {
  invalid_argument: 'one or more fields are invalid',
  invalid_request: 'the request body is not valid JSON',
  idempotency_key_required: 'this request creates a resource and needs an Idempotency-Key header',
  unsupported_media_type: 'the request body must be application/json',
  payload_too_large: 'the request body is larger than 1 MiB',
};

/**
 * Builds the `(Request) => Promise<Response>` core: Request-Id and CORS on every response, OPTIONS
 * preflight, routing (404 `not_found`, 405 `method_not_allowed` with `Allow`), `authenticate`, request validation
 * (400/413/415 with the codes of design §9), then `handle`. HEAD runs the GET operation and drops the body.
 *
 * @example
 * import { loadDocument } from '@svc/contract';
 * const core = createHttpCore({ document: loadDocument(), handle: (ctx) => ctx.json(200, { status: 'ok' }) });
 * const response = await core(new Request('http://localhost/v1/health'));
 */
export function createHttpCore(options: HttpCoreOptions): FetchHandler {
  const router = options.router ?? compileRouter(options.document);
  const validator = options.validator ?? compileValidator(options.document);
  const cors = createCors(options.document);
  const base = cors.responseHeaders;

  return async (request, env) => {
    const requestId = newRequestId();
    noteRequest(request, { requestId });
    const extra: Record<string, string> = {};
    const state: Record<string, unknown> = {};
    const { json, error } = responders(requestId, base, extra);

    if (options.onRequest) {
      const early = await options.onRequest({ request, requestId, env, headers: extra, state, error });
      if (early) return early;
    }
    const path = apiPath(pathOf(request.url));
    if (path === undefined) return error('not_found', 'no such route');
    if (request.method === 'OPTIONS') {
      const allow = router.allowed(path);
      if (!allow) return error('not_found', 'no such route');
      return cors.preflight(allow, { ...extra, 'request-id': requestId });
    }
    const found = router.match(request.method, path);
    if (found.kind === 'not_found') return error('not_found', 'no such route');
    if (found.kind !== 'method_not_allowed') noteRequest(request, { operationId: found.operationId });
    if (found.kind === 'method_not_allowed') {
      return error(
        'method_not_allowed',
        `${request.method} is not allowed here`,
        {},
        { allow: found.allow.join(', ') },
      );
    }
    if (options.authenticate) {
      const refused = await options.authenticate({
        request,
        requestId,
        env,
        headers: extra,
        state,
        error,
        operationId: found.operationId,
      });
      if (refused) return refused;
    }
    if (found.kind === 'malformed_path') {
      return error('invalid_argument', FAILURES.invalid_argument, {
        field_violations: [
          { field: found.field, description: 'is not a valid percent-encoded path segment' },
        ],
      });
    }
    const checked = await validator.validateRequest(found.operationId, request, found.pathParams);
    if (!checked.ok) {
      const refined = options.refineFailure?.(found.operationId, checked);
      const kind = refined?.kind ?? checked.kind;
      const details = kind === 'invalid_argument' ? { field_violations: checked.violations } : {};
      return error(kind, refined?.message ?? FAILURES[kind], details);
    }
    const ctx: HandlerContext = {
      operationId: found.operationId,
      request,
      requestId,
      input: checked,
      headers: extra,
      env,
      state,
      json,
      error,
    };
    let response: Response;
    try {
      response = await options.handle(ctx);
    } catch (thrown) {
      response = options.onError ? await options.onError(thrown, ctx) : error('internal', 'internal error');
    }
    if (options.onResponseViolation)
      await checkResponse(validator, ctx, response, options.onResponseViolation);
    if (found.head && response.body !== null)
      return new Response(null, { status: response.status, headers: response.headers });
    return response;
  };
}

async function checkResponse(
  validator: Validator,
  ctx: HandlerContext,
  response: Response,
  report: NonNullable<HttpCoreOptions['onResponseViolation']>,
): Promise<void> {
  const text = await response.clone().text();
  let body: unknown;
  try {
    body = text === '' ? undefined : JSON.parse(text);
  } catch {
    body = text;
  }
  const violations = validator.validateResponse(ctx.operationId, response.status, body, response.headers);
  if (violations.length > 0) report(ctx, response.status, violations);
}
