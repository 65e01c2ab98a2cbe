import type { Operation } from '@svc/client';

/**
 * Shows operations while `--wait` waits, on stderr: redrawn in place on a terminal, one plain line per
 * change otherwise (logs and CI).
 *
 * @example
 * const progress = createProgress(process.stderr, process.stderr.isTTY === true);
 * await waitForOperations(client, operations, { onProgress: progress.update });
 * progress.done();
 */
export function createProgress(
  stderr: { write(text: string): unknown },
  tty: boolean,
): { update: (operation: Operation) => void; done: () => void } {
  const latest = new Map<string, Operation>();
  let drawn = 0;
  const line = (op: Operation) => `${op.id}  ${op.type}  ${op.state}  ${op.progress}%`;
  return {
    update(operation) {
      latest.set(operation.id, operation);
      if (!tty) {
        stderr.write(`operation ${line(operation)}\n`);
        return;
      }
      // Move up over what was drawn, then redraw every operation (one line each).
      const bar = (p: number) => `[${'#'.repeat(Math.round(p / 5)).padEnd(20, '.')}]`;
      let text = drawn > 0 ? `\x1b[${drawn}A` : '';
      for (const op of latest.values()) text += `\r\x1b[2K${bar(op.progress)} ${line(op)}\n`;
      drawn = latest.size;
      stderr.write(text);
    },
    done() {
      drawn = 0;
    },
  };
}
