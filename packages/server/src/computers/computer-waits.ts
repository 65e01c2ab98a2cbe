import { ApiError } from '../platform/errors.js';
import type { ComputerState } from './states.js';

/** The `details.policy` of a 429 for one wait too many (the spec's `ErrorDetails.policy`). */
const COMPUTER_WAITS_POLICY = 'computer-waits';

/** What the `Wait-Result` header says (the spec's `Wait-Result` header). */
export type WaitResult = 'reached' | 'timed_out' | 'unreachable';

/**
 * In-process wake-ups for `GET …/computers/{computer}?wait_for=`, per workspace: fed by the
 * `NOTIFY svc_computer_changes, '<workspace id> <computer id>'` every change of a computer sends
 * (migration 022's triggers, whichever replica or worker wrote it), which this replica already listens to for its
 * read cache. A gap in the notifications (the listening connection came back) wakes everyone, who
 * read again: nothing is lost, and nothing polls.
 *
 * @example
 * const changes = new ComputerChanges();
 * await db.listen(COMPUTERS_CHANNEL, (payload) => changes.notify(parseComputerChange(payload).workspaceId), { onGap: () => changes.wakeAll() });
 * const { woken, cancel } = changes.next(workspaceId);
 */
export class ComputerChanges {
  private readonly waiters = new Map<string, Set<() => void>>();

  /** Waits held now (tests, metrics). */
  get size(): number {
    let n = 0;
    for (const set of this.waiters.values()) n += set.size;
    return n;
  }

  /** Wakes everything waiting on a computer of `workspaceId`. */
  notify(workspaceId: string): void {
    const set = this.waiters.get(workspaceId);
    if (!set) return;
    this.waiters.delete(workspaceId);
    for (const wake of set) wake();
  }

  /** Wakes every waiter (notifications may have been lost). */
  wakeAll(): void {
    const sets = [...this.waiters.values()];
    this.waiters.clear();
    for (const set of sets) for (const wake of set) wake();
  }

  /**
   * Subscribes to the next change in the workspace: `woken` resolves on it; `cancel` drops the
   * subscription (and resolves `woken`) when the caller stops waiting first.
   */
  next(workspaceId: string): { woken: Promise<void>; cancel: () => void } {
    let set = this.waiters.get(workspaceId);
    if (!set) {
      set = new Set();
      this.waiters.set(workspaceId, set);
    }
    const held = set;
    let wake!: () => void;
    const woken = new Promise<void>((resolve) => {
      wake = () => {
        held.delete(wake);
        if (held.size === 0 && this.waiters.get(workspaceId) === held) this.waiters.delete(workspaceId);
        resolve();
      };
    });
    held.add(wake);
    return { woken, cancel: wake };
  }
}

/**
 * How many waits each principal holds at once on this replica: one more than `limit` is
 * `429 rate_limited` (`computer-waits`), so a client cannot park unbounded requests here.
 *
 * @example
 * const release = slots.take(principal.id); // throws ApiError 429 when at the limit
 * try { … } finally { release(); }
 */
export class WaitSlots {
  private readonly held = new Map<string, number>();

  /**
   * @param limit the slots each principal has
   * @param refusal the 429's `details.policy` and what its message says is held (event streams share this class)
   */
  constructor(
    private readonly limit: number,
    private readonly refusal: { policy: string; what: string } = {
      policy: COMPUTER_WAITS_POLICY,
      what: "waits for a computer's state",
    },
  ) {}

  /** Takes one of the principal's slots; the returned function gives it back (once). */
  take(principalId: string): () => void {
    const n = this.held.get(principalId) ?? 0;
    if (n >= this.limit) {
      throw new ApiError('rate_limited', `at most ${this.limit} ${this.refusal.what} at once per principal`, {
        details: { policy: this.refusal.policy, retry_after_seconds: 1 },
        headers: { 'retry-after': '1' },
      });
    }
    this.held.set(principalId, n + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = (this.held.get(principalId) ?? 1) - 1;
      if (left > 0) this.held.set(principalId, left);
      else this.held.delete(principalId);
    };
  }
}

/**
 * Reads a computer until its state is one of `states` (or `states` holds for it), at most `timeoutMs`,
 * woken by `changes` of its workspace. Each read borrows a connection only for its statement, so a waiting request holds
 * none. Subscribes before each read, so a change between the read and the wait is not missed.
 *
 * @example
 * const { computer, result } = await waitForComputerState(() => readComputer(…), changes, ws.id, new Set(['running']), 30_000);
 */
export async function waitForComputerState<C extends { state: ComputerState }>(
  read: () => Promise<C>,
  changes: ComputerChanges,
  workspaceId: string,
  states: ReadonlySet<ComputerState> | ((computer: C) => boolean),
  timeoutMs: number,
  options: {
    signal?: AbortSignal | undefined;
    /** Called once, when the wait first has to hold (a slot of {@link WaitSlots}); returns its release. */
    hold?: () => () => void;
  } = {},
): Promise<{ computer: C; result: WaitResult }> {
  const { signal } = options;
  const deadline = Date.now() + timeoutMs;
  const reached = typeof states === 'function' ? states : (computer: C) => states.has(computer.state);
  let release: (() => void) | undefined;
  try {
    for (;;) {
      const { woken, cancel } = changes.next(workspaceId);
      let computer: C;
      try {
        computer = await read();
      } catch (error) {
        cancel();
        throw error;
      }
      const remaining = deadline - Date.now();
      const result: WaitResult | undefined = reached(computer)
        ? 'reached'
        : computer.state === 'deleted'
          ? 'unreachable'
          : remaining <= 0 || signal?.aborted
            ? 'timed_out'
            : undefined;
      if (result) {
        cancel();
        return { computer, result };
      }
      if (!release) {
        try {
          release = options.hold?.() ?? (() => {});
        } catch (error) {
          cancel();
          throw error;
        }
      }
      const timer = setTimeout(cancel, remaining);
      const abort = () => cancel();
      signal?.addEventListener('abort', abort, { once: true });
      await woken;
      clearTimeout(timer);
      signal?.removeEventListener('abort', abort);
    }
  } finally {
    release?.();
  }
}
