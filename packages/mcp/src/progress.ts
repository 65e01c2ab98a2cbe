import type { Operation } from '@svc/client';

/** Sends one progress notification: `progress` of `total` (absent: unknown), with a message for people. */
export type ReportProgress = (progress: number, message: string, total?: number) => Promise<void>;

/**
 * Turns operation updates into MCP progress notifications for a call that follows several operations:
 * the mean of their `progress` (0–100). MCP requires each notification's progress to be larger than
 * the last, so an update that does not raise the mean (a state change at the same percentage, a failed
 * operation stuck at 40 %) is not sent; the final result reports it instead.
 *
 * @example
 * const track = progressTracker([{ id: 'a', progress: 0 } as never], async (p, m) => console.log(p, m));
 * await track.start();
 */
export function progressTracker(initial: readonly Operation[], report: ReportProgress) {
  const latest = new Map(initial.map((op) => [op.id, op]));
  let sent = -1;
  let chain = Promise.resolve();
  const send = () => {
    const ops = [...latest.values()];
    const mean = Math.floor(ops.reduce((sum, op) => sum + op.progress, 0) / Math.max(1, ops.length));
    if (mean <= sent) return chain;
    sent = mean;
    const message = ops.map((op) => `${op.type} ${op.state} (${op.progress}%)`).join(', ');
    // Notifications are sent in order; a failed send (client gone) must not fail the tool call.
    chain = chain.then(() => report(mean, message, 100)).catch(() => undefined);
    return chain;
  };
  return {
    /** Reports the state the call was accepted in. */
    start: send,
    /** For `waitForOperations`' `onProgress`. */
    update(op: Operation): void {
      latest.set(op.id, op);
      void send();
    },
    /** Resolves once every notification queued so far has been sent. */
    flush: () => chain,
  };
}
