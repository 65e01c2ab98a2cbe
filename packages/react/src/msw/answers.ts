// The parts of the stateful mode's answers shared by reads and writes: a success, and the error answer of
// a code. Both carry the headers the spec declares for their status (from `exampleAnswer`) and a request
// id of their own, the same in `Request-Id` and an error's `request_id`, as the server's do.
import type { OpenApiDocument, OperationInfo } from '@svc/contract/browser';
import { listOperations, operationResponses } from '@svc/contract/browser';
import { type Answer, exampleAnswer } from './examples.js';
import type { MockState } from './state.js';

/** What a stateful answer is computed from. */
export interface StatefulRequest {
  op: OperationInfo;
  params: Record<string, string>;
  query: URLSearchParams;
  body: unknown;
  /** The path prefix of the API (`/v1`), for `Location`. */
  prefix: string;
  /** The request body as sent, when it is not JSON (the stateful mode refuses it as the server does). */
  unreadable?: boolean;
}

/** A JSON object of a request or an answer. */
export type Body = Record<string, unknown>;

/**
 * A success answer of `op`: a copy of `body` (later changes to the memory do not reach it), with the
 * headers the spec declares for `status` and a request id of its own. `body` undefined: no body (204).
 */
export function ok(
  document: OpenApiDocument,
  state: MockState,
  op: OperationInfo,
  body: unknown,
  status = 200,
  headers: Record<string, string> = {},
): Answer {
  const declared = exampleAnswer(document, op.operationId, { status }).headers;
  const answer: Answer = {
    status,
    body: body === undefined ? undefined : structuredClone(body),
    headers: { ...declared, 'Request-Id': state.requestId(), ...headers },
  };
  if (body === undefined) delete answer.headers['Content-Type'];
  else answer.headers['Content-Type'] = 'application/json';
  return answer;
}

/**
 * The error answer of `code` in the published shape: the operation's own example of that code, else its
 * first example of the status the spec gives that code elsewhere; with this message, these details (`{}`
 * when there is nothing to add, as the spec requires) and a request id of its own. Throws when the
 * operation documents no status for the code: the mock would otherwise answer outside the spec.
 */
export function failure(
  document: OpenApiDocument,
  state: MockState,
  op: OperationInfo,
  code: string,
  message: string,
  details: Body = {},
): Answer {
  const found = ownExample(document, op, code) ?? statusExample(document, op, statusOf(document, code));
  if (!found)
    throw new Error(`${op.operationId} documents no answer for ${code}; the stateful mock cannot refuse so`);
  const request_id = state.requestId();
  const error = (found.body as { error: Body }).error;
  return {
    ...found,
    headers: { ...found.headers, 'Request-Id': request_id },
    body: { error: { ...error, code, message, details, request_id } },
  };
}

/** Every error example of an operation, as answers. */
function errorExamples(document: OpenApiDocument, op: OperationInfo): Answer[] {
  const answers: Answer[] = [];
  for (const response of operationResponses(document, op)) {
    if (!/^[45]\d\d$/.test(response.status)) continue;
    const content = response.response.content as Record<string, { examples?: Body }> | undefined;
    for (const example of Object.keys(content?.['application/json']?.examples ?? {}))
      answers.push(exampleAnswer(document, op.operationId, { status: Number(response.status), example }));
  }
  return answers;
}

const codeOf = (answer: Answer) => (answer.body as { error?: { code?: string } } | undefined)?.error?.code;

/** Whether the operation documents an error of this code among its examples. */
export function refuses(document: OpenApiDocument, op: OperationInfo, code: string): boolean {
  return ownExample(document, op, code) !== undefined;
}

function ownExample(document: OpenApiDocument, op: OperationInfo, code: string): Answer | undefined {
  return errorExamples(document, op).find((answer) => codeOf(answer) === code);
}

function statusExample(document: OpenApiDocument, op: OperationInfo, status: number | undefined) {
  if (status === undefined) return undefined;
  return errorExamples(document, op).find(
    (answer) => answer.status === status && codeOf(answer) !== undefined,
  );
}

const statuses = new WeakMap<OpenApiDocument, Map<string, number>>();

/** The status the document's examples give an error code (`already_exists` → 409), read once. */
function statusOf(document: OpenApiDocument, code: string): number | undefined {
  let index = statuses.get(document);
  if (!index) {
    index = new Map();
    for (const op of listOperations(document))
      for (const answer of errorExamples(document, op)) {
        const found = codeOf(answer);
        if (found !== undefined && !index.has(found)) index.set(found, answer.status);
      }
    statuses.set(document, index);
  }
  return index.get(code);
}
