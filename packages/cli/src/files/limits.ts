import { kindBytes, loadDocument, operationKinds } from '@svc/contract';

/** The two kinds of bytes the API moves: a file, or a directory as a tar archive. */
export type ByteKind = 'file' | 'archive';

/** The media type of each kind of bytes. */
const MEDIA_TYPES: Readonly<Record<ByteKind, string>> = {
  file: 'application/octet-stream',
  archive: 'application/x-tar',
};

/**
 * The most bytes one upload of `kind` may carry: the spec's `x-svc-max-bytes` on the request body of
 * the operation that takes that media type; undefined when the spec says none.
 *
 * @example
 * uploadLimit('file'); // 1073741824
 */
export function uploadLimit(kind: ByteKind): number | undefined {
  for (const operation of operationKinds(loadDocument()).values()) {
    const bytes = kindBytes(operation);
    if (bytes?.direction === 'in' && bytes.body.mediaType === MEDIA_TYPES[kind]) return bytes.body.maxBytes;
  }
  return undefined;
}
