import { schema as validate } from '@stoplight/spectral-functions';
import { isObject, isStringSchema, operations, typesOf } from '../lib/openapi.js';
import { EVENT_STREAM, STREAM_ENDED } from '../lib/streams.js';
import { STREAM_VERB } from '../lib/verbs.js';

/** The event names a `oneOf` branch gives its `event`: its `const`, or its `enum`. */
function namesOf(event) {
  if (!isObject(event)) return [];
  if (typeof event.const === 'string') return [event.const];
  return Array.isArray(event.enum) ? event.enum.filter((name) => typeof name === 'string') : [];
}

/**
 * svc-event-stream: a Server-Sent Events response follows the streams design: it is the 200 of a GET
 * whose operationId starts with `stream` (rules/lib/verbs.js); its schema is `type: array` of an item
 * schema in `components` with the SSE fields `event` (a string enum), `id` (a string) and `data` (a
 * string of `contentMediaType: application/json`); each `oneOf` branch of the item requires `event` and
 * `data`, names its events (`const` or `enum`) and the components schema of their data
 * (`data.contentSchema`); every name of the enum is named by exactly one branch and no branch names
 * another; the enum names `stream.ended`; every example event has a known name, an `id` matching the
 * item's `id` pattern and `data` that is JSON valid against its branch's schema.
 */
export default function eventStream(doc, _options, context) {
  const results = [];
  const names = new Map(
    Object.entries(isObject(doc?.components?.schemas) ? doc.components.schemas : {}).map(([n, s]) => [s, n]),
  );
  for (const op of operations(doc)) {
    const { method, operation } = op;
    const label = `${method.toUpperCase()} ${op.path}`;
    for (const [status, response] of Object.entries(operation.responses ?? {})) {
      const media = isObject(response?.content) ? response.content[EVENT_STREAM] : undefined;
      if (media === undefined) continue;
      const at = [...op.at, 'responses', status, 'content', EVENT_STREAM];
      const say = (path, message) => results.push({ message: `${label}: ${message}`, path });
      if (method !== 'get' || status !== '200') {
        say(
          at,
          `${EVENT_STREAM} is the 200 of a GET (a stream operation), not of ${method.toUpperCase()} ${status}.`,
        );
        continue;
      }
      const id = String(operation.operationId ?? '');
      if (!new RegExp(`^${STREAM_VERB}[A-Z]`).test(id))
        say(
          [...op.at, 'operationId'],
          `a stream operation's operationId starts with \`${STREAM_VERB}\`, not \`${id}\`.`,
        );
      const schema = media?.schema;
      const item = schema?.items;
      if (!isObject(schema) || schema.type !== 'array' || !isObject(item) || !names.has(item)) {
        say(
          [...at, 'schema'],
          'the schema is `type: array` (the whole stream) whose `items` is the item schema, a `$ref` to a components schema (OpenAPI 3.2: the `itemSchema`).',
        );
        continue;
      }
      const itemAt = [...at, 'schema', 'items'];
      const stream = itemProblems(item, itemAt, names, say);
      if (stream !== undefined) exampleProblems(media, at, stream, say, context);
    }
  }
  return results;
}

/**
 * The item schema's fields and branches; returns what the examples are checked against (the enum, the
 * `id` pattern, each name's data schema), or undefined when the item is too broken to check them.
 */
function itemProblems(item, at, names, say) {
  const properties = isObject(item.properties) ? item.properties : {};
  const { event, id, data } = properties;
  const enumNames = Array.isArray(event?.enum) ? event.enum : undefined;
  if (!isObject(event) || !typesOf(event).has('string') || enumNames === undefined)
    say([...at, 'properties', 'event'], 'the item schema has `event`, a string `enum` of the event names.');
  if (!isObject(id) || !isStringSchema(id))
    say(
      [...at, 'properties', 'id'],
      'the item schema has `id`, a string (the cursor `Last-Event-ID` takes).',
    );
  if (!isObject(data) || !isStringSchema(data) || data.contentMediaType !== 'application/json')
    say(
      [...at, 'properties', 'data'],
      'the item schema has `data`, a string with `contentMediaType: application/json` (one JSON object per event).',
    );
  const branches = Array.isArray(item.oneOf) ? item.oneOf : [];
  if (branches.length === 0) say(at, 'the item schema ties event names to their data in `oneOf` branches.');
  const dataOf = new Map();
  const namedBy = new Map();
  branches.forEach((branch, index) => {
    const bAt = [...at, 'oneOf', index];
    const required = Array.isArray(branch?.required) ? branch.required : [];
    if (!required.includes('event') || !required.includes('data'))
      say(bAt, `oneOf[${index}] requires \`event\` and \`data\`.`);
    const own = isObject(branch?.properties) ? branch.properties : {};
    const branchNames = namesOf(own.event);
    if (branchNames.length === 0)
      say(
        [...bAt, 'properties'],
        `oneOf[${index}] names its events: \`properties.event\` with \`const\` or \`enum\`.`,
      );
    const content = own.data?.contentSchema;
    if (!isObject(content) || !names.has(content))
      say(
        [...bAt, 'properties'],
        `oneOf[${index}] names the components schema of its events' data: \`properties.data.contentSchema.$ref\`.`,
      );
    for (const name of branchNames) {
      if (enumNames !== undefined && !enumNames.includes(name))
        say(
          [...bAt, 'properties', 'event'],
          `oneOf[${index}] names \`${name}\`, which the \`event\` enum does not list.`,
        );
      namedBy.set(name, [...(namedBy.get(name) ?? []), index]);
      if (isObject(content)) dataOf.set(name, content);
    }
  });
  for (const name of enumNames ?? []) {
    const by = namedBy.get(name) ?? [];
    if (by.length !== 1)
      say(
        [...at, 'properties', 'event'],
        by.length === 0
          ? `the event \`${name}\` is named by no \`oneOf\` branch: its data has no schema.`
          : `the event \`${name}\` is named by ${by.length} branches (oneOf[${by.join('], oneOf[')}]): one says what its data is.`,
      );
  }
  if (enumNames !== undefined && !enumNames.includes(STREAM_ENDED))
    say(
      [...at, 'properties', 'event'],
      `the stream names \`${STREAM_ENDED}\`, the last event when the server ends it (why, and whether to reconnect).`,
    );
  if (enumNames === undefined) return undefined;
  return { enumNames, idPattern: typeof id?.pattern === 'string' ? id.pattern : undefined, dataOf };
}

/** Every event of every example of the response: known name, `id` by the pattern, `data` valid JSON. */
function exampleProblems(media, at, { enumNames, idPattern, dataOf }, say, context) {
  const examples = Object.entries(isObject(media.examples) ? media.examples : {}).map(([name, example]) => [
    [...at, 'examples', name, 'value'],
    example?.value,
  ]);
  if (media.example !== undefined) examples.push([[...at, 'example'], media.example]);
  for (const [exAt, value] of examples) {
    if (!Array.isArray(value)) {
      say(exAt, 'an example of a stream is an array of events.');
      continue;
    }
    value.forEach((event, index) => {
      const eAt = [...exAt, index];
      if (!enumNames.includes(event?.event)) {
        say(
          [...eAt, 'event'],
          `example event ${index} is named \`${event?.event}\`, which the \`event\` enum does not list.`,
        );
        return;
      }
      if (
        typeof event.id !== 'string' ||
        (idPattern !== undefined && !new RegExp(idPattern, 'u').test(event.id))
      )
        say(
          [...eAt, 'id'],
          `example event ${index} has the id ${JSON.stringify(event.id)}, which does not match ${idPattern}.`,
        );
      let data;
      try {
        data = JSON.parse(event.data);
      } catch {
        say([...eAt, 'data'], `example event ${index} (\`${event.event}\`) has \`data\` that is not JSON.`);
        return;
      }
      const schema = dataOf.get(event.event);
      if (schema === undefined) return;
      const errors =
        validate(
          data,
          { schema, dialect: 'draft2020-12', allErrors: true },
          { ...context, path: [...eAt, 'data'] },
        ) ?? [];
      for (const error of errors)
        say(
          [...eAt, 'data'],
          `example event ${index} (\`${event.event}\`): its data does not match its schema: ${error.message}${error.path.length > eAt.length + 1 ? ` at ${error.path.slice(eAt.length + 1).join('.')}` : ''}.`,
        );
    });
  }
}
