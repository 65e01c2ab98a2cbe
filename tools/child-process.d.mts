import type { ChildProcess } from 'node:child_process';
/** Parent variables a child inherits (PATH, HOME, NODE_OPTIONS, TZ, LANG). */
export declare const INHERITED_VARIABLES: readonly string[];
/** The parent's inherited variables that are set, then `env`; nothing else of the parent's. */
export declare function childEnv(env?: Record<string, string | undefined>): Record<string, string>;
/** SIGTERM (or `signal`) by pid, SIGKILL after `killAfterMs` (default 12 s); waits for the exit. */
export declare function stopChild(
  child: ChildProcess,
  options?: { signal?: NodeJS.Signals; killAfterMs?: number },
): Promise<void>;
