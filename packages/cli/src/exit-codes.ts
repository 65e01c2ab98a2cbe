import { CommanderError } from 'commander';

/** The exit codes of `svc`, by class of failure. Listed in `svc --help` from this table. */
export const EXIT_CODES = [
  { code: 0, name: 'ok', meaning: 'success' },
  {
    code: 1,
    name: 'error',
    meaning: 'other API error (400, 403, 429, 5xx…), network failure, failed operation',
  },
  { code: 2, name: 'usage', meaning: 'usage error: unknown command or option, missing or bad argument' },
  { code: 3, name: 'authentication', meaning: 'not signed in, bad key file, or credential refused (401)' },
  { code: 4, name: 'not_found', meaning: 'not found (404)' },
  { code: 5, name: 'conflict', meaning: 'conflict (409): name taken, invalid state, operation in progress' },
  {
    code: 130,
    name: 'interrupted',
    meaning: 'interrupted (Ctrl-C) while following a stream; a command followed goes on running',
  },
  {
    code: 141,
    name: 'closed_pipe',
    meaning: 'standard output closed by its reader (svc … | head -1), as a tool ended by SIGPIPE',
  },
] as const;

export type ExitName = (typeof EXIT_CODES)[number]['name'];

/**
 * The exit code of a class.
 *
 * @example
 * exitCode('not_found'); // 4
 */
export function exitCode(name: ExitName): number {
  return EXIT_CODES.find((entry) => entry.name === name)?.code ?? 1;
}

/**
 * A failure of the command line itself (not an API answer), with the class it exits with.
 *
 * @example
 * throw new CliError('authentication', 'not_signed_in', 'Not signed in: run `svc login` or set SVC_KEY_FILE.');
 */
export class CliError extends Error {
  override name = 'CliError';
  constructor(
    readonly exit: ExitName,
    readonly code: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/**
 * Not a failure: a command run in a computer (`svc computers exec`) ended with `code`, and `svc` exits
 * with it, as `ssh` does, printing nothing more.
 *
 * @example
 * if (execution.exit_code !== 0) throw new RemoteExit(execution.exit_code);
 */
export class RemoteExit extends Error {
  override name = 'RemoteExit';
  constructor(readonly code: number) {
    super(`the command exited with ${code}`);
  }
}

const BY_STATUS: Readonly<Record<number, ExitName>> = {
  401: 'authentication',
  404: 'not_found',
  409: 'conflict',
};

/**
 * The exit code for anything a command threw.
 *
 * @example
 * exitCodeFor(new CliError('usage', 'no_base_url', 'give --base-url')); // 2
 */
export function exitCodeFor(error: unknown): number {
  if (error instanceof CliError) return exitCode(error.exit);
  if (error instanceof RemoteExit) return error.code;
  if (error instanceof CommanderError) return error.exitCode === 0 ? 0 : exitCode('usage');
  // By name, not instanceof: @svc/client is loaded only by the commands that call the API.
  const { name, status } = (error ?? {}) as { name?: unknown; status?: unknown };
  if (name === 'KeyFileError') return exitCode('authentication');
  if (name === 'ApiError' && typeof status === 'number') return exitCode(BY_STATUS[status] ?? 'error');
  return exitCode('error');
}

/**
 * The help section that lists the exit codes.
 *
 * @example
 * program.addHelpText('after', exitCodesHelp());
 */
export function exitCodesHelp(): string {
  return `\nExit codes:\n${EXIT_CODES.map((entry) => `  ${entry.code}  ${entry.meaning}`).join('\n')}\n`;
}
