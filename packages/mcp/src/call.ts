import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import {
  ApiError,
  errorFromResponse,
  KeyFileError,
  NetworkError,
  type Operation,
  type SvcClient,
  TimeoutError,
  waitForOperations,
} from '@svc/client';
import { callFileTool } from './file-tools.js';
import { followOutput } from './output-progress.js';
import { progressTracker, type ReportProgress } from './progress.js';
import { apiErrorResult, successResult, textError } from './results.js';
import { callScreenTool } from './screen-tool.js';
import { readWindow } from './stream-window.js';
import { callTerminalTool } from './terminal-tools.js';
import type { ToolDefinition } from './tools.js';

/** What one tool call needs besides its arguments. */
export interface CallContext {
  /** Aborted when the MCP client cancels the call or goes away. */
  signal: AbortSignal;
  /** Present when the request carried a `progressToken`. */
  progress?: ReportProgress | undefined;
  /** Longest wait for the operations of a long-running call. */
  waitTimeoutMs: number;
  /** Least time between two polls of one operation (see `waitForOperations`). */
  minPollIntervalMs?: number | undefined;
}

type Params = {
  path: Record<string, unknown>;
  query: Record<string, unknown>;
  header: Record<string, string>;
};
type RawResult = { data?: unknown; error?: unknown; response: Response };
type LooseRequest = (
  method: string,
  path: string,
  init: { params: Params; body?: unknown; signal?: AbortSignal },
) => Promise<RawResult>;

/** Splits the tool arguments into path, query, header and body by the targets the spec gave them. */
function toRequest(tool: ToolDefinition, args: Record<string, unknown>) {
  const params: Params = { path: {}, query: {}, header: {} };
  let body: unknown;
  for (const [name, value] of Object.entries(args)) {
    const target = tool.targets[name];
    if (!target || value === undefined) continue;
    if (target.in === 'body') {
      if (target.name === undefined) body = value;
      else body = { ...(body as object | undefined), [target.name]: value };
    } else if (target.in === 'header') params.header[target.name] = String(value);
    else params[target.in][target.name] = value;
  }
  if (body === undefined && tool.bodyRequired) body = {}; // let the API name the missing fields
  return { params, body };
}

/** Gives a mutating call its Idempotency-Key up front, so a failure can tell how to retry it safely. */
function ensureIdempotencyKey(tool: ToolDefinition, params: Params): string | undefined {
  for (const target of Object.values(tool.targets)) {
    if (target.in !== 'header' || target.name.toLowerCase() !== 'idempotency-key') continue;
    params.header[target.name] ??= globalThis.crypto.randomUUID();
    return params.header[target.name];
  }
  return undefined;
}

/**
 * The body with its resource read again once the operations succeeded: the 202's snapshot is the
 * resource as accepted (`creating`), the caller wants it as it is now (`running`). A resource that is
 * gone (a delete) keeps its snapshot and says so; any other failure keeps the snapshot too.
 */
async function readBackResource(
  client: SvcClient,
  tool: ToolDefinition,
  args: Record<string, unknown>,
  body: Record<string, unknown>,
  signal: AbortSignal,
): Promise<{ body: Record<string, unknown>; note?: string }> {
  const route = tool.readBack;
  const noun = Object.keys(body).find((key) => key !== 'operations' && isResource(body[key]));
  // A create names the new resource's id; an action or a delete reads its own path's resource.
  if (!route || (route.idParam && !noun)) return { body };
  const path: Record<string, unknown> = {};
  for (const [name, target] of Object.entries(tool.targets))
    if (target.in === 'path' && args[name] !== undefined) path[target.name] = args[name];
  if (route.idParam && noun) path[route.idParam] = (body[noun] as { id: string }).id;
  const request = (client as unknown as { request: LooseRequest }).request;
  const { data, response } = await request('get', route.path, {
    params: { path, query: {}, header: {} },
    signal,
  });
  const fresh = Object.entries((data ?? {}) as Record<string, unknown>).filter(([, value]) =>
    isResource(value),
  );
  if (response.ok && fresh.length > 0) return { body: { ...body, ...Object.fromEntries(fresh) } };
  if (response.status === 404)
    return { body, note: `The ${noun ?? 'resource'} is gone (404 on reading it back).` };
  return { body };
}

const isResource = (value: unknown): value is { id: string } =>
  typeof value === 'object' && value !== null && typeof (value as { id?: unknown }).id === 'string';

async function waitFor(
  client: SvcClient,
  tool: ToolDefinition,
  args: Record<string, unknown>,
  body: { operations: Operation[] } & Record<string, unknown>,
  context: CallContext,
): Promise<CallToolResult> {
  const tracker = context.progress ? progressTracker(body.operations, context.progress) : undefined;
  await tracker?.start();
  // A command's output, as it comes, replaces the operation's percentage (which says little for a
  // command) in the notifications after the first.
  const started = body.operations[0];
  const follower =
    tool.follow && context.progress && started
      ? followOutput(client, tool.follow, started.id, context.progress, context.signal)
      : undefined;
  try {
    const operations = await waitForOperations(client, body.operations, {
      signal: context.signal,
      timeoutMs: context.waitTimeoutMs,
      ...(context.minPollIntervalMs === undefined ? {} : { minIntervalMs: context.minPollIntervalMs }),
      ...(tracker && !follower ? { onProgress: (op: Operation) => tracker.update(op) } : {}),
    });
    await follower?.finish();
    await tracker?.flush();
    const failed = operations.some((op) => op.state !== 'succeeded');
    if (failed)
      return successResult(
        { ...body, operations },
        { isError: true, note: 'Not every operation succeeded:' },
      );
    const done = { ...body, operations };
    const read = await readBackResource(client, tool, args, done, context.signal).catch((error: unknown) => {
      if (context.signal.aborted) throw error;
      return { body: done, note: 'The resource could not be read back; it is shown as accepted.' };
    });
    return successResult(read.body, { note: ['Finished:', read.note].filter(Boolean).join(' ') });
  } catch (error) {
    if (!(error instanceof TimeoutError)) throw error;
    const seen = new Map(error.operations.map((op) => [op.id, op]));
    const operations = body.operations.map((op) => seen.get(op.id) ?? op);
    const note = `Still running after ${Math.round(context.waitTimeoutMs / 1000)} s; poll the operations to follow them:`;
    return successResult({ ...body, operations }, { isError: true, note });
  } finally {
    await follower?.finish();
  }
}

/**
 * Runs one tool: sends its operation through the client (so auth, Idempotency-Key and retries are the
 * client's), waits for the operations of a long-running call unless `wait: false`, and turns every
 * API refusal into an `isError` result. Only an abort (the caller cancelled) is thrown.
 *
 * @example
 * import { createClient } from '@svc/client/retry';
 * import { loadDocument } from '@svc/contract';
 * import { buildTools } from './tools.js';
 * const [tool] = buildTools(loadDocument()).filter((t) => t.name === 'get_me');
 * const client = createClient({ baseUrl: 'http://127.0.0.1:8080/v1', token: 'ey...' });
 * if (tool) await callTool(client, tool, {}, { signal: new AbortController().signal, waitTimeoutMs: 60_000 });
 */
export async function callTool(
  client: SvcClient,
  tool: ToolDefinition,
  args: Record<string, unknown>,
  context: CallContext,
): Promise<CallToolResult> {
  const { params, body } = toRequest(tool, args);
  const idempotencyKey = ensureIdempotencyKey(tool, params);
  const { method, path } = tool.operation;
  try {
    if (tool.stream) return await readWindow(client, tool, args, context.signal);
    if (tool.screen) return await callScreenTool(client, tool, args, context.signal);
    if (tool.terminal)
      return await callTerminalTool(
        client,
        tool,
        { ...args, idempotency_key: idempotencyKey },
        context.signal,
      );
    if (tool.file)
      return await callFileTool(client, tool, { ...args, idempotency_key: idempotencyKey }, context.signal);
    const request = (client as unknown as { request: LooseRequest }).request;
    const { data, error, response } = await request(method, path, {
      params,
      ...(body === undefined ? {} : { body }),
      signal: context.signal,
    });
    if (!response.ok) return apiErrorResult(errorFromResponse(response, error));
    const operations = (data as { operations?: unknown } | undefined)?.operations;
    if (tool.longRunning && args.wait !== false && Array.isArray(operations) && operations.length > 0) {
      return await waitFor(client, tool, args, data as { operations: Operation[] }, context);
    }
    return successResult(data);
  } catch (error) {
    if (context.signal.aborted) throw error;
    if (error instanceof ApiError) return apiErrorResult(error);
    if (error instanceof NetworkError) {
      const retry = idempotencyKey
        ? ` It may or may not have taken effect: call again with idempotency_key "${idempotencyKey}" to retry it safely.`
        : '';
      return textError(`No answer from the API after ${error.attempts} attempts (${error.message}).${retry}`);
    }
    if (error instanceof KeyFileError) return textError(`${error.code}: ${error.message}`);
    throw error;
  }
}
