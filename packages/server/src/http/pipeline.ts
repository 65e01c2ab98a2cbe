import type { OpenApiDocument, OperationId } from '@svc/contract';
import { IncomingBytes } from './byte-body.js';
import { nodeRequestBody } from './byte-request.js';
import {
  type ContextHandler,
  type FetchHandler,
  fetchHandler,
  type HandlerContext,
  type RequestContext,
  type RouteContext,
} from './context.js';
import { createCors } from './cors.js';
import type { Router } from './router.js';
import { compileRouter } from './router.js';
import type { FieldViolation, InvalidRequest, RequestFailureKind, Validator } from './validation.js';
import { compileValidator } from './validation.js';

// The core's type, where the adapter and the app have always found it.
export type { FetchHandler } from './context.js';

export interface HttpCoreOptions {
  document: OpenApiDocument;
  /**
   * Runs first, before routing, for every request (preflights and early errors included), so what it
   * puts in `c.headers` is on every response. Answers instead of the pipeline when it returns a
   * response (e.g. a 429).
   */
  onRequest?(c: RequestContext): Promise<Response | undefined> | Response | undefined;
  /**
   * Runs once the route is known and BEFORE anything of the request is validated (path, query,
   * headers, body): a protected route answers an anonymous or badly authenticated caller `401`, never
   * a validation error that describes the schema. Answers instead of the pipeline when it returns a
   * response; what it learns it sets on the context (`c.set('principal', …)`).
   */
  authenticate?(c: RouteContext): Promise<Response | undefined> | Response | undefined;
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
  return fetchHandler(createPipeline(options));
}

/**
 * The core of {@link createHttpCore} as a step over the request's context, for a caller that made the
 * context already (the app's request log wraps it, and reads what the steps set).
 *
 * @example
 * import { loadDocument } from '@svc/contract';
 * const api = createPipeline({ document: loadDocument(), handle: (ctx) => ctx.json(200, { status: 'ok' }) });
 * const response = await api(new RequestContext(new Request('http://localhost/v1/health')));
 */
export function createPipeline(options: HttpCoreOptions): ContextHandler {
  const router = options.router ?? compileRouter(options.document);
  const validator = options.validator ?? compileValidator(options.document);
  const cors = createCors(options.document);
  const base = cors.responseHeaders;

  // Annotated: the router's and validation's steps narrow `c` (see RequestContext.routed).
  return async (c: RequestContext) => {
    c.cors = base;
    if (options.onRequest) {
      const early = await options.onRequest(c);
      if (early) return early;
    }
    const path = c.apiPath;
    if (path === undefined) return c.error('not_found', 'no such route');
    const method = c.request.method;
    if (method === 'OPTIONS') {
      const allow = router.allowed(path);
      if (!allow) return c.error('not_found', 'no such route');
      return cors.preflight(allow, { ...c.headers, 'request-id': c.requestId });
    }
    const found = router.match(method, path);
    if (found.kind === 'not_found') return c.error('not_found', 'no such route');
    if (found.kind === 'method_not_allowed') {
      return c.error(
        'method_not_allowed',
        `${method} is not allowed here`,
        {},
        { allow: found.allow.join(', ') },
      );
    }
    c.routed(found.operationId);
    if (options.authenticate) {
      const refused = await options.authenticate(c);
      if (refused) return refused;
    }
    if (found.kind === 'malformed_path') {
      return c.error('invalid_argument', FAILURES.invalid_argument, {
        field_violations: [
          { field: found.field, description: 'is not a valid percent-encoded path segment' },
        ],
      });
    }
    const checked = await validator.validateRequest(
      found.operationId,
      c.request,
      found.pathParams,
      nodeRequestBody(c.env),
    );
    if (!checked.ok) {
      const refined = options.refineFailure?.(found.operationId, checked);
      const kind = refined?.kind ?? checked.kind;
      const details =
        kind === 'invalid_argument' ? { field_violations: checked.violations } : (checked.details ?? {});
      return c.error(kind, refined?.message ?? checked.message ?? FAILURES[kind], details, checked.headers);
    }
    c.validated(checked);
    let response: Response;
    try {
      response = await options.handle(c);
    } catch (thrown) {
      response = options.onError ? await options.onError(thrown, c) : c.error('internal', 'internal error');
    }
    // A refused upload whose body was left unread: the connection is closed after the answer (the
    // adapter reads at most a little of what is left), so the client's next request starts clean.
    if (checked.body instanceof IncomingBytes && !checked.body.ended && response.status >= 400)
      response.headers.set('connection', 'close');
    if (options.onResponseViolation) await checkResponse(validator, c, response, options.onResponseViolation);
    if (found.head && response.body !== null) {
      // An event stream would go on writing into a body nobody reads: cancelling it ends the stream.
      void response.body.cancel().catch(() => {});
      return new Response(null, { status: response.status, headers: response.headers });
    }
    return response;
  };
}

async function checkResponse(
  validator: Validator,
  ctx: HandlerContext,
  response: Response,
  report: NonNullable<HttpCoreOptions['onResponseViolation']>,
): Promise<void> {
  // An event stream's body is endless, and a body of bytes (a file, an archive) is not JSON and may
  // be a gigabyte: their headers are checked here, their content by the tests.
  const type = response.headers.get('content-type');
  if (type !== null && type !== 'application/json' && !type.startsWith('text/event-stream')) {
    const violations = validator.validateResponse(
      ctx.operationId,
      response.status,
      undefined,
      response.headers,
    );
    if (violations.length > 0) report(ctx, response.status, violations);
    return;
  }
  const streamed = type?.startsWith('text/event-stream') === true;
  const text = streamed ? '' : await response.clone().text();
  let body: unknown;
  try {
    body = text === '' ? undefined : JSON.parse(text);
  } catch {
    body = text;
  }
  const violations = validator.validateResponse(ctx.operationId, response.status, body, response.headers);
  if (violations.length > 0) report(ctx, response.status, violations);
}
