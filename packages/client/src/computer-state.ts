import type { SvcClient } from './client.js';
import type { ApiPaths, Computer, ComputerState } from './contract.js';
import { withDeadline } from './deadline.js';
import { TimeoutError } from './errors.js';
import { realSleep, type Sleep } from './retry.js';
import { unwrap } from './unwrap.js';

/**
 * Options of {@link waitForComputerState}.
 *
 * @example
 * import type { ComputerWaitOptions } from '@svc/client';
 * const options: ComputerWaitOptions = { timeoutMs: 120_000 };
 */
export interface ComputerWaitOptions {
  /** Give up after this long with {@link TimeoutError} (its `computer`: the last seen). Default 10 minutes. */
  timeoutMs?: number;
  /** Aborting rejects with the signal's reason and cancels the long-poll in flight. */
  signal?: AbortSignal;
  /** `wait` of each long-poll, 0–60 s: the server answers as soon as the state holds. Default 60. */
  pollSeconds?: number;
  /** Least time between two polls, for servers (such as a mock) that answer a long-poll at once. Default 1000 ms. */
  minIntervalMs?: number;
  /** Waits out `minIntervalMs`. Default: a real timer. */
  sleep?: Sleep;
}

/**
 * Waits until a computer's state is one of `states`, long-polling
 * `GET /workspaces/{workspace}/computers/{computer}?wait_for=…&wait=N`: one request per wait of up to
 * 60 s, answered by the server the moment the state holds (whatever moved it: an operation, the
 * reconciler, another client). Resolves with the computer; also with a `deleted` one when `deleted`
 * was not named (it leaves that state no more). Throws {@link TimeoutError} on timeout, the signal's
 * reason on abort, and {@link ApiError} if a poll fails (404 for an unknown computer).
 *
 * @example
 * import { createClient, waitForComputerState } from '@svc/client';
 * const client = createClient({ baseUrl: 'http://127.0.0.1:8080/v1', token: 'ey...' });
 * const computer = await waitForComputerState(client, { workspace: 'dev', computer: 'box' }, ['running', 'failed']);
 */
export async function waitForComputerState(
  client: SvcClient<ApiPaths>,
  path: { workspace: string; computer: string },
  states: readonly ComputerState[],
  options: ComputerWaitOptions = {},
): Promise<Computer> {
  const { signal } = options;
  signal?.throwIfAborted();
  if (states.length === 0) throw new TypeError('waitForComputerState: name at least one state');
  const timeoutMs = options.timeoutMs ?? 600_000;
  const pollSeconds = Math.max(0, Math.min(60, Math.floor(options.pollSeconds ?? 60)));
  const minIntervalMs = options.minIntervalMs ?? 1000;
  const sleep = options.sleep ?? realSleep;
  const wanted = new Set<string>(states);
  let last: Computer | undefined;
  return withDeadline(
    timeoutMs,
    signal,
    async (stop, deadline) => {
      for (;;) {
        const started = Date.now();
        const wait = Math.max(0, Math.min(pollSeconds, Math.floor((deadline - started) / 1000)));
        const { computer } = await unwrap(
          client.GET('/workspaces/{workspace}/computers/{computer}', {
            params: { path, query: { wait_for: states.join(','), wait } },
            signal: stop,
          }),
        );
        last = computer;
        if (wanted.has(computer.state) || computer.state === 'deleted') return computer;
        const elapsed = Date.now() - started;
        if (elapsed < minIntervalMs) await sleep(minIntervalMs - elapsed, stop);
      }
    },
    (cause) =>
      new TimeoutError(
        `computer ${path.computer} not in ${states.join(', ')} after ${timeoutMs} ms (${last?.state ?? 'unread'})`,
        { operations: [], computer: last, cause },
      ),
  );
}
