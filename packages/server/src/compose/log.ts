/** Where the app reports problems (500s, response violations, housekeeping failures). */
export type Log = (message: string, fields?: Record<string, unknown>) => void;

/**
 * One JSON line per problem on stderr: the default {@link Log}.
 *
 * @example
 * defaultLog('housekeeping failed', { error: 'connection refused' });
 */
export const defaultLog: Log = (message, fields) =>
  process.stderr.write(`${JSON.stringify({ time: new Date().toISOString(), message, ...fields })}\n`);

/** The stack of what caused an error (or the error's own), for a log line. */
export function causeText(error: Error & { cause?: unknown }): string {
  return String((error.cause as Error | undefined)?.stack ?? error.cause ?? error.stack);
}
