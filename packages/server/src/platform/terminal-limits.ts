// The bounds of terminals (design §17), each an environment setting with the spec's value as its
// default. Read by config.ts into `Config.terminals`.

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

/** How config.ts reads one whole-number setting: name, default, least and most. */
export type IntSetting = (name: string, fallback: number, min: number, max: number) => number;

/**
 * The terminal bounds from the environment.
 *
 * @example
 * const terminals = terminalConfig((name, fallback) => Number(process.env[name] ?? fallback));
 */
export function terminalConfig(int: IntSetting): TerminalConfig {
  return {
    perComputer: int('SVC_TERMINALS_PER_COMPUTER', 8, 0, 10_000),
    perWorkspace: int('SVC_TERMINALS_PER_WORKSPACE', 32, 0, 100_000),
    inputBytesPerSecond: int('SVC_TERMINAL_INPUT_BYTES_PER_SECOND', 262_144, 1, 1 << 30),
    keepBytes: int('SVC_TERMINAL_KEEP_BYTES', 1_048_576, 65_536, 1 << 30),
    idleSeconds: int('SVC_TERMINAL_IDLE_SECONDS', 900, 1, 7 * 86_400),
    retentionSeconds: int('SVC_TERMINAL_RETENTION_SECONDS', 3_600, 1, 7 * 86_400),
    flushMs: int('SVC_TERMINAL_FLUSH_MS', 2, 0, 1_000),
  };
}
