import { HTTP_METHODS, isObject } from '../lib/openapi.js';
import {
  EVENT_TYPE_SCHEMA,
  eventTypes,
  streamDataSchemas,
  WEBHOOK_HEADERS,
  WEBHOOK_MEDIA_TYPE,
  WEBHOOK_METHOD,
  WEBHOOK_RESPONSE,
  webhookOperationId,
} from '../lib/webhooks.js';

/**
 * svc-webhooks: the `webhooks` section follows the webhooks design (rules/lib/webhooks.js). Every
 * webhook is named by a workspace event type (a value of `WorkspaceEventType`) and every event type has
 * exactly one webhook; its Path Item has only a `post`, whose operationId is the camelCased event type
 * + `Webhook`, whose required body is `application/json` only, with the same components schema the
 * event stream's branch for that name gives its `data`; it declares the Standard Webhooks headers
 * (`webhook-id`, `webhook-timestamp`, `webhook-signature`) as required header parameters; it says
 * `security: []` (no Bearer token: the signature authenticates it); and it answers only `2XX`.
 */
export default function webhooks(doc) {
  const results = [];
  const section = doc?.webhooks;
  if (section === undefined) return results;
  const say = (path, message) => results.push({ message, path });
  if (!isObject(section))
    return [{ message: '`webhooks` is a map of event type to Path Item.', path: ['webhooks'] }];
  const types = eventTypes(doc);
  if (types === undefined) {
    say(
      ['webhooks'],
      `webhooks are named by the workspace event types: components.schemas.${EVENT_TYPE_SCHEMA} has their enum.`,
    );
    return results;
  }
  const schemaNames = new Map(
    Object.entries(isObject(doc.components?.schemas) ? doc.components.schemas : {}).map(([n, s]) => [s, n]),
  );
  const streamData = streamDataSchemas(doc);
  for (const type of types) {
    if (!(type in section))
      say(['webhooks'], `the event type \`${type}\` (${EVENT_TYPE_SCHEMA}) has no webhook.`);
  }
  for (const [name, item] of Object.entries(section)) {
    const at = ['webhooks', name];
    if (!types.includes(name)) {
      say(
        at,
        `\`${name}\` is no workspace event type (${EVENT_TYPE_SCHEMA}): a webhook is named by the event it delivers.`,
      );
      continue;
    }
    if (!isObject(item)) continue;
    for (const method of HTTP_METHODS) {
      if (method !== WEBHOOK_METHOD && isObject(item[method]))
        say(
          [...at, method],
          `a webhook is a \`${WEBHOOK_METHOD}\` (the service POSTs the event), not \`${method}\`.`,
        );
    }
    const operation = item[WEBHOOK_METHOD];
    if (!isObject(operation)) {
      say(at, `the webhook \`${name}\` has a \`${WEBHOOK_METHOD}\`.`);
      continue;
    }
    operationProblems(name, operation, [...at, WEBHOOK_METHOD], item, { schemaNames, streamData }, say);
  }
  return results;
}

/** One webhook's operation: its operationId, body, headers and responses. */
function operationProblems(name, operation, at, item, { schemaNames, streamData }, say) {
  const expected = webhookOperationId(name);
  if (operation.operationId !== expected)
    say(
      [...at, 'operationId'],
      `the webhook \`${name}\`'s operationId is \`${expected}\`, not \`${operation.operationId}\`.`,
    );
  const body = operation.requestBody;
  const types = isObject(body?.content) ? Object.keys(body.content) : [];
  if (!isObject(body) || body.required !== true || types.length !== 1 || types[0] !== WEBHOOK_MEDIA_TYPE) {
    say(
      [...at, 'requestBody'],
      `the webhook \`${name}\` has a required body of \`${WEBHOOK_MEDIA_TYPE}\` only (the event).`,
    );
  } else {
    const schema = body.content[WEBHOOK_MEDIA_TYPE]?.schema;
    const streamed = streamData.get(name);
    // At the media type, not its schema: a schema written as a `$ref` would be reported at the
    // components schema it names, which is not where the mistake is.
    const schemaAt = [...at, 'requestBody', 'content', WEBHOOK_MEDIA_TYPE];
    if (!isObject(schema) || !schemaNames.has(schema))
      say(schemaAt, `the webhook \`${name}\`'s body is a \`$ref\` to a components schema (the event's).`);
    else if (streamed === undefined)
      say(schemaAt, `no event stream names \`${name}\`: a webhook delivers an event the stream carries.`);
    else if (streamed !== schema)
      say(
        schemaAt,
        `the webhook \`${name}\`'s body is \`${schemaNames.get(schema)}\`, but the event stream's \`${name}\` carries \`${schemaNames.get(streamed) ?? '(inline)'}\`: a delivery is the same event.`,
      );
  }
  const parameters = [
    ...(Array.isArray(item.parameters) ? item.parameters : []),
    ...(Array.isArray(operation.parameters) ? operation.parameters : []),
  ].filter(isObject);
  for (const header of WEBHOOK_HEADERS) {
    const found = parameters.find((p) => p.in === 'header' && String(p.name).toLowerCase() === header);
    if (found === undefined || found.required !== true)
      say(
        [...at, 'parameters'],
        `the webhook \`${name}\` declares the Standard Webhooks header \`${header}\` (required: true).`,
      );
  }
  if (!Array.isArray(operation.security) || operation.security.length !== 0)
    say(
      [...at, ...(operation.security === undefined ? [] : ['security'])],
      `the webhook \`${name}\` says \`security: []\`: the service sends it, with no Bearer token (the document's \`security\` would say otherwise); its signature authenticates it.`,
    );
  const statuses = isObject(operation.responses) ? Object.keys(operation.responses) : [];
  if (statuses.length !== 1 || statuses[0] !== WEBHOOK_RESPONSE)
    say(
      [...at, 'responses'],
      `the webhook \`${name}\` answers \`${WEBHOOK_RESPONSE}\` only (any 2xx acknowledges; the receiver's errors are not ours to type), not ${statuses.join(', ') || 'nothing'}.`,
    );
}
