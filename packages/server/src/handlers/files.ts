import { compareNames } from '../computers/files/paths.js';
import { renderFileInfo } from '../computers/render.js';
import { outgoingBytes } from '../http/byte-body.js';
import { pageRequest, toPage } from '../platform/paging.js';
import type { FileDeps } from './deps.js';
import { auditedDownload, auditTransfer, guarded, reach, upload } from './file-transfer.js';
import type { Handler } from './types.js';

// Files on a running computer (design, "Files on computers"): every rule that is not HTTP (paths,
// symlinks, the writable place, special files, quota, tar) is the driver's, the same on every driver.

/** A file's weak validator, `W/"<size>-<mtime in seconds>"`: it changes when the file is written. */
function etag(stat: { size: number; modifiedAt: Date }): string {
  return `W/"${stat.size}-${Math.floor(stat.modifiedAt.getTime() / 1000)}"`;
}

/** Aborted when the client goes away, so the driver stops reading or writing. */
const signalOf = (ctx: { request: Request }): AbortSignal => ctx.request.signal;

/**
 * `GET …/files?path=`: a regular file's bytes, streamed, with `Content-Length` and a weak `ETag`.
 * The driver's stream is cancelled when the client goes away; the audit line is written when the
 * transfer ends.
 */
export const downloadComputerFile: Handler<'downloadComputerFile', FileDeps> = async (ctx) => {
  const reached = await reach(ctx, { write: false });
  const { computer, path, files } = reached;
  const started = performance.now();
  const { stat, body } = await guarded(ctx, reached, () => files.read(computer, path, signalOf(ctx)));
  const stream = auditedDownload(body, (bytes, completed) =>
    auditTransfer(ctx, reached, {
      direction: 'out',
      kind: 'file',
      bytes,
      durationMs: Math.round(performance.now() - started),
      completed,
    }),
  );
  return {
    status: 200,
    body: outgoingBytes(stream, 'application/octet-stream', stat.size),
    headers: { etag: etag(stat) },
  };
};

/** `PUT …/files?path=&mode=&parents=`: writes the streamed body to a regular file; answers its `FileInfo`. */
export const uploadComputerFile: Handler<'uploadComputerFile', FileDeps> = async (ctx) => {
  const reached = await reach(ctx, { write: true });
  const { computer, path, files } = reached;
  const body = ctx.body;
  const stat = await upload(ctx, reached, 'file', body, () =>
    files.write(computer, path, body.stream, {
      mode: Number.parseInt(ctx.query.mode ?? '0644', 8),
      parents: ctx.query.parents ?? false,
      ...(body.declaredLength === undefined ? {} : { size: body.declaredLength }),
      maxBytes: body.limitBytes,
      signal: signalOf(ctx),
    }),
  );
  return { status: 200, body: { file: renderFileInfo(stat) } };
};

/** `DELETE …/files?path=&recursive=`: removes a file, a symlink, or a directory (recursively when asked). */
export const deleteComputerFile: Handler<'deleteComputerFile', FileDeps> = async (ctx) => {
  const reached = await reach(ctx, { write: true });
  const { computer, path, files } = reached;
  await guarded(ctx, reached, () =>
    files.remove(computer, path, { recursive: ctx.query.recursive ?? false, signal: signalOf(ctx) }),
  );
  ctx.deps.audit('file deleted', {
    request_id: ctx.requestId,
    operation_id: ctx.operationId,
    principal_id: ctx.principal.id,
    workspace_id: reached.workspace.id,
    computer_id: computer.id,
    path,
    recursive: ctx.query.recursive ?? false,
  });
  return { status: 204, body: undefined };
};

/** `GET …/files/stat?path=`: what the path is (a symlink as itself). */
export const getComputerFile: Handler<'getComputerFile', FileDeps> = async (ctx) => {
  const reached = await reach(ctx, { write: false });
  const { computer, path, files } = reached;
  const stat = await guarded(ctx, reached, () => files.stat(computer, path, signalOf(ctx)));
  return { status: 200, body: { file: renderFileInfo(stat) } };
};

/** A file name as a cursor carries it: one path segment. */
const isName = (key: string): boolean => key !== '' && !key.includes('/') && !key.includes('\0');

/**
 * `GET …/files/entries?path=`: a directory's entries by name in byte order, paged with the signed
 * cursors of every list (design §6), here keyed by name and bound to the computer and the path.
 */
export const listComputerFiles: Handler<'listComputerFiles', FileDeps> = async (ctx) => {
  const reached = await reach(ctx, { write: false });
  const { computer, path, files } = reached;
  const page = pageRequest(
    ctx.deps.cursors,
    ctx.query,
    { op: ctx.operationId, computer: computer.id, path },
    isName,
  );
  const entries = await guarded(ctx, reached, () => files.list(computer, path, signalOf(ctx)));
  const after = page.after;
  const rows = entries
    .filter((entry) => after === null || compareNames(entry.name, after) > 0)
    .sort((a, b) => compareNames(a.name, b.name))
    .slice(0, page.limit + 1)
    .map((entry) => ({ id: entry.name, entry }));
  const { items, next_cursor, has_more } = toPage(ctx.deps.cursors, page, rows);
  return {
    status: 200,
    body: { files: items.map((row) => renderFileInfo(row.entry)), next_cursor, has_more },
  };
};

/** `GET …/files/archive?path=`: a directory as an uncompressed tar stream (no `Content-Length`). */
export const downloadComputerArchive: Handler<'downloadComputerArchive', FileDeps> = async (ctx) => {
  const reached = await reach(ctx, { write: false });
  const { computer, path, files } = reached;
  const started = performance.now();
  const tar = await guarded(ctx, reached, () => files.readArchive(computer, path, signalOf(ctx)));
  const stream = auditedDownload(tar, (bytes, completed) =>
    auditTransfer(ctx, reached, {
      direction: 'out',
      kind: 'archive',
      bytes,
      durationMs: Math.round(performance.now() - started),
      completed,
    }),
  );
  return { status: 200, body: outgoingBytes(stream, 'application/x-tar') };
};

/** `PUT …/files/archive?path=&parents=`: extracts the streamed tar into a directory, entry by entry. */
export const uploadComputerArchive: Handler<'uploadComputerArchive', FileDeps> = async (ctx) => {
  const reached = await reach(ctx, { write: true });
  const { computer, path, files } = reached;
  const body = ctx.body;
  const written = await upload(ctx, reached, 'archive', body, () =>
    files.writeArchive(computer, path, body.stream, {
      mode: 0o644,
      parents: ctx.query.parents ?? false,
      ...(body.declaredLength === undefined ? {} : { size: body.declaredLength }),
      maxBytes: body.limitBytes,
      signal: signalOf(ctx),
    }),
  );
  return { status: 200, body: { archive: { path, entries: written.entries, bytes: written.bytes } } };
};

/** The files handlers, by operationId. */
export const fileHandlers = {
  downloadComputerFile,
  uploadComputerFile,
  deleteComputerFile,
  getComputerFile,
  listComputerFiles,
  downloadComputerArchive,
  uploadComputerArchive,
};
