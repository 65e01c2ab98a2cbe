import { loadDocument } from '@svc/contract';
import { Command, CommanderError, Option } from 'commander';
import packageJson from '../package.json' with { type: 'json' };
import { AUTH_GROUP, addAuthCommands } from './commands/auth.js';
import { addCompletionCommands, COMPLETE_COMMAND } from './commands/completion.js';
import { addConfigCommands } from './commands/config.js';
import { addCopyCommand, FILES_PATH } from './commands/cp.js';
import { addListenCommand } from './commands/listen.js';
import { addMcpCommand } from './commands/mcp.js';
import { addOperationCommand } from './commands/operation.js';
import { addScreenCommands, INPUT_PATH, SCREEN_PATH } from './commands/screen.js';
import { addSessionCommands } from './commands/session.js';
import { addShellCommand, TERMINALS_PATH } from './commands/shell.js';
import { addComputerWaitCommand, addWaitCommand, COMPUTER_WAIT_PATH, WAIT_PATH } from './commands/wait.js';
import { type Context, createContext } from './credentials.js';
import { exitCodeFor, exitCodesHelp, RemoteExit } from './exit-codes.js';
import type { CliIo } from './io.js';
import { FORMATS } from './output/print.js';
import { GROUP_ALIASES, operationCommands, type placeOf } from './spec/commands.js';

/**
 * `-o, --output <format>`. Its choices are listed for help and completion but not enforced by commander:
 * commands that write a key file also take a path there (as before formats); the rest reject others.
 */
function outputFormatOption(): Option {
  const option = new Option('-o, --output <format>', 'output format (default: table)');
  option.argChoices = [...FORMATS];
  return option;
}

/** Sends commander's own output (help, usage errors) to the run's streams, and never exits the process. */
function route(command: Command, io: CliIo): void {
  command.exitOverride().configureOutput({
    writeOut: (text) => io.stdout.write(text),
    writeErr: (text) => io.stderr.write(text),
  });
  for (const sub of command.commands) route(sub, io);
}

/** The first word of `argv` that is not an option or a global option's value: the command it runs. */
function commandWord(program: Command, argv: readonly string[]): string | undefined {
  for (let i = 0; i < argv.length; i++) {
    const word = argv[i] as string;
    if (word === '--') return argv[i + 1];
    if (!word.startsWith('-')) return word;
    const option = program.options.find((o) => o.long === word || o.short === word);
    if (option && (option.required || option.optional)) i++; // skip its value
  }
  return undefined;
}

/** The version of `svc`: this package's own, read from its package.json (esbuild inlines it into the bundle). */
export const CLI_VERSION: string = packageJson.version;

const ENVIRONMENT_HELP = `
Environment:
  SVC_BASE_URL      base address (…/v1); --base-url overrides it
  SVC_KEY_FILE      a service account's key file: commands use its tokens, \`svc token\` prints one
  SVC_ACCESS_TOKEN  an access token to use as is
  SVC_PROFILE       the profile to use; --profile overrides it
  SVC_CONFIG_DIR    where profiles and sessions are stored (default $XDG_CONFIG_HOME/svc or ~/.config/svc)
`;

/**
 * The whole `svc` command tree: the session, auth, config and completion commands, and one command per
 * operation of the bundled spec, named by noun ({@link placeOf}: `svc computers start <workspace>
 * <computer> --wait`, `svc sizes list`), with the names from before nouns as hidden aliases.
 *
 * @example
 * const program = buildProgram(io); // every command; run() passes argv to build only the groups it names
 * await program.parseAsync(['node', 'svc', 'workspaces', 'list']);
 */
export function buildProgram(io: CliIo, argv?: readonly string[]): Command {
  // With the command line known, only the groups it names get their commands (the others are listed
  // in help by name and description): building every operation's options is most of the tree's cost.
  const wanted = (group: string) =>
    !argv ||
    argv.includes(group) ||
    argv.includes(GROUP_ALIASES[group] ?? group) ||
    argv.includes('help') ||
    argv.includes(COMPLETE_COMMAND);
  const program = new Command('svc')
    .description(
      'The Cloud Computer Service command line: sign in, get tokens, and call every operation of the v1 API.',
    )
    .version(CLI_VERSION)
    .option(
      '--base-url <url>',
      'base address of the API, ending in /v1 (default: SVC_BASE_URL, the key file, or the session)',
    )
    .option(
      '--profile <name>',
      'the profile to use (default: SVC_PROFILE, else `svc config use`, else default)',
    )
    .addOption(outputFormatOption())
    .option('--json', 'the same as -o json')
    .option('--columns <fields>', 'table columns, comma-separated (dotted paths reach into objects)')
    .option('--query <jmespath>', 'filter the answer with a JMESPath expression before printing')
    .showHelpAfterError()
    .addHelpText('after', `${ENVIRONMENT_HELP}${exitCodesHelp()}`);
  let context: Context | undefined;
  const contextOf = (): Context => {
    const { baseUrl, profile } = program.opts<{ baseUrl?: string; profile?: string }>();
    context ??= createContext(io, { baseUrl, profile });
    return context;
  };
  addSessionCommands(program, contextOf);
  addMcpCommand(program, contextOf);
  addListenCommand(program, contextOf);
  addConfigCommands(program, contextOf);
  addCompletionCommands(program, io);
  // `svc whoami`, `svc token`, `svc mcp`… need nothing of the spec: skip reading and deriving it.
  const named = argv && commandWord(program, argv);
  if (
    named &&
    named !== COMPLETE_COMMAND &&
    program.commands.some((c) => c.name() === named) &&
    !argv.includes('help')
  ) {
    route(program, io);
    return program;
  }
  const document = loadDocument();
  const tags = new Map(
    ((document.tags ?? []) as { name: string; description?: string }[]).map((t) => [
      t.name,
      t.description ?? '',
    ]),
  );
  const groups = new Map<string, Command>();
  const groupOf = (name: string, description: string, hidden = false): Command => {
    let group = groups.get(name);
    if (!group) {
      group = program.command(name, { hidden }).description(description);
      const alias = GROUP_ALIASES[name];
      if (alias) group.alias(alias);
      groups.set(name, group);
    }
    return group;
  };
  const commands = operationCommands(document);
  for (const spec of commands) {
    const group = groupOf(spec.group, tags.get(spec.operation.tag ?? '') ?? '');
    // `input` is hand-written (actions as words, and the same --actions JSON): commands/screen.ts.
    const handWritten = spec.operation.path === INPUT_PATH && spec.operation.method === 'post';
    if (wanted(spec.group) && !handWritten) addOperationCommand(group, spec, contextOf);
  }
  // Today's names before nouns (`svc catalog list-sizes`) still work, hidden from help.
  for (const spec of commands)
    if (spec.legacy && wanted(spec.legacy.group))
      addOperationCommand(
        groupOf(spec.legacy.group, tags.get(spec.legacy.group) ?? '', true),
        { ...spec, ...spec.legacy },
        contextOf,
        { hidden: true },
      );
  const operationsGroup = commands.find(
    (c) => c.operation.path === WAIT_PATH && c.operation.method === 'get',
  );
  if (operationsGroup && wanted(operationsGroup.group))
    addWaitCommand(groupOf(operationsGroup.group, ''), contextOf);
  const computersGroup = commands.find(
    (c) => c.operation.path === COMPUTER_WAIT_PATH && c.operation.method === 'get',
  );
  if (computersGroup && wanted(computersGroup.group))
    addComputerWaitCommand(groupOf(computersGroup.group, ''), contextOf);
  const filesGroup = commands.find((c) => c.operation.path === FILES_PATH);
  if (filesGroup && wanted(filesGroup.group)) addCopyCommand(groupOf(filesGroup.group, ''), contextOf);
  const screenGroup = commands.find((c) => c.operation.path === SCREEN_PATH);
  if (screenGroup && wanted(screenGroup.group)) addScreenCommands(groupOf(screenGroup.group, ''), contextOf);
  const terminalsGroup = commands.find((c) => c.operation.path === TERMINALS_PATH);
  if (terminalsGroup && wanted(terminalsGroup.group))
    addShellCommand(groupOf(terminalsGroup.group, ''), contextOf);
  addAuthCommands(groupOf(AUTH_GROUP, tags.get(AUTH_GROUP) ?? 'credentials'), contextOf);
  route(program, io);
  return program;
}

/**
 * Runs `svc` with `argv` (without the node and script entries) and returns the exit code; never
 * calls `process.exit`. Errors go to stderr with their code, message and request id.
 *
 * @example
 * const code = await run(['whoami'], { stdout: process.stdout, stderr: process.stderr, env: process.env, isTTY: false });
 */
export async function run(argv: readonly string[], io: CliIo): Promise<number> {
  const program = buildProgram(io, argv);
  try {
    await program.parseAsync([...argv], { from: 'user' });
    return 0;
  } catch (error) {
    if (!(error instanceof CommanderError) && !(error instanceof RemoteExit))
      io.stderr.write(describeError(error));
    return exitCodeFor(error);
  }
}

/**
 * The stderr text of a failure: `error: <message>` then the code and request id.
 *
 * @example
 * describeError(new ApiError('no such computer', { status: 404, code: 'not_found', requestId: 'r1' }));
 * // 'error: no such computer\n  code: not_found\n  request id: r1\n'
 */
export function describeError(error: unknown): string {
  const e = error as {
    message?: string;
    code?: string;
    requestId?: string;
    details?: unknown;
    status?: number;
  };
  let text = `error: ${e?.message ?? String(error)}\n`;
  if (typeof e?.code === 'string')
    text += `  code: ${e.code}${typeof e.status === 'number' && e.status > 0 ? ` (HTTP ${e.status})` : ''}\n`;
  if (typeof e?.requestId === 'string') text += `  request id: ${e.requestId}\n`;
  const violations = (
    e?.details as { field_violations?: { field: string; description: string }[] } | undefined
  )?.field_violations;
  for (const violation of violations ?? []) text += `  ${violation.field}: ${violation.description}\n`;
  // A create that found no room says which resource the hosts were short of (retry, or a smaller size).
  const { reason, resource } = (e?.details ?? {}) as { reason?: unknown; resource?: unknown };
  if (typeof reason === 'string')
    text += `  reason: ${reason}${typeof resource === 'string' ? ` (short of ${resource})` : ''}\n`;
  // What to type next (commands/advice.ts), when there is an obvious step.
  const { hints } = (error ?? {}) as { hints?: unknown };
  if (Array.isArray(hints)) for (const hint of hints) text += `  ${String(hint)}\n`;
  return text;
}
