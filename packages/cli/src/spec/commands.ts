import {
  type ByteBody,
  deref,
  type EventStream,
  isAnonymous,
  listOperations,
  loadDocument,
  type OpenApiDocument,
  type OperationInfo,
  type OperationKind,
  operationKind,
  operationParameters,
  operationPolicy,
  operationSecurity,
  requestBody,
} from '@svc/contract';
import { inCommandWords } from './routes.js';
import { firstLine, kindOf, type ValueKind } from './schema.js';

/** One command-line option of an operation, from a query or header parameter or a body field. */
export interface OptionSpec {
  /** The long flag without dashes: `display-name`, `include-deleted`. */
  flag: string;
  /** The API's name of the parameter or field: `display_name`. */
  name: string;
  in: 'query' | 'header' | 'body';
  kind: ValueKind;
  choices?: string[];
  required: boolean;
  description: string;
  /** Its schema as the document writes it (nested `$ref`s kept): what `--help` and refusals put in words. */
  schema: unknown;
  /** For a JSON value: the values the operation's request examples give it, first to last. */
  examples?: unknown[];
}

/** Where a command sits: `svc <group> <name>`. */
export interface CommandPlace {
  group: string;
  name: string;
}

/** The command of one operation: `svc <group> <name> <positionals…> [options]`. */
export interface OperationCommand {
  group: string;
  name: string;
  /** The name it had before commands were named by noun (`catalog list-sizes`), kept as a hidden alias; absent when the same. */
  legacy?: CommandPlace;
  operation: OperationInfo;
  /** Path parameters in path order. */
  positionals: { name: string; description: string }[];
  /**
   * A required body field that is a list of strings (`argv`), taken from the words after the
   * positionals (`svc computers exec ws box -- uname -a`) instead of an option.
   */
  rest?: { name: string; description: string };
  /**
   * It runs a command (the spec declares `x-svc.cli: execution`) and answers with its exit code and
   * output (the spec's `Execution`), or, when long-running, starts one whose operation carries them
   * (`result.execution`, read after `--wait`): the command prints them to stdout and stderr, exits with
   * the exit code, and `--stdin` sends its own standard input.
   */
  runsCommand: boolean;
  options: OptionSpec[];
  /** The operation requires a JSON body: an empty object is sent when no body option is given. */
  bodyRequired: boolean;
  /** The operation answers 202 with `operations[]`: the command takes `--wait`. */
  longRunning: boolean;
  /** `bearer` (an access token), `credential` (the Bearer is the thing exchanged: POST /auth/token) or `none`. */
  auth: 'bearer' | 'credential' | 'none';
  /**
   * A success response carries a key file, a one-time secret (the spec declares `x-svc.cli: key-file`):
   * the command takes `--key-file`.
   */
  writesKeyFile: boolean;
  /**
   * The operation answers Server-Sent Events (`text/event-stream`): the command follows the stream
   * (`@svc/client/streams`), one line or JSON object per event, until it ends or is interrupted.
   * `commandOutput`: its events carry a command's output (the spec's `OutputChunk`, ended by a
   * `CommandExit`), printed as the command wrote it, with its exit code as svc's.
   */
  stream?: { commandOutput: boolean };
  /**
   * A long-running operation that runs a command: the stream of that command's output (the stream
   * command whose events are a command's output, taking the started operation's id), which
   * `--follow` prints as it comes.
   */
  follow?: { operationId: string; param: string; place: CommandPlace };
  /**
   * For a long-running operation that leaves its resource in place, the GET that reads it again after
   * `--wait` (the path without the action, or the collection's item path; `param` is then filled with
   * the created resource's id). Absent for deletes.
   */
  refetch?: { path: string; param?: string };
  /**
   * The operation takes or answers bytes (a file as `application/octet-stream`, a directory as
   * `application/x-tar`), not JSON: the command sends svc's stdin or writes svc's stdout, through
   * `svc computers cp`'s transfers, which copy by name.
   */
  bytes?: { direction: 'upload' | 'download'; kind: 'file' | 'archive' };
}

/** Body fields of a command-running operation that `--stdin` fills from svc's standard input. */
export const STDIN_FIELDS: ReadonlySet<string> = new Set(['stdin', 'stdin_encoding']);

/** Flags the command line itself uses; a parameter that would collide is prefixed with where it goes (`--query-json`). */
export const RESERVED_FLAGS: ReadonlySet<string> = new Set([
  'base-url',
  'json',
  'help',
  'version',
  'wait',
  'timeout',
  'output',
  'columns',
  'query',
  'profile',
  'key-file',
  'credential',
]);

const kebab = (text: string) =>
  text
    .replace(/([a-z0-9])([A-Z])/g, '$1-$2')
    .replace(/_/g, '-')
    .toLowerCase();
const singular = (word: string) => word.replace(/s$/, '');

/**
 * The command name of an operation in its group: the kebab-case operationId without the group's
 * noun (`listServiceAccounts` in `service-accounts` → `list`, `getHealth` in `health` → `get`), or the
 * whole of it when the noun differs (`getMe` in `identity` → `get-me`).
 *
 * @example
 * verbOf('startComputer', 'computers'); // 'start'
 */
export function verbOf(operationId: string, group: string): string {
  const words = kebab(operationId).split('-');
  const noun = group.split('-').map(singular);
  const tail = words.slice(-noun.length).map(singular);
  if (words.length > noun.length && tail.join('-') === noun.join('-'))
    return words.slice(0, -noun.length).join('-');
  return words.join('-');
}

/**
 * Shorter names a person types for a group, kept as the group's alias. Only spelling: which groups and
 * commands exist is still derived from the spec.
 */
export const GROUP_ALIASES: Readonly<Record<string, string>> = { operations: 'ops' };

/**
 * Where a stream operation's command goes: a stream of the tag's own noun is named by what it streams
 * (`streamWorkspaceEvents` in `workspaces` → `svc workspaces events`, `streamOperationOutput` in
 * `operations` → `svc operations output`); any other by {@link placeOf}.
 *
 * @example
 * streamPlaceOf('streamWorkspaceEvents', 'workspaces'); // { group: 'workspaces', name: 'events' }
 */
export function streamPlaceOf(operationId: string, tag: string): CommandPlace {
  const [, ...object] = kebab(operationId).split('-');
  const noun = tag.split('-').map(singular);
  const head = object.slice(0, noun.length).map(singular);
  if (object.length > noun.length && head.join('-') === noun.join('-'))
    return { group: tag, name: object.slice(noun.length).join('-') };
  return placeOf(operationId, tag);
}

/**
 * Where an operation's command goes, by noun: the operationId is `<verb><Object>`; when the object is
 * the tag's noun (`startComputer` in `computers`) the command is `svc <tag> <verb>`; when it is another
 * plural noun (`listSizes` in `catalog`) that noun becomes the group (`svc sizes list`); otherwise the
 * command keeps its tag and its whole kebab-case id (`getMe` → `svc identity get-me`). An object that
 * is a part of the tag's noun stays in the tag, without the noun (`listComputerFiles` in `computers`
 * → `svc computers list-files`).
 *
 * @example
 * placeOf('listSizes', 'catalog'); // { group: 'sizes', name: 'list' }
 * placeOf('restartComputer', 'computers'); // { group: 'computers', name: 'restart' }
 */
export function placeOf(operationId: string, tag: string): CommandPlace {
  const name = verbOf(operationId, tag);
  if (!name.includes('-')) return { group: tag, name };
  const [verb, ...object] = kebab(operationId).split('-');
  // A part of the tag's noun (`listComputerFiles` in `computers`) stays in its group, named without the noun.
  const noun = tag.split('-').map(singular);
  const head = object.slice(0, noun.length).map(singular);
  if (object.length > noun.length && head.join('-') === noun.join('-'))
    return { group: tag, name: [verb, ...object.slice(noun.length)].join('-') };
  const plural = object.join('-');
  if (verb && object.length > 0 && plural.endsWith('s') && singular(plural) !== plural)
    return { group: plural, name: verb };
  return { group: tag, name };
}

let table: OperationCommand[] | undefined;

/**
 * The commands of the bundled spec, made once: what refusals and hints name (`svc sizes list`).
 *
 * @example
 * commandTable().find((c) => c.operation.operationId === 'listSizes'); // { group: 'sizes', name: 'list', … }
 */
export function commandTable(): OperationCommand[] {
  table ??= operationCommands(loadDocument());
  return table;
}

function optionFlag(name: string, where: OptionSpec['in']): string {
  const flag = kebab(name);
  return RESERVED_FLAGS.has(flag) ? `${where}-${flag}` : flag;
}

/**
 * What a command makes of its operation's kind (`operationKind` of @svc/contract): the one place the
 * CLI tells the kinds apart. A long-running one takes `--wait`, a stream is followed, bytes are svc's
 * stdin or stdout.
 */
function byKind(kind: OperationKind): {
  longRunning: boolean;
  events?: EventStream;
  bytes?: OperationCommand['bytes'];
} {
  const bytesKind = (body: ByteBody) => (body.mediaType === 'application/x-tar' ? 'archive' : 'file');
  switch (kind.kind) {
    case 'json':
      return { longRunning: false };
    case 'long-running':
      return { longRunning: true };
    case 'event-stream':
      return { longRunning: false, events: kind.stream };
    case 'bytes-in':
      return { longRunning: false, bytes: { direction: 'upload', kind: bytesKind(kind.body) } };
    case 'bytes-out':
      return { longRunning: false, bytes: { direction: 'download', kind: bytesKind(kind.body) } };
  }
}

/**
 * Every operation of the document as a command: group = the operation's first tag, name from the
 * operationId, path parameters as positionals, query and header parameters and top-level body
 * fields as options typed from their schemas (enums as choices, required ones mandatory). Nothing
 * here names an operation: a new one in `spec/` becomes a command without code changes.
 *
 * @example
 * import { loadDocument } from '@svc/contract';
 * const commands = operationCommands(loadDocument());
 * commands.find((c) => c.operation.operationId === 'listComputers'); // { group: 'computers', name: 'list', … }
 */
export function operationCommands(document: OpenApiDocument): OperationCommand[] {
  const commands = listOperations(document).map((info) => describeOperation(document, info));
  // Two operations with the same place keep their full names (the rule before nouns did this for catalog).
  const clashes = (place: (c: OperationCommand) => CommandPlace, rename: (c: OperationCommand) => void) => {
    const seen = new Map<string, OperationCommand[]>();
    for (const command of commands) {
      const { group, name } = place(command);
      seen.set(`${group} ${name}`, [...(seen.get(`${group} ${name}`) ?? []), command]);
    }
    for (const clash of seen.values()) if (clash.length > 1) for (const command of clash) rename(command);
  };
  const legacyOf = new Map<OperationCommand, CommandPlace>(
    commands.map((c) => [
      c,
      {
        group: c.operation.tag ?? 'other',
        name: verbOf(c.operation.operationId, c.operation.tag ?? 'other'),
      },
    ]),
  );
  clashes(
    (c) => legacyOf.get(c) as CommandPlace,
    (c) => {
      (legacyOf.get(c) as CommandPlace).name = kebab(c.operation.operationId);
    },
  );
  clashes(
    (c) => c,
    (c) => {
      c.group = c.operation.tag ?? 'other';
      c.name = kebab(c.operation.operationId);
    },
  );
  const output = commands.find((c) => c.stream?.commandOutput && c.positionals.length === 1);
  for (const command of commands)
    if (output && command.runsCommand && command.longRunning)
      command.follow = {
        operationId: output.operation.operationId,
        param: output.positionals[0]?.name as string,
        place: { group: output.group, name: output.name },
      };
  // The spec's descriptions name other operations by route (`A size name from \`GET /sizes\``): help
  // names their commands instead (`svc sizes list`).
  for (const command of commands) {
    for (const option of command.options) option.description = inCommandWords(option.description, commands);
    for (const positional of command.positionals)
      positional.description = inCommandWords(positional.description, commands);
  }
  const gets = commands.filter((c) => c.operation.method === 'get').map((c) => c.operation.path);
  for (const command of commands) {
    const refetch = refetchOf(command, gets);
    if (refetch) command.refetch = refetch;
    const legacy = legacyOf.get(command) as CommandPlace;
    if (legacy.group !== command.group || legacy.name !== command.name) command.legacy = legacy;
  }
  return commands;
}

/** The GET that reads a long-running operation's resource again: see {@link OperationCommand.refetch}. */
function refetchOf(command: OperationCommand, gets: readonly string[]): OperationCommand['refetch'] {
  const { method, path } = command.operation;
  // A command's operation leaves its computer as it was: after --wait, the command's output is shown.
  if (!command.longRunning || method === 'delete' || command.runsCommand) return undefined;
  if (method !== 'post' && gets.includes(path)) return { path }; // an update in place
  const item = gets.find(
    (get) => get.startsWith(`${path}/{`) && /^\/\{[^}/]+\}$/.test(get.slice(path.length)),
  );
  if (item) return { path: item, param: item.slice(path.length + 2, -1) };
  // An action on an item (`…/{computer}/start`), not a collection (`/workspaces/{workspace}/computers`).
  const withoutAction = path.replace(/(?<=\})\/[^/{}]+$/, '');
  if (withoutAction !== path && gets.includes(withoutAction)) return { path: withoutAction };
  return undefined;
}

/** The values the request examples of an operation give a body field, in the order written. */
function requestExamples(
  document: OpenApiDocument,
  body: ReturnType<typeof requestBody>,
  field: string,
): unknown[] {
  const examples = (body?.content['application/json']?.examples ?? {}) as Record<string, unknown>;
  return Object.values(examples)
    .map((example) => (deref(document, example).value as Record<string, unknown> | undefined)?.[field])
    .filter((value) => value !== undefined);
}

function describeOperation(document: OpenApiDocument, info: OperationInfo): OperationCommand {
  const group = info.tag ?? 'other';
  const parameters = operationParameters(document, info);
  const positionals =
    info.path
      .match(/\{[^}]+\}/g)
      ?.map((segment) => segment.slice(1, -1))
      .map((name) => ({
        name,
        description: firstLine(parameters.find((p) => p.name === name && p.in === 'path')?.description),
      })) ?? [];
  const options: OptionSpec[] = [];
  for (const parameter of parameters) {
    if (parameter.in !== 'query' && parameter.in !== 'header') continue;
    const name = parameter.name;
    const where = parameter.in;
    const schema = deref(document, parameter.schema ?? {});
    // A required Idempotency-Key is still optional here: @svc/client generates one.
    const required = parameter.required === true && where !== 'header';
    options.push({
      flag: optionFlag(name, where),
      name,
      in: where,
      ...kindOf(schema),
      required,
      description: firstLine(parameter.description ?? schema.description),
      schema: parameter.schema ?? {},
    });
  }
  const declaredBody = requestBody(document, info);
  const body = deref(document, declaredBody?.schema ?? {});
  const requiredFields = new Set((body.required as string[] | undefined) ?? []);
  const { longRunning, events, bytes } = byKind(operationKind(document, info));
  const { cli } = operationPolicy(document, info);
  const runsCommand = cli === 'execution';
  let rest: OperationCommand['rest'];
  for (const [name, raw] of Object.entries((body.properties ?? {}) as Record<string, unknown>)) {
    // A command's stdin comes from svc's own (`--stdin`, see runsCommand), not from an option's value.
    if (runsCommand && STDIN_FIELDS.has(name)) continue;
    const schema = deref(document, raw);
    const words = schema.type === 'array' && deref(document, schema.items).type === 'string';
    if (words && requiredFields.has(name) && !rest) {
      rest = { name, description: firstLine(schema.description) };
      continue;
    }
    const kind = kindOf(schema);
    options.push({
      flag: optionFlag(name, 'body'),
      name,
      in: 'body',
      ...kind,
      required: requiredFields.has(name),
      description: firstLine(schema.description),
      schema: raw,
      ...(kind.kind === 'json' ? { examples: requestExamples(document, declaredBody, name) } : {}),
    });
  }
  // The document's default scheme is the access token; an operation with another one exchanges its Bearer.
  const defaults = new Set(
    ((document.security ?? []) as Record<string, unknown>[]).flatMap((s) => Object.keys(s)),
  );
  const auth = isAnonymous(document, info)
    ? 'none'
    : operationSecurity(document, info).every((s) => Object.keys(s).every((k) => defaults.has(k)))
      ? 'bearer'
      : 'credential';
  const dataSchemas = new Set(events?.events.map((e) => e.dataSchema));
  return {
    ...(events ? streamPlaceOf(info.operationId, group) : placeOf(info.operationId, group)),
    ...(events
      ? { stream: { commandOutput: dataSchemas.has('OutputChunk') && dataSchemas.has('CommandExit') } }
      : {}),
    operation: info,
    positionals,
    ...(rest ? { rest } : {}),
    runsCommand,
    options,
    // A byte body is svc's stdin, never a JSON object.
    bodyRequired: declaredBody?.required === true && !bytes,
    ...(bytes ? { bytes } : {}),
    longRunning,
    auth,
    writesKeyFile: cli === 'key-file',
  };
}
