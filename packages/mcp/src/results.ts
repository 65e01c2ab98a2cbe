import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { ApiError, Operation } from '@svc/client';

type Body = Record<string, unknown>;

const isRecord = (value: unknown): value is Body =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** `computer build-runner-1 (01m6…) running`: the envelope's noun, then whichever of name, id, state it has. */
function describeResource(noun: string, value: Body): string {
  const name = typeof value.name === 'string' ? ` ${value.name}` : '';
  const id = typeof value.id === 'string' ? (name ? ` (${value.id})` : ` ${value.id}`) : '';
  const state = typeof value.state === 'string' ? `, ${value.state}` : '';
  // A command run in a computer (the spec's Execution): how it ended is the point of the answer.
  const exit =
    typeof value.exit_code === 'number'
      ? `, exit code ${value.exit_code}${value.timed_out === true ? ' (timed out)' : ''}`
      : '';
  return `${noun}${name}${id}${state}${exit}`;
}

function describeOperation(op: Operation): string {
  const error = op.error ? `: ${op.error.code}: ${op.error.message}` : '';
  return `operation ${op.type} ${op.id} ${op.state} (${op.progress}%)${error}`;
}

/**
 * One line for people and models, from the envelope conventions (design §2): a list key with
 * `has_more`, a single resource under its noun, `operations[]` of a long-running call.
 *
 * @example
 * summarize({ computers: [{}, {}], next_cursor: null, has_more: false }); // "2 computers."
 */
export function summarize(body: unknown): string {
  if (!isRecord(body)) return 'Done.';
  const parts: string[] = [];
  for (const [key, value] of Object.entries(body)) {
    if (key === 'operations' && Array.isArray(value))
      parts.push(...(value as Operation[]).map(describeOperation));
    else if (Array.isArray(value)) {
      const more = body.has_more === true ? ` (more: pass cursor ${JSON.stringify(body.next_cursor)})` : '';
      parts.push(`${value.length} ${key}${more}`);
    } else if (isRecord(value)) parts.push(describeResource(key, value));
  }
  return parts.length ? `${parts.join('; ')}.` : 'Done.';
}

/**
 * A tool result carrying the API's JSON: `structuredContent` for clients that read it, and in
 * `content` a one-line summary followed by the same JSON as text, which MCP asks for so that clients
 * that only pass `content` to the model lose nothing.
 *
 * @example
 * const result = successResult({ workspace: { id: 'w', name: 'dev' } });
 */
export function successResult(
  body: unknown,
  options: { isError?: boolean; note?: string } = {},
): CallToolResult {
  const summary = [options.note, summarize(body)].filter(Boolean).join(' ');
  if (body === undefined)
    return { content: [{ type: 'text', text: summary }], ...(options.isError ? { isError: true } : {}) };
  return {
    content: [
      { type: 'text', text: summary },
      { type: 'text', text: JSON.stringify(body) },
    ],
    structuredContent: body as Body,
    ...(options.isError ? { isError: true } : {}),
  };
}

/**
 * The result of a refused call: `isError`, a summary line with the code, message and request id to
 * quote, and the API's error envelope `{error: {code, message, details, request_id}}` as JSON text.
 * Not as `structuredContent`: that must match the tool's output schema, which describes success only
 * (the envelope is described once, in the server's instructions, not repeated in every tool).
 *
 * @example
 * import { ApiError } from '@svc/client';
 * const result = apiErrorResult(new ApiError('no such computer', { status: 404, code: 'not_found', requestId: 'r1' }));
 */
export function apiErrorResult(error: ApiError): CallToolResult {
  const line = `Error ${error.status} ${error.code}: ${error.message}`;
  // No request id means the body was not the API's envelope (a proxy page, a mock's own error):
  // there is then nothing spec-shaped to hand over.
  if (error.requestId === undefined || error.code === 'unknown') return textError(line);
  const envelope = {
    error: {
      code: error.code,
      message: error.message,
      details: error.details ?? {},
      request_id: error.requestId,
    },
  };
  return {
    content: [
      { type: 'text', text: `${line} (request_id ${error.requestId})` },
      { type: 'text', text: JSON.stringify(envelope) },
    ],
    isError: true,
  };
}

/**
 * A failure with no API answer to show (bad arguments, no response at all): text only, because there
 * is no envelope from the API to put in `structuredContent`.
 *
 * @example
 * const result = textError('workspace: is required');
 */
export function textError(text: string): CallToolResult {
  return { content: [{ type: 'text', text }], isError: true };
}
