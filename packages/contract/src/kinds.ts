// What kind of exchange an operation is, read once from the spec, so that every face (server, client,
// CLI, MCP, mocks, contract tests) switches on one answer instead of asking the spec its own way:
//   json          JSON (or nothing) in, JSON (or nothing) out, answered at once;
//   long-running  answers `202` with `operations[]` that the caller may wait for;
//   event-stream  a GET whose 200 answers Server-Sent Events (streams.ts);
//   bytes-in      its request body is bytes (bytes.ts): an upload, a terminal's input;
//   bytes-out     its 200 answers bytes: a download, a screenshot.
// One kind per operation, not a request facet beside a response facet: no operation of the spec is
// two of these at once, and one kind makes each face one `switch` with one case per kind. An
// operation that would be two (bytes in, answered with 202) is refused here, naming it, so that the
// first such operation is a decision (a new kind, with its case in every face) and not a surprise in
// one face that checked the request and another that checked the response.
import { type ByteBody, byteRequestBody, byteResponse } from './bytes.js';
import type { OpenApiDocument } from './document.js';
import { listOperations, type OperationInfo } from './operations.js';
import { type OperationResponse, operationResponses } from './reader.js';
import { type EventStream, eventStream } from './streams.js';

/** The kinds of {@link OperationKind}, in the order the comment at the top of kinds.ts gives them. */
export const OPERATION_KINDS = Object.freeze([
  'json',
  'long-running',
  'event-stream',
  'bytes-in',
  'bytes-out',
] as const);

/** What kind of exchange an operation is: see kinds.ts. Switch on `kind`. */
export type OperationKind =
  | { kind: 'json' }
  | {
      kind: 'long-running';
      /** The `202` response, whose body carries the `operations[]` to wait for. */
      accepted: OperationResponse;
    }
  | { kind: 'event-stream'; stream: EventStream }
  | {
      kind: 'bytes-in';
      /** The request body: its media type and `x-svc-max-bytes`. */
      body: ByteBody;
    }
  | {
      kind: 'bytes-out';
      /** The 200 response's body: its media type. */
      body: ByteBody;
    };

/** One of {@link OPERATION_KINDS}. */
export type OperationKindName = OperationKind['kind'];

const cache = new WeakMap<OpenApiDocument, ReadonlyMap<string, OperationKind>>();

/**
 * The kind of every operation, by operationId in spec order, read once per document. Throws, naming
 * the operation, when one is two kinds at once (see kinds.ts).
 *
 * @example
 * import { loadDocument, operationKinds } from '@svc/contract';
 * operationKinds(loadDocument()).get('createComputer')?.kind; // 'long-running'
 */
export function operationKinds(document: OpenApiDocument): ReadonlyMap<string, OperationKind> {
  let kinds = cache.get(document);
  if (kinds === undefined) {
    kinds = new Map(listOperations(document).map((op) => [op.operationId, kindOf(document, op)]));
    cache.set(document, kinds);
  }
  return kinds;
}

/**
 * The kind of one operation (given by operationId or as listed).
 *
 * @example
 * import { loadDocument, operationKind } from '@svc/contract';
 * const kind = operationKind(loadDocument(), 'uploadComputerFile');
 * if (kind.kind === 'bytes-in') kind.body.maxBytes; // 1073741824
 */
export function operationKind(document: OpenApiDocument, op: string | OperationInfo): OperationKind {
  const id = typeof op === 'string' ? op : op.operationId;
  const kind = operationKinds(document).get(id);
  if (kind === undefined) throw new Error(`no operation ${id} in the document`);
  return kind;
}

/**
 * The bytes of a kind, in (its request body) or out (its 200's body); undefined for a kind without any.
 * Code that asks only "does it take or answer bytes?" (a limit, a toolset) asks this, not for the
 * kinds by name, so that a kind added here is answered here once, not in each such place.
 *
 * @example
 * import { kindBytes, loadDocument, operationKind } from '@svc/contract';
 * kindBytes(operationKind(loadDocument(), 'downloadComputerScreen')); // { direction: 'out', body: { mediaType: 'image/png', maxBytes: undefined } }
 */
export function kindBytes(kind: OperationKind): { direction: 'in' | 'out'; body: ByteBody } | undefined {
  switch (kind.kind) {
    case 'bytes-in':
      return { direction: 'in', body: kind.body };
    case 'bytes-out':
      return { direction: 'out', body: kind.body };
    case 'json':
    case 'long-running':
    case 'event-stream':
      return undefined;
    default:
      return kind satisfies never;
  }
}

function kindOf(document: OpenApiDocument, op: OperationInfo): OperationKind {
  const accepted = operationResponses(document, op).find((r) => r.status === '202');
  const stream = eventStream(document, op);
  const bytesIn = byteRequestBody(document, op);
  const bytesOut = byteResponse(document, op);
  const found: OperationKind[] = [
    ...(accepted ? [{ kind: 'long-running', accepted } as const] : []),
    ...(stream ? [{ kind: 'event-stream', stream } as const] : []),
    ...(bytesIn ? [{ kind: 'bytes-in', body: bytesIn } as const] : []),
    ...(bytesOut ? [{ kind: 'bytes-out', body: bytesOut } as const] : []),
  ];
  const [only, other] = found;
  if (other !== undefined)
    throw new Error(
      `${op.operationId} is ${found.map((k) => k.kind).join(' and ')} at once: no kind says that yet (packages/contract/src/kinds.ts)`,
    );
  return only ?? { kind: 'json' };
}
