/**
 * Runs `run` under one signal that fires on the caller's abort, at the deadline, or when `run` ends
 * (cancelling what it still has in flight). Past the deadline, what `run` throws is replaced by
 * `timedOut(cause)`; after the caller's abort, by the abort's reason. The long polls share it.
 *
 * @example
 * await withDeadline(60_000, signal, (stop, deadline) => poll(stop, deadline), (cause) => new TimeoutError('…', { operations: [], cause }));
 */
export async function withDeadline<T>(
  timeoutMs: number,
  signal: AbortSignal | undefined,
  run: (stop: AbortSignal, deadline: number) => Promise<T>,
  timedOut: (cause: unknown) => Error,
): Promise<T> {
  const stop = new AbortController();
  const deadline = Date.now() + timeoutMs;
  let expired = false;
  const timer = setTimeout(() => {
    expired = true;
    stop.abort(new Error('timeout'));
  }, timeoutMs);
  const onAbort = () => stop.abort(signal?.reason);
  signal?.addEventListener('abort', onAbort, { once: true });
  try {
    return await run(stop.signal, deadline);
  } catch (cause) {
    if (expired) throw timedOut(cause);
    if (signal?.aborted) throw signal.reason;
    throw cause;
  } finally {
    clearTimeout(timer);
    signal?.removeEventListener('abort', onAbort);
    stop.abort();
  }
}
