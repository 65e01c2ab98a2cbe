import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { createClient, type RetryOptions } from '@svc/client/retry';
import { loadDocument, type OpenApiDocument } from '@svc/contract';
import { buildCatalog, parseSelection } from './catalog.js';
import { defaultRequestId, refusal } from './refusal.js';
import { createMcpServer } from './server.js';

/**
 * Options of {@link createMcpHttpHandler}.
 *
 * @example
 * const options: McpHttpOptions = { apiBaseUrl: 'http://127.0.0.1:8080/v1' };
 */
export interface McpHttpOptions {
  /** The API base address, ending in `/v1`. The server mounting this passes its own public base URL. */
  apiBaseUrl: string;
  /** Sends the API calls. The API server passes its own core here: calls then stay in-process. */
  fetch?: (request: Request) => Promise<Response>;
  /**
   * Checks a token before any MCP message is handled; false answers HTTP 401 `unauthenticated`. Without
   * it the API judges the token on each tool call (see README: "Authentication over HTTP").
   */
  verifyToken?: (token: string) => boolean | Promise<boolean>;
  /** Mints the `request_id` of refusals made here. Default: an id in the service's format. */
  newRequestId?: () => string;
  /** Answer with one JSON body instead of an SSE stream. Progress notifications are then not delivered. */
  jsonResponse?: boolean;
  /** Retry policy of the API client (default: the client's). */
  retry?: RetryOptions | false;
  document?: OpenApiDocument;
  waitTimeoutMs?: number;
  minPollIntervalMs?: number;
}

const BEARER = /^Bearer[ ]+([A-Za-z0-9\-._~+/]+=*)[ ]*$/i;

/**
 * Closes the per-request server once the response body has been sent or dropped: a client that hangs
 * up mid-wait aborts its tool call instead of leaving it polling.
 */
function closeWhenDone(response: Response, close: () => Promise<void>): Response {
  if (!response.body) {
    void close();
    return response;
  }
  const reader = response.body.getReader();
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      const { done, value } = await reader.read();
      if (!done) return controller.enqueue(value);
      controller.close();
      void close();
    },
    cancel(reason) {
      void close();
      return reader.cancel(reason);
    },
  });
  return new Response(body, {
    status: response.status,
    statusText: response.statusText,
    headers: response.headers,
  });
}

/**
 * The MCP endpoint over streamable HTTP as a web-standard handler, for the API server to mount at
 * `/mcp` on its own origin. Stateless: each POST gets a new MCP server and transport, and a client
 * built on the caller's own `Authorization: Bearer` token, so every tool call is made as the caller.
 * A request without a Bearer token is refused with 401 and `WWW-Authenticate: Bearer` before any MCP
 * message is read; GET and DELETE (SSE resumption and sessions, which a stateless server has none of)
 * answer 405. The query chooses the tools: `toolsets` (a comma list of toolsets, `all`, or `default`
 * beside others; absent, the default set) and `mode` (`compact` default, `full`, `dynamic`); an unknown
 * value is 400 `invalid_argument`.
 *
 * @example
 * const mcp = createMcpHttpHandler({ apiBaseUrl: 'http://127.0.0.1:8080/v1' });
 * const response = await mcp(new Request('http://127.0.0.1:8080/mcp', { method: 'POST' }));
 * response.status; // 401: no token
 */
export function createMcpHttpHandler(options: McpHttpOptions): (request: Request) => Promise<Response> {
  const document = options.document ?? loadDocument();
  const catalog = buildCatalog(document); // once: the spec does not change while the server runs
  const newRequestId = options.newRequestId ?? defaultRequestId;

  return async (request) => {
    const token = BEARER.exec(request.headers.get('Authorization') ?? '')?.[1];
    if (token === undefined) {
      return refusal(
        401,
        'unauthenticated',
        'The MCP endpoint needs an Authorization: Bearer access token.',
        newRequestId(),
        {
          'WWW-Authenticate': 'Bearer',
        },
      );
    }
    if (options.verifyToken && !(await options.verifyToken(token))) {
      return refusal(
        401,
        'unauthenticated',
        'The access token is not valid (expired, revoked or malformed).',
        newRequestId(),
        {
          'WWW-Authenticate': 'Bearer error="invalid_token"',
        },
      );
    }
    if (request.method !== 'POST') {
      return refusal(
        405,
        'method_not_allowed',
        `${request.method} is not supported here: this MCP endpoint is stateless, use POST.`,
        newRequestId(),
        {
          Allow: 'POST',
        },
      );
    }

    // The client picks its tools in the URL: /mcp?toolsets=computers,operations&mode=dynamic.
    const query = new URL(request.url).searchParams;
    const parsed = parseSelection(catalog, { mode: query.get('mode'), toolsets: query.get('toolsets') });
    if (!parsed.ok) {
      return refusal(
        400,
        'invalid_argument',
        'one or more fields are invalid',
        newRequestId(),
        {},
        {
          field_violations: [{ field: parsed.field, description: parsed.description }],
        },
      );
    }

    const client = createClient({
      baseUrl: options.apiBaseUrl,
      token,
      ...(options.fetch ? { fetch: options.fetch } : {}),
      ...(options.retry === undefined ? {} : { retry: options.retry }),
    });
    const server = createMcpServer({
      client,
      catalog,
      selection: parsed.selection,
      ...(options.waitTimeoutMs === undefined ? {} : { waitTimeoutMs: options.waitTimeoutMs }),
      ...(options.minPollIntervalMs === undefined ? {} : { minPollIntervalMs: options.minPollIntervalMs }),
    });
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: options.jsonResponse ?? false,
    });
    await server.connect(transport);
    const response = await transport.handleRequest(request);
    return closeWhenDone(response, () => server.close());
  };
}
