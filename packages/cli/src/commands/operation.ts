import { open } from 'node:fs/promises';
import type { Operation } from '@svc/client';
import { loadDocument, type Schema, type StreamOperationId } from '@svc/contract';
import { type Command, InvalidArgumentError, Option } from 'commander';
import { apiClient, type Context } from '../credentials.js';
import { CliError, RemoteExit } from '../exit-codes.js';
import { outputOptions, printResult } from '../output/print.js';
import type { OperationCommand, OptionSpec } from '../spec/commands.js';
import { jsonHelp, parseJsonFlag } from '../spec/json-flags.js';
import { advise } from './advice.js';
import { followStream } from './stream.js';
import { waitForSuccess } from './waiting.js';

/** A commander parser of integers or numbers, with a usage error otherwise. */
export const parseNumber = (kind: 'integer' | 'number') => (value: string) => {
  const number = Number(value);
  if (value.trim() === '' || !Number.isFinite(number) || (kind === 'integer' && !Number.isInteger(number)))
    throw new InvalidArgumentError(`not ${kind === 'integer' ? 'an integer' : 'a number'}.`);
  return number;
};

/** `k=v` pairs, comma-separated or repeated; `''` is the empty map (e.g. to clear labels). */
function parseMap(value: string, previous: Record<string, string> | undefined): Record<string, string> {
  const map = { ...previous };
  for (const pair of value.split(',').filter(Boolean)) {
    const index = pair.indexOf('=');
    if (index < 1) throw new InvalidArgumentError(`expected key=value, got "${pair}".`);
    map[pair.slice(0, index)] = pair.slice(index + 1);
  }
  return map;
}

/**
 * The commander option of an {@link OptionSpec}. `command` is how its command is typed (`svc computers
 * create`), for a JSON value's refusals.
 *
 * @example
 * toOption({ flag: 'limit', name: 'limit', in: 'query', kind: 'integer', required: false, description: 'Page size', schema: {} });
 */
export function toOption(spec: OptionSpec, command = 'svc'): Option {
  const value =
    spec.kind === 'boolean'
      ? ''
      : spec.kind === 'map'
        ? ' <key=value,…>'
        : spec.kind === 'json'
          ? ' <json>'
          : ` <${spec.flag}>`;
  const option = new Option(
    `--${spec.flag}${value}`,
    spec.kind === 'json' ? `${spec.description} (JSON, see below)`.trim() : spec.description,
  );
  if (spec.choices) option.choices(spec.choices);
  if (spec.kind === 'integer' || spec.kind === 'number') option.argParser(parseNumber(spec.kind));
  if (spec.kind === 'map') option.argParser(parseMap);
  if (spec.kind === 'json') option.argParser(parseJsonFlag(loadDocument(), spec, command));
  if (spec.required) option.makeOptionMandatory();
  return option;
}

/** Everything `io.stdin` yields, as bytes. */
async function readAll(stdin: AsyncIterable<Uint8Array | string> | undefined): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stdin ?? [])
    chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : Buffer.from(chunk));
  return Buffer.concat(chunks);
}

/**
 * What a command run in a computer answered: the spec's `Execution` (from `execComputer`), or the
 * `LongExecution` of a `computer.exec` operation's result (from `runComputer`), which has its fields.
 */
type Execution = Schema<'Execution'> | Schema<'LongExecution'>;

/** The exit code of a shell for a program it cannot find (POSIX: 127). */
const NOT_FOUND_EXIT = 127;

/**
 * Whether a command's stderr is only a shell's "not found" for its program: dash's `sh: 1: exec: make:
 * not found`, busybox's `sh: exec: line 0: make: not found`, bash's `sh: line 1: exec: make: not found`,
 * or the simulated driver's `make: command not found (simulated driver)`.
 *
 * @example
 * isProgramNotFound('sh: 1: exec: make: not found\n', 'make'); // true
 */
export function isProgramNotFound(stderr: string, program: string): boolean {
  const name = program.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return new RegExp(
    `^(?:\\S+: (?:line \\d+: |\\d+: )?(?:exec: )?(?:line \\d+: )?)?${name}: (?:command )?not found(?: \\([^)]*\\))?\\n?$`,
  ).test(stderr);
}

/**
 * Prints a command's output to the matching streams (bytes as they were, when the answer is base64),
 * notes a cut or a timeout on stderr, and exits with the command's exit code ({@link RemoteExit}). A
 * program the computer does not have is said so in svc's words (the shell's line varies by image),
 * with the shell's exit code, 127.
 */
function printExecution(context: Context, execution: Execution, argv: readonly string[] = []): void {
  const { io } = context;
  const bytes = (text: string) => (execution.encoding === 'base64' ? Buffer.from(text, 'base64') : text);
  const program = argv[0];
  if (
    execution.exit_code === NOT_FOUND_EXIT &&
    program &&
    !execution.stdout &&
    isProgramNotFound(Buffer.from(bytes(execution.stderr ?? '')).toString(), program)
  ) {
    io.stderr.write(`svc: ${program}: command not found in the computer\n`);
    throw new RemoteExit(NOT_FOUND_EXIT);
  }
  if (execution.stdout) io.stdout.write(bytes(execution.stdout));
  if (execution.stderr) io.stderr.write(bytes(execution.stderr));
  if (execution.stdout_truncated) io.stderr.write('svc: stdout was cut at max_output_bytes\n');
  if (execution.stderr_truncated) io.stderr.write('svc: stderr was cut at max_output_bytes\n');
  if (execution.timed_out) io.stderr.write('svc: the command ran past timeout_seconds and was killed\n');
  if (execution.exit_code !== 0) throw new RemoteExit(execution.exit_code);
}

/** The request of an operation from the parsed command line. */
export function buildRequest(
  spec: OperationCommand,
  args: readonly string[],
  values: Record<string, unknown>,
): {
  path: Record<string, string>;
  query: Record<string, unknown>;
  header: Record<string, string>;
  body: Record<string, unknown> | undefined;
} {
  const path = Object.fromEntries(spec.positionals.map((p, i) => [p.name, args[i] as string]));
  const query: Record<string, unknown> = {};
  const header: Record<string, string> = {};
  let body: Record<string, unknown> | undefined = spec.bodyRequired ? {} : undefined;
  if (spec.rest) {
    body ??= {};
    body[spec.rest.name] = args.slice(spec.positionals.length);
  }
  for (const option of spec.options) {
    const value = values[new Option(`--${option.flag}`).attributeName()];
    if (value === undefined) continue;
    if (option.in === 'query') query[option.name] = value;
    else if (option.in === 'header') header[option.name] = String(value);
    else {
      body ??= {};
      body[option.name] = value;
    }
  }
  return { path, query, header, body };
}

/**
 * Adds the command of one operation to its group: positionals, typed options, `--wait` and
 * `--timeout` when it is long-running, `--output` when it returns a key file, `--credential` when
 * its Bearer is the credential being exchanged.
 *
 * @example
 * for (const spec of operationCommands(loadDocument())) addOperationCommand(groups.get(spec.group), spec, context);
 */
export function addOperationCommand(
  group: Command,
  spec: OperationCommand,
  context: () => Context,
  options: { hidden?: boolean } = {},
): Command {
  const { operation } = spec;
  const command = group
    .command(spec.name, { hidden: options.hidden === true })
    .summary(operation.summary)
    .description(
      `${operation.summary}\n\nAPI: ${operation.method.toUpperCase()} ${operation.path} (${operation.operationId})`,
    );
  for (const positional of spec.positionals)
    command.argument(`<${positional.name.replace(/_/g, '-')}>`, positional.description);
  if (spec.rest)
    command.argument(
      `<${spec.rest.name.replace(/_/g, '-')}...>`,
      `${spec.rest.description} Put them after \`--\`, so their options are not read as svc's.`,
    );
  const typed = `svc ${group.name()} ${spec.name}`;
  for (const option of spec.options) {
    command.addOption(toOption(option, typed));
    if (option.kind === 'json') command.addHelpText('after', () => jsonHelp(loadDocument(), option));
  }
  if (spec.runsCommand) {
    command.option('--stdin', "send svc's own standard input to the command (read to its end first)");
    command.addHelpText(
      'after',
      `\n${spec.longRunning ? 'With --wait, the' : 'The'} command's stdout and stderr are printed to svc's, and svc exits with the command's exit code\n(with -o json, -o yaml or --query: the answer is printed instead, and svc exits 0).\n`,
    );
  }
  if (spec.follow)
    command.option(
      '--follow',
      "print the command's stdout and stderr as it writes them, then exit with its exit code (Ctrl-C stops following; the command goes on running)",
    );
  if (spec.bytes)
    command.addHelpText(
      'after',
      spec.bytes.direction === 'upload'
        ? `\nThe body is svc's stdin: ${spec.bytes.kind === 'file' ? "the file's content" : 'an uncompressed tar archive'}, streamed. \`svc computers cp\` copies local files and directories by name.\n`
        : `\nWrites ${spec.bytes.kind === 'file' ? "the file's content" : 'the directory as an uncompressed tar archive'} to svc's stdout, streamed. \`svc computers cp\` copies to local paths by name${spec.bytes.kind === 'archive' ? ', extracting' : ''}.\n`,
    );
  if (spec.stream)
    command.addHelpText(
      'after',
      spec.stream.commandOutput
        ? "\nFollows the stream: the command's stdout and stderr are printed to svc's as they come, and svc exits with its exit code\n(-o json: one JSON object per event). Ctrl-C stops following (exit 130); the command goes on running.\n"
        : '\nFollows the stream until Ctrl-C (exit 130): one line per event, or with -o json one JSON object per event\n({"event", "id", "data"}). A dropped connection is resumed where it stopped.\n',
    );
  // A delete that answers when it is done (204) has nothing to wait for; --wait is taken, as the
  // long-running deletes take it, so a script can pass it to every delete.
  if (!spec.longRunning && spec.operation.method === 'delete')
    command.option('--wait', 'nothing to wait for: this delete is done when svc returns');
  if (spec.longRunning) {
    command.option('--wait', 'wait for the operations to finish, showing progress');
    command.addOption(
      new Option('--timeout <seconds>', 'give up waiting after this long')
        .default(600)
        .argParser(parseNumber('integer')),
    );
  }
  if (spec.writesKeyFile)
    command.option(
      '--key-file <path>',
      'where to write the key file (mode 0600; `-` for stdout; `--output <path>` also works). Default: svc-key-<id>.json',
    );
  if (spec.auth === 'credential')
    command.addOption(
      new Option('--credential <value>', 'the Bearer credential to exchange').makeOptionMandatory(),
    );
  command.action(async (...received: unknown[]) => {
    const self = received.at(-1) as Command;
    await runOperation(context(), spec, self);
  });
  return command;
}

async function runOperation(context: Context, spec: OperationCommand, command: Command): Promise<void> {
  const values = command.opts();
  const output = outputOptions(command, spec.writesKeyFile);
  const { unwrap } = await import('@svc/client');
  const client = await apiClient(
    context,
    spec.auth === 'none'
      ? { anonymous: true }
      : spec.auth === 'credential'
        ? { credential: String(values.credential) }
        : {},
  );
  const { path, query, header, body } = buildRequest(spec, command.args, values);
  const resume = ['svc', spec.group, spec.name, ...command.args.slice(0, spec.positionals.length)].join(' ');
  if (spec.stream) {
    // Last-Event-ID goes to the stream's own resumption, which sends it again on every reconnect.
    const { 'Last-Event-ID': lastEventId, ...rest } = header;
    if (Object.keys(rest).length > 0)
      throw new CliError('usage', 'unsupported_header', 'a stream takes no other header');
    return followStream(context, client, {
      operationId: spec.operation.operationId as StreamOperationId,
      path,
      query,
      lastEventId,
      output,
      commandOutput: spec.stream.commandOutput,
      resume,
    });
  }
  if (spec.bytes) {
    const remote = {
      workspace: String(path.workspace),
      computer: String(path.computer),
      path: String(query.path),
    };
    const transfer = await import('../files/transfer.js');
    if (spec.bytes.direction === 'download')
      return transfer.downloadStdout(context, client, remote, spec.bytes.kind);
    const answer = await transfer.uploadStdin(context, client, remote, spec.bytes.kind, {
      mode: query.mode as string | undefined,
      parents: query.parents as boolean | undefined,
      idempotencyKey: header['Idempotency-Key'],
    });
    return printResult(context, command, answer, output);
  }
  if (spec.runsCommand && values.stdin === true && body) {
    body.stdin = (await readAll(context.io.stdin)).toString('base64');
    body.stdin_encoding = 'base64';
  }
  const call = (method: string, route: string, init: unknown) =>
    unwrap(
      (
        client as unknown as Record<
          string,
          (path: string, init: unknown) => Promise<{ data?: unknown; error?: unknown; response: Response }>
        >
      )[method]?.(route, init) ??
        Promise.reject(
          new CliError('usage', 'unsupported_method', `${method} is not supported by the client`),
        ),
    ) as Promise<Record<string, unknown> | undefined>;
  const sent = { spec, command, path, query, header, body };
  let data = await call(spec.operation.method.toUpperCase(), spec.operation.path, {
    params: { path, query, header },
    ...(body === undefined ? {} : { body }),
  }).catch(async (error: unknown) => {
    await advise(error, client, sent);
    throw error;
  });
  if (spec.writesKeyFile && data)
    data = await saveKeyFile(context, data, (values.keyFile as string | undefined) ?? output.keyPath);
  const operations = data?.operations as Operation[] | undefined;
  const started = operations?.[0];
  if (spec.follow && values.follow === true && started) {
    // The command's output as it comes, from its own stream; -o json prints the stream's events.
    const { place, param, operationId } = spec.follow;
    return followStream(context, client, {
      operationId: operationId as StreamOperationId,
      path: { [param]: started.id },
      query: {},
      lastEventId: undefined,
      output,
      commandOutput: true,
      resume: `svc ${place.group} ${place.name} ${started.id}`,
    });
  }
  let execution = data?.execution as Execution | undefined;
  if (spec.longRunning && values.wait === true && operations && operations.length > 0) {
    const final = await waitForSuccess(context, client, operations, Number(values.timeout)).catch(
      async (error: unknown) => {
        await advise(error, client, sent);
        throw error;
      },
    );
    data = { ...data, operations: final };
    // A command run as an operation (`POST …/run`): its output is the operation's result.
    execution ??= final[0]?.result?.execution as Execution | undefined;
    // The answer of a 202 is the resource as it was when the work began: show it as it is now.
    const resource = Object.entries(data).find(
      ([key, value]) => key !== 'operations' && value !== null && typeof value === 'object',
    )?.[1] as { id?: string } | undefined;
    // An action's path names its resource already; a create's needs the new id.
    if (spec.refetch && (!spec.refetch.param || resource?.id)) {
      const again = spec.refetch.param ? { ...path, [spec.refetch.param]: resource?.id } : path;
      const fresh = await call('GET', spec.refetch.path, { params: { path: again } });
      data = { ...fresh, operations: final };
    }
  }
  if (spec.runsCommand && execution && output.format === 'table' && output.query === undefined)
    return printExecution(context, execution, spec.rest ? (body?.[spec.rest.name] as string[]) : []);
  await printResult(context, command, data, output);
}

/**
 * Writes the one-time key file of a create response (mode 0600, never over an existing file) and
 * returns the answer without the private key, so it reaches stdout only with `--key-file -`.
 */
async function saveKeyFile(
  context: Context,
  data: Record<string, unknown>,
  output: string | undefined,
): Promise<Record<string, unknown>> {
  const entry = Object.entries(data).find(
    ([, value]) => value && typeof value === 'object' && 'key_file' in value,
  );
  if (!entry) return data;
  const [noun, resource] = entry as [string, Record<string, unknown>];
  const { key_file: keyFile, ...rest } = resource;
  const text = `${JSON.stringify(keyFile, null, 2)}\n`;
  if (output === '-') {
    context.io.stdout.write(text);
    return { ...data, [noun]: rest };
  }
  const path = output ?? `svc-key-${String(resource.id)}.json`;
  const handle = await open(path, 'wx', 0o600).catch((error: NodeJS.ErrnoException) => {
    throw new CliError(
      'error',
      'key_file_not_written',
      `Cannot write the key file ${path}: ${error.code === 'EEXIST' ? 'it exists already' : error.message}. The key was created; delete it and create another.`,
    );
  });
  try {
    await handle.writeFile(text);
  } finally {
    await handle.close();
  }
  context.io.stderr.write(
    `Key file written to ${path} (mode 0600). Use it with: SVC_KEY_FILE=${path} svc token\n`,
  );
  return { ...data, [noun]: rest };
}
