import type { OpenApiDocument } from '@svc/contract';
import { listOperations, operationParameters, operationResponses } from '@svc/contract';

/** CORS header values computed once from the document. */
export interface Cors {
  /** Headers every response carries: `Access-Control-Allow-Origin: *` and `Access-Control-Expose-Headers`. */
  readonly responseHeaders: Readonly<Record<string, string>>;
  /** The 204 answer to an `OPTIONS` request on a known path, whose methods are `allow`. */
  preflight(allow: readonly string[], extraHeaders?: Record<string, string>): Response;
}

/** How long a browser may cache a preflight. Chromium caps it at 2 hours, so more would be a lie. */
const PREFLIGHT_MAX_AGE_SECONDS = 7200;

/**
 * CORS for browser frontends. The API authenticates with `Authorization` only, never cookies, so any
 * origin may call it (`*`, no credentials). The request headers a browser may send are the spec's
 * header parameters plus `Authorization` and `Content-Type`; the exposed response headers are every
 * header the spec documents on a response (`Request-Id`, `RateLimit`, `Retry-After`, `Location`, ...),
 * so a header added to the spec is exposed without touching this file.
 *
 * @example
 * import { loadDocument } from '@svc/contract';
 * const cors = createCors(loadDocument());
 * const answer = cors.preflight(['GET', 'HEAD', 'OPTIONS']); // 204
 */
export function createCors(document: OpenApiDocument): Cors {
  const requestHeaders = new Set<string>(['Authorization', 'Content-Type']);
  const exposed = new Set<string>();
  for (const op of listOperations(document)) {
    for (const parameter of operationParameters(document, op)) {
      if (parameter.in === 'header') requestHeaders.add(parameter.name);
    }
    for (const response of operationResponses(document, op)) {
      for (const name of Object.keys(response.headers)) {
        if (!name.toLowerCase().startsWith('access-control-')) exposed.add(name);
      }
    }
  }
  const responseHeaders = Object.freeze({
    'access-control-allow-origin': '*',
    'access-control-expose-headers': [...exposed].join(', '),
  });
  const allowHeaders = [...requestHeaders].join(', ');
  return {
    responseHeaders,
    preflight(allow, extraHeaders) {
      return new Response(null, {
        status: 204,
        headers: {
          ...extraHeaders,
          allow: allow.join(', '),
          'access-control-allow-origin': '*',
          'access-control-allow-methods': allow.join(', '),
          'access-control-allow-headers': allowHeaders,
          'access-control-max-age': String(PREFLIGHT_MAX_AGE_SECONDS),
        },
      });
    },
  };
}
