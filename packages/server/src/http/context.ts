import type { OperationId } from '@svc/contract';
import type { Principal } from '../identity/auth/authenticate.js';
import { ERROR_STATUS, type ErrorCode } from '../platform/errors.js';
import type { RateLimitState } from '../platform/ratelimit.js';
import { newRequestId } from '../platform/request-id.js';
import type { OutgoingBytes } from './byte-body.js';
import { JsonBytes } from './json-bytes.js';
import type { NodeEnv } from './node-env.js';
import { apiPath, pathOf } from './path.js';
import { type EventStreamBody, eventStreamResponse } from './sse.js';
import type { ValidRequest } from './validation.js';

/**
 * The server core: web-standard, so tests call it without a socket (docs/style.md). `env` is what the
 * Node adapter passes along ({@link NodeEnv}), e.g. for the client address; absent without a socket.
 */
export type FetchHandler = (request: Request, env?: NodeEnv) => Promise<Response>;

/** One step of serving a request, over its {@link RequestContext} (what Hono calls a handler). */
export type ContextHandler = (c: RequestContext) => Promise<Response>;

/**
 * What the steps before a handler learn about a request, by name (Hono's `Variables`): each is set
 * by the step that learns it (`c.set('principal', …)`) and read by any later one (`c.get('principal')`),
 * `undefined` until then.
 */
export interface Variables {
  /** The caller, set by authentication once an access token checked out (never on a public or grant route). */
  principal: Principal;
  /** Where the principal rate limit stands once this request was counted (absent with limits off). */
  rateLimit: RateLimitState;
}

type Slots = { [K in keyof Variables]: Variables[K] | undefined };

const NO_HEADERS: Readonly<Record<string, string>> = Object.freeze({});

/**
 * Everything one request carries from step to step, from the request log around it to the handler
 * inside: one object per request, with fixed fields (cheaper than a `Map` or a `WeakMap` keyed by the
 * request). What the pipeline itself knows is a field (`path`, `operationId`, `input`); what a
 * pluggable step learns is a {@link Variables} entry behind `get`/`set`, typed by its key.
 *
 * @example
 * const c = new RequestContext(new Request('http://127.0.0.1/v1/me'));
 * c.path; // '/v1/me'
 * c.get('principal'); // undefined until authentication sets it
 * c.error('not_found', 'no such route').status; // 404, with Request-Id
 */
export class RequestContext {
  readonly request: Request;
  /** The adapter's `env` (see {@link FetchHandler}); `undefined` when the core is called without a socket. */
  readonly env: NodeEnv | undefined;
  /** The request's path without its query, as it came off the wire (still percent-encoded). */
  readonly path: string;
  /**
   * Headers added to whatever this request answers, early errors included, e.g. `RateLimit`. Plain
   * lower-case keys: building the `Response` once with all headers keeps the adapter's fast path.
   */
  readonly headers: Record<string, string> = {};
  /** The CORS headers every response of this request carries, set by the route that answers it. */
  cors: Readonly<Record<string, string>> = NO_HEADERS;
  /** The operation, once the router found it. */
  operationId: OperationId | undefined = undefined;
  /** The validated, coerced parameters and body, once validation passed. */
  input: ValidRequest | undefined = undefined;
  #apiPath: string | null | undefined = null;
  #requestId: string | undefined = undefined;
  readonly #vars: Slots = { principal: undefined, rateLimit: undefined };

  constructor(request: Request, env?: NodeEnv) {
    this.request = request;
    this.env = env;
    this.path = pathOf(request.url);
  }

  /** {@link path} below `/v1` (what the spec's paths describe), or `undefined` outside the API. */
  get apiPath(): string | undefined {
    if (this.#apiPath === null) this.#apiPath = apiPath(this.path);
    return this.#apiPath;
  }

  /**
   * The id this request is answered with (`Request-Id`, `error.request_id`), minted the first time
   * anything asks: a request answered without one (a sign-in page) never has one.
   */
  get requestId(): string {
    this.#requestId ??= newRequestId();
    return this.#requestId;
  }

  /** {@link requestId} when one was minted, without minting it: what the request log and span name. */
  get knownRequestId(): string | undefined {
    return this.#requestId;
  }

  /** What an earlier step learned, by key; `undefined` when no step set it. */
  get<K extends keyof Variables>(key: K): Variables[K] | undefined {
    return this.#vars[key];
  }

  /** Records what this step learned, for the steps after it. */
  set<K extends keyof Variables>(key: K, value: Variables[K] | undefined): void {
    this.#vars[key] = value;
  }

  /** The router's step: from here on the context is a {@link RouteContext}. */
  routed(operationId: OperationId): asserts this is RouteContext {
    this.operationId = operationId;
  }

  /** The validation step: from here on the context is a {@link HandlerContext}. */
  validated(this: RouteContext, input: ValidRequest): asserts this is HandlerContext {
    this.input = input;
  }

  /**
   * A JSON response with {@link cors}, {@link headers}, `headers` and `Request-Id`; `body` undefined
   * sends none (204). A {@link JsonBytes} body is sent as its bytes, serialized once beforehand.
   */
  json(status: number, body?: unknown, headers?: Record<string, string>): Response {
    const payload = body === undefined ? null : body instanceof JsonBytes ? body.bytes : JSON.stringify(body);
    return new Response(payload, {
      status,
      headers: {
        ...this.cors,
        ...this.headers,
        ...headers,
        'request-id': this.requestId,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
    });
  }

  /**
   * A `200 text/event-stream` response that `body` writes as it runs, with the headers of {@link json}
   * (CORS, `RateLimit`, `Request-Id`); `onError` hears what `body.run` throws once the stream is open.
   */
  eventStream(
    body: EventStreamBody,
    onError: (error: unknown) => void,
    headers?: Record<string, string>,
  ): Response {
    return eventStreamResponse(
      body,
      this.request,
      { ...this.cors, ...this.headers, ...headers, 'request-id': this.requestId },
      onError,
    );
  }

  /**
   * A response of bytes (a file, an archive) streamed from `body.stream`, with the headers of
   * {@link json}, `Content-Type` and, when known, `Content-Length`. The stream is cancelled when the
   * client goes away (the adapter cancels the body), which ends what feeds it.
   */
  bytes(status: number, body: OutgoingBytes, headers?: Record<string, string>): Response {
    return new Response(body.stream, {
      status,
      headers: {
        ...this.cors,
        ...this.headers,
        ...headers,
        'request-id': this.requestId,
        'content-type': body.mediaType,
        ...(body.length === undefined ? {} : { 'content-length': String(body.length) }),
      },
    });
  }

  /**
   * The published error envelope `{"error": {code, message, details, request_id}}` (design §2), with
   * the headers of {@link json}. There is no status argument: it is the code's, from `ERROR_STATUS`
   * (design §9), so the two cannot disagree.
   */
  error(
    code: ErrorCode,
    message: string,
    details: Record<string, unknown> = {},
    headers?: Record<string, string>,
  ): Response {
    return this.json(
      ERROR_STATUS[code],
      { error: { code, message, details, request_id: this.requestId } },
      headers,
    );
  }
}

/** A routed request: what the authentication step sees, before anything of the request is read. */
export interface RouteContext extends RequestContext {
  readonly operationId: OperationId;
}

/** A routed, validated request: what a handler gets. */
export interface HandlerContext extends RouteContext {
  readonly input: ValidRequest;
}

/**
 * The web-standard face of a step: a fresh {@link RequestContext} per request.
 *
 * @example
 * const fetch = fetchHandler(async (c) => c.json(200, { path: c.path }));
 * await fetch(new Request('http://127.0.0.1/v1/health'));
 */
export function fetchHandler(step: ContextHandler): FetchHandler {
  return (request, env) => step(new RequestContext(request, env));
}
