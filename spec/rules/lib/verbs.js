// The verbs an operation of the v1 API may start with, read by both linters:
//
//   - Redocly (redocly-plugin.js, rule svc/operation-id-verb, on the sources): every operationId is
//     lowerCamelCase and starts with a standard verb, with the verb of the custom action it declares
//     (`x-svc.action`, rules/lib/policy.js), or, for a stream operation and only there, `stream`, or,
//     for a byte operation and only there, `upload` (bytes in) or `download` (bytes out).
//   - Spectral (functions/customAction.js, rule svc-custom-action, on the bundle): a declared custom
//     action is none of these; (functions/eventStream.js, rule svc-event-stream): a stream operation
//     starts with `stream`; (functions/byteBody.js, rule svc-byte-body): a byte operation starts with
//     `upload` or `download`.
//
// A new custom action (say `POST /workspaces/{workspace}/computers/{computer}/resize`) declares its verb
// in the spec, `x-svc: {action: resize, …}`, beside the operation; nothing here changes.

/** Standard methods: every resource is listed, read, created, updated and deleted with these. */
export const STANDARD_VERBS = Object.freeze(['list', 'get', 'create', 'update', 'delete']);

/**
 * The verb of a stream operation (a GET whose 200 answers `text/event-stream`, rules/lib/streams.js):
 * `streamWorkspaceEvents`. No other operation starts with it, and no custom action declares it.
 */
export const STREAM_VERB = 'stream';

/**
 * The verbs of byte operations (rules/lib/bytes.js): `upload` for a PUT whose request body is a file's
 * bytes (`uploadComputerFile`), `send` for a POST whose request body is bytes written to a running
 * program (`sendComputerTerminalInput`: keystrokes, appended, never stored as a file), `download` for a GET
 * whose 200 is bytes (`downloadComputerArchive`). Only such an operation starts with one, and no
 * custom action declares any.
 */
export const BYTE_VERBS = Object.freeze({ upload: 'upload', send: 'send', download: 'download' });
