// Files entry (`@svc/client/files`): the spec's byte operations on a computer's files, streamed both
// ways. A file is `application/octet-stream`, a directory a tar archive (`application/x-tar`); the
// JSON ones (stat, list, delete) are ordinary typed calls of the client. Browser-safe: a Node
// `Readable` is taken as the async iterable it is, without importing node:stream.
import type { ByteBodyOutput, paths } from '@svc/contract';
import type { SvcClient } from './client.js';
import type { ApiPaths } from './contract.js';
import { type ByteSource, bodyStream, type Progress } from './files/body.js';
import { oneShot } from './transport.js';
import { errorFromResponse } from './unwrap.js';

export type { ByteSource, Progress } from './files/body.js';

const FILE_PATH = '/workspaces/{workspace}/computers/{computer}/files';
const ARCHIVE_PATH = '/workspaces/{workspace}/computers/{computer}/files/archive';

type Json<P extends keyof paths, M extends 'put'> = paths[P][M] extends {
  responses: { 200: { content: { 'application/json': infer T } } };
}
  ? T
  : never;

/**
 * What `uploadFile` answers: the spec's `{file: FileInfo}` of `uploadComputerFile`.
 *
 * @example
 * import type { UploadedFile } from '@svc/client/files';
 * const size = (answer: UploadedFile) => answer.file.size;
 */
export type UploadedFile = Json<typeof FILE_PATH, 'put'>;

/**
 * What `uploadArchive` answers: the spec's `{archive: {path, entries, bytes}}` of `uploadComputerArchive`.
 *
 * @example
 * import type { UploadedArchive } from '@svc/client/files';
 * const count = (answer: UploadedArchive) => answer.archive.entries;
 */
export type UploadedArchive = Json<typeof ARCHIVE_PATH, 'put'>;

/** Options of every upload. */
export interface UploadOptions {
  /** `true` creates missing parent directories (`mkdir -p`). */
  parents?: boolean | undefined;
  /** The `Idempotency-Key` to send; the client makes one when absent. */
  idempotencyKey?: string | undefined;
  /** The body's size in bytes when the source does not say it (a stream): sent as `Content-Length`. */
  size?: number | undefined;
  signal?: AbortSignal | undefined;
  /** Called after each chunk is handed to the connection. */
  onProgress?: ((progress: Progress) => void) | undefined;
}

/** Options of {@link uploadFile}: {@link UploadOptions} and the file's permission bits. */
export interface UploadFileOptions extends UploadOptions {
  /** Permission bits, three or four octal digits (`'0644'`, `'755'`). */
  mode?: string | undefined;
}

/**
 * A download: the bytes as a stream (read it, or cancel it), and what the headers said.
 *
 * @example
 * import type { Download } from '@svc/client/files';
 * const text = (d: Download) => new Response(d.body).text();
 */
export interface Download {
  /** The generated types' byte response (`ByteBodyOutput`): the response's stream. */
  body: ByteBodyOutput;
  /** `Content-Length`, when the server sent it (a file's size; an archive is streamed without it). */
  size: number | undefined;
  /** The file's weak `ETag`, when sent. */
  etag: string | undefined;
}

type Raw = (
  path: string,
  init: Record<string, unknown>,
) => Promise<{ data?: unknown; error?: unknown; response: Response }>;

function raw(client: SvcClient<ApiPaths>, method: 'GET' | 'PUT'): Raw {
  return (client as unknown as Record<string, Raw>)[method] as Raw;
}

async function put(
  client: SvcClient<ApiPaths>,
  route: string,
  params: { path: Record<string, string>; query: Record<string, unknown> },
  mediaType: string,
  body: ByteSource,
  options: UploadOptions,
): Promise<unknown> {
  const { stream, size } = bodyStream(body, options);
  const header: Record<string, string> = { 'Content-Type': mediaType };
  if (size !== undefined) header['Content-Length'] = String(size);
  if (options.idempotencyKey !== undefined) header['Idempotency-Key'] = options.idempotencyKey;
  const { data, error, response } = await raw(client, 'PUT')(route, {
    params: { ...params, header },
    body: oneShot(stream),
    // The stream as is: openapi-fetch would JSON-encode it otherwise.
    bodySerializer: (value: unknown) => value,
    duplex: 'half',
    signal: options.signal,
  });
  if (!response.ok) throw errorFromResponse(response, error);
  return data;
}

async function get(
  client: SvcClient<ApiPaths>,
  route: string,
  params: { path: Record<string, string>; query: Record<string, unknown> },
  signal: AbortSignal | undefined,
): Promise<Download> {
  const { data, error, response } = await raw(client, 'GET')(route, { params, parseAs: 'stream', signal });
  if (!response.ok) throw errorFromResponse(response, error);
  const length = response.headers.get('Content-Length');
  // openapi-fetch answers no body for `Content-Length: 0`: an empty file is an empty stream.
  const body = (data as ReadableStream<Uint8Array> | undefined) ?? new Response(new Uint8Array()).body!;
  return {
    body,
    size: length === null ? undefined : Number(length),
    etag: response.headers.get('ETag') ?? undefined,
  };
}

const query = (entries: Record<string, unknown>) =>
  Object.fromEntries(Object.entries(entries).filter(([, value]) => value !== undefined));

/**
 * Writes `body` to the file at `path` in a running computer (`uploadComputerFile`), streamed: a Blob,
 * a `ReadableStream`, a Node `Readable` (any async iterable of bytes), bytes or a string. It is read
 * as it is sent, never held whole, so it is sent once: an error is thrown, not retried (send it again
 * with the same `idempotencyKey` to be answered from the first when it got through). A refusal
 * (`413 payload_too_large`, `409 invalid_state`, …) throws `ApiError`.
 *
 * @example
 * import { createClient } from '@svc/client';
 * import { uploadFile } from '@svc/client/files';
 * const client = createClient({ baseUrl: 'http://127.0.0.1:8080/v1', token: 'ey...' });
 * const { file } = await uploadFile(client, 'dev', 'box', '/home/svc/notes.txt', 'hello\n', { parents: true });
 */
export async function uploadFile(
  client: SvcClient<ApiPaths>,
  workspace: string,
  computer: string,
  path: string,
  body: ByteSource,
  options: UploadFileOptions = {},
): Promise<UploadedFile> {
  return (await put(
    client,
    FILE_PATH,
    { path: { workspace, computer }, query: query({ path, mode: options.mode, parents: options.parents }) },
    'application/octet-stream',
    body,
    options,
  )) as UploadedFile;
}

/**
 * Reads the file at `path` of a running computer (`downloadComputerFile`), as a stream of its bytes
 * with its size and `ETag`. A directory is `ApiError` `invalid_argument`: use {@link downloadArchive}.
 *
 * @example
 * import { createClient } from '@svc/client';
 * import { downloadFile } from '@svc/client/files';
 * const client = createClient({ baseUrl: 'http://127.0.0.1:8080/v1', token: 'ey...' });
 * const { body, size } = await downloadFile(client, 'dev', 'box', '/home/svc/notes.txt');
 * console.log(size, await new Response(body).text());
 */
export function downloadFile(
  client: SvcClient<ApiPaths>,
  workspace: string,
  computer: string,
  path: string,
  options: { signal?: AbortSignal | undefined } = {},
): Promise<Download> {
  return get(client, FILE_PATH, { path: { workspace, computer }, query: { path } }, options.signal);
}

/**
 * Extracts a tar archive (`application/x-tar`, uncompressed) into the directory at `path` of a running
 * computer (`uploadComputerArchive`), streamed as {@link uploadFile} is.
 *
 * @example
 * import { createClient } from '@svc/client';
 * import { uploadArchive } from '@svc/client/files';
 * const client = createClient({ baseUrl: 'http://127.0.0.1:8080/v1', token: 'ey...' });
 * declare const tar: Blob;
 * const { archive } = await uploadArchive(client, 'dev', 'box', '/home/svc/src', tar, { parents: true });
 */
export async function uploadArchive(
  client: SvcClient<ApiPaths>,
  workspace: string,
  computer: string,
  path: string,
  body: ByteSource,
  options: UploadOptions = {},
): Promise<UploadedArchive> {
  return (await put(
    client,
    ARCHIVE_PATH,
    { path: { workspace, computer }, query: query({ path, parents: options.parents }) },
    'application/x-tar',
    body,
    options,
  )) as UploadedArchive;
}

/**
 * Reads the directory at `path` of a running computer as a tar archive (`downloadComputerArchive`),
 * streamed.
 *
 * @example
 * import { createClient } from '@svc/client';
 * import { downloadArchive } from '@svc/client/files';
 * const client = createClient({ baseUrl: 'http://127.0.0.1:8080/v1', token: 'ey...' });
 * const { body } = await downloadArchive(client, 'dev', 'box', '/home/svc/src');
 */
export function downloadArchive(
  client: SvcClient<ApiPaths>,
  workspace: string,
  computer: string,
  path: string,
  options: { signal?: AbortSignal | undefined } = {},
): Promise<Download> {
  return get(client, ARCHIVE_PATH, { path: { workspace, computer }, query: { path } }, options.signal);
}
