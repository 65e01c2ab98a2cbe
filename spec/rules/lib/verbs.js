// The verbs an operation of the v1 API may start with: the one list that both linters read.
//
//   - Redocly (redocly-plugin.js, rule svc/operation-id-verb, on the sources): every operationId is
//     lowerCamelCase and starts with one of OPERATION_VERBS.
//   - Spectral (functions/customAction.js, rule svc-custom-action, on the bundle): a custom action is
//     a POST on `/<collection>/{resource}/<verb>` where <verb> is one of CUSTOM_VERBS, and its
//     operationId starts with that verb.
//
// A new custom action (say `POST /workspaces/{workspace}/computers/{computer}/resize`) adds its verb to
// CUSTOM_VERBS here, and nowhere else.

/** Standard methods: every resource is listed, read, created, updated and deleted with these. */
export const STANDARD_VERBS = Object.freeze(['list', 'get', 'create', 'update', 'delete']);

/**
 * Custom actions: what a resource does beyond the standard methods. `start`, `stop`, `restart`, `exec`
 * (run a command and answer with its output) and `run` (run a long command as an operation) are action
 * segments of computers; `exchange` is `POST /auth/token` (exchangeToken), which trades a
 * credential for an access token and has no action segment.
 */
export const CUSTOM_VERBS = Object.freeze(['start', 'stop', 'restart', 'exec', 'run', 'exchange']);

/** Every verb an operationId may start with. */
export const OPERATION_VERBS = Object.freeze([...STANDARD_VERBS, ...CUSTOM_VERBS]);
