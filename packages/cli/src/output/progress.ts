import type { Operation } from '@svc/client';

const FRAMES = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];

/** What `--wait` draws while it waits: {@link createProgress}. */
export interface Progress {
  update(operation: Operation): void;
  /** Erases what was drawn and stops the spinner. */
  done(): void;
}

/**
 * Shows operations while `--wait` waits, on stderr, only on a terminal: a spinner redrawn in place every
 * 100 ms with each operation's type, state and progress. Not a terminal (a pipe, a log, CI): nothing,
 * so stderr carries only errors and the answer is the one thing on stdout.
 *
 * @example
 * const progress = createProgress(process.stderr, process.stderr.isTTY === true);
 * await waitForOperations(client, operations, { onProgress: progress.update });
 * progress.done();
 */
export function createProgress(
  stderr: { write(text: string): unknown },
  tty: boolean,
  initial: readonly Operation[] = [],
): Progress {
  if (!tty) return { update() {}, done() {} };
  const latest = new Map<string, Operation>(initial.map((op) => [op.id, op]));
  let drawn = 0;
  let frame = 0;
  const draw = () => {
    const spinner = FRAMES[frame++ % FRAMES.length];
    // Move up over what was drawn, then redraw every operation (one line each).
    let text = drawn > 0 ? `\x1b[${drawn}A` : '';
    for (const op of latest.values())
      text += `\r\x1b[2K${spinner} ${op.type} ${op.target?.id ?? ''}  ${op.state}  ${op.progress}%\n`;
    drawn = latest.size;
    stderr.write(text);
  };
  const timer = setInterval(draw, 100);
  timer.unref();
  draw();
  return {
    update(operation) {
      latest.set(operation.id, operation);
      draw();
    },
    done() {
      clearInterval(timer);
      if (drawn > 0) stderr.write(`\x1b[${drawn}A\x1b[0J`);
      drawn = 0;
    },
  };
}
