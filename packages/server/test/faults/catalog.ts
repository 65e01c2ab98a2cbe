// The requests the transport fault suite cuts: every operation of the spec (each answers a body: JSON,
// a stream or bytes; many take one too), with its path filled from the suite's own resources and its body from the
// spec's example (JSON) or made here (bytes, a tar). Nothing here re-types the spec: the operations,
// their parameters and their examples are read from the bundle.
import { randomBytes } from 'node:crypto';
import {
  byteRequestBody,
  deref,
  listOperations,
  loadDocument,
  type OperationInfo,
  operationParameters,
  requestBody,
} from '@svc/contract';
import { tarOf } from '../files/file-rules.js';
import type { CutRequest } from './cuts.js';

/** What the suite made for the operations to reach. */
export interface Resources {
  workspace: string;
  /** The running computer whose files the uploads and downloads reach. */
  computer: string;
  /** A second computer, for the operations that change a computer's state. */
  other: string;
  /** A finished operation (its output stream). */
  operation: string;
  /** The file every file upload replaces. */
  filePath: string;
  /** The directory every archive upload writes into. */
  archiveDir: string;
}

/** Names of the entries of every archive the suite uploads. */
export const ARCHIVE_NAMES = ['a.bin', 'b.bin'] as const;

/** One operation, and how to make a request of it. */
export interface Target {
  op: OperationInfo;
  /** A fresh request (a new body and Idempotency-Key each time). */
  make(size: number): Promise<MadeRequest>;
}

export interface MadeRequest extends CutRequest {
  /** The Idempotency-Key sent, when the operation takes one. */
  key?: string;
  /** For an upload: what the path holds if this request is taken whole. */
  upload?: { kind: 'file'; bytes: Buffer } | { kind: 'archive'; entries: Map<string, Buffer> };
}

const FILES_COMPUTER_OPS = /ComputerFile|ComputerArchive|ComputerFiles|execComputer|runComputer/;

/** The operations to cut, and how to make each one's request. */
export function catalog(resources: Resources, token: string): Target[] {
  const document = loadDocument();
  const targets: Target[] = [];
  for (const op of listOperations(document)) {
    // Every operation answers a body (JSON, a stream or bytes), and the answer is cut too.
    const body = requestBody(document, op);
    const parameters = operationParameters(document, op);
    const query = new URLSearchParams();
    let path = op.path;
    for (const parameter of parameters) {
      const name = String(parameter.name);
      if (parameter.in === 'path')
        path = path.replace(`{${name}}`, encodeURIComponent(pathValue(name, op, resources)));
      if (parameter.in === 'query' && name === 'path')
        query.set('path', /Archive/.test(op.operationId) ? resources.archiveDir : resources.filePath);
    }
    if (op.operationId === 'uploadComputerArchive') query.set('parents', 'true');
    const search = query.size > 0 ? `?${query}` : '';
    const takesKey = parameters.some(
      (parameter) => String(parameter.name).toLowerCase() === 'idempotency-key',
    );
    const bytes = byteRequestBody(document, op);
    targets.push({
      op,
      async make(size) {
        const headers: Record<string, string> = { Authorization: `Bearer ${token}` };
        const made: MadeRequest = {
          method: op.method.toUpperCase(),
          path: `/v1${path}${search}`,
          headers,
          body: Buffer.alloc(0),
        };
        if (takesKey) {
          made.key = `fault-${randomBytes(9).toString('hex')}`;
          headers['Idempotency-Key'] = made.key;
        }
        if (bytes) {
          headers['Content-Type'] = bytes.mediaType;
          if (bytes.mediaType === 'application/x-tar') {
            const entries = new Map<string, Buffer>();
            for (const name of ARCHIVE_NAMES)
              entries.set(name, randomBytes(Math.floor(size / ARCHIVE_NAMES.length)));
            made.body = Buffer.from(
              await tarOf([...entries].map(([name, data]) => [{ name, mode: 0o644 }, data])),
            );
            made.upload = { kind: 'archive', entries };
          } else {
            made.body = randomBytes(size);
            made.upload = { kind: 'file', bytes: made.body };
          }
        } else if (body) {
          const [mediaType, content] = Object.entries(body.content)[0] ?? ['application/json', {}];
          headers['Content-Type'] = mediaType;
          made.body = Buffer.from(exampleOf(document, content, mediaType));
        }
        return made;
      },
    });
  }
  return targets;
}

function pathValue(name: string, op: OperationInfo, resources: Resources): string {
  // A delete, or a change of the workspace itself, reaches nothing of the suite's (it would take the
  // workspace, the computers or the seed file away from the other cuts).
  if (op.method === 'delete' || (op.method === 'patch' && op.path === '/workspaces/{workspace}'))
    return `missing-${name}`;
  switch (name) {
    case 'workspace':
      return resources.workspace;
    case 'computer':
      return FILES_COMPUTER_OPS.test(op.operationId) ? resources.computer : resources.other;
    case 'operation':
      return resources.operation;
    default:
      // Another resource of this workspace: one that does not exist (the request still goes through
      // authentication, validation and the body's reading before its 404).
      return `missing-${name}`;
  }
}

/**
 * The spec's first example of a request body, as sent. URLs in it are made loopback ones, which the
 * server refuses for webhooks as shipped: no request of this suite may make the server call out.
 */
function exampleOf(document: ReturnType<typeof loadDocument>, content: unknown, mediaType: string): string {
  const media = content as { example?: unknown; examples?: Record<string, unknown> };
  const first = media.examples ? Object.values(media.examples)[0] : undefined;
  const value =
    media.example ?? (first ? (deref(document, first) as { value?: unknown }).value : undefined) ?? {};
  if (mediaType === 'application/x-www-form-urlencoded')
    return typeof value === 'string'
      ? value
      : new URLSearchParams(value as Record<string, string>).toString();
  return JSON.stringify(value, (key, found) =>
    key === 'url' && typeof found === 'string' ? 'http://127.0.0.1:9/hook' : found,
  );
}
