import { Readable } from 'node:stream';
import type { ByteBody } from '@svc/contract';
import { IncomingBytes } from './byte-body.js';
import type { NodeEnv } from './node-env.js';
import type { FieldViolation } from './violations.js';

/** A byte body refused before reading: the shape of the validator's `InvalidRequest` for these kinds. */
export interface ByteRefusal {
  ok: false;
  kind: 'unsupported_media_type' | 'payload_too_large';
  violations: FieldViolation[];
  message: string;
  details: Record<string, unknown>;
  headers?: Record<string, string>;
}

/**
 * Checks a request whose body the spec declares as bytes (`operationKind`: `bytes-in`), before reading
 * any of it: `Content-Type` must be the declared media type (else 415 `unsupported_media_type`; an archive
 * must not carry a `Content-Encoding` either: a compressed archive is refused, which also refuses
 * decompression bombs), and a `Content-Length` over the limit is 413 `payload_too_large` with
 * `details.limit_bytes`. The limit is the schema's `x-svc-max-bytes`, or `serverLimit`
 * (`SVC_FILES_MAX_BYTES`) when lower. Otherwise the body is handed on as {@link IncomingBytes}, which
 * counts (and refuses past the limit a body that said nothing or less) and hashes as it streams.
 *
 * `nodeBody` is the Node request under `request` (see {@link nodeRequestBody}), read instead of
 * `request.body` when given.
 *
 * @example
 * const checked = checkByteRequest(request, { mediaType: 'application/octet-stream', maxBytes: 1 << 30 }, 1 << 30);
 * if (checked instanceof IncomingBytes) await driver.write(computer, path, checked.stream, options);
 */
export function checkByteRequest(
  request: Request,
  declared: ByteBody,
  serverLimit: number,
  nodeBody?: Readable,
): IncomingBytes | ByteRefusal {
  const limit = Math.min(declared.maxBytes ?? serverLimit, serverLimit);
  const contentType = request.headers.get('content-type');
  const mediaType = contentType?.split(';')[0]?.trim().toLowerCase();
  if (mediaType !== declared.mediaType)
    return refused(
      'unsupported_media_type',
      `the request body must be ${declared.mediaType}`,
      `must be ${declared.mediaType}, not ${contentType ?? 'absent'}`,
    );
  const encoding = request.headers.get('content-encoding')?.trim().toLowerCase();
  if (encoding !== undefined && encoding !== '' && encoding !== 'identity')
    return refused(
      'unsupported_media_type',
      `the request body must be ${declared.mediaType} without a Content-Encoding`,
      `must be absent, not ${encoding}`,
      'header.Content-Encoding',
    );
  const length = request.headers.get('content-length');
  const declaredLength = length === null || !/^\d+$/.test(length) ? undefined : Number(length);
  if (declaredLength !== undefined && declaredLength > limit) {
    // Nothing of the body is read: the answer goes out at once, and the connection is closed after it
    // (lingering a bounded while, see linger.ts) instead of draining up to a gigabyte nobody wants.
    void request.body?.cancel().catch(() => {});
    return {
      ok: false,
      kind: 'payload_too_large',
      violations: [],
      message: `the body is larger than ${limit} bytes, the limit of one transfer`,
      details: { limit_bytes: limit },
      headers: { connection: 'close' },
    };
  }
  return new IncomingBytes(nodeBody ?? request.body, limit, declaredLength);
}

/**
 * The Node request under a `Request` made by the Node adapter (its `env.incoming`), when its body has
 * not been touched: {@link IncomingBytes} reads it directly. Undefined elsewhere (tests, other runtimes).
 *
 * @example
 * const nodeBody = nodeRequestBody(ctx.env);
 */
export function nodeRequestBody(env: NodeEnv | undefined): Readable | undefined {
  const incoming = env?.incoming;
  if (!(incoming instanceof Readable)) return undefined;
  if (incoming.readableDidRead || incoming.readableEnded || incoming.destroyed) return undefined;
  return incoming;
}

function refused(
  kind: 'unsupported_media_type',
  message: string,
  description: string,
  field = 'header.Content-Type',
): ByteRefusal {
  return { ok: false, kind, violations: [{ field, description }], message, details: {} };
}
