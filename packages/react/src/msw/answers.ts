// The parts of the stateful mode's answers shared by reads and writes: a success, and the error answer of
// a code taken from the operation's own examples.
import type { OpenApiDocument, OperationInfo } from '@svc/contract/browser';
import { operationResponses } from '@svc/contract/browser';
import { type Answer, exampleAnswer } from './examples.js';

/** What a stateful answer is computed from. */
export interface StatefulRequest {
  op: OperationInfo;
  params: Record<string, string>;
  query: URLSearchParams;
  body: unknown;
  /** The path prefix of the API (`/v1`), for `Location`. */
  prefix: string;
}

/** A JSON object of a request or an answer. */
export type Body = Record<string, unknown>;

/** A success answer: a copy of `body`, so later changes to the memory do not reach it. */
export function ok(body: unknown, status = 200, headers: Record<string, string> = {}): Answer {
  return { status, body: structuredClone(body), headers: { 'Content-Type': 'application/json', ...headers } };
}

/** The error answer of `code`: the operation's own example of it, with this message and details. */
export function failure(
  document: OpenApiDocument,
  op: OperationInfo,
  code: string,
  message: string,
  details: unknown = null,
): Answer {
  for (const response of operationResponses(document, op)) {
    const content = response.response.content as Record<string, { examples?: Body }> | undefined;
    for (const example of Object.keys(content?.['application/json']?.examples ?? {})) {
      const answer = exampleAnswer(document, op.operationId, { status: Number(response.status), example });
      const error = (answer.body as { error?: Body } | undefined)?.error;
      if (error?.code === code) return { ...answer, body: { error: { ...error, message, details } } };
    }
  }
  return { status: 500, body: { error: { code, message, details, request_id: null } }, headers: {} };
}
