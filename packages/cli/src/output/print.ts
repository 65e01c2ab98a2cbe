import type { Command } from 'commander';
import type { Context } from '../credentials.js';
import { CliError } from '../exit-codes.js';
import { render } from './render.js';
import { table } from './table.js';

/** The values of `-o, --output`. */
export const FORMATS = ['table', 'json', 'yaml'] as const;
export type Format = (typeof FORMATS)[number];

/** The output options every command shares (global flags). */
export interface OutputOptions {
  format: Format;
  columns: string[] | undefined;
  query: string | undefined;
}

/**
 * The output options of a run from the global flags: `-o json|yaml|table` (`--json` is `-o json`),
 * `--columns a,b`, `--query <JMESPath>`. `allowPath`: commands that write a key file accept a path in
 * `--output` too (how they were used before formats), returned as `keyPath`.
 *
 * @example
 * const { format } = outputOptions(command);
 */
export function outputOptions(
  command: Command,
  allowPath = false,
): OutputOptions & { keyPath: string | undefined } {
  const all = command.optsWithGlobals<{
    output?: string;
    json?: boolean;
    columns?: string;
    query?: string;
  }>();
  let keyPath: string | undefined;
  let format: Format = 'table';
  if (all.output !== undefined) {
    if ((FORMATS as readonly string[]).includes(all.output)) format = all.output as Format;
    else if (allowPath) keyPath = all.output;
    else
      throw new CliError(
        'usage',
        'invalid_output',
        `--output must be one of ${FORMATS.join(', ')}, not "${all.output}".`,
      );
  }
  if (all.json === true) format = 'json';
  const columns = all.columns
    ?.split(',')
    .map((c) => c.trim())
    .filter(Boolean);
  return { format, columns, query: all.query, keyPath };
}

/**
 * Prints an API answer in the chosen format on stdout (hints such as "more: add --cursor" on stderr).
 * `--query` filters the answer first (JMESPath, `@jmespath-community/jmespath`): its result prints as
 * JSON or YAML, or with `-o table` (the default) as a table when it is a list of objects and as plain
 * lines when it is a value or a list of values, for shell scripts.
 *
 * @example
 * await printResult(context, command, { computers: [...], next_cursor: null, has_more: false });
 */
export async function printResult(
  context: Context,
  command: Command,
  data: unknown,
  options: OutputOptions = outputOptions(command),
): Promise<void> {
  if (data === undefined) return;
  const { io } = context;
  let value = data;
  if (options.query !== undefined) {
    const { search } = await import('@jmespath-community/jmespath');
    try {
      value = search(data as never, options.query);
    } catch (error) {
      throw new CliError('usage', 'invalid_query', `--query: ${(error as Error).message}`);
    }
  }
  if (options.format === 'json') {
    io.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
    return;
  }
  if (options.format === 'yaml') {
    const { stringify } = await import('yaml');
    io.stdout.write(stringify(value));
    return;
  }
  const width = io.columns ?? 80;
  if (options.query !== undefined) {
    io.stdout.write(plain(value, { columns: options.columns, width }));
    return;
  }
  const { stdout, stderr } = render(value, { columns: options.columns, width });
  io.stdout.write(stdout);
  if (stderr) io.stderr.write(stderr);
}

/** A query's result as text: objects' lists as tables, values one per line, objects as JSON. */
function plain(value: unknown, options: { columns: string[] | undefined; width: number }): string {
  if (value === null || value === undefined) return '';
  if (Array.isArray(value)) {
    if (value.length > 0 && value.every((v) => v && typeof v === 'object' && !Array.isArray(v)))
      return table(value as Record<string, unknown>[], options);
    return (
      value.map((v) => (v !== null && typeof v === 'object' ? JSON.stringify(v) : String(v))).join('\n') +
      (value.length ? '\n' : '')
    );
  }
  if (typeof value === 'object') return `${JSON.stringify(value, null, 2)}\n`;
  return `${String(value)}\n`;
}
