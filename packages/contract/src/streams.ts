// The event streams of the spec, read one way: which operations answer Server-Sent Events, and for each
// the events it may send and the schema of their `data`. In OpenAPI 3.1 a stream is the 200 response's
// `text/event-stream` schema, `type: array` whose `items` is the item schema (3.2's `itemSchema`); each
// `oneOf` branch of the item schema ties event names (`properties.event.const|enum`) to the components
// schema of their data (`properties.data.contentSchema.$ref`). scripts/generate.mjs walks the same shape
// to type `StreamEvent<K>`.
import type { OpenApiDocument } from './document.js';
import { listOperations, type OperationInfo } from './operations.js';
import { deref, type JsonObject } from './refs.js';

/** The media type of a Server-Sent Events response (WHATWG HTML §9.2). */
export const EVENT_STREAM = 'text/event-stream';

/** The event a server sends last when it ends a stream, saying why (design brief for streams). */
export const STREAM_ENDED = 'stream.ended';

/** The extension on an item schema's `oneOf` branch whose events close the stream (a command's `exit`). */
export const CLOSES_STREAM = 'x-svc-closes-stream';

/** One `oneOf` branch of a stream's item schema: event names and the schema of their `data`. */
export interface StreamEventBranch {
  /** The branch's `title`, when it has one. */
  title: string | undefined;
  /** The event names the branch names (`const`, or every value of `enum`). */
  names: string[];
  /** The name of the components schema of the events' `data` (`ComputerEvent`). */
  dataSchema: string;
  /** The local reference to that schema (`#/components/schemas/ComputerEvent`). */
  dataRef: string;
  /**
   * The stream closes after an event of this branch (`x-svc-closes-stream: true`): a command's `exit`.
   * `stream.ended`, the server's own last word, is told apart by its name ({@link STREAM_ENDED}).
   */
  closes: boolean;
}

/** What an operation's event stream sends, read from its 200 `text/event-stream` response. */
export interface EventStream {
  operationId: string;
  /** The name of the item schema (`WorkspaceEventStreamItem`). */
  itemSchema: string;
  /** The item schema, `$ref` followed (its `oneOf` as written). */
  item: JsonObject;
  /** Every event name of the item's `event` enum, in spec order. */
  eventNames: string[];
  /** Whether clients must skip event names added later (`x-extensible-enum`). */
  extensible: boolean;
  /** The schema of the SSE `id` field (its `pattern`). */
  idSchema: JsonObject;
  /** One entry per `oneOf` branch, in spec order. */
  events: StreamEventBranch[];
  /** The branch of `stream.ended`, the server's last word when it ends the stream; undefined without one. */
  final: StreamEventBranch | undefined;
}

/**
 * Whether an operation is a stream operation: a GET whose 200 answers `text/event-stream`.
 *
 * @example
 * import { isStreamOperation, listOperations, loadDocument } from '@svc/contract';
 * const doc = loadDocument();
 * listOperations(doc).filter((op) => isStreamOperation(doc, op)).length; // 2
 */
export function isStreamOperation(document: OpenApiDocument, op: OperationInfo): boolean {
  return op.method === 'get' && streamSchema(document, op) !== undefined;
}

/**
 * The operationIds of every stream operation, in spec order.
 *
 * @example
 * import { loadDocument, streamOperationIds } from '@svc/contract';
 * streamOperationIds(loadDocument()); // ['streamWorkspaceEvents', 'streamOperationOutput']
 */
export function streamOperationIds(document: OpenApiDocument): string[] {
  return listOperations(document)
    .filter((op) => isStreamOperation(document, op))
    .map((op) => op.operationId);
}

/**
 * The event stream of an operation (given by operationId or as listed), read from the bundle;
 * undefined for an operation that is not a stream. Throws when a stream's item schema breaks the shape
 * above (the `svc-event-stream` lint rule refuses such a spec).
 *
 * @example
 * import { eventStream, loadDocument } from '@svc/contract';
 * const stream = eventStream(loadDocument(), 'streamWorkspaceEvents');
 * stream?.events.find((e) => e.names.includes('computer.created'))?.dataSchema; // 'ComputerEvent'
 * eventStream(loadDocument(), 'getMe'); // undefined
 */
export function eventStream(document: OpenApiDocument, op: string | OperationInfo): EventStream | undefined {
  const info = typeof op === 'string' ? listOperations(document).find((o) => o.operationId === op) : op;
  if (info === undefined) throw new Error(`no operation ${String(op)} in the document`);
  if (info.method !== 'get') return undefined;
  const schema = streamSchema(document, info);
  if (schema === undefined) return undefined;
  const where = `${info.operationId}'s ${EVENT_STREAM} response`;
  const itemRef = (schema.items as JsonObject | undefined)?.$ref;
  if (schema.type !== 'array' || typeof itemRef !== 'string')
    throw new Error(`${where}: the schema is not an array of a components schema`);
  const item = deref(document, schema.items);
  const properties = (item.properties ?? {}) as Record<string, JsonObject>;
  const eventNames = (properties.event?.enum ?? []) as string[];
  const events = ((item.oneOf ?? []) as unknown[]).map((raw, index) => {
    const branch = deref(document, raw);
    const own = (branch.properties ?? {}) as Record<string, JsonObject>;
    const names = namesOf(own.event);
    const dataRef = (own.data?.contentSchema as JsonObject | undefined)?.$ref;
    if (names.length === 0 || typeof dataRef !== 'string')
      throw new Error(`${where}: oneOf[${index}] names no event or no data.contentSchema.$ref`);
    return {
      title: typeof branch.title === 'string' ? branch.title : undefined,
      names,
      dataSchema: schemaName(dataRef),
      dataRef,
      closes: branch[CLOSES_STREAM] === true,
    };
  });
  return {
    operationId: info.operationId,
    itemSchema: schemaName(itemRef),
    item,
    eventNames,
    extensible: properties.event?.['x-extensible-enum'] === true,
    idSchema: properties.id ?? {},
    events,
    final: events.find((e) => e.names.includes(STREAM_ENDED)),
  };
}

/**
 * The branch of a stream that names an event; undefined for a name the spec does not know (a client
 * skips it when the enum is extensible).
 *
 * @example
 * import { eventStream, loadDocument, streamEventBranch } from '@svc/contract';
 * const stream = eventStream(loadDocument(), 'streamOperationOutput');
 * if (stream) streamEventBranch(stream, 'exit')?.dataSchema; // 'CommandExit'
 */
export function streamEventBranch(stream: EventStream, name: string): StreamEventBranch | undefined {
  return stream.events.find((e) => e.names.includes(name));
}

/** The schema of an operation's 200 `text/event-stream` response, `$ref`s followed at the top. */
function streamSchema(document: OpenApiDocument, op: OperationInfo): JsonObject | undefined {
  const raw = ((op.operation.responses ?? {}) as JsonObject)['200'];
  if (raw === undefined) return undefined;
  const content = deref(document, raw).content as Record<string, JsonObject> | undefined;
  const media = content?.[EVENT_STREAM];
  return media === undefined ? undefined : deref(document, media.schema ?? {});
}

function namesOf(event: JsonObject | undefined): string[] {
  if (event === undefined) return [];
  if (typeof event.const === 'string') return [event.const];
  return Array.isArray(event.enum) ? event.enum.filter((v): v is string => typeof v === 'string') : [];
}

/** `ComputerEvent` of `#/components/schemas/ComputerEvent`. */
function schemaName(ref: string): string {
  const prefix = '#/components/schemas/';
  if (!ref.startsWith(prefix)) throw new Error(`${ref} is not a components schema`);
  return ref.slice(prefix.length);
}
