/** Where the app reports problems (500s, response violations, housekeeping failures). */
export type Log = (message: string, fields?: Record<string, unknown>) => void;

/** The stack of what caused an error (or the error's own), for a log line. */
export function causeText(error: Error & { cause?: unknown }): string {
  return String((error.cause as Error | undefined)?.stack ?? error.cause ?? error.stack);
}
