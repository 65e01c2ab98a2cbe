import type { Operation, SvcClient } from '@svc/client';
import type { Context } from '../credentials.js';
import { CliError } from '../exit-codes.js';
import { createProgress } from '../output/progress.js';

/**
 * Waits for operations to finish (the client long-polls `GET /operations/{operation}`), drawing
 * progress on a terminal, and returns their final records. An operation that did not succeed
 * (`failed`, `canceled`) is an error: its own error code and message, exit 1.
 *
 * @example
 * const final = await waitForSuccess(context, client, operations, 600);
 */
export async function waitForSuccess(
  context: Context,
  client: SvcClient,
  operations: readonly (Operation | string)[],
  timeoutSeconds: number,
): Promise<Operation[]> {
  const { waitForOperations } = await import('@svc/client');
  const progress = createProgress(
    context.io.stderr,
    context.io.isTTY,
    operations.filter((op): op is Operation => typeof op !== 'string'),
  );
  let final: Operation[];
  try {
    final = await waitForOperations(client, operations, {
      timeoutMs: timeoutSeconds * 1000,
      onProgress: progress.update,
    });
  } finally {
    progress.done();
  }
  const failed = final.find((op) => op.state !== 'succeeded');
  if (failed)
    throw new CliError(
      'error',
      failed.error?.code ?? 'operation_failed',
      `operation ${failed.id} (${failed.type}) ${failed.state}: ${failed.error?.message ?? 'no reason given'}`,
    );
  return final;
}
