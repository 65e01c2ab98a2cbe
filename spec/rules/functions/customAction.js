import { byteMediaTypeOf } from '../lib/bytes.js';
import { isObject, isPluralNoun, operations } from '../lib/openapi.js';
import { isStreamOperation } from '../lib/streams.js';
import { BYTE_VERBS, STANDARD_VERBS, STREAM_VERB } from '../lib/verbs.js';

const isTemplate = (segment) => /^\{[^}]+\}$/.test(segment);

/**
 * The action segment of a path: a singular literal right after a path parameter (`…/{computer}/start`).
 * A stream operation's has none: its last segment names what it streams (`…/{operation}/output`); nor
 * has a byte operation's (`…/{terminal}/input` names where the bytes go), nor a GET's, which reads a
 * singleton sub-resource (`GET …/{terminal}/screen`, AIP-156) or answers one (a download's,
 * `…/{computer}/screen`), never acts.
 */
function actionSegment(path, method, operation) {
  if (isStreamOperation(method, operation) || method === 'get') return undefined;
  if (byteMediaTypeOf(operation?.requestBody) !== undefined) return undefined;
  const segments = path.split('/').filter(Boolean);
  if (segments.length < 2) return undefined;
  const last = segments[segments.length - 1];
  if (isTemplate(last) || !isTemplate(segments[segments.length - 2]) || isPluralNoun(last)) return undefined;
  return last;
}

/**
 * svc-custom-action: what a resource does beyond the standard methods is a custom action, declared
 * with its verb as `x-svc.action` (rules/lib/policy.js): a POST, whose operationId starts with the
 * verb, on an action segment equal to the verb right after the resource
 * (`POST /workspaces/{workspace}/computers/{computer}/start`: `action: start`, `startComputer`). A
 * singular literal after a path parameter is such a segment, so an operation there that declares no
 * action (or another verb) is refused too; a stream operation's or a download's last segment is no
 * such segment (it names what is streamed or answered). A verb is no standard one, nor the stream verb, nor a byte verb (rules/lib/verbs.js). An action
 * without such a segment is a method of a collection or of the service (`POST /auth/token`:
 * `action: exchange`).
 */
export default function customAction(doc) {
  const results = [];
  for (const { path, method, operation, at } of operations(doc)) {
    const policy = isObject(operation['x-svc']) ? operation['x-svc'] : {};
    const verb = typeof policy.action === 'string' ? policy.action : undefined;
    const segment = actionSegment(path, method, operation);
    if (verb === undefined && segment === undefined) continue;
    const problems = [];
    if (verb === undefined)
      problems.push(`\`${segment}\` is an action segment: declare its verb, \`x-svc.action: ${segment}\``);
    else if (segment !== undefined && segment !== verb)
      problems.push(`its path ends in \`${segment}\` but it declares \`x-svc.action: ${verb}\``);
    if (verb !== undefined && STANDARD_VERBS.includes(verb))
      problems.push(`\`${verb}\` is a standard method, not a custom action`);
    if (verb === STREAM_VERB)
      problems.push(
        `\`${verb}\` is the verb of stream operations (a GET answering text/event-stream), not a custom action`,
      );
    if (verb !== undefined && Object.values(BYTE_VERBS).includes(verb))
      problems.push(`\`${verb}\` is the verb of byte operations (bytes in or out), not a custom action`);
    if (method !== 'post') problems.push(`it must be a POST, not ${method.toUpperCase()}`);
    const expected = verb ?? segment;
    const id = typeof operation.operationId === 'string' ? operation.operationId : '';
    if (!new RegExp(`^${expected}[A-Z]`).test(id))
      problems.push(`its operationId \`${id}\` must start with the verb \`${expected}\``);
    if (problems.length > 0) {
      results.push({
        message: `${method.toUpperCase()} ${path} is a custom action: ${problems.join('; ')}.`,
        path: at,
      });
    }
  }
  return results;
}
