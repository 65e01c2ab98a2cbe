import type { OperationId } from '@svc/contract';
import type { DriverComputer } from '../computers/driver.js';
import type { ComputerFiles } from '../computers/files/driver.js';
import { normalizeComputerPath } from '../computers/files/paths.js';
import { computerIn } from '../computers/repositories/computers.js';
import { touchComputerActivity } from '../computers/repositories/lifetimes.js';
import { assertRunning } from '../computers/transitions.js';
import type { IncomingBytes } from '../http/byte-body.js';
import { ApiError } from '../platform/errors.js';
import { permittedWorkspace } from './common.js';
import type { FileDeps } from './deps.js';
import { fileFailure } from './file-errors.js';
import type { Ctx } from './types.js';

/** The files operations (each has `{workspace}`, `{computer}` and `?path=`). */
export type FilesOperation =
  | 'downloadComputerFile'
  | 'uploadComputerFile'
  | 'deleteComputerFile'
  | 'getComputerFile'
  | 'listComputerFiles'
  | 'downloadComputerArchive'
  | 'uploadComputerArchive';

/** A files request that may go ahead: the running computer, the normalised path, the driver's files. */
export interface Reached {
  workspace: { id: string };
  computer: DriverComputer & { id: string };
  path: string;
  files: ComputerFiles;
}

/**
 * Everything a files operation checks before it touches the computer, in this order: the caller's
 * role (404 for a non-member, 403 below `editor`), a write's place in the workspace's mutation budget,
 * the computer (404), its state (409 `operation_in_progress` while an operation holds it, 409
 * `invalid_state` unless `running`: files are reached on a running computer only, on every driver),
 * the path (normalised, 400 on `path`), and a driver that has files (503 otherwise).
 *
 * @example
 * const { computer, path, files } = await reach(ctx, { write: true });
 */
export async function reach<K extends FilesOperation>(
  ctx: Ctx<K, FileDeps>,
  options: { write: boolean },
): Promise<Reached> {
  const { workspace } = await permittedWorkspace(ctx as unknown as Parameters<typeof permittedWorkspace>[0]);
  if (options.write) await ctx.countMutation(workspace.id);
  const computer = await computerIn(ctx.db, workspace.id, (ctx.path as { computer: string }).computer);
  assertRunning(computer, 'files');
  const raw = (ctx.query as { path: string }).path;
  let path: string;
  try {
    path = normalizeComputerPath(raw);
  } catch (thrown) {
    throw fileFailure(thrown, { path: raw, quotaBytes: ctx.deps.config.files.quotaBytes });
  }
  const files = ctx.deps.driver.files;
  if (!files)
    throw new ApiError('unavailable', `the ${ctx.deps.driver.name} driver has no files`, {
      headers: { 'retry-after': '1' },
    });
  // Reaching a computer's files is activity: its idle timeout counts from here (design §4.1).
  await touchComputerActivity(ctx.db, computer.id, ctx.deps.lifetimeNow());
  return { workspace, computer, path, files };
}

/**
 * Runs one driver call, answering its failures as the spec's files errors (see `fileFailure`).
 *
 * @example
 * const stat = await guarded(ctx, reached, () => files.stat(computer, path, signal));
 */
export async function guarded<T, K extends FilesOperation>(
  ctx: Ctx<K, FileDeps>,
  reached: Pick<Reached, 'path'>,
  call: () => Promise<T>,
  body?: IncomingBytes,
): Promise<T> {
  try {
    return await call();
  } catch (thrown) {
    throw fileFailure(thrown, {
      path: reached.path,
      quotaBytes: ctx.deps.config.files.quotaBytes,
      ...(body ? { body } : {}),
    });
  }
}

/** What one transfer's audit line says (never the content). */
export interface Transfer {
  direction: 'in' | 'out';
  kind: 'file' | 'archive';
  bytes: number;
  durationMs: number;
  /** False when the transfer broke off (the client went away, the driver failed). */
  completed: boolean;
}

/**
 * One line of the request log per transfer: who, which computer, which path, which way, how many
 * bytes and how long (design, "Files on computers"); as `execComputer` logs its program.
 *
 * @example
 * auditTransfer(ctx, reached, { direction: 'in', kind: 'file', bytes, durationMs, completed: true });
 */
export function auditTransfer<K extends OperationId>(
  ctx: Ctx<K, FileDeps>,
  reached: Pick<Reached, 'workspace' | 'computer' | 'path'>,
  transfer: Transfer,
): void {
  ctx.deps.audit('file transfer', {
    request_id: ctx.requestId,
    operation_id: ctx.operationId,
    principal_id: (ctx.principal as { id: string } | undefined)?.id,
    workspace_id: reached.workspace.id,
    computer_id: reached.computer.id,
    path: reached.path,
    direction: transfer.direction,
    kind: transfer.kind,
    bytes: transfer.bytes,
    duration_ms: transfer.durationMs,
    completed: transfer.completed,
  });
}

/**
 * A download's stream, passed through as the client reads it: counts the bytes, writes the audit
 * line when it ends (or breaks off), and cancels the driver's stream when the client goes away.
 *
 * @example
 * const stream = auditedDownload(body, (bytes, completed) => auditTransfer(ctx, reached, { … }));
 */
export function auditedDownload(
  source: ReadableStream<Uint8Array>,
  done: (bytes: number, completed: boolean) => void,
): ReadableStream<Uint8Array> {
  const reader = source.getReader();
  let bytes = 0;
  let finished = false;
  const finish = (completed: boolean) => {
    if (finished) return;
    finished = true;
    done(bytes, completed);
  };
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        try {
          const { done: end, value } = await reader.read();
          if (end) {
            finish(true);
            controller.close();
            return;
          }
          bytes += value.byteLength;
          controller.enqueue(value);
        } catch (error) {
          finish(false);
          controller.error(error);
        }
      },
      async cancel(reason) {
        finish(false);
        await reader.cancel(reason).catch(() => {});
      },
    },
    { highWaterMark: 0 },
  );
}

/**
 * Runs an upload's driver call as {@link guarded} does, and writes its audit line whether it
 * completed or not (the bytes are what was read of the body).
 *
 * @example
 * const stat = await upload(ctx, reached, 'file', body, () => files.write(computer, path, body.stream, options));
 */
export async function upload<T, K extends 'uploadComputerFile' | 'uploadComputerArchive'>(
  ctx: Ctx<K, FileDeps>,
  reached: Reached,
  kind: Transfer['kind'],
  body: IncomingBytes,
  call: () => Promise<T>,
): Promise<T> {
  const started = performance.now();
  let completed = false;
  try {
    const result = await guarded(ctx, reached, call, body);
    completed = true;
    return result;
  } finally {
    auditTransfer(ctx, reached, {
      direction: 'in',
      kind,
      bytes: body.bytesRead,
      durationMs: Math.round(performance.now() - started),
      completed,
    });
  }
}
