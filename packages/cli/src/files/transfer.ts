// The transfers of `svc computers cp` and of the byte operations' own commands: a file or a directory
// (as tar) between this machine, or svc's stdin and stdout, and a running computer, streamed both ways
// through `@svc/client/files`, with progress on a terminal.

import { once } from 'node:events';
import { createReadStream } from 'node:fs';
import { open, stat } from 'node:fs/promises';
import { basename, join, posix, resolve } from 'node:path';
import { finished } from 'node:stream/promises';
import type { SvcClient } from '@svc/client';
import type { Download } from '@svc/client/files';
import type { Schema } from '@svc/contract';
import type { Context } from '../credentials.js';
import { CliError } from '../exit-codes.js';
import type { ByteKind } from './limits.js';
import { uploadLimit } from './limits.js';
import { humanBytes, type TransferProgress, transferProgress } from './progress.js';
import { intoRemote, type RemotePath } from './remote.js';
import { packDirectory } from './tar-pack.js';

/** What a path in a computer is (the spec's `FileInfo`). */
type FileInfo = Schema<'FileInfo'>;

export type { ByteKind } from './limits.js';

/** Options of an upload, as the command line gave them. */
export interface UploadFlags {
  mode?: string | undefined;
  parents?: boolean | undefined;
  idempotencyKey?: string | undefined;
}

const STAT = '/workspaces/{workspace}/computers/{computer}/files/stat';

/**
 * What the path in a computer is, or undefined when nothing is there (`404 not_found` naming the path
 * in its details); any other refusal is thrown, a 404 of the workspace or the computer too.
 *
 * @example
 * const info = await statRemote(client, { workspace: 'dev', computer: 'box', path: '/home/svc' });
 */
export async function statRemote(client: SvcClient, remote: RemotePath): Promise<FileInfo | undefined> {
  const { ApiError, unwrap } = await import('@svc/client');
  try {
    const { file } = await unwrap(
      client.GET(STAT, {
        params: {
          path: { workspace: remote.workspace, computer: remote.computer },
          query: { path: remote.path },
        },
      }),
    );
    return file;
  } catch (error) {
    const missingPath = (error as { details?: { path?: unknown } }).details?.path !== undefined;
    if (error instanceof ApiError && error.status === 404 && error.code === 'not_found' && missingPath)
      return undefined;
    throw error;
  }
}

/** Writes to svc's stdout, waiting when a real stream asks to (a pipe to a slow reader). */
async function writeOut(stdout: Context['io']['stdout'], chunk: Uint8Array): Promise<void> {
  const stream = stdout as {
    write(chunk: Uint8Array): unknown;
    once?(event: string, fn: () => void): unknown;
  };
  if (stream.write(chunk) === false && stream.once)
    await new Promise<void>((done) => stream.once?.('drain', done));
}

/** Reads a download to its end, handing each chunk to `sink`, its bytes counted by `progress`. */
async function drain(
  progress: TransferProgress,
  download: Download,
  sink: (chunk: Uint8Array) => Promise<void>,
): Promise<number> {
  let bytes = 0;
  const reader = download.body.getReader();
  for (let next = await reader.read(); !next.done; next = await reader.read()) {
    await sink(next.value);
    bytes += next.value.byteLength;
    progress.update(bytes, download.size);
  }
  return bytes;
}

/** The pieces a local file is read in for an upload. */
const UPLOAD_PIECE_BYTES = 1024 * 1024;

/**
 * Sends svc's stdin to the computer: as a file's content, or as a tar archive extracted into the
 * directory at the path. With `report`, says on stderr what moved when done (`svc computers cp`).
 *
 * @example
 * await uploadStdin(context, client, remote, 'file', { mode: '0644' });
 */
export async function uploadStdin(
  context: Context,
  client: SvcClient,
  remote: RemotePath,
  kind: ByteKind,
  flags: UploadFlags,
  report = false,
): Promise<unknown> {
  const files = await import('@svc/client/files');
  const body = context.io.stdin ?? (async function* () {})();
  const progress = transferProgress(context.io.stderr, context.io.isTTY, 'stdin', context.now);
  const options = {
    parents: flags.parents,
    idempotencyKey: flags.idempotencyKey,
    onProgress: ({ sent, total }: { sent: number; total: number | undefined }) =>
      progress.update(sent, total),
  };
  try {
    const answer =
      kind === 'file'
        ? await files.uploadFile(client, remote.workspace, remote.computer, remote.path, body, {
            ...options,
            mode: flags.mode,
          })
        : await files.uploadArchive(client, remote.workspace, remote.computer, remote.path, body, options);
    if (report) progress.report();
    return answer;
  } finally {
    progress.done();
  }
}

/**
 * Writes a file of the computer, or a directory as a tar archive, to svc's stdout. With `report`, says
 * on stderr what moved when done (`svc computers cp`).
 *
 * @example
 * await downloadStdout(context, client, remote, 'archive');
 */
export async function downloadStdout(
  context: Context,
  client: SvcClient,
  remote: RemotePath,
  kind: ByteKind,
  report = false,
): Promise<void> {
  const files = await import('@svc/client/files');
  const download =
    kind === 'file'
      ? await files.downloadFile(client, remote.workspace, remote.computer, remote.path)
      : await files.downloadArchive(client, remote.workspace, remote.computer, remote.path);
  const progress = transferProgress(
    context.io.stderr,
    context.io.isTTY,
    posix.basename(remote.path) || '/',
    context.now,
  );
  try {
    await drain(progress, download, (chunk) => writeOut(context.io.stdout, chunk));
    if (report) progress.report();
  } finally {
    progress.done();
  }
}

/**
 * Copies a local file or directory into the computer. A file goes to the path (into it, named as the
 * local file, when the path is a directory or ends with `/`), with the local file's permission bits
 * unless `mode` is given. A directory goes as a tar archive: into the path when it does not exist yet
 * (its parent must exist, or `parents`), else into a directory of its own name inside it, as `cp -r`
 * and `docker cp` do.
 *
 * @example
 * await uploadLocal(context, client, './src', { workspace: 'dev', computer: 'box', path: '/home/svc/src' }, {});
 */
export async function uploadLocal(
  context: Context,
  client: SvcClient,
  local: string,
  remote: RemotePath,
  flags: UploadFlags,
): Promise<unknown> {
  const stats = await stat(local).catch((error: NodeJS.ErrnoException) => {
    throw new CliError(
      'usage',
      'local_not_found',
      `${local}: ${error.code === 'ENOENT' ? 'no such file or directory' : error.message}`,
    );
  });
  const files = await import('@svc/client/files');
  const name = basename(resolve(local));
  const existing = await statRemote(client, remote);
  const progress = transferProgress(context.io.stderr, context.io.isTTY, name, context.now);
  const onProgress = ({ sent, total }: { sent: number; total: number | undefined }) =>
    progress.update(sent, total);
  const where = (path: string): RemotePath => ({ ...remote, path });
  try {
    if (stats.isDirectory()) {
      const base = remote.path.replace(/\/+$/, '') || '/';
      if (existing && existing.type !== 'directory')
        throw new CliError(
          'conflict',
          'not_a_directory',
          `${remote.path} is a ${existing.type} in the computer, not a directory.`,
        );
      const target = existing ? posix.join(base, name) : base;
      // The target itself is created (parents=true) when its parent exists; deeper only with --parents.
      const parent = existing ?? (await statRemote(client, where(posix.dirname(target))));
      if (!flags.parents && parent?.type !== 'directory')
        throw new CliError(
          'not_found',
          'not_found',
          `${posix.dirname(target)}: no such directory in the computer (--parents creates it).`,
        );
      const packed = packDirectory(local);
      const answer = await files.uploadArchive(
        client,
        remote.workspace,
        remote.computer,
        target,
        packed.tar,
        {
          parents: true,
          idempotencyKey: flags.idempotencyKey,
          onProgress,
        },
      );
      for (const skipped of packed.report.skipped)
        context.io.stderr.write(`svc: left out ${skipped}: not a file, directory or symlink\n`);
      progress.report();
      return answer;
    }
    const limit = uploadLimit('file');
    if (limit !== undefined && stats.size > limit)
      throw new CliError(
        'usage',
        'payload_too_large',
        `${local} is ${humanBytes(stats.size)}; an upload takes at most ${humanBytes(limit)}.`,
      );
    const target =
      existing?.type === 'directory' ? posix.join(remote.path, name) : intoRemote(remote.path, name);
    if (!existing && !flags.parents && !(await statRemote(client, where(posix.dirname(target)))))
      // Refused here, with the command's own message and before any byte is sent.
      throw new CliError(
        'not_found',
        'not_found',
        `${posix.dirname(target)}: no such directory in the computer (--parents creates it).`,
      );
    const answer = await files.uploadFile(
      client,
      remote.workspace,
      remote.computer,
      target,
      // Read in 1 MiB pieces: each piece costs the upload's web stream a few promises, so 64 KiB ones
      // (a file Blob's) took the client twice the CPU for the same bytes.
      createReadStream(local, { highWaterMark: UPLOAD_PIECE_BYTES }),
      {
        size: stats.size,
        mode: flags.mode ?? (stats.mode & 0o7777).toString(8).padStart(4, '0'),
        parents: flags.parents,
        idempotencyKey: flags.idempotencyKey,
        onProgress,
      },
    );
    progress.report();
    return answer;
  } finally {
    progress.done();
  }
}

/**
 * Copies a file or a directory of the computer here. A file goes to `local` (into it, under the
 * file's name, when it is a directory); a directory comes as a tar archive extracted into `local`
 * when it does not exist yet, else into a directory of its own name inside it, with the server's
 * archive rules ({@link extractArchive}).
 *
 * @example
 * await downloadLocal(context, client, { workspace: 'dev', computer: 'box', path: '/home/svc/out' }, './out');
 */
export async function downloadLocal(
  context: Context,
  client: SvcClient,
  remote: RemotePath,
  local: string,
): Promise<void> {
  const info = await statRemote(client, remote);
  if (!info)
    throw new CliError(
      'not_found',
      'not_found',
      `${remote.workspace}/${remote.computer}:${remote.path}: no such file or directory.`,
    );
  const files = await import('@svc/client/files');
  const here = await stat(local).catch(() => undefined);
  if (info.type === 'directory') {
    if (here && !here.isDirectory())
      throw new CliError(
        'usage',
        'not_a_directory',
        `${local} is a file here; a directory is copied into a directory.`,
      );
    const download = await files.downloadArchive(client, remote.workspace, remote.computer, remote.path);
    const { extractArchive } = await import('./tar-extract.js');
    const progress = transferProgress(context.io.stderr, context.io.isTTY, info.name, context.now);
    try {
      // Entries start with the directory's own name: kept inside an existing directory, else dropped.
      await extractArchive(download.body, local, {
        strip: here ? 0 : 1,
        onBytes: (bytes) => progress.update(bytes, undefined),
      });
      progress.report();
    } finally {
      progress.done();
    }
    return;
  }
  const target = here?.isDirectory() ? join(local, info.name) : local;
  const download = await files.downloadFile(client, remote.workspace, remote.computer, remote.path);
  const handle = await open(target, 'w', Number.parseInt(info.mode, 8) & 0o777).catch(
    (error: NodeJS.ErrnoException) => {
      throw new CliError('usage', 'local_not_written', `${target}: ${error.message}`);
    },
  );
  // Written through a write stream: the next chunk is read while the last is written, not after it.
  const out = handle.createWriteStream();
  const progress = transferProgress(context.io.stderr, context.io.isTTY, info.name, context.now);
  out.on('error', () => {}); // kept by the stream, and thrown by the write's wait or `finished`
  try {
    await drain(progress, download, async (chunk) => {
      if (!out.write(chunk)) await once(out, 'drain');
    });
    out.end();
    await finished(out);
    progress.report();
  } finally {
    progress.done();
    out.destroy();
    await handle.close().catch(() => {});
  }
}
