// The bounds of terminals (design §17), each an environment setting with the spec's value as its
// default: the terminals' section of the configuration (`Config.terminals`, composed in compose/config.ts).
import { type Env, int } from '../platform/config.js';

/** The bounds of terminals on this server. */
export interface TerminalConfig {
  /** `SVC_TERMINALS_PER_COMPUTER` (8): open terminals per computer (403 `terminals_per_computer`). */
  perComputer: number;
  /** `SVC_TERMINALS_PER_WORKSPACE` (32): open terminals per workspace (403 `terminals_per_workspace`). */
  perWorkspace: number;
  /** `SVC_TERMINAL_INPUT_BYTES_PER_SECOND` (262,144): input per terminal per second (429 `terminal-input`). */
  inputBytesPerSecond: number;
  /** `SVC_TERMINAL_KEEP_BYTES` (1 MiB): output kept for reattach and the screen. */
  keepBytes: number;
  /** `SVC_TERMINAL_IDLE_SECONDS` (900): closed when nobody read or wrote it for so long. */
  idleSeconds: number;
  /** `SVC_TERMINAL_RETENTION_SECONDS` (3,600): a closed terminal and its output are kept so long. */
  retentionSeconds: number;
  /** `SVC_TERMINAL_FLUSH_MS` (2): how long output waits to be appended with what follows it. */
  flushMs: number;
}

/** The terminals' section of the configuration. */
export interface TerminalsSection {
  /** The bounds of terminals (design §17; `SVC_TERMINAL*`). */
  terminals: TerminalConfig;
}

/**
 * The terminal bounds from the environment.
 *
 * @example
 * const { terminals } = terminalsSection({ SVC_TERMINALS_PER_COMPUTER: '4' }); // terminals.perComputer: 4
 */
export function terminalsSection(env: Env): TerminalsSection {
  return {
    terminals: {
      perComputer: int(env, 'SVC_TERMINALS_PER_COMPUTER', 8, 0, 10_000),
      perWorkspace: int(env, 'SVC_TERMINALS_PER_WORKSPACE', 32, 0, 100_000),
      inputBytesPerSecond: int(env, 'SVC_TERMINAL_INPUT_BYTES_PER_SECOND', 262_144, 1, 1 << 30),
      keepBytes: int(env, 'SVC_TERMINAL_KEEP_BYTES', 1_048_576, 65_536, 1 << 30),
      idleSeconds: int(env, 'SVC_TERMINAL_IDLE_SECONDS', 900, 1, 7 * 86_400),
      retentionSeconds: int(env, 'SVC_TERMINAL_RETENTION_SECONDS', 3_600, 1, 7 * 86_400),
      flushMs: int(env, 'SVC_TERMINAL_FLUSH_MS', 2, 0, 1_000),
    },
  };
}
