import { effectiveParameters, isObject, jsonMedia, objectShape, operations } from '../lib/openapi.js';
import {
  CLI_PRESENTATIONS,
  MCP_HINTS,
  PERMISSIONS,
  POLICY_KEYS,
  TRANSACTIONS,
  WORKSPACE_PERMISSIONS,
} from '../lib/policy.js';
import { isStreamOperation } from '../lib/streams.js';

const EXTENSION = 'x-svc';
const list = (values) => Object.keys(values).join(', ');
const schemeNames = (requirements) =>
  new Set(
    (Array.isArray(requirements) ? requirements : []).flatMap((r) => (isObject(r) ? Object.keys(r) : [])),
  );

/** The properties of the JSON bodies of an operation's 2xx responses, and of the objects right inside them. */
function successFields(operation) {
  const top = new Set();
  const nested = new Set();
  for (const [status, response] of Object.entries(operation.responses ?? {})) {
    if (!status.startsWith('2')) continue;
    const shape = objectShape(jsonMedia(response)?.media?.schema);
    for (const [name, property] of Object.entries(shape?.properties ?? {})) {
      top.add(name);
      for (const inner of Object.keys(objectShape(property)?.properties ?? {})) nested.add(inner);
    }
  }
  return { top, nested };
}

/** The vocabulary: every key known, every value one of its allowed set. */
function vocabularyProblems(policy, at) {
  const problems = [];
  const say = (key, message) => problems.push({ message, path: key ? [...at, key] : at });
  for (const key of Object.keys(policy))
    if (!Object.hasOwn(POLICY_KEYS, key))
      say(key, `\`${EXTENSION}.${key}\` is unknown: the keys are ${list(POLICY_KEYS)}.`);
  if (!Object.hasOwn(PERMISSIONS, policy.permission))
    say(
      Object.hasOwn(policy, 'permission') ? 'permission' : undefined,
      `\`${EXTENSION}.permission\` says who may call the operation: one of ${list(PERMISSIONS)} (got ${JSON.stringify(policy.permission) ?? 'nothing'}).`,
    );
  if (
    Object.hasOwn(policy, 'action') &&
    !(typeof policy.action === 'string' && /^[a-z]+$/.test(policy.action))
  )
    say(
      'action',
      `\`${EXTENSION}.action\` is the custom action's verb: one lowercase word, such as \`start\`.`,
    );
  if (Object.hasOwn(policy, 'transaction') && !Object.hasOwn(TRANSACTIONS, policy.transaction))
    say('transaction', `\`${EXTENSION}.transaction\` is one of ${list(TRANSACTIONS)}.`);
  if (Object.hasOwn(policy, 'cli') && !Object.hasOwn(CLI_PRESENTATIONS, policy.cli))
    say('cli', `\`${EXTENSION}.cli\` is one of ${list(CLI_PRESENTATIONS)}.`);
  if (Object.hasOwn(policy, 'mcp')) {
    const mcp = policy.mcp;
    const keys = isObject(mcp) ? Object.keys(mcp).sort() : [];
    if (
      keys.join() !== Object.keys(MCP_HINTS).sort().join() ||
      !keys.every((key) => typeof mcp[key] === 'boolean')
    )
      say('mcp', `\`${EXTENSION}.mcp\` gives both hints as booleans: ${list(MCP_HINTS)}.`);
  }
  return problems;
}

/** Whether a path reaches below a computer, into what runs in it (`…/computers/{computer}/files`). */
function readsInsideComputer(path) {
  const segments = path.split('/');
  const at = segments.indexOf('{computer}');
  return at > 0 && segments.length > at + 1;
}

/**
 * svc-policy: every operation declares `x-svc` (rules/lib/policy.js), with known keys and allowed
 * values, consistent with the rest of the operation:
 *  - `permission`: `public` exactly when its security is `[]`; `credential` exactly when its security
 *    names a scheme the document's default does not; a path under `{workspace}` needs a role in that
 *    workspace (design §8); a GET needs at most `read`, except a stream operation (a GET answering
 *    `text/event-stream`, which may need more: a command's output needs `exec`) and a GET that reads
 *    inside a computer (a path below `{computer}`: its files), which may need `exec`.
 *  - `transaction` only on a mutation (it takes `Idempotency-Key`).
 *  - `cli: execution` takes a command (`argv` and `stdin` in its body) and answers its execution (an
 *    `execution` field, or `operations` when long-running); a 2xx body with an `execution` field says so.
 *  - `cli: key-file` exactly when a 2xx body holds a resource with a `key_file` (a one-time secret).
 *  - `mcp` hints on every custom action and every `send…` that is an MCP tool (called with an access
 *    token), and only there.
 * Where the action itself sits and how it is named is svc-custom-action's.
 */
export default function svcPolicy(doc) {
  const results = [];
  const defaults = schemeNames(doc?.security);
  for (const op of operations(doc)) {
    const { path, method, operation } = op;
    const at = [...op.at, EXTENSION];
    const name = `${method.toUpperCase()} ${path}`;
    const policy = operation[EXTENSION];
    if (!isObject(policy)) {
      results.push({
        message: `${name} declares no \`${EXTENSION}\`: at least who may call it, \`${EXTENSION}: {permission: …}\` (one of ${list(PERMISSIONS)}).`,
        path: op.at,
      });
      continue;
    }
    const vocabulary = vocabularyProblems(policy, at);
    results.push(...vocabulary);
    if (vocabulary.length > 0) continue;
    const say = (key, message) => results.push({ message: `${name}: ${message}`, path: [...at, key] });

    const { permission } = policy;
    const security = Array.isArray(operation.security) ? operation.security : doc?.security;
    const schemes = schemeNames(security);
    const anonymous = !Array.isArray(security) || security.length === 0;
    const otherScheme = [...schemes].some((scheme) => !defaults.has(scheme));
    if ((permission === 'public') !== anonymous)
      say(
        'permission',
        permission === 'public'
          ? '`public` is for an operation without security (`security: []`).'
          : `an operation without security is \`public\`, not \`${permission}\`.`,
      );
    else if ((permission === 'credential') !== (otherScheme && !anonymous))
      say(
        'permission',
        permission === 'credential'
          ? '`credential` is for an operation whose Bearer is the credential it exchanges (a security scheme other than the default).'
          : `its security names a scheme other than the default: its Bearer is a credential it exchanges, so the permission is \`credential\`, not \`${permission}\`.`,
      );
    else if (path.includes('{workspace}') && !WORKSPACE_PERMISSIONS.includes(permission))
      say(
        'permission',
        `it acts in the workspace \`{workspace}\`: its permission is a role there (${WORKSPACE_PERMISSIONS.join(', ')}; design §8), not \`${permission}\`.`,
      );
    else if (
      method === 'get' &&
      !isStreamOperation(method, operation) &&
      WORKSPACE_PERMISSIONS.includes(permission) &&
      permission !== 'read' &&
      !(permission === 'exec' && readsInsideComputer(path))
    )
      // A stream operation may need more: reading a command's output as it runs needs `exec`. So does
      // reading inside a running computer (its files): whoever reads any file there can read what a
      // command would print.
      say('permission', `a GET reads: it needs at most \`read\` (design §8), not \`${permission}\`.`);

    const mutation = effectiveParameters(op).some(
      ({ parameter }) =>
        parameter.in === 'header' && String(parameter.name).toLowerCase() === 'idempotency-key',
    );
    if (Object.hasOwn(policy, 'transaction') && !mutation)
      say(
        'transaction',
        '`transaction` is for a mutation (an operation that takes `Idempotency-Key`); nothing else runs in one.',
      );

    const body = objectShape(jsonMedia(operation.requestBody)?.media?.schema)?.properties ?? {};
    const { top, nested } = successFields(operation);
    const execution = policy.cli === 'execution';
    if (execution && !('argv' in body && 'stdin' in body))
      say('cli', '`cli: execution` runs a command: its request body takes `argv` and `stdin`.');
    else if (execution && !top.has('execution') && !top.has('operations'))
      say(
        'cli',
        '`cli: execution` answers the execution: an `execution` field, or `operations` when long-running.',
      );
    else if (!execution && top.has('execution'))
      say(
        'cli',
        'it answers an `execution`: declare `cli: execution`, so svc prints its output and exits with its code.',
      );
    const keyFile = nested.has('key_file');
    if ((policy.cli === 'key-file') !== keyFile)
      say(
        'cli',
        keyFile
          ? 'it answers a one-time `key_file`: declare `cli: key-file`, so svc writes it to a private file and never prints it.'
          : '`cli: key-file` is for an operation whose 2xx body holds a resource with a `key_file`.',
      );

    const tool = permission !== 'public' && permission !== 'credential';
    const action = Object.hasOwn(policy, 'action');
    // Bytes sent into a running program (`send…`, a terminal's input) do whatever the program makes of
    // them: like a custom action's, their hints are judged, not read off the POST.
    const sends = /^send[A-Z]/.test(String(operation.operationId ?? ''));
    const judged = action || sends;
    if (judged && tool && !Object.hasOwn(policy, 'mcp'))
      say(
        sends ? 'mcp' : 'action',
        `a ${sends ? 'send' : 'custom action'}'s MCP hints cannot follow from its method: judge them, \`mcp: {destructive: …, idempotent: …}\` (${list(MCP_HINTS)}).`,
      );
    else if (Object.hasOwn(policy, 'mcp') && !(judged && tool))
      say(
        'mcp',
        judged
          ? 'it is no MCP tool (it takes no access token): it has no MCP hints.'
          : "only a custom action or a send declares MCP hints: a standard method's follow from its HTTP method.",
      );
  }
  return results;
}
