import type { ToolAnnotations } from '@modelcontextprotocol/sdk/types.js';
import {
  requestBody as declaredBody,
  type EventStream,
  listOperations,
  type OpenApiDocument,
  type OperationInfo,
  type OperationKind,
  operationKind,
  operationParameters,
  operationPolicy,
  operationResponses,
  securitySchemeNames,
} from '@svc/contract';
import { annotationsFor } from './annotations.js';
import { fileTool } from './file-tools.js';
import { headerArgument, toolName } from './names.js';
import { type ReadBack, readBackRoute, withReadBack } from './read-back.js';
import { inlineRefs, isObjectSchema, type JsonSchema } from './schema.js';
import { screenTool } from './screen-tool.js';
import { STREAM_INPUTS, STREAM_OUTPUT, streamDescription } from './stream-window.js';
import { strictSchema } from './strict.js';
import { terminalTool } from './terminal-tools.js';
import { toolsetOf } from './toolsets.js';

/** Where one tool argument goes in the HTTP request. `body` with no name: the argument is the whole body. */
export type ArgumentTarget =
  | { in: 'path' | 'query' | 'header'; name: string }
  | { in: 'body'; name?: string };

/** One MCP tool, derived from one spec operation. */
export interface ToolDefinition {
  name: string;
  title: string;
  description: string;
  inputSchema: JsonSchema & { type: 'object' };
  /** The 2xx JSON body (errors are `isError` results, not a branch); absent when success has no body (204). */
  outputSchema?: JsonSchema & { type: 'object' };
  annotations: ToolAnnotations;
  operation: OperationInfo;
  /** The group a client chooses it by (`toolsets.ts`): `streams`, `files`, or the first spec tag. */
  toolset: string;
  /** Input property → request part. `wait` (long-running tools) and a stream tool's window are not sent to the API. */
  targets: Record<string, ArgumentTarget>;
  /** The operation answers 202 with `operations[]`: the tool takes `wait` and can report progress. */
  longRunning: boolean;
  /** The operation requires a JSON body: `{}` is sent when no body argument is given. */
  bodyRequired: boolean;
  /** Long-running tools: the GET that reads the resource once its operations finish. */
  readBack?: ReadBack;
  /**
   * The operation answers Server-Sent Events: the tool reads the events after a cursor that are there
   * now or come within a short wait (`stream-window.ts`). `commandOutput`: its events are a command's
   * output (the spec's `OutputChunk`, ended by `CommandExit`).
   */
  stream?: { commandOutput: boolean };
  /**
   * A long-running tool that runs a command (`x-svc.cli: execution`): the stream tool of that command's
   * output and its parameter for the operation id, followed for progress notifications.
   */
  follow?: { operationId: string; param: string };
  /**
   * A byte operation on a file, offered as text (`file-tools.ts`): `read` answers the content, `write`
   * takes it, at most `maxBytes`; `note` says so (the compact mode appends it to the spec's description).
   */
  file?: { direction: 'read' | 'write'; maxBytes: number; note: string };
  /**
   * The screen tool (`screen-tool.ts`): the computer-use actions over the screenshot operation and the
   * input beside it, `maxWaitMs` the longest wait one input action may hold.
   */
  screen?: { picture: OperationInfo; input: OperationInfo; maxWaitMs: number };
  /**
   * A terminal tool answered as text (`terminal-tools.ts`): `keys` types keys (named ones in angle
   * brackets) and answers the settled screen; `screen` answers the screen. `note` says so (the compact
   * mode appends it to the spec's description).
   */
  terminal?: { kind: 'keys' | 'screen'; note: string };
}

/** The header every mutating call may carry; the client makes one up when the caller does not. */
const IDEMPOTENCY_HEADER = 'idempotency-key';

interface Parameter {
  name: string;
  in: string;
  required?: boolean;
  description?: string;
  schema?: JsonSchema;
}

/**
 * Whether the operation is called with the caller's access token: its security (or the document's
 * default) names a scheme of the document's default security. That keeps out `getHealth` (no auth, for
 * probes) and `exchangeToken` (takes an assertion or code, not an access token) without naming them.
 */
function usesAccessToken(document: OpenApiDocument, op: OperationInfo): boolean {
  const defaults = new Set(
    (document.security as Record<string, unknown>[] | undefined)?.flatMap(Object.keys),
  );
  return securitySchemeNames(document, op).some((scheme) => defaults.has(scheme));
}

/** The operation's parameters, path-level ones merged (`@svc/contract`), `$ref`s inlined. */
function parametersOf(document: OpenApiDocument, op: OperationInfo): Parameter[] {
  return operationParameters(document, op).map((parameter) => inlineRefs(document, parameter) as Parameter);
}

/** A response's JSON schema for each 2xx status that has one, `$ref`s inlined. */
function responseSchemas(document: OpenApiDocument, op: OperationInfo): JsonSchema[] {
  const success: JsonSchema[] = [];
  for (const { status, schema } of operationResponses(document, op)) {
    if (/^2/.test(status) && schema) success.push(inlineRefs(document, schema));
  }
  return success;
}

/**
 * What the generic tool of an operation takes by its kind, besides the operation's own inputs: `wait`
 * for a long-running one, a window of events for a stream. Which tool an operation becomes is
 * {@link toolsOf}'s: the two switches are the MCP server's whole handling of the kinds.
 */
function genericOf(kind: OperationKind): { longRunning: boolean; events?: EventStream } {
  switch (kind.kind) {
    case 'long-running':
      return { longRunning: true };
    case 'event-stream':
      return { longRunning: false, events: kind.stream };
    case 'json':
    case 'bytes-in':
    case 'bytes-out':
      return { longRunning: false };
  }
}

function describe(op: OperationInfo, longRunning: boolean): string {
  const parts = [op.summary, op.description.trim(), `API: ${op.method.toUpperCase()} ${op.path}`];
  if (longRunning) {
    parts.push(
      'Long-running: with `wait` (default true) the tool returns when the operations finish and reports ' +
        'progress; `wait: false` returns at once with the operations to poll.',
    );
  }
  return parts.filter(Boolean).join('\n\n');
}

/**
 * Derives one tool definition from one spec operation: arguments from the path, query and header
 * parameters and the JSON body's properties (flattened when they do not collide, else under `body`),
 * `$ref`s inlined, output schema from the responses, annotations from the method.
 *
 * @example
 * import { listOperations, loadDocument } from '@svc/contract';
 * const doc = loadDocument();
 * const op = listOperations(doc).find((o) => o.operationId === 'createComputer');
 * if (op) toolFromOperation(doc, op).inputSchema.required; // ["workspace", "name", …]
 */
export function toolFromOperation(document: OpenApiDocument, op: OperationInfo): ToolDefinition {
  const properties: Record<string, JsonSchema> = {};
  const required: string[] = [];
  const targets: Record<string, ArgumentTarget> = {};
  const add = (name: string, schema: JsonSchema, target: ArgumentTarget, isRequired: boolean) => {
    if (name in properties) throw new Error(`${op.operationId}: two inputs are named ${name}`);
    properties[name] = schema;
    targets[name] = target;
    if (isRequired) required.push(name);
  };

  const { longRunning, events } = genericOf(operationKind(document, op));
  for (const parameter of parametersOf(document, op)) {
    // A stream tool takes its cursor as `after`; Last-Event-ID (the same cursor, as SSE sends it) would repeat it.
    if (events && parameter.in === 'header' && parameter.name.toLowerCase() === 'last-event-id') continue;
    if (parameter.in === 'cookie') throw new Error(`${op.operationId}: cookie parameters are not supported`);
    const schema = {
      ...parameter.schema,
      ...(parameter.description ? { description: parameter.description } : {}),
    };
    const target = { in: parameter.in as 'path' | 'query' | 'header', name: parameter.name };
    if (parameter.in !== 'header') add(parameter.name, schema, target, parameter.required === true);
    // Optional even where the spec requires it: the client supplies a fresh key when none is given.
    else if (parameter.name.toLowerCase() === IDEMPOTENCY_HEADER) {
      const description = `Optional: a fresh key is sent when left out. Give one to retry a call safely. ${parameter.description ?? ''}`;
      add(headerArgument(parameter.name), { ...schema, description: description.trim() }, target, false);
    } else add(headerArgument(parameter.name), schema, target, parameter.required === true);
  }

  const requestBody = declaredBody(document, op);
  const body = requestBody?.schema ? inlineRefs(document, requestBody.schema) : undefined;
  const success = responseSchemas(document, op);
  const reserved = longRunning ? ['wait'] : [];
  if (body) {
    const bodyRequired = requestBody?.required === true;
    const flat =
      isObjectSchema(body) &&
      Object.keys(body.properties).every((k) => !(k in properties) && !reserved.includes(k));
    if (flat) {
      const requiredInBody = new Set(bodyRequired ? ((body.required as string[] | undefined) ?? []) : []);
      for (const [name, schema] of Object.entries(body.properties))
        add(name, schema, { in: 'body', name }, requiredInBody.has(name));
    } else add('body', body, { in: 'body' }, bodyRequired);
  }
  if (longRunning) {
    properties.wait = {
      type: 'boolean',
      default: true,
      description:
        'Wait until the operations finish (sending progress notifications), up to the server’s wait limit. false: return at once.',
    };
  }

  // Read by the tool itself, like `wait`: not sent to the API.
  if (events) Object.assign(properties, STREAM_INPUTS);

  const tool: ToolDefinition = {
    name: toolName(op.operationId),
    title: op.summary || op.operationId,
    description: events
      ? `${describe(op, longRunning)}\n\n${streamDescription()}`
      : describe(op, longRunning),
    inputSchema: strictSchema({
      type: 'object',
      properties,
      ...(required.length ? { required } : {}),
      additionalProperties: false,
    }),
    annotations: annotationsFor(document, op),
    operation: op,
    toolset: toolsetOf(document, op),
    targets,
    longRunning,
    bodyRequired: requestBody?.required === true,
  };
  if (events) {
    const schemas = new Set(events.events.map((e) => e.dataSchema));
    tool.stream = { commandOutput: schemas.has('OutputChunk') && schemas.has('CommandExit') };
    tool.outputSchema = strictSchema(STREAM_OUTPUT);
    return tool;
  }
  const readBack = longRunning ? readBackRoute(document, op) : undefined;
  if (readBack) tool.readBack = readBack;
  const read = readBack ? responseSchemas(document, readBack.operation)[0] : undefined;
  const bodies = success.map((body) => withReadBack(body, read));
  const [only] = bodies;
  if (only)
    tool.outputSchema = strictSchema(
      bodies.length === 1 ? only : { type: 'object', anyOf: bodies },
    ) as JsonSchema & { type: 'object' };
  return tool;
}

/**
 * Whether an operation is a stream whose events carry pictures (a field of an event's data whose
 * `contentMediaType` is an image: a live screen, `streamComputerScreenFrames`). It is for a person to
 * watch; an agent looks when it needs to, with the screen tool, and a stream of base64 pictures would
 * only fill its context. So it is no tool.
 */
function streamsPictures(document: OpenApiDocument, stream: EventStream): boolean {
  const schemas = (document.components?.schemas ?? {}) as Record<
    string,
    { properties?: Record<string, unknown> }
  >;
  return stream.events.some((event) =>
    Object.values(schemas[event.dataSchema]?.properties ?? {}).some((property) =>
      String((property as { contentMediaType?: unknown }).contentMediaType ?? '').startsWith('image/'),
    ),
  );
}

/**
 * One tool per operation that takes the caller's access token, in spec order, derived at call time
 * from the document: a new operation in `spec/` becomes a tool without code changes. An operation that
 * takes or answers bytes is no JSON tool: a file's becomes a text tool within a limit
 * (`read_computer_file`, `write_computer_file`: {@link fileTool}), a screenshot's the screen tool
 * (`use_computer_screen`: {@link screenTool}), a tar archive's none; a terminal's input takes keys as
 * text and answers the screen ({@link terminalTool}); a stream of pictures is none ({@link streamsPictures}).
 *
 * @example
 * import { loadDocument } from '@svc/contract';
 * const names = buildTools(loadDocument()).map((t) => t.name); // ["get_me", "list_workspaces", …]
 */
export function buildTools(document: OpenApiDocument): ToolDefinition[] {
  const tools = listOperations(document)
    .filter((op) => usesAccessToken(document, op))
    .flatMap((op) => toolsOf(document, op));
  const output = tools.find((t) => t.stream?.commandOutput && pathParams(t).length === 1);
  for (const tool of tools)
    if (output && tool.longRunning && operationPolicy(document, tool.operation).cli === 'execution')
      tool.follow = { operationId: output.operation.operationId, param: pathParams(output)[0] as string };
  const names = new Set<string>();
  for (const tool of tools) {
    if (names.has(tool.name)) throw new Error(`two operations map to the tool name ${tool.name}`);
    names.add(tool.name);
  }
  return tools;
}

/**
 * The tools of one operation, by its kind (`operationKind` of @svc/contract): the one place the MCP
 * server tells the kinds apart. JSON and long-running operations are the generic tool (a long-running
 * one waits: {@link toolFromOperation}), but a terminal's screen, answered as text; a stream reads a
 * window of events, but a stream of pictures is none; bytes become a text tool on a file, the screen
 * tool on a screenshot, the keys tool on a terminal's input, or none (a tar archive).
 */
function toolsOf(document: OpenApiDocument, op: OperationInfo): ToolDefinition[] {
  const kind = operationKind(document, op);
  switch (kind.kind) {
    case 'json': {
      const tool = toolFromOperation(document, op);
      return [terminalTool(document, op, tool) ?? tool];
    }
    case 'long-running':
      return [toolFromOperation(document, op)];
    case 'event-stream':
      return streamsPictures(document, kind.stream) ? [] : [toolFromOperation(document, op)];
    case 'bytes-in': {
      const tool = toolFromOperation(document, op);
      return [terminalTool(document, op, tool) ?? fileTool(document, op, tool) ?? []].flat();
    }
    case 'bytes-out': {
      const tool = toolFromOperation(document, op);
      return [fileTool(document, op, tool) ?? screenTool(document, tool) ?? []].flat();
    }
  }
}

/** The API names of a tool's path parameters. */
function pathParams(tool: ToolDefinition): string[] {
  return Object.values(tool.targets).flatMap((t) => (t.in === 'path' ? [t.name] : []));
}
