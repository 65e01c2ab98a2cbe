// What to type next after the API refused a command: the refused values in the command line's words
// (flags, not body fields; a pattern or a type in words; `svc` commands, not routes), and the one
// obvious next step where there is one: the near name of a resource not found, `svc computers start`
// for a stopped computer, delete or another name for a name taken, the list of a field's values.
import type { SvcClient } from '@svc/client';
import { deref, loadDocument, operationParameters } from '@svc/contract';
import type { Command } from 'commander';
import { commandTable, type OperationCommand, type OptionSpec } from '../spec/commands.js';
import { commandLine, commandsNamedIn, inCommandWords, shellWord } from '../spec/routes.js';
import { nearest, placeIn, problemOf } from '../spec/words.js';
import { COMPUTER_WAIT_PATH } from './wait.js';

/** The request a command sent, and how it was typed. */
export interface SentRequest {
  spec: OperationCommand;
  /** The command that ran: its arguments, and (through its root) the words typed. */
  command: Command;
  path: Record<string, string>;
  query: Record<string, unknown>;
  header: Record<string, string>;
  body: Record<string, unknown> | undefined;
}

interface Violation {
  field: string;
  description: string;
}

/** An API refusal as `@svc/client` throws it (by shape: the client is loaded lazily). */
interface Refusal {
  status?: number;
  code?: string;
  message?: string;
  details?: Record<string, unknown>;
  /** Lines `describeError` prints after the code and the request id: what to type next. */
  hints?: string[];
}

/**
 * Adds to an error of the API what the user types next: rewords its field violations (a flag's name,
 * the schema in words, `svc` commands for routes) and sets `hints`. Never throws; a hint that needs a
 * request (the names near a name not found) makes one, and gives up quietly if it fails.
 *
 * @example
 * try { await call(); } catch (error) { await advise(error, client, sent); throw error; }
 */
export async function advise(error: unknown, client: SvcClient, sent: SentRequest): Promise<void> {
  if (!error || typeof error !== 'object') return;
  const refusal = error as Refusal;
  try {
    const hints: string[] = [];
    const known = knownValues(sent);
    if (typeof refusal.message === 'string')
      refusal.message = inCommandWords(refusal.message, commandTable(), known);
    const violations = refusal.details?.field_violations as Violation[] | undefined;
    if (Array.isArray(violations) && refusal.details)
      refusal.details.field_violations = violations.map((v) => reword(v, sent, known));
    if (refusal.status === 404 && refusal.code === 'not_found' && !refusal.details?.path)
      hints.push(...(await nearNames(refusal, client, sent, known)));
    if (refusal.code === 'invalid_state') hints.push(...stateHints(refusal, sent, known));
    if (refusal.code === 'already_exists') hints.push(...takenHints(sent, known));
    if (refusal.code === 'unavailable') hints.push(...valueLists(refusal.message ?? '', sent));
    if (hints.length > 0) refusal.hints = [...(refusal.hints ?? []), ...hints];
  } catch {
    // Advice is a courtesy: the error itself is printed as it came.
  }
}

/** The values the command line gave the operation's path parameters: what a next command reuses. */
function knownValues(sent: SentRequest): Record<string, string> {
  return Object.fromEntries(Object.entries(sent.path).filter(([, value]) => typeof value === 'string'));
}

const document = () => loadDocument();

/** `lifetime.idle_timeout_seconds` → `['lifetime', 'idle_timeout_seconds']`; `argv[2]` → `['argv', 2]`. */
function keysOf(field: string): (string | number)[] {
  return [...field.matchAll(/([^.[\]]+)|\[(\d+)\]/g)].map(([, key, index]) =>
    index !== undefined ? Number(index) : (key as string),
  );
}

/**
 * A field violation as the command line names it: `--name`, `--lifetime idle_timeout_seconds`, `<workspace>`,
 * with what is wrong in words when the value sent can be judged here (else the server's words, routes
 * turned into commands).
 */
function reword(violation: Violation, sent: SentRequest, known: Record<string, string>): Violation {
  const { spec } = sent;
  const [where, ...rest] = keysOf(violation.field);
  const said = inCommandWords(violation.description, commandTable(), known);
  let option: OptionSpec | undefined;
  let label: string | undefined;
  let schema: unknown;
  let value: unknown;
  let inner: (string | number)[] = [];
  if (where === 'query' || where === 'header') {
    const name = String(rest[0] ?? '');
    option = spec.options.find((o) => o.in === where && o.name.toLowerCase() === name.toLowerCase());
    value = where === 'query' ? sent.query[name] : sent.header[option?.name ?? name];
  } else if (where === 'path') {
    const name = String(rest[0] ?? '');
    label = `<${name.replace(/_/g, '-')}>`;
    schema = operationParameters(document(), spec.operation).find(
      (p) => p.in === 'path' && p.name === name,
    )?.schema;
    value = sent.path[name];
  } else if (typeof where === 'string') {
    option = spec.options.find((o) => o.in === 'body' && o.name === where);
    if (spec.rest?.name === where) {
      label = `<${where.replace(/_/g, '-')}>`;
      return { field: rest.length > 0 ? `${label} ${placeIn(rest)}` : label, description: said };
    }
    value = sent.body?.[where];
    inner = rest;
  }
  if (option) {
    label = `--${option.flag}`;
    schema = option.schema;
  }
  if (!label) return { field: violation.field, description: said };
  // A value svc did not send itself (an Idempotency-Key the client made) is left to the server's words.
  const problem =
    schema === undefined || value === undefined
      ? undefined
      : problemOf(document(), schema, value, option?.name);
  if (problem)
    return {
      field: problem.at.length > 0 ? `${label} ${placeIn(problem.at)}` : label,
      description: problem.says,
    };
  return { field: inner.length > 0 ? `${label} ${placeIn(inner)}` : label, description: said };
}

/**
 * The words typed, from the root command's raw arguments, with `from` replaced by `to`: a whole word,
 * or a part of one between `/` and `:` (`dev/box:/home` of `svc computers cp`).
 */
function typedAgain(command: Command, from: string, to: string): string | undefined {
  let root = command;
  while (root.parent) root = root.parent;
  const words = [...(root as unknown as { rawArgs: string[] }).rawArgs];
  const at = words.findIndex((word) => word.split(/[/:]/).includes(from));
  if (at < 0) return undefined;
  const parts = (words[at] as string).split(/([/:])/);
  parts[parts.indexOf(from)] = to;
  words[at] = parts.join('');
  return ['svc', ...words.map(shellWord)].join(' ');
}

/**
 * After a 404 of a named resource: the caller's resources of that kind listed (one request), and the
 * name nearest to the one typed, if any is near, with the command typed again with it.
 */
async function nearNames(
  refusal: Refusal,
  client: SvcClient,
  sent: SentRequest,
  known: Record<string, string>,
): Promise<string[]> {
  const { spec } = sent;
  const message = refusal.message ?? '';
  const literal = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  // The resource not found is the one whose value the message names (the last, when several do).
  const missing = spec.positionals
    .filter(
      (p) =>
        sent.path[p.name] &&
        new RegExp(`(^|\\W)${literal(sent.path[p.name] as string)}(\\W|$)`).test(message),
    )
    .at(-1);
  if (!missing) return [];
  const value = sent.path[missing.name] as string;
  const itemPath = spec.operation.path.slice(
    0,
    spec.operation.path.indexOf(`{${missing.name}}`) + missing.name.length + 2,
  );
  const listPath = itemPath.slice(0, -(missing.name.length + 3));
  const list = commandTable().find(
    (c) => c.operation.method === 'get' && c.operation.path === listPath && !c.stream,
  );
  if (!list) return [];
  const before = Object.fromEntries(list.positionals.map((p) => [p.name, known[p.name] as string]));
  const listing = commandLine(list, before);
  const kind = listPath.split('/').at(-1)?.replace(/-/g, ' ') ?? 'resources';
  const hints = [`the ${kind} you can see: ${listing}`];
  const data = await (
    client as unknown as {
      GET(path: string, init: unknown): Promise<{ data?: Record<string, unknown> }>;
    }
  )
    .GET(listPath, { params: { path: before } })
    .then((answer) => answer.data)
    .catch(() => undefined);
  const items = Object.values(data ?? {}).find(Array.isArray) as { name?: string; id?: string }[] | undefined;
  if (!items) return hints;
  const names = items.map((item) => item.name).filter((name): name is string => typeof name === 'string');
  if (names.includes(value) || items.some((item) => item.id === value)) return hints;
  const near = nearest(value, names);
  if (!near) return hints;
  const again = typedAgain(sent.command, value, near);
  return [`did you mean "${near}"?${again ? ` ${again}` : ''}`, ...hints];
}

/**
 * After `invalid_state`: a stopped computer is started first; one between states (`starting`,
 * `stopping`…) is waited for, until a state the action is allowed from.
 */
function stateHints(refusal: Refusal, sent: SentRequest, known: Record<string, string>): string[] {
  const { spec } = sent;
  const current = refusal.details?.current_state;
  const allowed = refusal.details?.allowed_from;
  if (typeof current !== 'string' || !Array.isArray(allowed)) return [];
  const same = (c: OperationCommand) =>
    c.group === spec.group &&
    c.positionals.map((p) => p.name).join() === spec.positionals.map((p) => p.name).join();
  if (current === 'stopped' && allowed.includes('running') && spec.name !== 'stop') {
    const start = commandTable().find((c) => same(c) && c.name === 'start');
    if (start) return [`start it first: ${commandLine(start, known)}`];
  }
  // A state between two others ends with its operation (`starting`, `stopping`; `running` is not one):
  // wait until the computer rests, in any of the spec's states that are not between two, then retry.
  const between = (state: string) => state.endsWith('ing') && state !== 'running';
  if (between(current) && spec.operation.path.startsWith(COMPUTER_WAIT_PATH)) {
    const get = commandTable().find(
      (c) => c.operation.method === 'get' && c.operation.path === COMPUTER_WAIT_PATH,
    );
    const states = (deref(document(), { $ref: '#/components/schemas/ComputerState' }).enum ?? []) as string[];
    const resting = states.filter((state) => !between(state));
    if (get && resting.length > 0)
      return [
        `it is ${current}: wait until it rests (svc ${get.group} wait ${get.positionals.map((p) => shellWord(known[p.name] ?? `<${p.name}>`)).join(' ')} --for ${resting.join(',')}), then run this again`,
      ];
  }
  return [];
}

/** After `already_exists` on a create: delete the one that has the name, or choose another name. */
function takenHints(sent: SentRequest, known: Record<string, string>): string[] {
  const { spec, body } = sent;
  const name = body?.name;
  const flag = spec.options.find((o) => o.in === 'body' && o.name === 'name');
  if (spec.operation.method !== 'post' || typeof name !== 'string' || !flag) return [];
  const names = spec.positionals.map((p) => p.name);
  const remove = commandTable().find(
    (c) =>
      c.group === spec.group &&
      c.operation.method === 'delete' &&
      c.positionals.length === names.length + 1 &&
      c.positionals.slice(0, -1).every((p, i) => p.name === names[i]),
  );
  const last = remove?.positionals.at(-1)?.name;
  if (!remove || !last) return [`choose another --${flag.flag}`];
  return [
    `delete the one named ${name} (${commandLine(remove, { ...known, [last]: name })}) or choose another --${flag.flag}`,
  ];
}

/**
 * For a refusal that names a field given (the image of a create that found it unavailable): the command
 * that lists that field's values, when its description names one (`An image name from GET /images`).
 *
 * @example
 * valueLists('the image "x" is not available on this host yet', sent); // ['the values of --image: svc images list']
 */
export function valueLists(message: string, sent: SentRequest): string[] {
  const hints: string[] = [];
  for (const option of sent.spec.options) {
    if (option.in !== 'body' || sent.body?.[option.name] === undefined) continue;
    if (!new RegExp(`\\b${option.name.replace(/_/g, '[ _]')}\\b`, 'i').test(message)) continue;
    const described = deref(document(), option.schema).description;
    const [list] = commandsNamedIn(typeof described === 'string' ? described : '', commandTable()).filter(
      (c) => c.operation.method === 'get' && c.positionals.length === 0,
    );
    if (list) hints.push(`the values of --${option.flag}: ${commandLine(list)}`);
  }
  return hints;
}
