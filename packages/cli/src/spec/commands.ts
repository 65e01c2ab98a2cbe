import { listOperations, type OpenApiDocument, type OperationInfo } from '@svc/contract';
import { firstLine, kindOf, resolve, type SchemaObject, type ValueKind } from './schema.js';

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
}

/** The command of one operation: `svc <group> <name> <positionals…> [options]`. */
export interface OperationCommand {
  group: string;
  name: string;
  operation: OperationInfo;
  /** Path parameters in path order. */
  positionals: { name: string; description: string }[];
  options: OptionSpec[];
  /** The operation answers 202 with `operations[]`: the command takes `--wait`. */
  longRunning: boolean;
  /** `bearer` (an access token), `credential` (the Bearer is the thing exchanged: POST /auth/token) or `none`. */
  auth: 'bearer' | 'credential' | 'none';
  /** A success response carries a key file (a one-time secret): the command takes `--output`. */
  writesKeyFile: boolean;
}

/** Flags the command line itself uses; a parameter that would collide is prefixed with where it goes (`--query-json`). */
export const RESERVED_FLAGS: ReadonlySet<string> = new Set([
  'base-url',
  'json',
  'help',
  'version',
  'wait',
  'timeout',
  'output',
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

function optionFlag(name: string, where: OptionSpec['in']): string {
  const flag = kebab(name);
  return RESERVED_FLAGS.has(flag) ? `${where}-${flag}` : flag;
}

function successResponses(operation: SchemaObject): [string, SchemaObject][] {
  return Object.entries((operation.responses ?? {}) as Record<string, SchemaObject>).filter(([status]) =>
    status.startsWith('2'),
  );
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
  // Two operations of one group with the same verb (catalog: listSizes, listImages) keep their full names.
  const seen = new Map<string, OperationCommand[]>();
  for (const command of commands)
    seen.set(`${command.group} ${command.name}`, [
      ...(seen.get(`${command.group} ${command.name}`) ?? []),
      command,
    ]);
  for (const clash of seen.values())
    if (clash.length > 1) for (const command of clash) command.name = kebab(command.operation.operationId);
  return commands;
}

function describeOperation(document: OpenApiDocument, info: OperationInfo): OperationCommand {
  const group = info.tag ?? 'other';
  const parameters = ((info.operation.parameters ?? []) as unknown[]).map((p) => resolve(document, p));
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
    const name = String(parameter.name);
    const where = parameter.in as 'query' | 'header';
    const schema = resolve(document, parameter.schema);
    // A required Idempotency-Key is still optional here: @svc/client generates one.
    const required = parameter.required === true && where !== 'header';
    options.push({
      flag: optionFlag(name, where),
      name,
      in: where,
      ...kindOf(schema),
      required,
      description: firstLine(parameter.description ?? schema.description),
    });
  }
  const body = resolve(
    document,
    (
      (info.operation.requestBody as SchemaObject | undefined)?.content as
        | Record<string, SchemaObject>
        | undefined
    )?.['application/json']?.schema,
  );
  const requiredFields = new Set((body.required as string[] | undefined) ?? []);
  for (const [name, raw] of Object.entries((body.properties ?? {}) as Record<string, unknown>)) {
    const schema = resolve(document, raw);
    options.push({
      flag: optionFlag(name, 'body'),
      name,
      in: 'body',
      ...kindOf(schema),
      required: requiredFields.has(name),
      description: firstLine(schema.description),
    });
  }
  const security = (info.operation.security ?? document.security ?? []) as Record<string, unknown>[];
  // The document's default scheme is the access token; an operation with another one exchanges its Bearer.
  const defaults = new Set(
    ((document.security ?? []) as Record<string, unknown>[]).flatMap((s) => Object.keys(s)),
  );
  const auth =
    security.length === 0
      ? 'none'
      : security.every((s) => Object.keys(s).every((k) => defaults.has(k)))
        ? 'bearer'
        : 'credential';
  return {
    group,
    name: verbOf(info.operationId, group),
    operation: info,
    positionals,
    options,
    longRunning: successResponses(info.operation).some(([status]) => status === '202'),
    auth,
    writesKeyFile: successResponses(info.operation).some(
      ([, response]) =>
        JSON.stringify(response).includes('#/components/schemas/KeyWithSecret') ||
        JSON.stringify(response).includes('#/components/schemas/KeyFile'),
    ),
  };
}
