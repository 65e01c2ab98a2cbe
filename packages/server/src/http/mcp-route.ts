import type { Principal } from '../identity/auth/authenticate.js';
import { toApiError } from '../platform/errors.js';
import { readBody } from './body.js';
import type { ContextHandler, RequestContext } from './context.js';

/** What the `/mcp` route shares with `/v1`: its admission (rate limits), authentication and body cap. */
export interface McpRouteOptions {
  /** The MCP handler of `@svc/mcp`, reached only by requests that passed every check below. */
  mcp: (request: Request) => Promise<Response>;
  /** The `/v1` pipeline's `onRequest` (rate limits): the same counters, the same 429. */
  admit: (c: RequestContext) => Promise<Response | undefined> | Response | undefined;
  /** The `/v1` authentication of a request's `Authorization` header; throws `AuthError`. */
  authenticate: (authorization: string | null) => Promise<Principal>;
  /** The `/v1` body limit in bytes (`config.bodyLimitBytes`). */
  bodyLimitBytes: number;
  /** Headers every `/v1` response carries (CORS). */
  responseHeaders: Readonly<Record<string, string>>;
  /**
   * RFC 9728 metadata address, added to the `WWW-Authenticate` of a 401 as `resource_metadata`, so an
   * MCP client can find the authorization server from the refusal alone.
   */
  resourceMetadataUrl?: string;
}

/**
 * The `/mcp` route: the `/v1` rate limits (the pipeline's own `onRequest`), then the `/v1`
 * authentication (signature, expiry, revoked key, deleted or disabled principal), then the `/v1` body
 * limit (413 `payload_too_large`), each refusal in the published error envelope with `Request-Id`;
 * only then the MCP handler. Its tool calls go through `/v1` again, so each API call is checked and
 * counted like any other.
 *
 * @example
 * const route = createMcpRoute({ mcp, admit: onRequest, authenticate, bodyLimitBytes: 1 << 20, responseHeaders: {} });
 * const response = await route(new RequestContext(new Request('http://127.0.0.1:8080/mcp', { method: 'POST' })));
 * response.status; // 401: no token
 */
export function createMcpRoute(options: McpRouteOptions): ContextHandler {
  return async (c) => {
    const request = c.request;
    c.cors = options.responseHeaders;
    const early = await options.admit(c);
    if (early) return early;

    try {
      c.set('principal', await options.authenticate(request.headers.get('authorization')));
    } catch (thrown) {
      const refused = toApiError(thrown);
      const headers = { ...refused.headers };
      const challenge = headers['www-authenticate'];
      if (challenge !== undefined && options.resourceMetadataUrl) {
        const params = challenge.slice('Bearer'.length).trim();
        headers['www-authenticate'] =
          `Bearer resource_metadata="${options.resourceMetadataUrl}"${params ? `, ${params.replace(/^,\s*/, '')}` : ''}`;
      }
      return c.error(refused.code, refused.message, refused.details, headers);
    }

    let forwarded = request;
    if (request.body) {
      const read = await readBody(request, options.bodyLimitBytes);
      if (!read.ok)
        return c.error(
          'payload_too_large',
          `the request body is larger than ${options.bodyLimitBytes} bytes`,
        );
      forwarded = new Request(request.url, {
        method: request.method,
        headers: request.headers,
        body: read.bytes as BodyInit,
        signal: request.signal,
      });
    }
    const response = await options.mcp(forwarded);
    const headers = new Headers(response.headers);
    for (const [name, value] of Object.entries({ ...c.cors, ...c.headers }))
      if (!headers.has(name)) headers.set(name, value);
    if (!headers.has('request-id')) headers.set('request-id', c.requestId);
    return new Response(response.body, { status: response.status, statusText: response.statusText, headers });
  };
}
