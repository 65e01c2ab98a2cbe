import type { OpenApiDocument } from '@svc/contract';
import type { ContextHandler } from '../http/context.js';
import type { HttpCoreOptions } from '../http/pipeline.js';
import { createPipeline } from '../http/pipeline.js';
import type { Router } from '../http/router.js';
import type { Validator } from '../http/validation.js';
import { toApiError } from '../platform/errors.js';
import { causeText, type Log } from '../platform/observe/log.js';

/** What to do with a response that breaks the spec: nothing (production), log it (dev), throw (tests). */
export type ResponseValidation = 'off' | 'log' | 'throw';

/**
 * The `/v1` core: the pipeline with the app's rate limits, authentication and dispatch, errors thrown
 * by handlers turned into the published envelope (a 5xx logged with its cause, never sent), and, in
 * dev and tests, every response checked against the spec.
 *
 * @example
 * const api = createApi({ document, router, validator, onRequest, authenticate, handle, log, validation: 'off', rateLimited: true });
 */
export function createApi(options: {
  document: OpenApiDocument;
  router: Router;
  validator: Validator;
  onRequest: NonNullable<HttpCoreOptions['onRequest']>;
  authenticate: NonNullable<HttpCoreOptions['authenticate']>;
  handle: HttpCoreOptions['handle'];
  log: Log;
  validation: ResponseValidation;
  /** Whether rate limits are on: with `SVC_RATE_LIMITS=off` the `RateLimit` headers are absent on purpose. */
  rateLimited: boolean;
}): ContextHandler {
  const { log, validation } = options;
  return createPipeline({
    document: options.document,
    router: options.router,
    validator: options.validator,
    onRequest: options.onRequest,
    authenticate: options.authenticate,
    handle: options.handle,
    // An exchange of a credential (`x-svc.permission: credential`) answers as OAuth does (RFC 6749 §5.2).
    refineFailure: (operationId, failure) =>
      options.validator.shape(operationId).policy.permission === 'credential' &&
      failure.violations.some((v) => v.field === 'grant_type')
        ? { kind: 'invalid_request', message: 'unknown grant_type' }
        : undefined,
    onError(thrown, ctx) {
      const error = toApiError(thrown);
      if (error.status >= 500)
        log('request failed', {
          request_id: ctx.requestId,
          operation_id: ctx.operationId,
          error: causeText(error),
        });
      return ctx.error(error.code, error.message, error.details, error.headers);
    },
    ...(validation === 'off'
      ? {}
      : {
          onResponseViolation(ctx, status, found) {
            // With SVC_RATE_LIMITS=off (load and contract runs) there is no policy to announce: the
            // RateLimit headers the spec requires are absent on purpose.
            const violations = options.rateLimited
              ? found
              : found.filter((v) => !v.field.startsWith('header.RateLimit'));
            if (violations.length === 0) return;
            const text = `${ctx.operationId} answered ${status} against the spec: ${JSON.stringify(violations)}`;
            if (validation === 'throw') throw new Error(text);
            log('response violates the spec', { request_id: ctx.requestId, detail: text });
          },
        }),
  });
}
