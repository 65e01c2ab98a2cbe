// Redocly CLI plugin of the v1 contract (loaded by ../redocly.yaml under `plugins:`): rules that need
// data shared with the Spectral ruleset, so that data lives in one place (lib/verbs.js, lib/streams.js,
// lib/bytes.js, lib/webhooks.js).
import { BYTE_MEDIA_TYPES, isByteMediaType, isDownloadOperation, isUploadOperation } from './lib/bytes.js';
import { EVENT_STREAM, isStreamOperation } from './lib/streams.js';
import { BYTE_VERBS, STANDARD_VERBS, STREAM_VERB } from './lib/verbs.js';
import { WEBHOOK_SUFFIX, webhookOperationId } from './lib/webhooks.js';

/** A node of the sources with its `$ref` followed (Redocly lints the sources, where `$ref`s stay). */
function resolver(ctx) {
  return (node) => (node && typeof node.$ref === 'string' ? ctx.resolve(node).node : node);
}

/**
 * svc/operation-id-verb: every operationId is lowerCamelCase and starts with a standard verb of
 * lib/verbs.js (listComputers, getMe), with the verb of the custom action the operation declares,
 * `x-svc.action` (startComputer, exchangeToken), or, for a stream operation (a GET whose 200 answers
 * `text/event-stream`) and only for one, with `stream` (streamWorkspaceEvents), for an operation whose
 * request body is bytes (lib/bytes.js) and only for one, with `upload` for a PUT (uploadComputerFile) or
 * `send` for a POST (sendComputerTerminalInput), and for a GET
 * whose 200 is bytes and only for one, with `download` (downloadComputerArchive). Clients, CLI commands
 * and MCP tools derive their names from it.
 */
function OperationIdVerb() {
  // The operations of `paths` and of `webhooks` are told apart by the section above them (Redocly's
  // nested visitors): a webhook is named by its event type, not by a verb (lib/webhooks.js).
  let webhook = '';
  return {
    WebhooksMap: {
      PathItem: {
        enter(_item, ctx) {
          webhook = String(ctx.key);
        },
        Operation(operation, ctx) {
          const id = operation.operationId;
          const expected = webhookOperationId(webhook);
          if (typeof id !== 'string' || id === expected) return;
          ctx.report({
            message: `operationId \`${id}\` of the webhook \`${webhook}\` must be its camelCased event type + \`${WEBHOOK_SUFFIX}\`: \`${expected}\` (rules/lib/webhooks.js).`,
            location: ctx.location.child('operationId'),
          });
        },
      },
    },
    Paths: {
      Operation(operation, ctx) {
        const id = operation.operationId;
        const method = String(ctx.key);
        const stream = isStreamOperation(method, operation, resolver(ctx));
        const upload = isUploadOperation(operation, resolver(ctx));
        const download = isDownloadOperation(method, operation, resolver(ctx));
        const action = operation['x-svc']?.action;
        const reserved = [STREAM_VERB, ...Object.values(BYTE_VERBS)];
        const verbs = stream
          ? [STREAM_VERB]
          : upload
            ? [method === 'post' ? BYTE_VERBS.send : BYTE_VERBS.upload]
            : download
              ? [BYTE_VERBS.download]
              : typeof action === 'string' && /^[a-z]+$/.test(action) && !reserved.includes(action)
                ? [...STANDARD_VERBS, action]
                : STANDARD_VERBS;
        if (typeof id !== 'string' || new RegExp(`^(${verbs.join('|')})[A-Z][A-Za-z0-9]*$`).test(id)) return;
        ctx.report({
          message: stream
            ? `operationId \`${id}\` of a stream operation (a GET answering ${EVENT_STREAM}) must be lowerCamelCase and start with \`${STREAM_VERB}\` (rules/lib/verbs.js).`
            : upload || download
              ? `operationId \`${id}\` of an operation ${upload ? 'taking' : 'answering'} bytes (${BYTE_MEDIA_TYPES.join(', ')}) must be lowerCamelCase and start with \`${upload ? BYTE_VERBS.upload : BYTE_VERBS.download}\` (rules/lib/verbs.js).`
              : `operationId \`${id}\` must be lowerCamelCase and start with a standard verb (${STANDARD_VERBS.join(', ')}; rules/lib/verbs.js) or the verb its custom action declares (\`x-svc.action\`).`,
          location: ctx.location.child('operationId'),
        });
      },
    },
  };
}

/**
 * svc/paths-kebab-case: Redocly's paths-kebab-case, for the paths only. The built-in visits every Path
 * Item, the `webhooks` section's too, whose keys are event types (`service_account.created`: the
 * `WorkspaceEventType` enum, snake_case words by design §2), not paths; svc-webhooks (Spectral) holds
 * those names to the enum instead. Same check as the built-in: every segment is a `{parameter}` or
 * lowercase letters, digits, `-` and `.`.
 */
function PathsKebabCase() {
  return {
    Paths: {
      PathItem(_item, { report, key }) {
        const segments = String(key)
          .slice(1)
          .split('/')
          .filter((s) => s !== '');
        if (segments.every((segment) => /^{.+}$/.test(segment) || /^[a-z0-9-.]+$/.test(segment))) return;
        report({ message: `\`${key}\` does not use kebab-case.`, location: { reportOnKey: true } });
      },
    },
  };
}

/**
 * svc/response-mime-type: responses are JSON (design §2), with two exceptions: the 200 of a GET may be
 * `text/event-stream`, which makes it a stream operation (svc-event-stream holds it to the SSE shape),
 * or a byte media type (lib/bytes.js), which makes it a download (svc-byte-body holds it to its shape).
 * Replaces Redocly's response-mime-type, which cannot allow a media type for some responses only.
 * Options: { allowedValues: string[] } (default `application/json`).
 */
function ResponseMimeType(options) {
  const allowed = options?.allowedValues ?? ['application/json'];
  const reported = new Set();
  return {
    Operation: {
      enter(operation, ctx) {
        const method = String(ctx.key);
        for (const [status, raw] of Object.entries(operation.responses ?? {})) {
          const { node: response, location } =
            raw && typeof raw.$ref === 'string'
              ? ctx.resolve(raw)
              : { node: raw, location: ctx.location.child(['responses', status]) };
          for (const type of Object.keys(response?.content ?? {})) {
            if (allowed.includes(type)) continue;
            if ((type === EVENT_STREAM || isByteMediaType(type)) && method === 'get' && status === '200')
              continue;
            const at = location.child(['content', type]).key();
            // A shared response is reached from every operation that uses it: report it once.
            const where = `${at.source.absoluteRef}#${at.pointer}`;
            if (reported.has(where)) continue;
            reported.add(where);
            ctx.report({
              message:
                type === EVENT_STREAM
                  ? `Mime type "${type}" is allowed only for the 200 of a GET (a stream operation), not ${method.toUpperCase()} ${status}.`
                  : isByteMediaType(type)
                    ? `Mime type "${type}" is bytes: allowed only for the 200 of a GET (a download), not ${method.toUpperCase()} ${status}.`
                    : `Mime type "${type}" is not allowed (${allowed.join(', ')}; ${EVENT_STREAM} for a stream operation's 200; ${BYTE_MEDIA_TYPES.join(', ')} for a download's 200).`,
              location: at,
            });
          }
        }
      },
    },
  };
}

/**
 * svc/request-mime-type: request bodies are JSON (design §2, and 415 unsupported_media_type otherwise),
 * with one exception: the request body of a PUT or a POST may be a byte media type (lib/bytes.js),
 * which makes it an upload or a send (svc-byte-body holds it to its shape: a limit, 413 and 415). Replaces Redocly's
 * request-mime-type, which cannot allow a media type for some request bodies only.
 * Options: { allowedValues: string[] } (default `application/json`).
 */
function RequestMimeType(options) {
  const allowed = options?.allowedValues ?? ['application/json'];
  const reported = new Set();
  return {
    Operation: {
      enter(operation, ctx) {
        const method = String(ctx.key);
        const raw = operation.requestBody;
        if (raw === undefined) return;
        const { node: body, location } =
          raw && typeof raw.$ref === 'string'
            ? ctx.resolve(raw)
            : { node: raw, location: ctx.location.child(['requestBody']) };
        for (const type of Object.keys(body?.content ?? {})) {
          if (allowed.includes(type)) continue;
          if (isByteMediaType(type) && (method === 'put' || method === 'post')) continue;
          const at = location.child(['content', type]).key();
          const where = `${at.source.absoluteRef}#${at.pointer}`;
          if (reported.has(where)) continue;
          reported.add(where);
          ctx.report({
            message: isByteMediaType(type)
              ? `Mime type "${type}" is bytes: allowed only for the request body of a PUT (an upload) or a POST (a send), not ${method.toUpperCase()}.`
              : `Mime type "${type}" is not allowed (${allowed.join(', ')}; ${BYTE_MEDIA_TYPES.join(', ')} for an upload's body).`,
            location: at,
          });
        }
      },
    },
  };
}

/** The plugin: its rules are named `svc/<rule>` in redocly.yaml. */
export default function svcPlugin() {
  return {
    id: 'svc',
    rules: {
      oas3: {
        'operation-id-verb': OperationIdVerb,
        'request-mime-type': RequestMimeType,
        'paths-kebab-case': PathsKebabCase,
        'response-mime-type': ResponseMimeType,
      },
    },
  };
}
