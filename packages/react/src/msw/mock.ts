import {
  isAnonymous,
  listOperations,
  type OpenApiDocument,
  type operations,
  type paths,
} from '@svc/contract/browser';
import { type HttpHandler, HttpResponse, type RequestHandlerOptions, delay as wait } from 'msw';
import { createOpenApiHttp, type OpenApiHttpHandlers } from 'openapi-msw';
import { takesJson } from './bodies.js';
import { findCollections } from './collections.js';
import { BUNDLED_DOCUMENT } from './document.js';
import { type Answer, answerText, type Choice, exampleAnswer, operationById, preferred } from './examples.js';
import { seedFromExamples } from './seed.js';
import { MockState, type StateOptions } from './state.js';
import { statefulAnswer } from './stateful.js';

/** The statuses an operation documents (`200 | 400 | 404 | …`). */
export type StatusOf<Ops, Id extends keyof Ops> = Ops[Id] extends { responses: infer R }
  ? Extract<keyof R, number>
  : never;

/** A choice per operation id: which documented answer each gives by default. */
export type Choices<Ops = operations> = { [Id in keyof Ops]?: Choice<StatusOf<Ops, Id>> };

/** Options of {@link createMock}. */
export interface MockOptions<Ops = operations> {
  /** Where the client sends requests: its `baseUrl` (`http://127.0.0.1:4010`, `https://api.example/v1`). */
  baseUrl: string;
  /** The document to answer from. Default: the bundled v1 document of `@svc/contract`. */
  document?: OpenApiDocument;
  /** Per operation, another example, status or delay than the default (the first example of the success status). */
  choose?: Choices<Ops>;
  /** Milliseconds every answer waits (a per-operation `delay` wins). */
  delay?: number;
  /**
   * Keep state like the server's sandbox: creates, updates, deletes and paging change and read an
   * in-memory copy seeded from the spec's list examples, and long-running calls move their targets to
   * their final state, one `stepMs` per step. `true` for the defaults.
   */
  stateful?: boolean | StateOptions;
}

/** What {@link createMock} makes. */
export interface SvcMock<Paths extends {} = paths, Ops = operations> {
  /** One handler per operation of the document: `setupServer(...mock.handlers)`, `setupWorker(...)`. */
  handlers: HttpHandler[];
  /**
   * The handler of one operation answering another choice: a documented status (every error the spec
   * lists), a named example, a delay. Put it in front with `server.use(…)`; `{ once: true }` answers
   * one request so.
   */
  answer<Id extends keyof Ops & string>(
    operationId: Id,
    choice: Choice<StatusOf<Ops, Id>>,
    options?: RequestHandlerOptions,
  ): HttpHandler;
  /** openapi-msw's `http` on the same base URL, typed by the spec, for a one-off handler of your own. */
  http: OpenApiHttpHandlers<Paths>;
  /** The stateful mode's memory (undefined without `stateful`). */
  state: MockState | undefined;
}

/**
 * MSW handlers for every operation of the spec: each answers the spec's named examples, the same every
 * time (the first example of the success status, as the Prism mock does), refuses a request without a
 * bearer token as the service does, and honours Prism's `Prefer: code=…, example=…`. With `stateful`,
 * resources and operations keep state like the server's sandbox.
 *
 * @example
 * import { createMock } from '@svc/react/msw';
 * import { setupServer } from 'msw/node';
 * const mock = createMock({ baseUrl: 'http://api.test/v1' });
 * const server = setupServer(...mock.handlers);
 * server.listen();
 * server.use(mock.answer('createComputer', { status: 409, example: 'computer_already_exists' }, { once: true }));
 */
export function createMock<Paths extends {} = paths, Ops = operations>(
  options: MockOptions<Ops>,
): SvcMock<Paths, Ops> {
  const document = options.document ?? BUNDLED_DOCUMENT;
  const baseUrl = options.baseUrl.replace(/\/+$/, '');
  const http = createOpenApiHttp<Paths>({ baseUrl });
  const prefix = new URL(baseUrl, 'http://localhost').pathname.replace(/\/+$/, '');
  const stateOptions = options.stateful === true ? {} : options.stateful || undefined;
  const state = stateOptions ? new MockState(findCollections(document), stateOptions) : undefined;
  if (state) seedFromExamples(document, state);
  const choose = (options.choose ?? {}) as Record<string, Choice>;

  const handlerOf = (
    operationId: string,
    fixed: Choice | undefined,
    handlerOptions?: RequestHandlerOptions,
  ) => {
    const op = operationById(document, operationId);
    const anonymous = isAnonymous(document, op);
    const untyped = http.untyped as unknown as Record<
      string,
      (
        path: string,
        resolver: (info: { request: Request; params: Record<string, string> }) => Promise<Response>,
        o?: RequestHandlerOptions,
      ) => HttpHandler
    >;
    const path = `${baseUrl}${op.path.replaceAll(/\{([^}]+)\}/g, ':$1')}`;
    return untyped[op.method]!(
      path,
      async ({ request, params }) => {
        const prefer = preferred(request.headers.get('Prefer'));
        let choice: Choice = { ...(fixed ?? choose[operationId]), ...prefer };
        if (!anonymous && !/^Bearer \S/.test(request.headers.get('Authorization') ?? ''))
          choice = { status: 401 };
        const pause = choice.delay ?? options.delay;
        if (pause !== undefined) await wait(pause);
        let answer: Answer | undefined;
        if (state && !fixed && choice.status === undefined && choice.example === undefined) {
          const url = new URL(request.url);
          const text = takesJson(document, op) ? await request.text() : '';
          let body: unknown;
          let unreadable = false;
          try {
            body = text === '' ? undefined : JSON.parse(text);
          } catch {
            unreadable = true;
          }
          answer = await statefulAnswer(document, state, {
            op,
            params,
            query: url.searchParams,
            body,
            prefix,
            unreadable,
          });
        }
        answer ??= exampleAnswer(document, operationId, choice);
        return new HttpResponse(answerText(answer), { status: answer.status, headers: answer.headers });
      },
      handlerOptions,
    );
  };

  return {
    handlers: listOperations(document).map((op) => handlerOf(op.operationId, undefined)),
    answer: (operationId, choice, handlerOptions) => {
      exampleAnswer(document, operationId, choice as Choice); // refuses an undocumented status or example now
      return handlerOf(operationId, choice as Choice, handlerOptions);
    },
    http,
    state,
  };
}
