import type { SvcClient } from './client.js';
import type { ApiPaths, KnownValues, Operation, OperationState } from './contract.js';
import { withDeadline } from './deadline.js';
import { TimeoutError } from './errors.js';
import { realSleep, type Sleep } from './retry.js';
import { unwrap } from './unwrap.js';

// Every state of the spec's `OperationState`, final or not: keyed by the spec's enum, so a state added to
// the spec does not compile until it is classified here. `canceled` is reserved by the spec; unknown
// states (design §12) are treated as still running.
const STATE_IS_FINAL: Readonly<Record<KnownValues<OperationState>, boolean>> = {
  pending: false,
  running: false,
  succeeded: true,
  failed: true,
  canceled: true,
};
const FINAL_STATES: ReadonlySet<string> = new Set(
  Object.entries(STATE_IS_FINAL)
    .filter(([, final]) => final)
    .map(([state]) => state),
);

/**
 * True when an operation will not change any more.
 *
 * @example
 * import { isOperationDone } from '@svc/client';
 * isOperationDone({ state: 'running' }); // false
 */
export function isOperationDone(operation: { state: string }): boolean {
  return FINAL_STATES.has(operation.state);
}

/**
 * Options of {@link waitForOperations}.
 *
 * @example
 * import type { WaitOptions } from '@svc/client';
 * const options: WaitOptions = { timeoutMs: 120_000, onProgress: (op) => console.log(op.id, op.state, op.progress) };
 */
export interface WaitOptions {
  /** Give up after this long with {@link TimeoutError}. Default 10 minutes. */
  timeoutMs?: number;
  /** Aborting rejects with the signal's reason and cancels the long-polls in flight. */
  signal?: AbortSignal;
  /** Called with an operation every time a poll shows it changed (state, progress or any other field). */
  onProgress?: (operation: Operation) => void;
  /**
   * `wait` of each long-poll, 0–60 s. The server holds the call until the operation is final or this
   * passes, so it is also how often `onProgress` can see intermediate progress. Default 10.
   */
  pollSeconds?: number;
  /** Least time between two polls of one operation, for servers (such as a mock) that answer a long-poll at once. Default 1000 ms. */
  minIntervalMs?: number;
  /** Waits out `minIntervalMs`. Default: a real timer. */
  sleep?: Sleep;
}

/**
 * Waits until every operation has finished, long-polling `GET /operations/{operation}?wait=N` for each
 * in parallel. Resolves with their final records in the given order: `failed` is a result, not an
 * exception (check `op.state` and `op.error`). Throws {@link TimeoutError} on timeout, the signal's
 * reason on abort, and {@link ApiError} if a poll fails.
 *
 * @example
 * import { createClient, unwrap, waitForOperations } from '@svc/client';
 * const client = createClient({ baseUrl: 'http://127.0.0.1:8080/v1', token: 'ey...' });
 * const { operations } = await unwrap(
 *   client.POST('/workspaces/{workspace}/computers/{computer}/start', { params: { path: { workspace: 'dev', computer: 'box' } } }),
 * );
 * const [done] = await waitForOperations(client, operations, { timeoutMs: 60_000 });
 */
export async function waitForOperations(
  client: SvcClient<ApiPaths>,
  operations: ReadonlyArray<Operation | string>,
  options: WaitOptions = {},
): Promise<Operation[]> {
  const { signal, onProgress } = options;
  signal?.throwIfAborted();
  const timeoutMs = options.timeoutMs ?? 600_000;
  const pollSeconds = Math.max(0, Math.min(60, Math.floor(options.pollSeconds ?? 10)));
  const minIntervalMs = options.minIntervalMs ?? 1000;
  const sleep = options.sleep ?? realSleep;
  const latest: (Operation | undefined)[] = operations.map((op) => (typeof op === 'string' ? undefined : op));
  const ids = operations.map((op) => (typeof op === 'string' ? op : op.id));

  // One signal for every poll and pause: fires on the caller's abort, the deadline, or the first
  // failure (cancelling sibling polls still in flight).
  return withDeadline(
    timeoutMs,
    signal,
    async (stop, deadline) => {
      const follow = async (index: number, id: string) => {
        let current = latest[index];
        while (!current || !isOperationDone(current)) {
          const started = Date.now();
          const wait = Math.max(0, Math.min(pollSeconds, Math.floor((deadline - started) / 1000)));
          const { operation } = await unwrap(
            client.GET('/operations/{operation}', {
              params: { path: { operation: id }, query: { wait } },
              signal: stop,
            }),
          );
          if (!current || JSON.stringify(current) !== JSON.stringify(operation)) onProgress?.(operation);
          current = latest[index] = operation;
          const elapsed = Date.now() - started;
          if (!isOperationDone(current) && elapsed < minIntervalMs)
            await sleep(minIntervalMs - elapsed, stop);
        }
      };
      await Promise.all(ids.map((id, index) => follow(index, id)));
      return latest as Operation[];
    },
    (cause) =>
      new TimeoutError(`operations not finished after ${timeoutMs} ms: ${ids.join(', ')}`, {
        operations: latest.filter((op): op is Operation => op !== undefined),
        cause,
      }),
  );
}
