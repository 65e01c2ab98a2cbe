// The commands of the spec's stream operations (`svc workspaces events`, `svc operations output`) and
// `svc computers run … --follow`: a stream is followed through `@svc/client/streams` (which resumes it
// across drops and renews the token) and printed as it comes, one line or one JSON object per event,
// until it ends or Ctrl-C stops following.
import type { SvcClient } from '@svc/client';
import type { StreamOperationId } from '@svc/contract';
import type { Context } from '../credentials.js';
import { CliError, exitCode, RemoteExit } from '../exit-codes.js';
import type { OutputOptions } from '../output/print.js';

/** One event as a stream yields it. */
interface Event {
  event: string;
  id: string;
  data: unknown;
}

/** What to follow and how to print it. */
export interface FollowOptions {
  operationId: StreamOperationId;
  path: Record<string, string>;
  query: Record<string, unknown>;
  lastEventId: string | undefined;
  output: OutputOptions;
  /** Print a command's output as it wrote it and exit with its code (`commandOutput` streams). */
  commandOutput: boolean;
  /** How to resume, told on stderr after Ctrl-C: the command line without its cursor. */
  resume: string;
}

/**
 * Stops following on Ctrl-C (SIGINT) or on `io.signal` (tests): the stream's connection is closed and
 * svc exits 130. A command being followed goes on running: operations cannot be canceled (design §13).
 */
function interruption(context: Context): { signal: AbortSignal; dispose(): void } {
  const stop = new AbortController();
  const onSigint = () => stop.abort(new Error('interrupted'));
  process.once('SIGINT', onSigint);
  const signal = context.io.signal ? AbortSignal.any([stop.signal, context.io.signal]) : stop.signal;
  return { signal, dispose: () => process.off('SIGINT', onSigint) };
}

/** A resource carried by an event (`computer`, `operation`…): the first object field with an `id`. */
function resourceOf(data: Record<string, unknown>): [string, Record<string, unknown>] | undefined {
  return Object.entries(data).find(
    (entry): entry is [string, Record<string, unknown>] =>
      typeof entry[1] === 'object' &&
      entry[1] !== null &&
      typeof (entry[1] as { id?: unknown }).id === 'string',
  );
}

/**
 * The readable line of an event: its id and name, then the resource it carries (noun, name, id, state,
 * progress), or its scalar fields.
 *
 * @example
 * eventLine({ id: '42', event: 'computer.updated', data: { computer: { id: 'c1', name: 'box', state: 'running' } } });
 * // '42 computer.updated computer box (c1) running'
 */
export function eventLine(event: Event): string {
  const data = (typeof event.data === 'object' && event.data !== null ? event.data : {}) as Record<
    string,
    unknown
  >;
  const resource = resourceOf(data);
  let summary: string;
  if (resource) {
    const [noun, value] = resource;
    const name = typeof value.name === 'string' ? `${value.name} (${value.id})` : String(value.id);
    const type = typeof value.type === 'string' ? ` ${value.type}` : '';
    const state = typeof value.state === 'string' ? ` ${value.state}` : '';
    const progress = typeof value.progress === 'number' ? ` ${value.progress}%` : '';
    summary = `${noun}${type} ${name}${state}${progress}`;
  } else {
    summary = Object.entries(data)
      .filter(([, value]) => value === null || typeof value !== 'object')
      .map(([key, value]) => `${key}=${typeof value === 'string' ? JSON.stringify(value) : String(value)}`)
      .join(' ');
  }
  return `${event.id} ${event.event} ${summary}`.trimEnd();
}

/** Prints one event of a command's output stream as the command wrote it; returns its exit code at the end. */
function printCommandOutput(context: Context, event: Event): number | undefined {
  const { io } = context;
  const data = event.data as Record<string, unknown>;
  if (event.event === 'output') {
    const text = String(data.data ?? '');
    const bytes = data.encoding === 'base64' ? Buffer.from(text, 'base64') : text;
    (data.stream === 'stderr' ? io.stderr : io.stdout).write(bytes);
    return undefined;
  }
  if (event.event === 'exit') {
    if (data.stdout_truncated === true) io.stderr.write('svc: stdout was cut at max_output_bytes\n');
    if (data.stderr_truncated === true) io.stderr.write('svc: stderr was cut at max_output_bytes\n');
    if (data.timed_out === true)
      io.stderr.write('svc: the command ran past timeout_seconds and was killed\n');
    return Number(data.exit_code);
  }
  if (event.event === 'failed')
    throw new CliError(
      'error',
      String(data.code ?? 'operation_failed'),
      String(data.message ?? 'the command failed'),
    );
  return undefined;
}

/**
 * Follows a stream and prints it: `-o json` (or `--json`) one JSON object per line, `{event, id, data}`;
 * by default one readable line per event ({@link eventLine}), or for a command's output its bytes on
 * stdout and stderr and its exit code as svc's ({@link RemoteExit}; a `failed` operation is an error).
 * Ctrl-C stops following with exit 130 and says how to resume.
 *
 * @example
 * await followStream(context, client, { operationId: 'streamWorkspaceEvents', path: { workspace: 'dev' }, query: {}, lastEventId: undefined, output, commandOutput: false, resume: 'svc workspaces events dev' });
 */
export async function followStream(
  context: Context,
  client: SvcClient,
  options: FollowOptions,
): Promise<void> {
  const { output } = options;
  if (output.format === 'yaml')
    throw new CliError(
      'usage',
      'invalid_output',
      'a stream prints lines (the default) or JSON lines (-o json), not YAML.',
    );
  const search =
    output.query === undefined ? undefined : (await import('@jmespath-community/jmespath')).search;
  const { stream } = await import('@svc/client/streams');
  const { io } = context;
  const interrupt = interruption(context);
  let last = options.lastEventId;
  try {
    const events = stream(client, options.operationId, {
      path: options.path as never,
      query: options.query as never,
      lastEventId: options.lastEventId,
      signal: interrupt.signal,
    }) as AsyncGenerator<Event>;
    for await (const event of events) {
      last = event.id;
      if (search) io.stdout.write(`${JSON.stringify(search(event as never, output.query as string))}\n`);
      else if (output.format === 'json') io.stdout.write(`${JSON.stringify(event)}\n`);
      else if (options.commandOutput) {
        const code = printCommandOutput(context, event);
        if (code !== undefined && code !== 0) throw new RemoteExit(code);
      } else io.stdout.write(`${eventLine(event)}\n`);
    }
  } catch (error) {
    if (!interrupt.signal.aborted) throw error;
    const at = last === undefined ? '' : ` after event ${last}`;
    const goesOn = options.commandOutput ? ' The command goes on running.' : '';
    io.stderr.write(
      `svc: stopped following${at}.${goesOn} Resume with: ${options.resume}${last === undefined ? '' : ` --last-event-id ${last}`}\n`,
    );
    throw new RemoteExit(exitCode('interrupted'));
  } finally {
    interrupt.dispose();
  }
}
